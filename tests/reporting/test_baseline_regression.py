"""The gradient-boosting baseline audit on the built-in regression data."""

import pytest

from fairot.reporting import audit_gradient_boosting
from fairot.reporting._baseline_regression import MSG_REGRESSION_DATASET


def test_other_groupings_pass_to_the_loader():
    result = audit_gradient_boosting(n_groups=2, plots=False, n_bootstrap=0)
    assert list(result.report.index[:-1]) == ["White", "non-White"]
    assert result.summary["n_samples"] == 4551


def test_unknown_regression_dataset():
    with pytest.raises(ValueError, match=MSG_REGRESSION_DATASET.split("{")[0]):
        audit_gradient_boosting("adult")
