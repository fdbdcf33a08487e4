"""The train/test splits of the built-in data sets that the audits and the reproductions share."""

from fairot.datasets import load_baseline_split


def test_split_is_stratified_by_race_group():
    split = load_baseline_split("acs-excerpts")
    # 13,791 White, Black or Asian rows pass the paper's filter (tests/datasets)
    assert (len(split.X_train), len(split.X_test)) == (9653, 4138)
    assert list(split.X_train.columns) == ["AGEP", "SEX", "EDU", "MSP", "INDP"]
    assert "by race group" in split.split_note
    train = split.sensitive_train["race"].value_counts(normalize=True)
    test = split.sensitive_test["race"].value_counts(normalize=True)
    assert (train - test).abs().max() < 1e-3
