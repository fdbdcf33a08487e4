"""W1 of many samples to one reference in one pass, against SciPy (issue 37)."""

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from fairot.transport import w1_to_reference


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ties", [False, True])
def test_matches_scipy_pair_by_pair(weighted, ties):
    rng = np.random.default_rng(int(weighted) + 2 * int(ties))
    for _ in range(50):
        k = int(rng.integers(1, 6))
        draw = (
            (lambda n: rng.choice([0.0, 0.25, 1.0], n)) if ties else (lambda n: rng.normal(size=n))
        )
        groups = [np.sort(draw(int(rng.integers(1, 9)))) for _ in range(k)]
        weights = [rng.uniform(0.1, 2.0, g.size) for g in groups] if weighted else None
        pooled = np.concatenate(groups)
        order = np.argsort(pooled, kind="stable")
        all_w = None if weights is None else np.concatenate(weights)
        got = w1_to_reference(
            groups, pooled[order], weights, None if all_w is None else all_w[order]
        )
        want = [
            wasserstein_distance(g, pooled, None if weights is None else weights[i], all_w)
            for i, g in enumerate(groups)
        ]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_reference_disjoint_from_the_samples():
    rng = np.random.default_rng(5)
    reference = np.sort(rng.normal(3.0, 1.0, 7))
    groups = [np.sort(rng.normal(size=4)), np.array([10.0]), np.sort(rng.normal(3.0, 1.0, 5))]
    got = w1_to_reference(groups, reference)
    want = [wasserstein_distance(g, reference) for g in groups]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert w1_to_reference([reference], reference)[0] == pytest.approx(0.0, abs=1e-15)
