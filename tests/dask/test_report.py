"""fairness_report on Dask collections against the in-memory fairot.metrics and SciPy."""

import math
import re

import numpy as np
import pandas as pd
import pytest
import scipy.stats

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

import fairot.dask as fd  # noqa: E402
from fairot import metrics  # noqa: E402
from tests.dask.helpers import TOL, arr  # noqa: E402


def assert_reports_equal(got, expected):
    pd.testing.assert_index_equal(got.index, expected.index)
    assert list(got.columns) == list(expected.columns)
    np.testing.assert_allclose(got.to_numpy(float), expected.to_numpy(float), rtol=0, atol=TOL)
    s_got, s_exp = got.attrs["summary"], expected.attrs["summary"]
    assert s_got.keys() == s_exp.keys()
    for key, value in s_exp.items():
        if isinstance(value, str):
            assert s_got[key] == value, key
        elif math.isinf(value) or math.isnan(value):
            assert s_got[key] == value or (math.isnan(value) and math.isnan(s_got[key])), key
        else:
            assert abs(s_got[key] - value) <= TOL, (key, s_got[key], value)


def test_classification_report_equals_in_memory(client, data):
    expected = metrics.fairness_report(data["y"], data["scores"], sensitive_features=data["race"])
    got = fd.fairness_report(
        arr(data["y"]), arr(data["scores"]), sensitive_features=arr(data["race"])
    )
    assert_reports_equal(got, expected)
    # An oracle we did not write: SciPy's W1 of each group to the pooled scores.
    for name in ["b", "o", "w"]:
        w1 = scipy.stats.wasserstein_distance(data["scores"][data["race"] == name], data["scores"])
        assert abs(got.loc[name, "w1_to_pooled"] - w1) <= TOL


def test_regression_report_from_dataframe_columns(client, data):
    frame = pd.DataFrame(
        {"r": data["r"], "pred": data["scores"] * 3, "race": data["race"], "sex": data["sex"]}
    )
    ddf = dd.from_pandas(frame, npartitions=4)
    expected = metrics.fairness_report(
        frame["r"], frame["pred"], sensitive_features=frame[["race", "sex"]], task="regression"
    )
    got = fd.fairness_report(
        ddf["r"], ddf["pred"], sensitive_features=ddf[["race", "sex"]], task="regression"
    )
    assert_reports_equal(got, expected)


@pytest.mark.parametrize("threshold", [float("nan"), 5, -0.1, float("inf")])
def test_fairness_report_rejects_bad_threshold_like_memory(threshold):
    from fairot.metrics.checks import MSG_THRESHOLD

    da = pytest.importorskip("dask.array")
    scores = np.array([0.2, 0.9, 0.6, 0.4])
    groups = np.array(["a", "a", "b", "b"])
    match = re.escape(MSG_THRESHOLD.split(";")[0])
    with pytest.raises(ValueError, match=match):
        metrics.fairness_report(None, scores, sensitive_features=groups, threshold=threshold)
    with pytest.raises(ValueError, match=match):
        fd.fairness_report(
            None,
            da.from_array(scores, chunks=2),
            sensitive_features=da.from_array(groups, chunks=2),
            threshold=threshold,
        )
