"""Pairwise gaps against POT; STD and SER against their definitions and fairlearn's frames."""

import re
import statistics

import numpy as np
import ot
import pandas as pd
import pytest
from fairlearn.metrics import MetricFrame
from sklearn.metrics import accuracy_score

from fairot.metrics import (
    group_accuracy_std,
    max_pairwise_wasserstein,
    skewed_error_ratio,
    wasserstein_distance,
)
from fairot.metrics._groups import MSG_ACCURACY_RANGE


def test_wasserstein_distance_p2_matches_pot():
    rng = np.random.default_rng(0)
    u, v = rng.normal(size=40), rng.normal(1, 2, size=60)
    assert wasserstein_distance(u, v, p=2) == pytest.approx(
        ot.wasserstein_1d(u, v, p=2) ** 0.5, rel=1e-10
    )


@pytest.mark.parametrize("p", [1, 2, np.inf])
def test_max_pairwise_wasserstein_against_pot(p):
    rng = np.random.default_rng(1)
    g = rng.integers(0, 4, size=400)
    pred = rng.normal(size=400) + 0.5 * g**1.5
    gap = max_pairwise_wasserstein(None, pred, sensitive_features=g, p=p)
    brute = {}
    for a in range(4):
        for b in range(a + 1, 4):
            x, y = pred[g == a], pred[g == b]
            if np.isinf(p):
                # A strictly convex cost has the unique monotone plan, which attains W_inf.
                cost = (x[:, None] - y[None]) ** 2
                plan = ot.emd(np.full(len(x), 1 / len(x)), np.full(len(y), 1 / len(y)), cost)
                brute[(a, b)] = np.sqrt(cost[plan > 1e-12].max())
            else:
                brute[(a, b)] = ot.wasserstein_1d(x, y, p=p) ** (1 / p)
    best = max(brute, key=brute.get)
    assert gap.distance == pytest.approx(brute[best], rel=1e-9)
    assert gap.pair == (str(best[0]), str(best[1]))
    assert gap.matrix.loc["1", "3"] == pytest.approx(brute[(1, 3)], rel=1e-9)
    np.testing.assert_allclose(gap.matrix.to_numpy(), gap.matrix.to_numpy().T)


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
