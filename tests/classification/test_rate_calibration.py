"""The calibration of RateConstrainedClassifier's cell probabilities.

The oracles: the exact cell posteriors of a Gaussian mixture (``_TrueCells``), the population
selection rates of a rule integrated from its closed-form densities on a fine grid,
scikit-learn's ``log_loss`` and ``CalibratedClassifierCV(method="isotonic")``.
"""

import re

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from threadpoolctl import threadpool_limits

from fairot.classification import RateConstrainedClassifier
from fairot.classification._rate_calibration import resolve_calibration
from tests.helpers import TrueCells as _TrueCells
from tests.helpers import population_selection_rates as _population_selection_rates


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Many small logistic fits: one BLAS thread runs them three times faster than threads
    that fight over a loaded machine's cores (the results are the same)."""
    with threadpool_limits(1):
        yield


class _Miscalibrated(ClassifierMixin, BaseEstimator):
    """A logistic model of the cells with a temperature: softmax(log p / T).

    The logistic model of the mixture's cells is well specified (equal variances), so it is
    calibrated; T < 1 makes it overconfident, T > 1 underconfident.
    """

    def __init__(self, temperature=0.3):
        self.temperature = temperature

    def fit(self, X, y, sample_weight=None):
        self.model_ = LogisticRegression(max_iter=1000).fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        logits = np.log(self.model_.predict_proba(X)) / self.temperature
        logits -= logits.max(axis=1, keepdims=True)
        proba = np.exp(logits)
        return proba / proba.sum(axis=1, keepdims=True)


def test_the_map_lowers_the_log_loss_of_an_overconfident_model_and_finds_the_truth():
    truth = _TrueCells().fit(None)
    X, y, a = truth.sample(4000, seed=0)
    codes = 2 * a + y
    X_new, _, _ = truth.sample(20_000, seed=9)
    exact = truth.predict_proba(X_new)
    errors = {}
    for calibration in (None, "sigmoid", "isotonic"):
        model = RateConstrainedClassifier(
            estimator=_Miscalibrated(), calibration=calibration, max_difference=0.05, random_state=0
        ).fit(X, y, sensitive_features=a)
        assert model.calibration_ == calibration
        # The reported log-losses, against scikit-learn's.
        assert model.cv_log_loss_ == pytest.approx(log_loss(codes, model.cv_proba_), rel=1e-9)
        np.testing.assert_allclose(model.cv_proba_.sum(axis=1), 1.0)
        if calibration is None:
            assert model.cv_log_loss_ == model.cv_log_loss_uncalibrated_
        else:
            assert model.cv_log_loss_ < model.cv_log_loss_uncalibrated_ - 0.4
        errors[calibration] = np.abs(model.cell_proba(X_new) - exact).mean()
    # Sharpened by T = 0.3, the model is far from the true posteriors on new rows (mean
    # absolute error .13); the sigmoid map (matrix scaling undoes a temperature) brings it
    # back to the logistic model's own sampling error on 4,000 rows (.005), the isotonic one
    # (one-vs-rest, which a temperature does not act on cell by cell) to a fifth of it.
    assert errors[None] > 0.1
    assert errors["sigmoid"] < 0.01
    assert errors["isotonic"] < 0.2 * errors[None]


@pytest.mark.parametrize("temperature", [0.15, 3.0])
def test_calibration_makes_a_miscalibrated_model_meet_the_population_budget(temperature):
    """The population DP of the rule, from the closed form: missed uncalibrated, met calibrated.

    On 10,000 training rows (about 6,000 and 4,000 per group, rates near .25) the gap of two
    group rates has a standard error of about .009: a rule on calibrated probabilities is
    within .02 of the budget; the over- (T = .15) or underconfident (T = 3) model's misses it
    by more than .03.
    """
    truth = _TrueCells().fit(None)
    X, y, a = truth.sample(10_000, seed=1)
    gaps = {}
    for calibration in (None, "auto"):
        model = RateConstrainedClassifier(
            estimator=_Miscalibrated(temperature),
            calibration=calibration,
            max_difference=0.05,
            random_state=0,
        ).fit(X, y, sensitive_features=a)
        rates = _population_selection_rates(model, truth)
        gaps[calibration] = abs(rates[0] - rates[1])
    assert gaps[None] > 0.05 + 0.03
    assert gaps["auto"] <= 0.05 + 0.02


def test_auto_calibrates_only_a_model_that_is_not_calibrated_by_construction():
    truth = _TrueCells().fit(None)
    X, y, a = truth.sample(600, seed=2)
    frozen = FrozenEstimator(LogisticRegression(max_iter=1000).fit(X, 2 * a + y))
    chosen = {}
    for name, estimator in {
        "default": None,
        "logistic": LogisticRegression(max_iter=1000),
        "pipeline": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        "calibrated": CalibratedClassifierCV(GaussianNB(), cv=2),
        "frozen": frozen,
        "naive Bayes": GaussianNB(),
    }.items():
        model = RateConstrainedClassifier(estimator=estimator, max_difference=0.1, random_state=0)
        chosen[name] = model.fit(X, y, sensitive_features=a).calibration_
        if chosen[name] is None:
            assert model.cv_log_loss_ == model.cv_log_loss_uncalibrated_
    assert chosen == {
        "default": None,
        "logistic": None,
        "pipeline": None,
        "calibrated": None,
        "frozen": None,
        "naive Bayes": "sigmoid",
    }
    # Boosting (not fitted here: its threads are slow on a loaded machine) is calibrated too.
    assert resolve_calibration("auto", HistGradientBoostingClassifier()) == "sigmoid"
    assert resolve_calibration(None, HistGradientBoostingClassifier()) is None
    assert resolve_calibration("isotonic", LogisticRegression()) == "isotonic"
    # A method named calibrates a frozen model too (on the fitting rows, as
    # CalibratedClassifierCV(FrozenEstimator(...)) does).
    named = RateConstrainedClassifier(estimator=frozen, calibration="sigmoid", max_difference=0.1)
    assert named.fit(X, y, sensitive_features=a).calibration_ == "sigmoid"


class _ProbaOnly(ClassifierMixin, BaseEstimator):
    """A logistic model that shows scikit-learn its probabilities only (no decision_function)."""

    def fit(self, X, y):
        self.model_ = LogisticRegression(max_iter=1000).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)

    def predict(self, X):
        return self.model_.predict(X)


def test_the_isotonic_map_is_scikit_learns_and_predictions_read_the_calibrated_probabilities():
    truth = _TrueCells().fit(None)
    X, y, a = truth.sample(3000, seed=3)
    X_new, _, _ = truth.sample(500, seed=4)
    frozen = FrozenEstimator(_ProbaOnly().fit(X, 2 * a + y))
    model = RateConstrainedClassifier(
        estimator=frozen, calibration="isotonic", max_difference=0.05
    ).fit(X, y, sensitive_features=a)
    oracle = CalibratedClassifierCV(frozen, method="isotonic").fit(X, 2 * a + y)
    np.testing.assert_allclose(model.cell_proba(X_new), oracle.predict_proba(X_new), atol=1e-12)
    # The rule's score from the calibrated probabilities, written out.
    P = oracle.predict_proba(X_new)
    q = np.column_stack([P[:, 0] + P[:, 1], P[:, 2] + P[:, 3]])
    s = 2 * (P[:, 1] + P[:, 3]) - 1 - (q / model.unit_shares_) @ model.multipliers_
    np.testing.assert_allclose(model.decision_function(X_new), s, atol=1e-10)
    np.testing.assert_array_equal(model.predict(X_new)[np.abs(s) > 1e-9], (s > 0)[np.abs(s) > 1e-9])
    np.testing.assert_allclose(model.base_scores(X_new), P[:, 1] + P[:, 3], atol=1e-12)


@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
def test_calibrated_fits_are_deterministic_and_with_budget_keeps_the_map(calibration):
    truth = _TrueCells().fit(None)
    X, y, a = truth.sample(1500, seed=5)
    kwargs = {"estimator": _Miscalibrated(), "calibration": calibration, "random_state": 3}
    first = RateConstrainedClassifier(max_difference=0.05, **kwargs).fit(X, y, sensitive_features=a)
    second = RateConstrainedClassifier(max_difference=0.05, **kwargs).fit(
        X, y, sensitive_features=a
    )
    np.testing.assert_array_equal(first.cv_proba_, second.cv_proba_)
    np.testing.assert_array_equal(first.decision_function(X), second.decision_function(X))
    other = first.with_budget(max_difference=0.1)
    assert other.calibration_ == calibration and other.cv_proba_ is first.cv_proba_
    np.testing.assert_array_equal(other.cell_proba(X), first.cell_proba(X))
    refit = clone(other).fit(X, y, sensitive_features=a)
    np.testing.assert_allclose(other.multipliers_, refit.multipliers_, atol=1e-9)


def test_bad_calibration_and_confidence_are_refused_by_name():
    truth = _TrueCells().fit(None)
    X, y, a = truth.sample(200, seed=6)
    for kwargs, name in (
        ({"calibration": "platt"}, "calibration"),
        ({"calibration": "none"}, "calibration"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 0.0}, "confidence"),
        ({"confidence": "high"}, "confidence"),
    ):
        model = RateConstrainedClassifier(max_difference=0.1, **kwargs)
        with pytest.raises(InvalidParameterError, match=re.escape(f"'{name}' parameter")):
            model.fit(X, y, sensitive_features=a)


@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
def test_a_calibrated_model_round_trips_through_fairot_load_model(calibration, tmp_path):
    from fairot import load_model, save_model

    truth = _TrueCells().fit(None)
    X, y, a = truth.sample(800, seed=7)
    model = RateConstrainedClassifier(
        estimator=GaussianNB(), calibration=calibration, max_difference=0.05, random_state=0
    ).fit(X, y, sensitive_features=a)
    save_model(model, tmp_path / "rate.skops")
    back = load_model(tmp_path / "rate.skops")
    assert back.calibration_ == calibration
    np.testing.assert_array_equal(back.cell_proba(X), model.cell_proba(X))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
