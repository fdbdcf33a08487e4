"""scikit-learn's estimator checks on COT, DOT and DPP.

The checks call ``fit(X, y)`` and ``predict(X)`` without ``sensitive_features``, which our
estimators require (keyword-only, as in fairlearn). They therefore run on thin subclasses that
derive the sensitive feature from the data itself (the sign of the first column, thresholded at
its fit-time median) and change nothing else: parameters, cloning, fitted attributes, input
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


def _groups(X, cut):
    column = _first_column(X)
    if column is None:
        # Let the estimator's own validation reject X; any two-group labelling will do.
        try:
            n = _num_samples(X)
        except TypeError:
            return None
        return np.arange(n) % 2
    return (column > cut).astype(int)


def _cut(X):
    column = _first_column(X)
    return float(np.median(column)) if column is not None and column.size else 0.0


class _COT(COTClassifier):
    def fit(self, X, y):
        self.cut_ = _cut(X)
        return super().fit(X, y, sensitive_features=_groups(X, self.cut_))

    def partial_fit(self, X, y, classes=None):
        if not hasattr(self, "cut_"):
            self.cut_ = _cut(X)
        return super().partial_fit(X, y, classes=classes, sensitive_features=_groups(X, self.cut_))


class _DOT(DOTClassifier):
    def fit(self, X, y):
        self.cut_ = _cut(X)
        return super().fit(X, y, sensitive_features=_groups(X, self.cut_))

    def partial_fit(self, X, y, classes=None):
        if not hasattr(self, "cut_"):
            self.cut_ = _cut(X)
        return super().partial_fit(X, y, classes=classes, sensitive_features=_groups(X, self.cut_))


class _DPP(QuantileParityPostProcessor):
    def fit(self, X, y):
        self.cut_ = _cut(X)
        return super().fit(X, y, sensitive_features=_groups(X, self.cut_))

    def predict_proba(self, X, sensitive_features=None):
        if sensitive_features is None:
            sensitive_features = _groups(X, getattr(self, "cut_", 0))
        return super().predict_proba(X, sensitive_features=sensitive_features)

    def predict(self, X):
        return super().predict(X, sensitive_features=_groups(X, getattr(self, "cut_", 0)))


# Every check passes except one for DPP. On the check's blobs the derived group (first column)
# predicts the label almost perfectly; equalising the two groups' score distributions then
# costs accuracy below the check's 0.83.
# That is DPP doing its job, not a defect.
EXPECTED_DPP = {
    "check_classifiers_train": "equalising groups defined by the most predictive column",
}


def _expected(estimator):
    return EXPECTED_DPP if isinstance(estimator, _DPP) else {}


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
