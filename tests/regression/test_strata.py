"""WassersteinFairRegressor within strata of control_features: one adjustment per stratum.

Oracle: the regressor fitted by hand on each stratum's rows alone (the same frozen score model,
so that all rows are calibration rows); tau then applies to each stratum's own gap.
"""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression
from sklearn.utils._param_validation import InvalidParameterError

from fairot.metrics import max_pairwise_wasserstein
from fairot.regression import WassersteinFairRegressor
from fairot.utils.groups import SMALL_GROUP_SIZE
from fairot.utils.strata import MSG_CONTROL_REQUIRED, MSG_CONTROL_UNFITTED


def _data(n=900, seed=0, n_strata=3):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    c = rng.integers(0, n_strata, n)
    X = np.column_stack([rng.normal(size=n) * (1 + 0.5 * c) + a * (1 + c), rng.normal(size=n)])
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n)
    return X, y, a, c


def _frozen(X, y):
    return FrozenEstimator(LinearRegression().fit(X, y))


@pytest.mark.parametrize("options", [{"tau": 0.0}, {"tau": 0.3}, {"epsilon": 0.2, "p": 1}])
def test_each_stratum_is_the_regressor_fitted_on_it_alone(options):
    X, y, a, c = _data()
    base = _frozen(X, y)
    model = WassersteinFairRegressor(estimator=base, **options)
    model.fit(X, y, sensitive_features=a, control_features=c)
    got = model.predict(X, sensitive_features=a, control_features=c)
    assert model.strata_ == [0, 1, 2] and model.pooled_strata_ == []
    for k in range(3):
        rows = c == k
        alone = WassersteinFairRegressor(estimator=base, **options)
        alone.fit(X[rows], y[rows], sensitive_features=a[rows])
        np.testing.assert_allclose(
            got[rows], alone.predict(X[rows], sensitive_features=a[rows]), rtol=0, atol=1e-12
        )
        # tau is relative to the stratum's own gap; epsilon bounds each stratum's gap
        assert model.stratum_maps_[k].epsilon_ == alone.epsilon_
        assert model.stratum_maps_[k].grid_gap_ <= model.stratum_maps_[k].epsilon_ + 1e-12


def test_tau_zero_gives_conditional_parity_on_the_fit_rows():
    """With two groups of equal sizes in each stratum, the tau = 0 barycenter map sends both
    groups' calibration rows to the same values: conditional W2 gap zero."""
    rng = np.random.default_rng(1)
    a = np.tile([0, 1], 400)
    c = np.repeat([0, 1], 400)
    X = np.column_stack([rng.normal(size=800) + a * (1 + 2 * c)])
    y = X[:, 0] + rng.normal(size=800)
    model = WassersteinFairRegressor(estimator=_frozen(X, y), tau=0.0)
    model.fit(X, y, sensitive_features=a, control_features=c)
    pred = model.predict(X, sensitive_features=a, control_features=c)
    given = max_pairwise_wasserstein(None, pred, sensitive_features=a, control_features=c)
    raw = max_pairwise_wasserstein(None, X[:, 0], sensitive_features=a, control_features=c)
    assert raw.distance > 1.0
    assert given.distance == pytest.approx(0.0, abs=1e-9)


def test_tau_one_returns_the_score_model():
    X, y, a, c = _data(seed=2)
    base = _frozen(X, y)
    model = WassersteinFairRegressor(estimator=base, tau=1.0)
    model.fit(X, y, sensitive_features=a, control_features=c)
    np.testing.assert_array_equal(
        model.predict(X, sensitive_features=a, control_features=c), base.predict(X)
    )


def test_one_stratum_is_the_regressor_without_strata():
    X, y, a, _ = _data(seed=3)
    plain = WassersteinFairRegressor(tau=0.2, random_state=0).fit(X, y, sensitive_features=a)
    one = WassersteinFairRegressor(tau=0.2, random_state=0)
    ones = np.ones(a.size)
    one.fit(X, y, sensitive_features=a, control_features=ones)
    np.testing.assert_array_equal(
        one.predict(X, sensitive_features=a, control_features=ones),
        plain.predict(X, sensitive_features=a),
    )
    np.testing.assert_array_equal(one.adjusted_curves_, plain.adjusted_curves_)


def test_split_is_stratified_by_stratum_and_group():
    X, y, a, c = _data(n=600, seed=4)
    model = WassersteinFairRegressor(tau=0.5, random_state=0, calibration_size=0.5)
    model.fit(X, y, sensitive_features=a, control_features=c)
    for k, sub in enumerate(model.stratum_maps_):
        for g in (0, 1):
            n_cell = int(np.sum((c == k) & (a == g)))
            # each cell's calibration share is half of it, to a row
            assert abs(sub.calibration_scores_[g].size - n_cell / 2) <= 1
    assert model.score(X, y, sensitive_features=a, control_features=c) > 0.5


def test_small_and_unseen_strata_policies():
    X, y, a, c = _data(n=600, seed=5, n_strata=2)
    c = c.astype(object)
    c[np.flatnonzero(a == 1)[: SMALL_GROUP_SIZE - 2]] = "tiny"
    c[np.flatnonzero(a == 0)[:20]] = "tiny"
    base = _frozen(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = WassersteinFairRegressor(estimator=base, tau=0.0)
        model.fit(X, y, sensitive_features=a, control_features=c)
    messages = [str(w.message) for w in caught if "control_features" in str(w.message)]
    assert len(messages) == 1 and "'tiny' (0: 20 rows, 1: 8 rows)" in messages[0]
    assert model.pooled_strata_ == ["tiny"] and model.stratum_maps_[-1] is None
    plain = WassersteinFairRegressor(estimator=base, tau=0.0).fit(X, y, sensitive_features=a)
    got = model.predict(X, sensitive_features=a, control_features=c)
    rows = c == "tiny"
    np.testing.assert_array_equal(got[rows], plain.predict(X[rows], sensitive_features=a[rows]))
    with pytest.raises(ValueError, match=re.escape("'tiny' (0: 20 rows, 1: 8 rows)")):
        clone(model).set_params(small_strata="error").fit(
            X, y, sensitive_features=a, control_features=c
        )
    new = np.where(np.arange(a.size) % 5 == 0, "new", c)
    with pytest.warns(UserWarning, match=re.escape("not seen at fit time: ['new']")):
        got = model.predict(X, sensitive_features=a, control_features=new)
    unseen = new == "new"
    np.testing.assert_array_equal(
        got[unseen], plain.predict(X[unseen], sensitive_features=a[unseen])
    )
    strict = clone(model).set_params(small_strata="error")
    strict.fit(X[~rows], y[~rows], sensitive_features=a[~rows], control_features=c[~rows])
    with pytest.raises(ValueError, match=re.escape("not seen at fit time: ['new']")):
        strict.predict(X[~rows], sensitive_features=a[~rows], control_features=new[~rows])


def test_sample_weights_within_strata():
    X, y, a, c = _data(seed=6)
    w = np.random.default_rng(7).integers(1, 4, a.size).astype(float)
    base = _frozen(X, y)
    model = WassersteinFairRegressor(estimator=base, tau=0.2)
    model.fit(X, y, sensitive_features=a, control_features=c, sample_weight=w)
    got = model.predict(X, sensitive_features=a, control_features=c)
    for k in range(3):
        rows = c == k
        alone = WassersteinFairRegressor(estimator=base, tau=0.2)
        alone.fit(X[rows], y[rows], sensitive_features=a[rows], sample_weight=w[rows])
        np.testing.assert_allclose(
            got[rows], alone.predict(X[rows], sensitive_features=a[rows]), rtol=0, atol=1e-12
        )


def test_column_names_of_X():
    X, y, a, c = _data(seed=8)
    frame = pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "a": a, "c": c})
    model = WassersteinFairRegressor(tau=0.3, random_state=0)
    model.fit(frame, y, sensitive_features="a", control_features="c")
    by_name = model.predict(frame)
    np.testing.assert_array_equal(
        by_name, model.predict(frame, sensitive_features=a, control_features=c)
    )


def test_clone_params_and_input_errors():
    model = WassersteinFairRegressor(small_strata="error")
    assert clone(model).get_params()["small_strata"] == "error"
    X, y, a, c = _data(n=300, seed=9)
    with pytest.raises(InvalidParameterError, match="small_strata"):
        WassersteinFairRegressor(small_strata="x").fit(
            X, y, sensitive_features=a, control_features=c
        )
    base = _frozen(X, y)
    fair = WassersteinFairRegressor(estimator=base)
    with pytest.raises(ValueError, match="control_features"):
        fair.fit(X, y, sensitive_features=a, control_features=c[:-1])
    with_nan = c.astype(float)
    with_nan[0] = np.nan
    with pytest.raises(ValueError, match="control_features"):
        fair.fit(X, y, sensitive_features=a, control_features=with_nan)
    with pytest.raises(ValueError, match="explicit calibration set"):
        WassersteinFairRegressor().fit(
            X, y, sensitive_features=a, control_features=c, calibration=(X, y, a)
        )
    fair.fit(X, y, sensitive_features=a, control_features=c)
    name = "WassersteinFairRegressor"
    with pytest.raises(ValueError, match=re.escape(MSG_CONTROL_REQUIRED.format(estimator=name))):
        fair.predict(X, sensitive_features=a)
    with pytest.raises(ValueError, match="control_features has 299 rows but X has 300"):
        fair.predict(X, sensitive_features=a, control_features=c[:-1])
    plain = WassersteinFairRegressor(estimator=base).fit(X, y, sensitive_features=a)
    with pytest.raises(ValueError, match=re.escape(MSG_CONTROL_UNFITTED.format(estimator=name))):
        plain.predict(X, sensitive_features=a, control_features=c)
    fair.fit(X, y, sensitive_features=a)
    assert not hasattr(fair, "strata_")


def test_dask_collections_refuse_control_features():
    da = pytest.importorskip("dask.array")
    X, y, a, c = _data(n=200, seed=10)
    dX, dy, da_a = da.from_array(X, chunks=100), da.from_array(y, chunks=100), da.from_array(a)
    base = _frozen(X, y)
    with pytest.raises(NotImplementedError, match="control_features is not supported on Dask"):
        WassersteinFairRegressor(estimator=base).fit(
            dX, dy, sensitive_features=da_a, control_features=c
        )
    model = WassersteinFairRegressor(estimator=base)
    model.fit(X, y, sensitive_features=a, control_features=c)
    with pytest.raises(NotImplementedError, match="not supported on Dask"):
        model.predict(dX, sensitive_features=da_a)
