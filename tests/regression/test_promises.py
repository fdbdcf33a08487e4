"""The regressor keeps its promises (issue 21), checked against independent computations.

tau = 1 is the model given, ``bounds`` clip the predictions, the tolerance errors name their
unit (the tolerances' own checks: ``test_checks.py``), the vocabulary is the one of every other
estimator (``estimator=``, ``random_state`` through ``check_random_state``); groups named as
columns of X: ``test_inputs.py``. The oracles are scikit-learn's metrics and models, SciPy's W1
and plain NumPy on held-out rows.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.utils import check_random_state

from fairot.regression import WassersteinFairRegressor, WassersteinFairRegressorCV

from ._oracle import shifted_groups as _problem


def _max_w1(pred, s):
    """Largest pairwise W1 between the groups' predictions (SciPy)."""
    groups = np.unique(s)
    return max(
        wasserstein_distance(pred[s == a], pred[s == b])
        for i, a in enumerate(groups)
        for b in groups[i + 1 :]
    )


def _max_w2(pred, s, n_grid=20_000):
    """Largest pairwise W2 from the groups' empirical quantile functions (NumPy, fine grid)."""
    u = (np.arange(n_grid) + 0.5) / n_grid
    q = [np.quantile(pred[s == g], u, method="inverted_cdf") for g in np.unique(s)]
    return max(
        np.sqrt(np.mean((q[i] - q[j]) ** 2)) for i in range(len(q)) for j in range(i + 1, len(q))
    )


# ------------------------------------------------------------------------- tau = 1 is the model
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("p", [1, 2, np.inf])
def test_tau_one_with_a_frozen_model_is_the_model_on_held_out_rows(k, p):
    X, y, s = _problem(k=k)
    X_fit, X_test, y_fit, y_test, s_fit, s_test = train_test_split(
        X, y, s, test_size=0.5, random_state=0
    )
    raw = LinearRegression().fit(X_fit, y_fit)
    model = WassersteinFairRegressor(estimator=FrozenEstimator(raw), tau=1.0, p=p)
    model.fit(X_fit, y_fit, sensitive_features=s_fit)
    fair, given = model.predict(X_test, sensitive_features=s_test), raw.predict(X_test)
    np.testing.assert_array_equal(fair, given)
    assert abs(r2_score(y_test, fair) - r2_score(y_test, given)) <= 1e-9
    assert abs(_max_w1(fair, s_test) - _max_w1(given, s_test)) <= 1e-9
    assert abs(_max_w2(fair, s_test) - _max_w2(given, s_test)) <= 1e-9
    assert model.score(X_test, y_test, sensitive_features=s_test) == pytest.approx(
        r2_score(y_test, given), abs=1e-9
    )


def test_tau_one_trained_is_the_given_model_fitted_on_the_auxiliary_split():
    # the case: groupwise=True returned a model less fair than the one passed in
    X, y, s = _problem()
    X_fit, X_test, y_fit, y_test, s_fit, s_test = train_test_split(
        X, y, s, test_size=0.5, random_state=1
    )
    model = WassersteinFairRegressor(estimator=LinearRegression(), tau=1.0, random_state=0)
    model.fit(X_fit, y_fit, sensitive_features=s_fit)
    assert len(model.estimators_) == 1  # groupwise=False by default
    # the oracle: the same clone on the same split (stratified by group, check_random_state)
    train, _ = train_test_split(
        np.arange(y_fit.size),
        test_size=0.5,
        stratify=s_fit,
        random_state=check_random_state(0),
    )
    half = LinearRegression().fit(X_fit[train], y_fit[train])
    fair = model.predict(X_test, sensitive_features=s_test)
    np.testing.assert_allclose(fair, half.predict(X_test), rtol=0, atol=1e-12)
    # and the model fitted on all rows, up to the sampling noise of half the rows
    full = LinearRegression().fit(X_fit, y_fit).predict(X_test)
    assert abs(r2_score(y_test, fair) - r2_score(y_test, full)) < 0.01
    assert abs(_max_w2(fair, s_test) - _max_w2(full, s_test)) < 0.05
    # group-wise models are other models, less fair here (the docs say so)
    groupwise = WassersteinFairRegressor(tau=1.0, groupwise=True, random_state=0)
    groupwise.fit(X_fit, y_fit, sensitive_features=s_fit)
    pred = groupwise.predict(X_test, sensitive_features=s_test)
    assert _max_w2(pred, s_test) > _max_w2(full, s_test) + 0.05


# ----------------------------------------------------------------------------- bounds clip
def _bounded_problem(n=3000, seed=2):
    """A target that lives in [1, 10]; a linear model's scores leave that range."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 2))
    y = np.clip(5.5 + 3 * X[:, 0] + 1.5 * s + rng.normal(scale=0.8, size=n), 1, 10)
    return X, y, s


@pytest.mark.parametrize("tau", [0.0, 0.4, 1.0])
def test_bounds_clip_the_predictions(tau):
    X, y, s = _bounded_problem()
    X_test, y_test, s_test = _bounded_problem(seed=3)
    raw = FrozenEstimator(LinearRegression().fit(X, y))
    scores = raw.predict(X)
    assert scores.min() < 1 or scores.max() > 10  # the case that was refused
    kwargs = {"estimator": raw, "tau": tau, "n_grid": 200}
    bounded = WassersteinFairRegressor(bounds=(1, 10), **kwargs).fit(X, y, sensitive_features=s)
    free = WassersteinFairRegressor(**kwargs).fit(X, y, sensitive_features=s)
    pred = bounded.predict(X_test, sensitive_features=s_test)
    free_pred = free.predict(X_test, sensitive_features=s_test)
    assert pred.min() >= 1 and pred.max() <= 10
    np.testing.assert_allclose(pred, np.clip(free_pred, 1, 10), rtol=0, atol=1e-12)
    # clipping is a contraction: no wider gap, and no more error for a target inside the bounds
    assert _max_w1(pred, s_test) <= _max_w1(free_pred, s_test) + 1e-12
    assert mean_squared_error(y_test, pred) <= mean_squared_error(y_test, free_pred) + 1e-12
    assert bounded.score(X_test, y_test, sensitive_features=s_test) == pytest.approx(
        r2_score(y_test, pred), abs=1e-12
    )


def test_bounds_must_be_an_ordered_pair():
    X, y, s = _bounded_problem(n=400)
    for bad in [(10, 1), (1, 1), (1, np.nan), ("a", "b")]:
        with pytest.raises(ValueError, match="bounds must be a pair"):
            WassersteinFairRegressor(bounds=bad).fit(X, y, sensitive_features=s)


# ---------------------------------------------------------------------- errors name the unit
def test_budget_error_never_asks_for_a_tau_already_in_the_grid():
    X, y, s = _problem(n=600)
    template = WassersteinFairRegressor(n_grid=50, random_state=0, groupwise=True)
    with pytest.raises(ValueError) as info:
        WassersteinFairRegressorCV(estimator=template, taus=[0.0, 0.5], max_gap=0.0, cv=3).fit(
            X, y, sensitive_features=s
        )
    message = str(info.value)
    assert "in the unit of y" in message and "fraction of the raw gap" in message
    assert "already in taus" in message and "add" not in message.lower().split("already")[1]
    assert "smaller taus" not in message
    with pytest.raises(ValueError, match=r"add taus below 0\.5 \(down to 0"):
        WassersteinFairRegressorCV(estimator=template, taus=[0.5, 1.0], max_gap=0.0, cv=3).fit(
            X, y, sensitive_features=s
        )


# ------------------------------------------------------------------------------ vocabulary
def test_cv_takes_estimator_and_refuses_regressor():
    X, y, s = _problem(n=900)
    template = WassersteinFairRegressor(n_grid=60, random_state=0)
    search = WassersteinFairRegressorCV(estimator=template, taus=[0.0, 1.0], cv=3)
    search.fit(X, y, sensitive_features=s)
    assert search.best_estimator_.n_grid == 60
    with pytest.raises(TypeError, match="regressor"):
        WassersteinFairRegressorCV(regressor=template)


def test_random_state_goes_through_check_random_state():
    X, y, s = _problem(n=800)
    assert WassersteinFairRegressor().random_state is None
    by_int = WassersteinFairRegressor(tau=0.3, random_state=7).fit(X, y, sensitive_features=s)
    by_state = WassersteinFairRegressor(tau=0.3, random_state=np.random.RandomState(7))
    by_state.fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(
        by_int.predict(X, sensitive_features=s), by_state.predict(X, sensitive_features=s)
    )
    # None draws a fresh split (no hidden seed): two fits differ
    a = WassersteinFairRegressor(tau=0.3).fit(X, y, sensitive_features=s)
    b = WassersteinFairRegressor(tau=0.3).fit(X, y, sensitive_features=s)
    assert not np.array_equal(a.estimators_[0].coef_, b.estimators_[0].coef_)


def _weighted_max_w1(pred, s, w):
    """Largest pairwise weighted W1 between the groups' predictions (SciPy)."""
    groups = np.unique(s)
    return max(
        wasserstein_distance(pred[s == a], pred[s == b], w[s == a], w[s == b])
        for i, a in enumerate(groups)
        for b in groups[i + 1 :]
    )


def test_cv_sample_weight_trains_calibrates_and_scores_each_fold():
    X, y, s = _problem(n=1200, k=3, seed=8)
    w = np.random.default_rng(8).integers(1, 4, y.size).astype(float)
    frozen = FrozenEstimator(LinearRegression().fit(X, y))
    template = WassersteinFairRegressor(estimator=frozen, p=1, n_grid=80)
    folds = [(np.arange(600, 1200), np.arange(600)), (np.arange(600), np.arange(600, 1200))]
    taus = [0.0, 0.5, 1.0]
    search = WassersteinFairRegressorCV(estimator=template, taus=taus, cv=folds)
    search.fit(X, y, sensitive_features=s, sample_weight=w)
    for i, tau in enumerate(taus):
        r2, gaps = [], []
        for train, test in folds:
            model = clone(template).set_params(tau=tau)
            model.fit(X[train], y[train], sensitive_features=s[train], sample_weight=w[train])
            pred = model.predict(X[test], sensitive_features=s[test])
            r2.append(r2_score(y[test], pred, sample_weight=w[test]))
            gaps.append(_weighted_max_w1(pred, s[test], w[test]))
        assert search.cv_results_.loc[i, "mean_r2"] == pytest.approx(np.mean(r2), abs=1e-10)
        assert search.cv_results_.loc[i, "mean_test_gap"] == pytest.approx(np.mean(gaps), abs=1e-10)
    refit = clone(template).set_params(tau=search.best_tau_)
    refit.fit(X, y, sensitive_features=s, sample_weight=w)
    np.testing.assert_array_equal(
        search.predict(X, sensitive_features=s), refit.predict(X, sensitive_features=s)
    )


def test_cv_random_state_shuffles_the_folds_through_check_random_state():
    X, y, s = _problem(n=900, seed=9)
    frozen = FrozenEstimator(LinearRegression().fit(X, y))
    template = WassersteinFairRegressor(estimator=frozen, n_grid=60)
    taus = [0.0, 1.0]
    assert WassersteinFairRegressorCV().random_state is None
    search = WassersteinFairRegressorCV(estimator=template, taus=taus, cv=3, random_state=4)
    search.fit(X, y, sensitive_features=s)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=4).split(X, s))
    same = WassersteinFairRegressorCV(estimator=template, taus=taus, cv=folds)
    same.fit(X, y, sensitive_features=s)
    pd.testing.assert_frame_equal(search.cv_results_, same.cv_results_)
    # None keeps the rows in order: the folds of check_cv
    ordered = WassersteinFairRegressorCV(estimator=template, taus=taus, cv=3)
    ordered.fit(X, y, sensitive_features=s)
    in_order = WassersteinFairRegressorCV(
        estimator=template, taus=taus, cv=list(StratifiedKFold(3).split(X, s))
    ).fit(X, y, sensitive_features=s)
    pd.testing.assert_frame_equal(ordered.cv_results_, in_order.cv_results_)
