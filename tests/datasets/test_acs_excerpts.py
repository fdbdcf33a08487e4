"""The NIST ACS data excerpts loader, checked against the shipped CSVs read with the csv module."""

import gzip
import math

import numpy as np
import pandas as pd
import pytest

import fairot.datasets._acs_excerpts as acs_module
from fairot.datasets import load_acs_excerpts
from fairot.datasets._acs_excerpts import (
    MSG_EXCERPT,
    MSG_FEATURES,
    MSG_LOG_NEEDS_SUBSET,
    MSG_N_GROUPS,
    MSG_SUBSET,
    MSG_TARGET,
)

from .datasets_raw import SHARED, SHIPPED, shipped_bytes, shipped_rows

# ../shared/data/SOURCES.md, section 6: rows x 24 columns of each excerpt.
SHAPES = {
    (2018, "national"): ("national2018.csv", 27_111),
    (2019, "national"): ("national2019.csv", 27_253),
    (2018, "massachusetts"): ("ma2018.csv", 7_244),
    (2018, "texas"): ("tx2018.csv", 8_775),
}
INT_CODES = ["AGEP", "SEX", "HISP", "RAC1P", "HOUSING_TYPE", "OWN_RENT", "DEYE", "DEAR"]
INT_CODES += ["PWGTP", "WGTP"]
NULLABLE = ["MSP", "NOC", "NPF", "INDP", "INDP_CAT", "EDU", "PINCP_DECILE", "POVPIP", "DVET"]
NULLABLE += ["DREM", "DPHY"]


def records(name):
    """The header and the records of a shipped excerpt, as strings (the oracle)."""
    rows = shipped_rows(name)
    return rows[0], rows[1:]


@pytest.fixture(scope="module")
def national():
    header, rows = records("national2018.csv")
    return [dict(zip(header, row, strict=True)) for row in rows]


@pytest.mark.parametrize(("key", "expected"), sorted(SHAPES.items()))
def test_shapes_match_sources_md_and_the_file(key, expected):
    name, n_rows = expected
    header, rows = records(name)
    bunch = load_acs_excerpts(*key)
    assert bunch.frame.shape == (n_rows, 24) == (len(rows), len(header))
    assert list(bunch.frame.columns) == header
    assert bunch.data.shape == (n_rows, 17)
    assert bunch.target.shape == bunch.sample_weight.shape == (n_rows,)
    assert bunch.sensitive.shape == (n_rows, 1)


def test_dtypes():
    frame = load_acs_excerpts().frame
    assert str(frame["PUMA"].dtype) == "string"
    for column in INT_CODES:
        assert frame[column].dtype == np.dtype("int64"), column
    for column in NULLABLE:
        assert isinstance(frame[column].dtype, pd.Int64Dtype), column
    assert frame["PINCP"].dtype == frame["DENSITY"].dtype == np.dtype("float64")


def test_missing_marker_becomes_na_and_values_match(national):
    frame = load_acs_excerpts().frame
    for column in NULLABLE + ["PINCP"]:
        marked = np.array([r[column] == "N" for r in national])
        np.testing.assert_array_equal(frame[column].isna().to_numpy(), marked, err_msg=column)
    # SOURCES.md: PINCP is missing for the 4,337 people under 15 in the 2018 national excerpt
    assert int(frame["PINCP"].isna().sum()) == 4_337
    for column in INT_CODES:
        assert not frame[column].isna().any()
    expected_income = [float(r["PINCP"]) if r["PINCP"] != "N" else np.nan for r in national]
    np.testing.assert_array_equal(frame["PINCP"].to_numpy(), expected_income)
    expected_edu = [int(r["EDU"]) for r in national if r["EDU"] != "N"]
    assert frame["EDU"].dropna().astype(int).tolist() == expected_edu
    assert frame["PUMA"].tolist() == [r["PUMA"] for r in national]


def test_acs_income_filter_keeps_19579_rows(national):
    # The count, and the same filter applied to the raw strings.
    kept = [
        r
        for r in national
        if int(r["AGEP"]) > 16
        and r["PINCP"] != "N"
        and float(r["PINCP"]) > 100
        and int(r["PWGTP"]) >= 1
    ]
    bunch = load_acs_excerpts(subset="acs-income")
    assert len(kept) == 19_579 == len(bunch.target)
    np.testing.assert_array_equal(bunch.target.to_numpy(), [float(r["PINCP"]) for r in kept])
    np.testing.assert_array_equal(bunch.sample_weight.to_numpy(), [int(r["PWGTP"]) for r in kept])
    assert int(bunch.sample_weight.sum()) == sum(int(r["PWGTP"]) for r in kept)


def test_regression_paper_subset_log_income_and_three_groups(national):
    kept = [
        r
        for r in national
        if int(r["AGEP"]) > 18 and r["INDP"] != "N" and r["PINCP"] != "N" and float(r["PINCP"]) > 0
    ]
    assert len(kept) == 15_168
    three = [r for r in kept if r["RAC1P"] in ("1", "2", "6")]
    bunch = load_acs_excerpts(
        subset="regression-paper", features="regression-paper", target="log_income", n_groups=3
    )
    assert list(bunch.data.columns) == ["AGEP", "SEX", "EDU", "MSP", "INDP"]
    assert not bunch.data.isna().any().any()
    assert bunch.target.name == "log_income"
    np.testing.assert_allclose(bunch.target, [math.log1p(float(r["PINCP"])) for r in three])
    names = {"1": "White", "2": "Black", "6": "Asian"}
    assert bunch.sensitive["race"].tolist() == [names[r["RAC1P"]] for r in three]
    two = load_acs_excerpts(subset="regression-paper", n_groups=2)
    assert len(two.target) == len(kept)
    expected = ["White" if r["RAC1P"] == "1" else "non-White" for r in kept]
    assert two.sensitive["race"].tolist() == expected


def test_predictors_exclude_income_race_weights_and_area():
    bunch = load_acs_excerpts()
    for column in ("PINCP", "PINCP_DECILE", "POVPIP", "RAC1P", "PWGTP", "WGTP", "PUMA"):
        assert column not in bunch.data.columns
    assert bunch.feature_names == list(bunch.data.columns)
    assert bunch.sensitive["race"].nunique() == 9
    assert bunch.data_dictionary["PWGTP"]["description"] == "Person's sampling weight"
    assert "NIST" in bunch.DESCR and "10.18434/mds2-2895" in bunch.DESCR


def test_frame_is_a_copy():
    first = load_acs_excerpts()
    first.frame.loc[0, "AGEP"] = -5
    assert load_acs_excerpts().frame.loc[0, "AGEP"] != -5


def test_nist_notice_ships_unchanged():
    notice = (SHIPPED / "SDNist_LICENSE.txt").read_bytes()
    assert b"National Institute of Standards and Technology as the source" in notice
    shared = SHARED / "acs_nist" / "SDNist_LICENSE.txt"
    if shared.is_file():
        assert notice == shared.read_bytes()


def test_damaged_shipped_copy_raises(tmp_path, monkeypatch):
    damaged = tmp_path / "national2018.csv.gz"
    content = shipped_bytes("national2018.csv").replace(b"17000.0", b"17001.0", 1)
    damaged.write_bytes(gzip.compress(content))
    monkeypatch.setattr(acs_module, "fetch_raw_file", lambda remote, **kwargs: damaged)
    with pytest.raises(OSError, match="installation is damaged"):
        load_acs_excerpts()


def test_local_copy_is_used_and_checked(data_home):
    local = data_home / "acs_nist" / "tx2018.csv"
    local.parent.mkdir(parents=True)
    header, rows = records("tx2018.csv")
    local.write_text("\n".join(",".join(r) for r in [header, *rows[:10]]) + "\n")
    with pytest.warns(UserWarning, match="differs from the publisher's release"):
        bunch = load_acs_excerpts(2018, "texas")
    assert bunch.frame.shape == (10, 24)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"year": 2019, "region": "texas"}, MSG_EXCERPT.split("{")[0]),
        ({"year": True}, MSG_EXCERPT.split("{")[0]),
        ({"region": "california"}, MSG_EXCERPT.split("{")[0]),
        ({"subset": "adults"}, MSG_SUBSET.split("{")[0]),
        ({"features": "paper"}, MSG_FEATURES.split("{")[0]),
        ({"target": "log"}, MSG_TARGET.split("{")[0]),
        ({"target": "log_income"}, MSG_LOG_NEEDS_SUBSET[:40]),
        ({"n_groups": 4}, MSG_N_GROUPS[:30]),
        ({"n_groups": True}, MSG_N_GROUPS[:30]),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_acs_excerpts(**kwargs)
