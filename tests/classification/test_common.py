"""scikit-learn's estimator checks on COT, DOT, DPP and RateConstrainedClassifier.

The checks call ``fit(X, y)`` and ``predict(X)`` without ``sensitive_features``, which our
estimators require (keyword-only, as in fairlearn). They therefore run on thin subclasses that
derive the sensitive feature from the data itself (a pseudo-random bit of each row's first value)
and change nothing else: parameters, cloning, fitted attributes, input
validation, dtypes, pickling and predictions are those of the real estimators.
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from fairot.classification import (
    COTClassifier,
    DOTClassifier,
    QuantileParityPostProcessor,
    RateConstrainedClassifier,
)
from tests.helpers import IGNORE_SMALL_GROUPS
from tests.helpers import groups_from_first_column as _groups


class _COT(COTClassifier):
    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sensitive_features=_groups(X), sample_weight=sample_weight)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        if not hasattr(self, "cut_"):
            return super().partial_fit(
                X,
                y,
                classes=classes,
                sensitive_features=_groups(X),
                sample_weight=sample_weight,
            )


class _DOT(DOTClassifier):
    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sensitive_features=_groups(X), sample_weight=sample_weight)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        if not hasattr(self, "cut_"):
            return super().partial_fit(
                X,
                y,
                classes=classes,
                sensitive_features=_groups(X),
                sample_weight=sample_weight,
            )


class _DPP(QuantileParityPostProcessor):
    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sensitive_features=_groups(X), sample_weight=sample_weight)

    def predict_proba(self, X, sensitive_features=None):
        if sensitive_features is None:
            sensitive_features = _groups(X)
        return super().predict_proba(X, sensitive_features=sensitive_features)


class _Rate(RateConstrainedClassifier):
    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sensitive_features=_groups(X), sample_weight=sample_weight)


# COT and DOT are stochastic: weighted rows are drawn with probability proportional to their
# weight, which equals repeating them in distribution but not draw by draw, so two fits differ
# as two seeds do. DPP is deterministic and passes both (tests/classification/test_weights.py
# checks it against repeated rows to 1e-9 on real data).
EXPECTED_OT = {
    check: "stochastic batches: weights equal repeated rows in distribution, not draw by draw"
    for check in (
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    )
}


def _expected(estimator):
    return {} if isinstance(estimator, (_DPP, _Rate)) else EXPECTED_OT


@pytest.mark.filterwarnings("ignore:group .* has .* rows, fewer than batch_size:UserWarning")
@pytest.mark.filterwarnings(IGNORE_SMALL_GROUPS)
# The checks' inputs are unscaled (features near 100): the step sizes are scaled down with them,
# else the divergence guard rightly stops the fit.
@parametrize_with_checks(
    [
        _COT(n_updates=30, batch_size=5, step_size=1e-5, random_state=0),
        _DOT(n_updates=30, batch_size=5, step_size=1e-5, random_state=0),
        _DPP(),
        # cv=2: the checks' smallest data sets have few rows per (group, label) cell.
        _Rate(max_difference=0.1, cv=2, random_state=0),
    ],
    expected_failed_checks=_expected,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
