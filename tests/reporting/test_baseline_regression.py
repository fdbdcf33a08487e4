"""The gradient-boosting baseline audit on the built-in regression data."""

import pytest

from fairot.datasets import load_baseline_split
from fairot.reporting import audit_gradient_boosting
from fairot.reporting._baseline_regression import MSG_REGRESSION_DATASET


def test_split_is_stratified_by_race_group():
    split = load_baseline_split("acs-excerpts")
    # 13,791 White, Black or Asian rows pass the paper's filter (tests/datasets)
    assert (len(split.X_train), len(split.X_test)) == (9653, 4138)
    assert list(split.X_train.columns) == ["AGEP", "SEX", "EDU", "MSP", "INDP"]
    assert "by race group" in split.split_note
    train = split.sensitive_train["race"].value_counts(normalize=True)
    test = split.sensitive_test["race"].value_counts(normalize=True)
    assert (train - test).abs().max() < 1e-3


def test_other_groupings_pass_to_the_loader():
    result = audit_gradient_boosting(n_groups=2, plots=False, n_bootstrap=0)
    assert list(result.report.index[:-1]) == ["White", "non-White"]
    assert result.summary["n_samples"] == 4551


def test_unknown_regression_dataset():
    with pytest.raises(ValueError, match=MSG_REGRESSION_DATASET.split("{")[0]):
        audit_gradient_boosting("adult")
