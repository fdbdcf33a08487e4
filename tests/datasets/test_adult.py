from collections import Counter

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairot.datasets import load_adult
from fairot.utils.sensitive import check_sensitive_features

from .datasets_raw import shipped_bytes, shipped_rows

NUMERIC = ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]


def raw_records():
    """(split, fields) of every record, read with the csv module: the oracle."""
    train = shipped_rows("adult.data")
    test = shipped_rows("adult.test", skip=1)
    assert all(len(r) == 15 for r in train + test)
    return [("train", r) for r in train] + [("test", r) for r in test]


@pytest.fixture(scope="module")
def records():
    return raw_records()


@pytest.fixture(scope="module")
def adult():
    return load_adult()


def test_full_data_counts_match_sources_md(records):
    # SOURCES.md: 32,561 + 16,281 records; labels 24,720 / 7,841 (train), 12,435 / 3,846 (test).
    bunch = load_adult(restrict_race=False, preprocess=False)
    assert len(bunch.target) == 48_842
    counts = pd.crosstab(bunch.split, bunch.target)
    assert counts.loc["train"].tolist() == [24_720, 7_841]
    assert counts.loc["test"].tolist() == [12_435, 3_846]
    assert len(records) == 48_842


def test_missing_values_kept_as_category():
    # SOURCES.md: "?" counts per column, train + test.
    raw = load_adult(restrict_race=False, preprocess=False).data
    assert (raw["workclass"] == "?").sum() == 1_836 + 963
    assert (raw["occupation"] == "?").sum() == 1_843 + 966
    assert (raw["native_country"] == "?").sum() == 583 + 274


def test_black_white_restriction_counts(records, adult):
    kept = [(split, r) for split, r in records if r[8] in ("Black", "White")]
    assert len(adult.target) == len(kept)
    expected_split = Counter(split for split, _ in kept)
    assert adult.split.value_counts().to_dict() == dict(expected_split)
    expected_positive = Counter(split for split, r in kept if r[14].rstrip(".") == ">50K")
    got_positive = adult.target.groupby(adult.split).sum().to_dict()
    assert got_positive == dict(expected_positive)


def test_four_groups_sizes(records, adult):
    expected = Counter((r[8], r[9]) for _, r in records if r[8] in ("Black", "White"))
    got = adult.sensitive.value_counts().to_dict()
    assert got == dict(expected)
    assert set(adult.sensitive["race"]) == {"Black", "White"}
    assert set(adult.sensitive["sex"]) == {"Female", "Male"}
    encoding = check_sensitive_features(adult.sensitive)
    assert encoding.n_groups == 4


def test_rows_are_in_file_order(records, adult):
    raw = load_adult(preprocess=False).data
    kept = [r for _, r in records if r[8] in ("Black", "White")]
    np.testing.assert_array_equal(raw["age"].to_numpy(), [int(r[0]) for r in kept])
    np.testing.assert_array_equal(raw["fnlwgt"].to_numpy(), [int(r[2]) for r in kept])
    assert raw["native_country"].tolist() == [r[13] for r in kept]
    assert (
        adult.split.iloc[
            : sum(1 for s, r in records if s == "train" and r[8] in ("Black", "White"))
        ]
        == "train"
    ).all()


def test_preprocessed_features(adult):
    data = adult.data
    assert (data.dtypes == np.float64).all()
    assert not data.isna().any().any()
    assert data.columns.is_unique
    assert list(data.columns) == adult.feature_names
    np.testing.assert_allclose(data[NUMERIC].mean(), 0.0, atol=1e-10)
    np.testing.assert_allclose(data[NUMERIC].std(ddof=0), 1.0, atol=1e-10)
    raw = load_adult(preprocess=False).data
    for column in ["workclass", "education", "race", "sex", "native_country"]:
        dummies = data[[f"{column}_{value}" for value in sorted(raw[column].unique())]]
        assert set(np.unique(dummies)) == {0.0, 1.0}
        np.testing.assert_array_equal(dummies.sum(axis=1), 1.0)
        # One column per observed value, and no other column with that prefix but education_num.
        prefixed = [c for c in data.columns if c.startswith(column + "_")]
        assert len(set(prefixed) - set(dummies.columns) - {"education_num"}) == 0
    assert "workclass_?" in data.columns
    np.testing.assert_array_equal(data["sex_Female"], (adult.sensitive["sex"] == "Female"))


def test_include_sensitive_false_drops_race_and_sex(adult):
    bunch = load_adult(include_sensitive=False)
    assert not any(c.startswith(("race", "sex")) for c in bunch.data.columns)
    assert bunch.data.shape[1] == adult.data.shape[1] - 4
    assert bunch.sensitive.equals(adult.sensitive)


def test_raw_frame_dtypes():
    raw = load_adult(preprocess=False)
    assert raw.data.shape[1] == 14
    for column in NUMERIC:
        assert raw.data[column].dtype == np.int64
    assert raw.target.dtype == np.int64
    assert raw.target.name == "income_over_50k"
    assert set(raw.target) == {0, 1}


def test_cache_cannot_be_mutated_by_callers():
    first = load_adult(preprocess=False)
    first.data.loc[0, "age"] = -1
    first.sensitive.loc[0, "race"] = "Martian"
    first.target.iloc[0] = 7
    second = load_adult(preprocess=False)
    assert second.data.loc[0, "age"] == 39
    assert second.sensitive.loc[0, "race"] == "White"
    assert second.target.iloc[0] == 0


def test_data_home_copy_is_used(data_home):
    folder = data_home / "adult"
    folder.mkdir(parents=True)
    train_lines = shipped_bytes("adult.data").splitlines(keepends=True)
    test_lines = shipped_bytes("adult.test").splitlines(keepends=True)
    (folder / "adult.data").write_bytes(b"".join(train_lines[:100]))
    (folder / "adult.test").write_bytes(b"".join(test_lines[:51]))  # banner + 50 records
    with pytest.warns(UserWarning, match="differs from the publisher's release"):
        bunch = load_adult(restrict_race=False, preprocess=False)
    assert bunch.split.value_counts().to_dict() == {"train": 100, "test": 50}
    # An explicit data_home wins over FAIROT_DATA_HOME, and falls back to the shipped copy.
    explicit = load_adult(restrict_race=False, data_home=data_home.parent / "empty")
    assert len(explicit.target) == 48_842


def test_offline_without_any_copy(data_home, monkeypatch):
    monkeypatch.setattr("fairot.datasets._base._shipped_path", lambda remote: None)
    with pytest.raises(FileNotFoundError, match="adult.data"):
        load_adult(download_if_missing=False)


def test_descr_has_attribution(adult):
    assert "10.24432/C5XW20" in adult.DESCR
    assert "CC BY 4.0" in adult.DESCR


def test_logistic_regression_baseline_matches_paper(adult):
    # COT paper, Table 1, LR on Adult: Err-.5 = .142 (scikit-learn defaults, train -> test).
    train = (adult.split == "train").to_numpy()
    model = LogisticRegression().fit(adult.data[train], adult.target[train])
    scores = model.predict_proba(adult.data[~train])[:, 1]
    error = np.mean((scores > 0.5) != adult.target[~train].to_numpy())
    assert abs(error - 0.142) <= 0.01
