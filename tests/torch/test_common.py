"""scikit-learn's estimator checks on FairMLPClassifier.

The checks call ``fit(X, y)`` without ``sensitive_features``; as in
``tests/classification/test_common.py`` a thin subclass derives the group from the first column
(thresholded at its fit-time median) and changes nothing else.
"""

import numpy as np
from sklearn.utils.estimator_checks import parametrize_with_checks

from fairot.torch import FairMLPClassifier
from tests.classification.test_common import _cut, _groups


class _FairMLP(FairMLPClassifier):
    def fit(self, X, y):
        self.cut_ = _cut(X)
        return super().fit(X, y, sensitive_features=_groups(X, self.cut_))


EXPECTED_FAILED = {
    # Equalising the score distributions of groups defined by the most predictive column (the
    # checks' data) costs accuracy by design: the 0.83 bar is out of reach, as for DPP.
    "check_classifiers_train": "demographic parity on the first column costs accuracy",
}


def _small():
    return _FairMLP(hidden_layer_sizes=(8,), n_epochs=3, warmup_epochs=1, random_state=0)


@parametrize_with_checks([_small()], expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_groups_follow_first_column():
    X = np.arange(20, dtype=float).reshape(10, 2)
    assert _groups(X, _cut(X)).tolist() == [0] * 5 + [1] * 5
