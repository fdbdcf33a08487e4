"""The W2 projection by projected Newton on its dual (``fairot.regression._dual_newton``).

The oracles: SciPy's SLSQP on the same problem (``tests/regression/_oracle.py``) and the
working-set Dykstra run to a tight tolerance.
"""

import numpy as np
import pytest

from fairot.regression import SquaredCost, adjust_quantiles
from fairot.regression._dual_newton import project_pairs_w2
from fairot.regression._projections import pairwise_grid_distances

from ._oracle import group_curves as _groups
from ._oracle import latent_curves as _latent
from ._oracle import solve_generic
from ._oracle import squared_objective as _squared_objective

BOUNDS = (-20.0, 20.0)


@pytest.mark.parametrize("seed", range(3))
def test_dual_newton_w2_matches_generic_solver_k4(seed):
    latent = _latent(seed + 20, k=4, m=5, spread=1.0)
    w = np.array([0.1, 0.2, 0.3, 0.4])
    eps = 0.35 * pairwise_grid_distances(latent, 2).max()
    out = adjust_quantiles(latent, w, p=2, epsilon=eps, bounds=BOUNDS)
    # with few groups adjust_quantiles tries Dykstra first; the dual Newton is checked directly
    newton = project_pairs_w2(latent, w / w.sum(), epsilon=eps)
    cost = SquaredCost()
    oracle, oracle_value = solve_generic(latent, w, 2, eps, BOUNDS, cost.value, cost.gradient)
    assert out.method == "projection" and out.violation <= 1e-12
    assert newton.converged
    for curves in (out.curves, newton.curves):
        assert pairwise_grid_distances(curves, 2).max() <= eps + 1e-12
        assert _squared_objective(curves, latent, w) <= oracle_value + 1e-9
        np.testing.assert_allclose(curves, oracle, atol=1e-4)
    np.testing.assert_allclose(newton.curves, out.curves, atol=1e-8)


@pytest.mark.parametrize("p", [1, 2])
def test_many_groups_dual_newton_agrees_with_dykstra(p):
    # K = 60: the dual Newton (p = 2) against the working-set Dykstra run to a tight tolerance
    from fairot.regression._dykstra import dykstra_projection

    latent, w = _groups(60, 20, seed=3)
    w = w / w.sum()
    eps = 0.5 * pairwise_grid_distances(latent, p).max()
    out = adjust_quantiles(latent, w, p=p, epsilon=eps, bounds=BOUNDS)
    dykstra = dykstra_projection(latent, w, p=p, epsilon=eps, bounds=BOUNDS, tol=1e-12)
    assert dykstra.converged and not out.stopped_early
    assert out.violation <= 1e-12 and np.all(np.diff(out.curves, axis=1) >= 0)
    ours = _squared_objective(out.curves, latent, w)
    theirs = _squared_objective(dykstra.curves, latent, w)
    assert abs(ours - theirs) <= 1e-9 * theirs
    np.testing.assert_allclose(out.curves, dykstra.curves, atol=1e-6)
