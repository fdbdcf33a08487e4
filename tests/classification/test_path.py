"""The classifiers' tolerance path, its plot, and the cross-validated choice of tau."""

import re

import numpy as np
import pytest
import sklearn
from fairlearn.metrics import demographic_parity_difference as fairlearn_dp
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import GridSearchCV

from fairot.classification import (
    QuantileParityPostProcessor,
    fairness_accuracy_path,
    plot_path,
)
from fairot.classification._path import MSG_NO_TAU, MSG_TEST_GROUPS
from fairot.metrics import fair_accuracy_scorer, neg_wass1_scorer, within_fairness_budget
from fairot.transport import MSG_TAU
from tests.helpers import make_biased

TAUS = [0.0, 0.25, 0.5, 0.75, 1.0]


@pytest.fixture(scope="module")
def data():
    X, y, a = make_biased(n=1000, seed=7)
    return X[:600], y[:600], a[:600], X[600:], y[600:], a[600:]


@pytest.fixture(scope="module")
def path(data):
    X, y, a, Xt, yt, at = data
    return fairness_accuracy_path(
        QuantileParityPostProcessor(),
        X,
        y,
        sensitive_features=a,
        taus=TAUS,
        X_test=Xt,
        y_test=yt,
        sensitive_features_test=at,
    )


def test_each_point_is_the_estimator_fitted_at_that_tau(data, path):
    X, y, a, Xt, _, at = data
    for tau, model in zip(TAUS, path.estimators, strict=True):
        own = QuantileParityPostProcessor(tau=tau).fit(X, y, sensitive_features=a)
        np.testing.assert_array_equal(
            model.predict_proba(Xt, sensitive_features=at),
            own.predict_proba(Xt, sensitive_features=at),
        )


def test_measures_against_sklearn_and_fairlearn(data, path):
    X, y, a, Xt, yt, at = data
    for tau, model in zip(TAUS, path.estimators, strict=True):
        row = path.table.set_index("tau").loc[tau]
        scores = model.predict_proba(Xt, sensitive_features=at)[:, 1]
        assert row["accuracy"] == pytest.approx(accuracy_score(yt, (scores > 0.5).astype(int)))
        assert row["roc_auc"] == pytest.approx(roc_auc_score(yt, scores))
        assert row["dp_difference"] == pytest.approx(
            fairlearn_dp(yt, (scores > 0.5).astype(int), sensitive_features=at)
        )
    raw = LogisticRegression().fit(X, y)
    assert path.unadjusted["accuracy"] == pytest.approx(accuracy_score(yt, raw.predict(Xt)))
    assert path.unadjusted["roc_auc"] == pytest.approx(
        roc_auc_score(yt, raw.predict_proba(Xt)[:, 1])
    )
    last = path.table.iloc[-1]
    for key in ("accuracy", "roc_auc", "log_loss", "dp_difference", "wass1"):
        assert last[key] == pytest.approx(path.unadjusted[key], abs=1e-12)  # tau=1 is raw
    assert set(path.table["data"]) == {"test"}


def test_held_out_wass1_grows_with_tau(path):
    assert path.table["wass1"].is_monotonic_increasing
    assert path.table["wass1"].iloc[0] < path.table["wass1"].iloc[-1] / 3


def test_plot(path):
    fig = plot_path(path, label="DPP")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "dp difference" and ax.get_ylabel() == "accuracy"
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), path.table["accuracy"])
    assert ax.lines[1].get_marker() == "*"  # the raw model


def test_bad_inputs(data):
    X, y, a, Xt, _, _ = data
    with pytest.raises(TypeError, match=re.escape(MSG_NO_TAU.format(name="LogisticRegression"))):
        fairness_accuracy_path(LogisticRegression(), X, y, sensitive_features=a, taus=[0.5])
    with pytest.raises(ValueError, match=re.escape(MSG_TAU.format(value=1.5))):
        fairness_accuracy_path(
            QuantileParityPostProcessor(), X, y, sensitive_features=a, taus=[0.5, 1.5]
        )
    with pytest.raises(ValueError, match=re.escape(MSG_TEST_GROUPS)):
        fairness_accuracy_path(
            QuantileParityPostProcessor(), X, y, sensitive_features=a, taus=[0.5], X_test=Xt
        )


def test_grid_search_chooses_tau_within_a_fairness_budget(data):
    X, y, a, _, _, _ = data
    scoring = {"accuracy": fair_accuracy_scorer, "neg_wass1": neg_wass1_scorer}
    sklearn.set_config(enable_metadata_routing=True)
    try:
        search = GridSearchCV(
            QuantileParityPostProcessor(),
            {"tau": TAUS},
            scoring=scoring,
            refit=within_fairness_budget(0.12),
            cv=3,
        ).fit(X, y, sensitive_features=a)
    finally:
        sklearn.set_config(enable_metadata_routing=False)
    results = search.cv_results_
    wass = -np.asarray(results["mean_test_neg_wass1"])
    accuracy = np.asarray(results["mean_test_accuracy"])
    # the oracle: the most accurate tau whose mean held-out Wass1 is within the budget
    feasible = np.flatnonzero(wass <= 0.12)
    assert feasible.size and feasible.size < len(TAUS)
    expected = feasible[np.argmax(accuracy[feasible])]
    assert search.best_index_ == expected
    assert search.best_params_["tau"] == TAUS[expected]
    assert search.best_estimator_.tau_ == TAUS[expected]
    # the held-out disparity falls with tau: the budget is a real choice
    assert np.all(np.diff(wass) > 0), wass


def test_in_processing_is_refitted_per_tau(data):
    from fairot.classification import DOTClassifier

    X, y, a, Xt, yt, at = data
    template = DOTClassifier(n_updates=200, random_state=0)
    path = fairness_accuracy_path(
        template, X, y, sensitive_features=a, taus=[0.0, 1.0],
        X_test=Xt, y_test=yt, sensitive_features_test=at,
    )  # fmt: skip
    assert path.unadjusted == {}
    for tau, model in zip([0.0, 1.0], path.estimators, strict=True):
        own = DOTClassifier(n_updates=200, random_state=0, tau=tau).fit(X, y, sensitive_features=a)
        np.testing.assert_array_equal(model.coef_, own.coef_)
        row = path.table.set_index("tau").loc[tau]
        assert row["accuracy"] == pytest.approx(accuracy_score(yt, own.predict(Xt)))
