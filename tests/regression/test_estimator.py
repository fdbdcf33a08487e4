import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression

from fairot.metrics import max_pairwise_wasserstein
from fairot.regression import WassersteinFairRegressor, fairness_accuracy_path
from fairot.regression.checks import (
    MSG_BOTH_TOLERANCES,
    MSG_MISSING_GROUP,
    MSG_NAN_SCORES,
    MSG_SMALL_GROUP,
)
from tests.helpers import linear_groups as _data

from ._oracle import equipy_exact_map as _equipy_exact_map
from ._oracle import frozen_column as _frozen_column
from ._oracle import two_designs as _two_designs


def _frozen_linear(X, y, s):
    model = LinearRegression().fit(np.column_stack([X, s]), y)
    return model


@pytest.mark.parametrize("p", [1, 2, np.inf])
@pytest.mark.parametrize("k", [2, 3])
def test_strict_parity_is_the_exact_barycenter_map_on_every_row(p, k):
    scores, s, test, t_s = _two_designs(3, k, 900)
    model = WassersteinFairRegressor(estimator=_frozen_column(), tau=0.0, p=p, n_grid=50)
    model.fit(scores[:, None], np.zeros(scores.size), sensitive_features=s)
    pred = model.predict(test[:, None], sensitive_features=t_s)
    expected = _equipy_exact_map(scores, s, test, t_s)
    beyond = (test < scores.min()) | (test > scores.max())
    assert beyond.sum() > 10
    np.testing.assert_allclose(pred, expected, rtol=0, atol=1e-9)


def test_strict_parity_with_many_groups_is_the_exact_barycenter_map():
    # more than 8 groups take the readout's other way of splitting rows by group
    scores, s, test, t_s = _two_designs(8, 12, 1200)
    model = WassersteinFairRegressor(estimator=_frozen_column(), tau=0.0, p=2, n_grid=30)
    model.fit(scores[:, None], np.zeros(scores.size), sensitive_features=s)
    pred = model.predict(test[:, None], sensitive_features=t_s)
    np.testing.assert_allclose(pred, _equipy_exact_map(scores, s, test, t_s), rtol=0, atol=1e-9)


@pytest.mark.parametrize("tau", [0.2, 0.6, 0.95])
def test_two_groups_w2_is_the_closed_form_at_every_rank(tau):
    # Table 1 of the paper: Q_1 = Qbar + r_2 lambda Delta*, i.e. lambda Q_1* + (1 - lambda) Qbar
    # with lambda = min(1, epsilon / ||Delta*||_2), here on the exact quantile functions.
    scores, s, test, t_s = _two_designs(4, 2, 800)
    m = 40
    model = WassersteinFairRegressor(estimator=_frozen_column(), tau=tau, p=2, n_grid=m)
    model.fit(scores[:, None], np.zeros(scores.size), sensitive_features=s)
    pred = model.predict(test[:, None], sensitive_features=t_s)
    u = (np.arange(m) + 0.5) / m
    delta = np.quantile(scores[s == 0], u) - np.quantile(scores[s == 1], u)
    lam = min(1.0, tau * np.sqrt(np.mean(delta**2)) / np.sqrt(np.mean(delta**2)))
    barycenter = _equipy_exact_map(scores, s, test, t_s)
    own = np.empty_like(test)
    for g in (0, 1):
        reference = np.sort(scores[s == g])
        rank = np.searchsorted(reference, test[t_s == g], side="right") / reference.size
        own[t_s == g] = np.quantile(reference, rank)
    np.testing.assert_allclose(pred, lam * own + (1 - lam) * barycenter, rtol=0, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1, 2, np.inf]), st.sampled_from([0.1, 0.5, 0.9]))
def test_predictions_are_nondecreasing_in_the_score_within_a_group(seed, p, tau):
    scores, s, _, _ = _two_designs(seed, 3, 150)
    model = WassersteinFairRegressor(estimator=_frozen_column(), tau=tau, p=p, n_grid=17)
    model.fit(scores[:, None], np.zeros(scores.size), sensitive_features=s)
    new = np.linspace(scores.min() - 1, scores.max() + 1, 400)
    for g in range(3):
        pred = model.predict(new[:, None], sensitive_features=np.full(new.size, g))
        assert np.all(np.diff(pred) >= 0)


def test_identity_convention_two_groups_inactive():
    X, y, s = _data()
    frozen = FrozenEstimator(LinearRegression().fit(X, y))
    for p in (1, 2):
        model = WassersteinFairRegressor(estimator=frozen, tau=1.0, p=p)
        model.fit(X, y, sensitive_features=s)
        np.testing.assert_array_equal(model.predict(X, sensitive_features=s), frozen.predict(X))
    # issue 21: tau = 1 is the model given for W-infinity too (it once reconstructed through
    # ranks, which moved an inactive constraint's predictions)
    model = WassersteinFairRegressor(estimator=frozen, tau=1.0, p=np.inf)
    model.fit(X, y, sensitive_features=s)
    assert model._identity
    np.testing.assert_array_equal(model.predict(X, sensitive_features=s), frozen.predict(X))


@pytest.mark.parametrize("p", [1, 2, np.inf])
def test_strict_parity_removes_most_of_the_calibration_gap(p):
    X, y, s = _data(n=2000)
    # group-wise models (the paper's Stage 1) see the groups' shift, so the raw gap is large
    model = WassersteinFairRegressor(tau=0.0, p=p, random_state=0, n_grid=500, groupwise=True)
    model.fit(X, y, sensitive_features=s)
    raw = model.score_unadjusted(X, sensitive_features=s)
    fair = model.predict(X, sensitive_features=s)
    before = max_pairwise_wasserstein(None, raw, sensitive_features=s, p=2).distance
    after = max_pairwise_wasserstein(None, fair, sensitive_features=s, p=2).distance
    assert model.grid_gap_ <= 1e-12
    assert after < 0.1 * before


@pytest.mark.parametrize("kind", ["list", "ndarray", "series", "dataframe"])
def test_input_types_give_the_same_answer(kind):
    X, y, s = _data()
    ref = WassersteinFairRegressor(tau=0.3, random_state=0).fit(X, y, sensitive_features=s)
    expected = ref.predict(X, sensitive_features=s)
    if kind == "list":
        args = (X.tolist(), y.tolist(), s.tolist())
    elif kind == "ndarray":
        args = (X, y, s)
    elif kind == "series":
        args = (pd.DataFrame(X), pd.Series(y), pd.Series(s, name="group"))
    else:
        args = (pd.DataFrame(X, columns=list("abc")), pd.Series(y), pd.DataFrame({"g": s}))
    X_in, y_in, s_in = args
    before = np.array(X_in, dtype=float).copy()
    model = WassersteinFairRegressor(tau=0.3, random_state=0).fit(
        X_in, y_in, sensitive_features=s_in
    )
    got = model.predict(X_in, sensitive_features=s_in)
    np.testing.assert_allclose(got, expected, atol=1e-11, rtol=1e-12)
    np.testing.assert_array_equal(np.array(X_in, dtype=float), before)


def test_float32_input_reaches_the_model_and_matches_float64():
    # The wrapped model sees X as given; a float64 model upcasts float32 X exactly, so fairot's
    # answer must be the same as for the same values in float64.
    X, y, s = _data()
    X32 = X.astype(np.float32)
    frozen = FrozenEstimator(LinearRegression().fit(X, y))
    expected = (
        WassersteinFairRegressor(estimator=frozen, tau=0.3)
        .fit(X32.astype(np.float64), y, sensitive_features=s)
        .predict(X32.astype(np.float64), sensitive_features=s)
    )
    model = WassersteinFairRegressor(estimator=frozen, tau=0.3)
    model.fit(X32, y.astype(np.float32), sensitive_features=s)
    np.testing.assert_array_equal(model.predict(X32, sensitive_features=s), expected)


def test_intersectional_groups_from_several_columns():
    rng = np.random.default_rng(5)
    n = 800
    sf = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.choice(["x", "y"], n)})
    X = rng.normal(size=(n, 2))
    y = X[:, 0] + sf["a"].to_numpy() + (sf["b"] == "x").to_numpy() * 2.0
    model = WassersteinFairRegressor(tau=0.2, p=2, random_state=0).fit(X, y, sensitive_features=sf)
    assert model.latent_curves_.shape[0] == 4
    assert model.grid_gap_ <= model.epsilon_ + 1e-10


def test_explicit_calibration_set_and_observed_loss():
    X, y, s = _data(n=900, k=3)
    model = WassersteinFairRegressor(tau=0.5, cost="observed_squared", n_grid=100)
    model.fit(X[:400], y[:400], sensitive_features=s[:400], calibration=(X[400:], y[400:], s[400:]))
    assert model.latent_curves_.shape == (3, 100)
    assert model.grid_gap_ <= model.epsilon_ + 1e-10
    assert np.all(np.diff(model.adjusted_curves_, axis=1) >= -1e-12)


class _NaNRegressor(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        out = np.zeros(len(X))
        out[0] = np.nan
        return out


def test_bad_input_errors():
    X, y, s = _data()
    with pytest.raises(ValueError, match="epsilon"):
        WassersteinFairRegressor(epsilon=-1.0).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="tau"):
        WassersteinFairRegressor(tau=-0.5).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match=MSG_BOTH_TOLERANCES[:20]):
        WassersteinFairRegressor(epsilon=0.1, tau=0.1).fit(X, y, sensitive_features=s)
    with pytest.warns(UserWarning, match="tau=1.5 > 1"):
        WassersteinFairRegressor(tau=1.5, random_state=0).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="p must be"):
        WassersteinFairRegressor(p=3).fit(X, y, sensitive_features=s)
    model = WassersteinFairRegressor(tau=0.5, random_state=0).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="not seen at fit time"):
        model.predict(X[:3], sensitive_features=[0, 1, 7])
    # a group absent from an explicit calibration set
    with pytest.raises(ValueError, match=MSG_MISSING_GROUP.split("{")[1][8:30]):
        WassersteinFairRegressor(tau=0.5).fit(
            X, y, sensitive_features=s, calibration=(X[s == 0], y[s == 0], s[s == 0])
        )
    # a group with one calibration point
    s_one = s.copy()
    s_one[:] = 0
    s_one[0] = 1
    with pytest.raises(ValueError, match=MSG_SMALL_GROUP.split("{")[1][8:30]):
        WassersteinFairRegressor(estimator=_frozen_column(), tau=0.5).fit(
            X, y, sensitive_features=s_one
        )
    # NaN scores
    with pytest.raises(ValueError, match=re.escape(MSG_NAN_SCORES[:30])):
        WassersteinFairRegressor(estimator=FrozenEstimator(_NaNRegressor().fit(X, y)), tau=0.5).fit(
            X, y, sensitive_features=s
        )
    # NaN input
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        WassersteinFairRegressor(tau=0.5).fit(X_nan, y, sensitive_features=s)
    # bounds that are not a range (bounds that exclude the scores clip them since issue 21)
    with pytest.raises(ValueError, match="bounds must be a pair"):
        WassersteinFairRegressor(tau=0.5, bounds=(1.0, 0.0)).fit(X, y, sensitive_features=s)
    # a frozen model takes its calibration data as X, y
    with pytest.raises(ValueError, match="FrozenEstimator all of fit's data"):
        WassersteinFairRegressor(estimator=_frozen_column(), tau=0.5).fit(
            X, y, sensitive_features=s, calibration=(X, y, s)
        )
    with pytest.raises(TypeError, match="WassersteinFairRegressor"):
        fairness_accuracy_path(LinearRegression(), X, y, sensitive_features=s, taus=[0.5])
    with pytest.raises(ValueError, match="non-negative"):
        fairness_accuracy_path(WassersteinFairRegressor(), X, y, sensitive_features=s, taus=[-0.1])
    # sensitive features of the wrong length
    with pytest.raises(ValueError, match="inconsistent|samples"):
        WassersteinFairRegressor(tau=0.5).fit(X, y, sensitive_features=s[:10])


def test_plots_return_figures():
    from matplotlib.figure import Figure

    from fairot.regression import plot_path, plot_quantile_curves

    X, y, s = _data(n=500)
    path = fairness_accuracy_path(
        WassersteinFairRegressor(random_state=0, n_grid=50),
        X[:300],
        y[:300],
        sensitive_features=s[:300],
        taus=[0.0, 0.5, 1.0],
        X_test=X[300:],
        y_test=y[300:],
        sensitive_features_test=s[300:],
    )
    fig = plot_path(path, x="test_gap", y="mse", label="W2")
    assert isinstance(fig, Figure)
    assert len(fig.axes[0].lines) == 2  # the path and the unadjusted star
    np.testing.assert_allclose(fig.axes[0].lines[0].get_ydata(), path.table["mse"])
    fig2 = plot_quantile_curves(path.estimators[1])
    assert isinstance(fig2, Figure) and len(fig2.axes[0].lines) == 4
    with pytest.raises(ValueError, match="no column"):
        plot_path(path, x="nope")


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 10_000),
    st.sampled_from([1, 2, np.inf]),
    # tolerances within 1e-3 of 0 (but not 0) make Dykstra slow: see docs/regression.md
    st.sampled_from([0.0, 0.02, 0.3, 0.7, 1.0]),
    st.floats(-50.0, 50.0),
)
def test_invariances_of_the_post_processor(seed, p, tau, shift):
    rng = np.random.default_rng(seed)
    n = 120
    s = np.repeat([0, 1, 2], n // 3)
    scores = rng.normal(size=n) + s
    new = rng.normal(size=30) + 1.0
    new_s = rng.integers(0, 3, 30)
    kwargs = {"tau": tau, "p": p, "n_grid": 37}

    def fit_predict(cal, cal_s, test, test_s):
        model = WassersteinFairRegressor(estimator=_frozen_column(), **kwargs)
        model.fit(cal[:, None], np.zeros(cal.size), sensitive_features=cal_s)
        return model, model.predict(test[:, None], sensitive_features=test_s)

    base_model, base = fit_predict(scores, s, new, new_s)
    assert base_model.grid_gap_ <= base_model.epsilon_ + 1e-10
    # calibration sample order does not matter
    perm = rng.permutation(n)
    _, permuted = fit_predict(scores[perm], s[perm], new, new_s)
    np.testing.assert_allclose(permuted, base, atol=1e-12)
    # relabelling the groups does not matter
    relabel = np.array([2, 0, 1])
    _, relabelled = fit_predict(scores, relabel[s], new, relabel[new_s])
    np.testing.assert_allclose(relabelled, base, atol=1e-9)
    # adding a constant to every score adds it to every prediction
    _, shifted = fit_predict(scores + shift, s, new + shift, new_s)
    np.testing.assert_allclose(shifted, base + shift, atol=1e-8 * (1 + abs(shift)))


def test_the_seam_checks_the_statistics_it_is_given():
    from fairot.utils.sensitive import check_sensitive_features

    model = WassersteinFairRegressor(estimator=_frozen_column())
    scores = np.arange(5.0)
    encoding = check_sensitive_features(np.array([0, 0, 0, 0, 1]), 5)
    with pytest.raises(ValueError, match=re.escape(MSG_SMALL_GROUP.format(group="1", count=1))):
        model.fit_from_group_statistics(
            scores, np.array([0, 0, 0, 0, 1]), encoding=encoding, estimators=[_frozen_column()]
        )


@pytest.mark.integration
def test_fitting_and_predicting_in_memory_never_imports_fairot_dask():
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from fairot.regression import WassersteinFairRegressor, fairness_accuracy_path\n"
        "rng = np.random.default_rng(0); s = rng.integers(0, 2, 200)\n"
        "X = rng.normal(size=(200, 2)); y = X.sum(axis=1)\n"
        "m = WassersteinFairRegressor(tau=0.5, n_grid=20).fit(X, y, sensitive_features=s)\n"
        "m.predict(X, sensitive_features=s)\n"
        "fairness_accuracy_path(m, X, y, sensitive_features=s, taus=[0.0, 1.0])\n"
        "assert not any(k.startswith(('fairot.dask', 'dask')) for k in sys.modules), 'dask'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_seam_needs_the_responses_for_an_observed_loss():
    from fairot.regression.checks import MSG_RESPONSES
    from fairot.utils.sensitive import check_sensitive_features

    model = WassersteinFairRegressor(estimator=_frozen_column(), cost="observed_squared")
    encoding = check_sensitive_features(np.array([0, 0, 1, 1]), 4)
    with pytest.raises(ValueError, match=re.escape(MSG_RESPONSES.format(cost="observed_squared"))):
        model.fit_from_group_statistics(
            np.arange(4.0), encoding.codes, encoding=encoding, estimators=[_frozen_column()]
        )
