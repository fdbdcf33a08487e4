"""scikit-learn's estimator checks on COT, DOT and DPP.

The checks call ``fit(X, y)`` and ``predict(X)`` without ``sensitive_features``, which our
estimators require (keyword-only, as in fairlearn). They therefore run on thin subclasses that
derive the sensitive feature from the data itself (a pseudo-random bit of each row's first value)
and change nothing else: parameters, cloning, fitted attributes, input
validation, dtypes, pickling and predictions are those of the real estimators.
"""

import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import _num_samples

from fairot.classification import COTClassifier, DOTClassifier, QuantileParityPostProcessor


def _first_column(X):
    """First column of whatever the check passes, or None when it is not a usable 2-D input."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if hasattr(X, "tocsr"):
                return np.asarray(X.tocsr()[:, [0]].toarray(), dtype=float).ravel()
            X = np.asarray(X, dtype=float)
    except (TypeError, ValueError, IndexError, NotImplementedError):
        return None
    if X.ndim != 2 or X.shape[1] == 0:
        return None
    return X[:, 0]


def _groups(X):
    column = _first_column(X)
    if column is None:
        # Let the estimator's own validation reject X; any two-group labelling will do.
        try:
            n = _num_samples(X)
        except TypeError:
            return None
        return np.arange(n) % 2
    # A pseudo-random group from the row's own first value: the same row always gets the same
    # group (repeated rows and weighted rows agree, as the sample-weight checks need), and the
    # group is unrelated to the label.
    with np.errstate(invalid="ignore"):
        code = np.floor(np.nan_to_num(np.abs(column), posinf=0.0) * 997.0 + 0.5)
    return (code % 2).astype(int)


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
    return {} if isinstance(estimator, _DPP) else EXPECTED_OT


@pytest.mark.filterwarnings("ignore:group .* has .* rows, fewer than batch_size:UserWarning")
# The checks' inputs are unscaled (features near 100): the step sizes are scaled down with them,
# else the divergence guard rightly stops the fit.
@parametrize_with_checks(
    [
        _COT(n_updates=30, batch_size=5, step_size=1e-5, random_state=0),
        _DOT(n_updates=30, batch_size=5, step_size=1e-5, random_state=0),
        _DPP(),
    ],
    expected_failed_checks=_expected,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
