"""Pairwise gaps against POT."""

import numpy as np
import ot
import pytest

from fairot.metrics import max_pairwise_wasserstein, wasserstein_distance


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
