"""STD and SER against their definitions and fairlearn's frames."""

import re
import statistics

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import MetricFrame
from sklearn.metrics import accuracy_score

from fairot.metrics import group_accuracy_std, skewed_error_ratio
from fairot.metrics._groups import MSG_ACCURACY_RANGE


def test_std_and_ser_definitions():
    acc = [0.9618, 0.9425, 0.9447, 0.9398]
    assert group_accuracy_std(acc) == pytest.approx(statistics.pstdev(acc))
    assert group_accuracy_std(acc, ddof=1) == pytest.approx(statistics.stdev(acc))
    errors = [1 - a for a in acc]
    assert skewed_error_ratio(acc) == pytest.approx(max(errors) / min(errors))
    assert skewed_error_ratio({"a": 0.9, "b": 0.9}) == pytest.approx(1.0)


def test_std_and_ser_accept_metricframe_by_group():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 300)
    pred = np.where(rng.random(300) < 0.8, y, 1 - y)
    g = rng.choice(["I", "II", "III", "IV"], 300)
    frame = MetricFrame(metrics=accuracy_score, y_true=y, y_pred=pred, sensitive_features=g)
    by_group = frame.by_group
    assert group_accuracy_std(by_group) == pytest.approx(np.std(by_group.to_numpy()))
    assert skewed_error_ratio(by_group) == pytest.approx(
        (1 - by_group).max() / (1 - by_group).min()
    )
    assert skewed_error_ratio(pd.Series(by_group)) == skewed_error_ratio(dict(by_group))


def test_bad_accuracies():
    with pytest.raises(ValueError, match=re.escape(MSG_ACCURACY_RANGE.split("{")[0])):
        group_accuracy_std([96.1, 94.2])
    with pytest.raises(ValueError, match="at least two groups"):
        skewed_error_ratio([0.9])
    with pytest.raises(ValueError, match="zero error"):
        skewed_error_ratio([1.0, 0.9])
