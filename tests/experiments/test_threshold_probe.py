"""The issue-22 probe's penalties (``benchmarks/probe_threshold_penalty.py``) against oracles."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

torch = pytest.importorskip("torch")

PROBE = Path(__file__).resolve().parents[2] / "benchmarks" / "probe_threshold_penalty.py"


@pytest.fixture(scope="module")
def probe():
    spec = importlib.util.spec_from_file_location("probe_threshold_penalty", PROBE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _data(seed=0, n=3000):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, n)
    scores = 1.0 / (1.0 + np.exp(-rng.normal(codes - 1.0, 1.0)))
    onehot = np.eye(3)[codes]
    return scores, codes, onehot


def test_rate_penalty_is_the_selection_rate_gap_as_the_bandwidth_vanishes(probe):
    scores, codes, onehot = _data()
    got = probe.penalty(torch.tensor(scores), torch.tensor(onehot), "rate", 1e-9).item()
    decided = scores > 0.5
    expected = sum(abs(decided[codes == a].mean() - decided.mean()) for a in range(3))
    assert got == pytest.approx(expected, abs=1e-12)


def test_rate_penalty_is_the_soft_decision_gap(probe):
    from scipy.stats import norm

    scores, codes, onehot = _data(seed=1)
    got = probe.penalty(torch.tensor(scores), torch.tensor(onehot), "rate", 0.1).item()
    soft = norm.cdf((scores - 0.5) / 0.1)
    expected = sum(abs(soft[codes == a].mean() - soft.mean()) for a in range(3))
    assert got == pytest.approx(expected, rel=1e-10)


def test_w1_penalty_matches_scipy_up_to_the_quantile_grid(probe):
    scores, codes, onehot = _data(seed=2, n=20000)
    got = probe.penalty(torch.tensor(scores), torch.tensor(onehot), "w1", 0.0).item()
    expected = sum(wasserstein_distance(scores[codes == a], scores) for a in range(3))
    # 199 equally spaced levels stand for the integral over (0, 1) of |Q_a - Q|: a midpoint rule
    # whose error on these smooth quantile functions is far below 1 % of the value.
    assert got == pytest.approx(expected, rel=1e-2)


def test_training_is_deterministic_and_moves_towards_parity(probe):
    from fairot.experiments.frontier import logistic, point_metrics, unaware_split

    split = unaware_split("communities-crime", 0, max_train=400, max_test=300)
    lr = logistic(split)
    first = probe.train(split, lr, "rate", "adam", 0.05, 3.0, 200)
    again = probe.train(split, lr, "rate", "adam", 0.05, 3.0, 200)
    np.testing.assert_array_equal(first, again)
    before = point_metrics(split, lr.predict_proba(split.X_test)[:, 1])
    after = point_metrics(split, first)
    assert after["dp_difference"] < before["dp_difference"]
