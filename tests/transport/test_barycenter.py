"""Barycenters against their variational definitions, solved independently."""

import numpy as np
import ot
import pytest
from scipy.optimize import minimize_scalar

from fairot.transport import (
    barycenter_distribution,
    barycenter_quantiles,
    midpoint_grid,
    quantile_function,
    weighted_median,
)


def test_w2_barycenter_is_weighted_mean_and_minimises_cost():
    rng = np.random.default_rng(0)
    curves = np.sort(rng.normal(size=(3, 50)), axis=1)
    w = np.array([0.2, 0.3, 0.5])
    bary = barycenter_quantiles(curves, w, p=2)
    np.testing.assert_allclose(bary, w @ curves)
    # Perturbing the barycenter never lowers sum_a w_a ||Q_a - B||^2.
    cost = lambda b: np.sum(w[:, None] * (curves - b) ** 2)  # noqa: E731
    for _ in range(20):
        assert cost(bary) <= cost(bary + 0.01 * rng.normal(size=50))


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_w1_barycenter_minimises_weighted_absolute_cost(k):
    rng = np.random.default_rng(k)
    values = rng.normal(size=(k, 30))
    w = rng.random(k)
    w /= w.sum()
    med = weighted_median(values, w)
    for col in range(30):
        column = values[:, col]
        res = minimize_scalar(
            lambda x, column=column: np.sum(w * np.abs(column - x)),
            bounds=(values[:, col].min(), values[:, col].max()),
            method="bounded",
            options={"xatol": 1e-12},
        )
        ours = np.sum(w * np.abs(values[:, col] - med[col]))
        assert ours <= res.fun + 1e-9


def test_equal_weights_use_numpy_median():
    values = np.random.default_rng(1).normal(size=(4, 10))
    np.testing.assert_array_equal(barycenter_quantiles(values), np.median(values, axis=0))


def test_w2_barycenter_cost_matches_pot_lp_barycenter():
    # Samples on a grid of step 0.1; with two equal weights the exact barycenter lives on the
    # half-step grid, so POT's LP barycenter on that grid must reach exactly our cost.
    rng = np.random.default_rng(2)
    samples = [np.round(rng.normal(0, 1, 40), 1), np.round(rng.normal(2, 0.5, 25), 1)]
    values, mass, group_q, _ = barycenter_distribution(samples, p=2)
    ours = 0.5 * sum(mass @ (q - values) ** 2 for q in group_q)
    grid = np.round(np.arange(-4.0, 5.0001, 0.05), 2)
    hists = np.stack(
        [np.bincount(np.searchsorted(grid, s), minlength=grid.size) / s.size for s in samples],
        axis=1,
    )
    cost = (grid[:, None] - grid[None]) ** 2
    bary = ot.lp.barycenter(hists, cost, weights=np.array([0.5, 0.5]))
    pot = 0.5 * sum(ot.emd2(hists[:, k], bary / bary.sum(), cost) for k in range(2))
    assert ours == pytest.approx(pot, rel=1e-6, abs=1e-9)


def test_barycenter_quantiles_on_grid_agree_with_exact_distribution():
    rng = np.random.default_rng(3)
    samples = [rng.normal(size=n) for n in (20, 30, 50)]
    values, mass, _, ends = barycenter_distribution(samples, p=1)
    u = midpoint_grid(300)
    curves = np.stack([quantile_function(s, u) for s in samples])
    on_grid = barycenter_quantiles(curves, p=1)
    exact_at_u = values[np.searchsorted(ends, u)]
    np.testing.assert_allclose(on_grid, exact_at_u)


def test_bad_curves_and_weights():
    with pytest.raises(ValueError, match="shape"):
        barycenter_quantiles(np.zeros(3))
    with pytest.raises(ValueError, match="one non-negative weight per group"):
        barycenter_quantiles(np.zeros((2, 3)), [1.0])
    with pytest.raises(ValueError, match="p must be 1"):
        barycenter_quantiles(np.zeros((2, 3)), p=3)
