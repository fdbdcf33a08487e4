from collections import Counter

import numpy as np
import pytest

from fairot.datasets import load_german_credit
from fairot.utils.sensitive import check_sensitive_features

from .datasets_raw import shipped_bytes, shipped_rows

NUMERIC_FIELDS = {1: "duration_months", 4: "credit_amount", 12: "age"}


@pytest.fixture(scope="module")
def rows():
    return shipped_rows("german.data", delimiter=" ")


@pytest.fixture(scope="module")
def credit():
    return load_german_credit()


def test_counts_and_label_encoding(rows, credit):
    assert len(rows) == 1_000 and all(len(r) == 21 for r in rows)
    assert credit.data.shape[0] == 1_000
    # SOURCES.md: class 1 = good (700), 2 = bad (300); positive class = good credit.
    assert credit.target.value_counts().to_dict() == {1: 700, 0: 300}
    np.testing.assert_array_equal(credit.target, [1 if r[20] == "1" else 0 for r in rows])
    assert credit.target.name == "good_credit"
    assert credit.split is None


def test_age_groups(rows, credit):
    expected = Counter("<30" if int(r[12]) < 30 else ">=30" for r in rows)
    assert credit.sensitive["age_group"].value_counts().to_dict() == dict(expected)
    assert list(credit.sensitive.columns) == ["age_group"]
    assert check_sensitive_features(credit.sensitive).n_groups == 2


def test_raw_frame_decodes_every_code(rows):
    raw = load_german_credit(preprocess=False).data
    assert raw.shape == (1_000, 20)
    for index, name in NUMERIC_FIELDS.items():
        np.testing.assert_array_equal(raw[name], [int(r[index]) for r in rows])
    # The checking-account codes of german.doc, attribute 1.
    doc = {"A11": "< 0 DM", "A12": "0 to 200 DM", "A14": "no checking account"}
    for row, value in zip(rows, raw["checking_status"], strict=True):
        if row[0] in doc:
            assert value == doc[row[0]]
    assert not raw.isna().any().any()
    assert (
        not raw.select_dtypes(exclude="number").apply(lambda c: c.str.match(r"^A\d+$")).any().any()
    )


def test_preprocessed_features(credit):
    data = credit.data
    assert (data.dtypes == np.float64).all() and not data.isna().any().any()
    numeric = [
        "duration_months",
        "credit_amount",
        "installment_rate",
        "residence_since",
        "age",
        "existing_credits",
        "people_liable",
    ]
    np.testing.assert_allclose(data[numeric].mean(), 0.0, atol=1e-10)
    np.testing.assert_allclose(data[numeric].std(ddof=0), 1.0, atol=1e-10)
    # 7 numeric columns + one column per observed value of the 13 categorical attributes.
    raw = load_german_credit(preprocess=False).data
    n_values = sum(raw[c].nunique() for c in raw.columns if c not in numeric)
    assert data.shape[1] == 7 + n_values


def test_include_sensitive_false_drops_age(credit):
    bunch = load_german_credit(include_sensitive=False)
    assert "age" not in bunch.data.columns
    assert bunch.data.shape[1] == credit.data.shape[1] - 1


def test_data_home_copy_is_used(data_home):
    folder = data_home / "german_credit"
    folder.mkdir(parents=True)
    lines = shipped_bytes("german.data").splitlines(keepends=True)
    (folder / "german.data").write_bytes(b"".join(lines[:40]))
    with pytest.warns(UserWarning, match="differs from the publisher's release"):
        bunch = load_german_credit()
    assert len(bunch.target) == 40


def test_descr_has_attribution(credit):
    assert "10.24432/C5NC77" in credit.DESCR
