"""DPP within strata of control_features: one map per stratum (conditional demographic parity).

Oracles: a DPP fitted by hand on each stratum's rows alone (the base model frozen), the quantile
map written out in NumPy, and the metrics' own ``control_features=`` (conditional parity).
"""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import InvalidParameterError

from fairot.classification import QuantileParityPostProcessor
from fairot.metrics import strong_demographic_disparity
from fairot.utils.groups import SMALL_GROUP_SIZE
from fairot.utils.strata import MSG_CONTROL_REQUIRED, MSG_CONTROL_UNFITTED


def _data(n=900, seed=0, n_strata=3):
    """Scores that depend on the group and, differently, on the stratum."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    c = rng.integers(0, n_strata, n)
    X = np.column_stack([rng.normal(a * (1 + c) * 0.5 + c, 1.0), a, c])
    y = (X[:, 0] + rng.normal(0, 1, n) > 1.0).astype(int)
    return X, y, a, c


def _by_hand(model, X, y, a, rows, **params):
    """The DPP fitted on the rows of one stratum alone, with the same (frozen) base model."""
    alone = QuantileParityPostProcessor(estimator=FrozenEstimator(model.estimator_), **params)
    X_rows = X.iloc[rows] if isinstance(X, pd.DataFrame) else X[rows]
    alone.fit(X_rows, y[rows], sensitive_features=a[rows])
    return alone.predict_proba(X_rows, sensitive_features=a[rows])[:, 1]


@pytest.mark.parametrize("tau", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("target", ["barycenter", 1])
def test_each_stratum_is_the_model_fitted_on_it_alone(tau, target):
    X, y, a, c = _data()
    model = QuantileParityPostProcessor(tau=tau, target=target)
    model.fit(X, y, sensitive_features=a, control_features=c)
    got = model.predict_proba(X, sensitive_features=a, control_features=c)[:, 1]
    assert model.strata_ == [0, 1, 2] and model.pooled_strata_ == []
    for k in range(3):
        rows = np.flatnonzero(c == k)
        want = _by_hand(model, X, y, a, rows, tau=tau, target=target)
        np.testing.assert_allclose(got[rows], want, rtol=0, atol=1e-12)


def test_a_stratum_map_is_the_quantile_map_written_out():
    """Target = group 0 of the stratum: s -> tau s + (1 - tau) Q_0,c(F_a,c(s)), in NumPy."""
    X, y, a, c = _data(seed=1)
    tau = 0.25
    model = QuantileParityPostProcessor(tau=tau, target=0)
    model.fit(X, y, sensitive_features=a, control_features=c)
    got = model.predict_proba(X, sensitive_features=a, control_features=c)[:, 1]
    s = model.estimator_.predict_proba(X)[:, 1]
    for k in range(3):
        target = np.sort(s[(c == k) & (a == 0)])
        for g in (0, 1):
            rows = np.flatnonzero((c == k) & (a == g))
            own = np.sort(s[rows])
            rank = np.searchsorted(own, s[rows] + 1e-12, side="right") / own.size
            image = target[np.clip(np.ceil(rank * target.size - 1e-9).astype(int) - 1, 0, None)]
            np.testing.assert_allclose(got[rows], tau * s[rows] + (1 - tau) * image, atol=1e-15)


def test_one_stratum_is_the_model_without_strata():
    X, y, a, _ = _data(seed=2)
    plain = QuantileParityPostProcessor(tau=0.2).fit(X, y, sensitive_features=a)
    one = QuantileParityPostProcessor(tau=0.2)
    one.fit(X, y, sensitive_features=a, control_features=np.full(a.size, "all"))
    np.testing.assert_array_equal(
        one.predict_proba(X, sensitive_features=a, control_features=np.full(a.size, "all")),
        plain.predict_proba(X, sensitive_features=a),
    )
    np.testing.assert_array_equal(one.target_samples_, plain.target_samples_)


def test_conditional_parity_on_the_fit_rows_at_tau_zero():
    """At tau = 0 each stratum's groups follow that stratum's target: conditional SDD is the
    discreteness of the ECDFs only, far below the plain DPP's (parity across the strata)."""
    X, y, a, c = _data(n=1200, seed=3)
    model = QuantileParityPostProcessor().fit(X, y, sensitive_features=a, control_features=c)
    plain = QuantileParityPostProcessor().fit(X, y, sensitive_features=a)
    raw = model.estimator_.predict_proba(X)[:, 1]
    fair = model.predict_proba(X, sensitive_features=a, control_features=c)[:, 1]
    across = plain.predict_proba(X, sensitive_features=a)[:, 1]

    def sdd_given(scores):
        return strong_demographic_disparity(None, scores, sensitive_features=a, control_features=c)

    # each stratum's groups hold about 200 rows (ECDF steps of 1/200): measured 0.0024, against
    # 0.048 for the DPP without strata (parity across strata, not within) and 0.24 raw
    assert sdd_given(fair) < 0.005
    assert sdd_given(across) > 0.04 and sdd_given(raw) > 0.2
    # and exactly zero where the groups have as many rows as each other (same ECDF grid)
    rng = np.random.default_rng(4)
    a_eq = np.tile([0, 1], 300)
    c_eq = np.repeat([0, 1], 300)
    X_eq = np.column_stack([rng.normal(a_eq + c_eq, 1.0), a_eq])
    y_eq = (X_eq[:, 0] + rng.normal(0, 1, 600) > 1).astype(int)
    eq = QuantileParityPostProcessor(target=0)
    eq.fit(X_eq, y_eq, sensitive_features=a_eq, control_features=c_eq)
    out = eq.predict_proba(X_eq, sensitive_features=a_eq, control_features=c_eq)[:, 1]
    assert strong_demographic_disparity(
        None, out, sensitive_features=a_eq, control_features=c_eq
    ) == pytest.approx(0.0, abs=1e-15)


def test_tau_one_returns_the_raw_scores():
    X, y, a, c = _data(seed=5)
    model = QuantileParityPostProcessor(tau=1.0)
    model.fit(X, y, sensitive_features=a, control_features=c)
    np.testing.assert_array_equal(
        model.predict_proba(X, sensitive_features=a, control_features=c),
        model.estimator_.predict_proba(X),
    )


def test_several_columns_and_column_names_of_X():
    X, y, a, c = _data(n=1600, seed=6, n_strata=2)
    d = np.random.default_rng(7).integers(0, 2, a.size)
    frame = pd.DataFrame({"x": X[:, 0], "c": c, "d": d})
    base = FrozenEstimator(LogisticRegression().fit(frame, y))
    model = QuantileParityPostProcessor(estimator=base)
    model.fit(frame, y, sensitive_features=a, control_features=frame[["c", "d"]].to_numpy())
    assert model.strata_ == [(0, 0), (0, 1), (1, 0), (1, 1)]
    got = model.predict_proba(frame, sensitive_features=a, control_features=frame[["c", "d"]])
    # the same strata named as columns of the DataFrame X: read again at prediction
    named = QuantileParityPostProcessor(estimator=base)
    named.fit(frame, y, sensitive_features=a, control_features=["c", "d"])
    np.testing.assert_array_equal(named.predict_proba(frame, sensitive_features=a), got)
    for cv, dv in model.strata_:
        rows = np.flatnonzero((c == cv) & (d == dv))
        np.testing.assert_allclose(got[rows, 1], _by_hand(model, frame, y, a, rows), atol=1e-12)


def _small_stratum_data():
    X, y, a, c = _data(n=600, seed=8, n_strata=2)
    c = c.astype(object)
    tiny = np.flatnonzero(a == 1)[: SMALL_GROUP_SIZE - 1]
    c[tiny] = "tiny"
    c[np.flatnonzero(a == 0)[:30]] = "tiny"
    return X, y, a, c


def test_small_stratum_is_mapped_with_the_map_of_all_strata_and_warns_once():
    X, y, a, c = _small_stratum_data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = QuantileParityPostProcessor().fit(X, y, sensitive_features=a, control_features=c)
    messages = [str(w.message) for w in caught if "control_features" in str(w.message)]
    assert len(messages) == 1
    assert "'tiny' (0: 30 rows, 1: 9 rows)" in messages[0] and "all strata together" in messages[0]
    assert model.pooled_strata_ == ["tiny"]
    plain = QuantileParityPostProcessor().fit(X, y, sensitive_features=a)
    got = model.predict_proba(X, sensitive_features=a, control_features=c)
    rows = c == "tiny"
    np.testing.assert_array_equal(
        got[rows], plain.predict_proba(X[rows], sensitive_features=a[rows])
    )


def test_small_stratum_error_names_the_strata_and_their_sizes():
    X, y, a, c = _small_stratum_data()
    model = QuantileParityPostProcessor(small_strata="error")
    with pytest.raises(ValueError, match=re.escape("'tiny' (0: 30 rows, 1: 9 rows)")):
        model.fit(X, y, sensitive_features=a, control_features=c)


def test_a_stratum_without_a_group_is_too_small():
    X, y, a, c = _data(n=600, seed=9, n_strata=2)
    c = np.where(a == 1, c, 2)  # stratum 2 holds group 0 only
    with pytest.raises(ValueError, match=re.escape("'2' (0: ")):
        QuantileParityPostProcessor(small_strata="error").fit(
            X, y, sensitive_features=a, control_features=c
        )


def test_unseen_strata_follow_the_policy():
    X, y, a, c = _data(seed=10)
    new = np.where(np.arange(a.size) % 4 == 0, 7, c)
    pooled = QuantileParityPostProcessor().fit(X, y, sensitive_features=a, control_features=c)
    with pytest.warns(UserWarning, match=re.escape("not seen at fit time: [7]")):
        got = pooled.predict_proba(X, sensitive_features=a, control_features=new)
    plain = QuantileParityPostProcessor().fit(X, y, sensitive_features=a)
    unseen = new == 7
    np.testing.assert_array_equal(
        got[unseen], plain.predict_proba(X[unseen], sensitive_features=a[unseen])
    )
    np.testing.assert_array_equal(
        got[~unseen],
        pooled.predict_proba(
            X[~unseen], sensitive_features=a[~unseen], control_features=c[~unseen]
        ),
    )
    strict = clone(pooled).set_params(small_strata="error")
    strict.fit(X, y, sensitive_features=a, control_features=c)
    with pytest.raises(
        ValueError, match=r"not seen at fit time: \[7\] \(seen strata: \['0', '1', '2'\]\)"
    ):
        strict.predict(X, sensitive_features=a, control_features=new)


def test_sample_weights_within_strata():
    X, y, a, c = _data(seed=11)
    w = np.random.default_rng(12).integers(1, 4, a.size).astype(float)
    model = QuantileParityPostProcessor(tau=0.1)
    model.fit(X, y, sensitive_features=a, control_features=c, sample_weight=w)
    got = model.predict_proba(X, sensitive_features=a, control_features=c)[:, 1]
    for k in range(3):
        rows = np.flatnonzero(c == k)
        alone = QuantileParityPostProcessor(tau=0.1, estimator=FrozenEstimator(model.estimator_))
        alone.fit(X[rows], y[rows], sensitive_features=a[rows], sample_weight=w[rows])
        np.testing.assert_allclose(
            got[rows], alone.predict_proba(X[rows], sensitive_features=a[rows])[:, 1], atol=1e-12
        )
    # integer weights are repeated rows: the same map as the data with each row w times
    reps = np.repeat(np.arange(a.size), w.astype(int))
    repeated = QuantileParityPostProcessor(tau=0.1, estimator=FrozenEstimator(model.estimator_))
    repeated.fit(X[reps], y[reps], sensitive_features=a[reps], control_features=c[reps])
    np.testing.assert_allclose(
        repeated.predict_proba(X, sensitive_features=a, control_features=c)[:, 1], got, atol=1e-12
    )


def test_zero_weight_rows_do_not_count_towards_a_cell():
    X, y, a, c = _data(n=600, seed=13, n_strata=2)
    w = np.ones(a.size)
    w[(c == 1) & (a == 1)] = 0.0
    w[np.flatnonzero((c == 1) & (a == 1))[:3]] = 1.0
    with pytest.raises(ValueError, match=re.escape("'1' (0: ")):
        QuantileParityPostProcessor(small_strata="error").fit(
            X, y, sensitive_features=a, control_features=c, sample_weight=w
        )


def test_clone_get_params_and_bad_policy():
    model = QuantileParityPostProcessor(small_strata="error", tau=0.5)
    assert model.get_params()["small_strata"] == "error"
    assert clone(model).small_strata == "error"
    X, y, a, c = _data(n=200, seed=14)
    with pytest.raises(InvalidParameterError, match="small_strata"):
        QuantileParityPostProcessor(small_strata="drop").fit(
            X, y, sensitive_features=a, control_features=c
        )


def test_input_errors_name_control_features():
    X, y, a, c = _data(n=300, seed=15)
    model = QuantileParityPostProcessor()
    with pytest.raises(ValueError, match="control_features"):
        model.fit(X, y, sensitive_features=a, control_features=c[:-1])
    with_nan = c.astype(float)
    with_nan[5] = np.nan
    with pytest.raises(ValueError, match="control_features"):
        model.fit(X, y, sensitive_features=a, control_features=with_nan)
    model.fit(X, y, sensitive_features=a, control_features=c)
    name = "QuantileParityPostProcessor"
    with pytest.raises(ValueError, match=re.escape(MSG_CONTROL_REQUIRED.format(estimator=name))):
        model.predict(X, sensitive_features=a)
    with pytest.raises(ValueError, match="control_features has 299 rows but X has 300"):
        model.predict(X, sensitive_features=a, control_features=c[:-1])
    with pytest.raises(ValueError, match="control_features"):
        model.predict(X, sensitive_features=a, control_features=with_nan)
    plain = QuantileParityPostProcessor().fit(X, y, sensitive_features=a)
    with pytest.raises(ValueError, match=re.escape(MSG_CONTROL_UNFITTED.format(estimator=name))):
        plain.predict_proba(X, sensitive_features=a, control_features=c)
    # refitting without strata forgets them
    model.fit(X, y, sensitive_features=a)
    assert not hasattr(model, "strata_")
    model.predict(X, sensitive_features=a)


def test_dask_collections_refuse_control_features():
    da = pytest.importorskip("dask.array")
    X, y, a, c = _data(n=200, seed=16)
    dX, dy, da_a = da.from_array(X, chunks=100), da.from_array(y, chunks=100), da.from_array(a)
    with pytest.raises(NotImplementedError, match="control_features is not supported on Dask"):
        QuantileParityPostProcessor().fit(dX, dy, sensitive_features=da_a, control_features=c)
    model = QuantileParityPostProcessor().fit(X, y, sensitive_features=a, control_features=c)
    for method in (model.predict, model.predict_proba):
        with pytest.raises(NotImplementedError, match="not supported on Dask"):
            method(dX, sensitive_features=da_a, control_features=da.from_array(c))


def test_a_model_with_strata_round_trips_through_skops(tmp_path):
    sio = pytest.importorskip("skops.io")
    from fairot import load_model
    from fairot.regression import WassersteinFairRegressor

    X, y, a, c = _data(n=600, seed=17)
    dpp = QuantileParityPostProcessor(tau=0.2).fit(X, y, sensitive_features=a, control_features=c)
    reg = WassersteinFairRegressor(tau=0.2, random_state=0)
    reg.fit(X, X[:, 0], sensitive_features=a, control_features=c)
    for model, method in ((dpp, "predict_proba"), (reg, "predict")):
        path = tmp_path / f"{method}.skops"
        sio.dump(model, path)
        back = load_model(path)
        np.testing.assert_array_equal(
            getattr(back, method)(X, sensitive_features=a, control_features=c),
            getattr(model, method)(X, sensitive_features=a, control_features=c),
        )


def test_marginal_groups_within_strata():
    X, y, a, c = _data(n=1500, seed=18)
    b = np.random.default_rng(19).integers(0, 2, a.size)
    sf = pd.DataFrame({"a": a, "b": b})
    model = QuantileParityPostProcessor(group_mode="marginal", tau=0.1)
    with pytest.warns(UserWarning, match="marginal"):
        model.fit(X, y, sensitive_features=sf, control_features=c)
    got = model.predict_proba(X, sensitive_features=sf, control_features=c)[:, 1]
    for k in range(3):
        rows = np.flatnonzero(c == k)
        alone = QuantileParityPostProcessor(
            estimator=FrozenEstimator(model.estimator_), group_mode="marginal", tau=0.1
        )
        with pytest.warns(UserWarning, match="marginal"):
            alone.fit(X[rows], y[rows], sensitive_features=sf.iloc[rows])
        want = alone.predict_proba(X[rows], sensitive_features=sf.iloc[rows])[:, 1]
        np.testing.assert_allclose(got[rows], want, rtol=0, atol=1e-12)


def test_control_features_are_routed_by_default():
    import sklearn
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y, a, c = _data(n=600, seed=20)
    direct = QuantileParityPostProcessor().fit(X, y, sensitive_features=a, control_features=c)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(FunctionTransformer(), QuantileParityPostProcessor())
        pipe.fit(X, y, sensitive_features=a, control_features=c)
        np.testing.assert_array_equal(
            pipe.predict_proba(X, sensitive_features=a, control_features=c),
            direct.predict_proba(X, sensitive_features=a, control_features=c),
        )
        # score needs the strata too: routed to it, the folds score without error
        scores = cross_val_score(
            QuantileParityPostProcessor(),
            X,
            y,
            params={"sensitive_features": a, "control_features": c},
            cv=3,
        )
    assert np.all(np.isfinite(scores))
