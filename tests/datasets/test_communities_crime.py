import re

import numpy as np
import pytest

from fairot.datasets import load_communities_crime
from fairot.datasets._communities_crime import (
    MSG_N_GROUPS,
    MSG_N_GROUPS_CLASSIFICATION,
    MSG_TASK,
    MSG_TERTILES_MEAN,
    MSG_THRESHOLD,
)
from fairot.utils.sensitive import check_sensitive_features

from .datasets_raw import shipped_bytes, shipped_rows

RACES = {
    "racepctblack": "black",
    "racePctWhite": "white",
    "racePctAsian": "asian",
    "racePctHisp": "hispanic",
}


def oracle():
    """Column name -> list of raw strings, read with the csv module."""
    names = [
        line.split()[1]
        for line in shipped_bytes("communities.names").decode("ascii").splitlines()
        if line.startswith("@attribute")
    ]
    rows = shipped_rows("communities.data")
    assert len(names) == 128 and all(len(r) == 128 for r in rows)
    return {name: [r[i] for r in rows] for i, name in enumerate(names)}


@pytest.fixture(scope="module")
def columns():
    return oracle()


@pytest.fixture(scope="module")
def crime():
    return load_communities_crime()


def test_crlf_file_and_shape(crime):
    assert b"\r\n" in shipped_bytes("communities.data")
    assert crime.data.shape == (1_994, 99)
    assert crime.split is None


def test_dropped_columns_are_the_non_predictive_and_incomplete_ones(columns, crime):
    incomplete = {name for name, values in columns.items() if "?" in values}
    assert len(incomplete) == 25  # SOURCES.md
    expected = [
        name
        for name in columns
        if name not in incomplete
        and name not in {"state", "communityname", "fold", "ViolentCrimesPerPop"}
    ]
    assert crime.feature_names == expected
    raw = load_communities_crime(preprocess=False).data
    for name in ["racepctblack", "PctKids2Par", "medIncome"]:
        np.testing.assert_array_equal(raw[name], [float(v) for v in columns[name]])
    assert not crime.data.isna().any().any()
    np.testing.assert_allclose(crime.data.mean(), 0.0, atol=1e-10)
    np.testing.assert_allclose(crime.data.std(ddof=0), 1.0, atol=1e-10)


def test_classification_label_is_above_70th_percentile(columns, crime):
    crime_rate = sorted(float(v) for v in columns["ViolentCrimesPerPop"])
    # 70th percentile by linear interpolation between order statistics (numpy's default).
    position = 0.7 * (len(crime_rate) - 1)
    low = int(np.floor(position))
    cut = crime_rate[low] + (position - low) * (crime_rate[low + 1] - crime_rate[low])
    expected = [int(float(v) > cut) for v in columns["ViolentCrimesPerPop"]]
    np.testing.assert_array_equal(crime.target, expected)
    assert 0.25 < crime.target.mean() <= 0.30


@pytest.mark.parametrize("threshold", ["median", "mean"])
def test_race_groups(columns, threshold):
    bunch = load_communities_crime(race_threshold=threshold)
    assert list(bunch.sensitive.columns) == list(RACES.values())
    for source, group in RACES.items():
        values = np.array([float(v) for v in columns[source]])
        cut = np.median(values) if threshold == "median" else values.mean()
        expected = np.where(values > cut, "high", "low")
        np.testing.assert_array_equal(bunch.sensitive[group].to_numpy(dtype=str), expected)
    encoding = check_sensitive_features(bunch.sensitive, group_mode="marginal")
    assert encoding.n_groups == 8
    np.testing.assert_array_equal(encoding.membership.sum(axis=1), 4)


def test_group_indicators_and_include_sensitive(crime):
    bunch = load_communities_crime(include_group_indicators=True)
    indicators = bunch.data.iloc[:, crime.data.shape[1] :]
    assert sorted(indicators.columns) == sorted(
        f"{g}_{level}" for g in RACES.values() for level in ("high", "low")
    )
    np.testing.assert_array_equal(indicators["black_high"], crime.sensitive["black"] == "high")
    without = load_communities_crime(include_sensitive=False)
    assert set(crime.feature_names) - set(without.feature_names) == set(RACES)


def test_regression_two_groups(columns):
    bunch = load_communities_crime(task="regression")
    np.testing.assert_array_equal(bunch.target, [float(v) for v in columns["ViolentCrimesPerPop"]])
    assert bunch.target.dtype == np.float64
    black = np.array([float(v) for v in columns["racepctblack"]])
    expected = np.where(black > np.median(black), "high", "low")
    np.testing.assert_array_equal(bunch.sensitive["black"].to_numpy(dtype=str), expected)
    assert bunch.data.shape == (1_994, 99)


def test_regression_tertiles(columns):
    bunch = load_communities_crime(task="regression", n_groups=3)
    black = np.array([float(v) for v in columns["racepctblack"]])
    q1, q2 = np.quantile(black, [1 / 3, 2 / 3])
    expected = np.where(black <= q1, "low", np.where(black <= q2, "middle", "high"))
    np.testing.assert_array_equal(bunch.sensitive["black"].to_numpy(dtype=str), expected)
    assert check_sensitive_features(bunch.sensitive).n_groups == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"task": "ranking"}, MSG_TASK.format(value="ranking")),
        ({"race_threshold": "mode"}, MSG_THRESHOLD.format(value="mode")),
        ({"n_groups": 2}, MSG_N_GROUPS_CLASSIFICATION.format(value=2)),
        ({"task": "regression", "n_groups": 4}, MSG_N_GROUPS.format(value=4)),
        ({"task": "regression", "n_groups": 3, "race_threshold": "mean"}, MSG_TERTILES_MEAN),
    ],
)
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        load_communities_crime(**kwargs)


def test_data_home_copy_is_used(data_home):
    folder = data_home / "communities_crime"
    folder.mkdir(parents=True)
    lines = shipped_bytes("communities.data").splitlines(keepends=True)
    (folder / "communities.data").write_bytes(b"".join(lines[:30]))
    with pytest.warns(UserWarning, match="differs from the publisher's release"):
        bunch = load_communities_crime(preprocess=False)
    assert len(bunch.target) == 30
