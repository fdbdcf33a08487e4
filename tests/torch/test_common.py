"""scikit-learn's estimator checks on FairMLPClassifier.

The checks call ``fit(X, y)`` without ``sensitive_features``; as in
``tests/classification/test_common.py`` a thin subclass derives each row's group from its own first
value (unrelated to the label) and changes nothing else.
"""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from fairot.torch import FairMLPClassifier
from tests.helpers import IGNORE_SMALL_GROUPS
from tests.helpers import groups_from_first_column as _groups


class _FairMLP(FairMLPClassifier):
    def fit(self, X, y):
        return super().fit(X, y, sensitive_features=_groups(X))


EXPECTED_FAILED = {
    # The check's 300-row blobs give one Adam step per epoch at the default batch of 256: even
    # without the penalty (lam=0) and with 100 epochs the MLP reaches 0.74 training accuracy, below
    # the check's 0.83 bar. Undertraining of a tiny data set, not a fault of the penalty.
    "check_classifiers_train": "one optimiser step per epoch on the check's 300 rows",
}


def _small():
    return _FairMLP(hidden_layer_sizes=(8,), n_epochs=3, warmup_epochs=1, random_state=0)


@pytest.mark.filterwarnings(IGNORE_SMALL_GROUPS)
@parametrize_with_checks([_small()], expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_groups_follow_each_rows_first_value():
    X = np.arange(20, dtype=float).reshape(10, 2)
    assert np.array_equal(_groups(X), _groups(X[::-1])[::-1])
