"""Group-weighted Dykstra and projected gradient (``fairot.regression._dykstra``).

The oracles: SciPy's SLSQP on the same problem (``tests/regression/_oracle.py``), the paper's
all-pairs Dykstra written here in plain NumPy, and the NumPy ball projection.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.exceptions import ConvergenceWarning

from fairot.regression import LogisticCost, SquaredCost, adjust_quantiles, project_lp_ball
from fairot.regression._projections import grid_norm, pairwise_grid_distances

from ._oracle import latent_curves as _latent
from ._oracle import solve_generic
from ._oracle import squared_objective as _squared_objective

BOUNDS = (-20.0, 20.0)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("seed", range(3))
def test_dykstra_projection_matches_generic_solver_k3(p, seed):
    latent = _latent(seed, k=3)
    w = np.array([0.2, 0.29, 0.51])
    eps = 0.3 * pairwise_grid_distances(latent, p).max()
    result = adjust_quantiles(latent, w, p=p, epsilon=eps, bounds=BOUNDS)
    assert result.method == "projection"
    cost = SquaredCost()
    oracle, oracle_value = solve_generic(latent, w, p, eps, BOUNDS, cost.value, cost.gradient)
    assert _squared_objective(result.curves, latent, w) <= oracle_value + 1e-9
    np.testing.assert_allclose(result.curves, oracle, atol=1e-4)
    assert result.violation <= 1e-10


def test_dykstra_does_not_stop_while_stalled():
    # A thin W1 tolerance: Dykstra's curves stay put for hundreds of cycles while its
    # corrections drift; stopping on the curves alone gave an order-dependent, suboptimal answer.
    rng = np.random.default_rng(5)
    s = np.repeat([0, 1, 2], 40)
    scores = rng.normal(size=120) + s
    u = (np.arange(37) + 0.5) / 37
    latent = np.stack([np.quantile(scores[s == g], u, method="inverted_cdf") for g in range(3)])
    w = np.full(3, 1 / 3)
    eps = 1e-5 * pairwise_grid_distances(latent, 1).max()
    perm = [2, 0, 1]
    a = adjust_quantiles(latent, w, p=1, epsilon=eps).curves
    b = adjust_quantiles(latent[perm], w[perm], p=1, epsilon=eps).curves
    np.testing.assert_allclose(a[perm], b, atol=1e-7)
    # and both are (near) the strict-parity barycenter, as a tiny tolerance must give
    np.testing.assert_allclose(a, np.repeat((w @ latent)[None], 3, axis=0), atol=1e-3)


def test_compiled_l1_gap_projection_survives_a_radius_below_rounding():
    from fairot.regression._dykstra import _project_gap

    delta_star = np.array([3.0, -1.0, 0.5, 2.0])
    out = np.empty(4)
    _project_gap(delta_star, out, 1, 1e-300)  # ZeroDivisionError before the fix
    assert np.all(np.abs(out) <= 1e-300 * 4)


def _reference_dykstra(target, w, p, eps, bounds, n_cycles):
    """The paper's group-weighted Dykstra over *every* pair, in plain NumPy (the oracle).

    Written from Section 3.3.2 of the seed paper with the public closed-form pair projection
    and PAV; shares no code with the compiled working-set kernel.
    """
    from fairot.regression import project_monotone_box
    from fairot.regression._projections import project_pair

    k = target.shape[0]
    pairs = list(itertools.combinations(range(k), 2))
    x = target.copy()
    increments = {pair: np.zeros((2, target.shape[1])) for pair in pairs}
    box = np.zeros_like(target)
    for _ in range(n_cycles):
        before = np.concatenate([x.ravel(), box.ravel(), *[v.ravel() for v in increments.values()]])
        for i, j in pairs:
            inc = increments[(i, j)]
            y_i, y_j = x[i] + inc[0], x[j] + inc[1]
            x[i], x[j] = project_pair(y_i, y_j, w[i], w[j], p, eps)
            increments[(i, j)] = np.stack([y_i - x[i], y_j - x[j]])
        y = x + box
        x = project_monotone_box(y, bounds)
        box = y - x
        after = np.concatenate([x.ravel(), box.ravel(), *[v.ravel() for v in increments.values()]])
        if np.abs(after - before).max() <= 1e-13:
            break
    return x


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("seed", range(2))
def test_working_set_solvers_match_all_pairs_dykstra(p, seed):
    # K = 7: 21 pairs, of which the working set cycles over a few; same answer as the paper's
    # all-pairs Dykstra run to convergence
    latent = _latent(seed, k=7, m=6, spread=0.7)
    w = np.random.default_rng(seed).uniform(0.2, 1.0, 7)
    w = w / w.sum()
    eps = 0.45 * pairwise_grid_distances(latent, p).max()
    out = adjust_quantiles(latent, w, p=p, epsilon=eps, bounds=BOUNDS)
    reference = _reference_dykstra(latent, w, p, eps, BOUNDS, n_cycles=5000)
    assert pairwise_grid_distances(reference, p).max() <= eps + 1e-9  # the oracle converged
    assert not out.stopped_early and out.violation <= 1e-12
    np.testing.assert_allclose(out.curves, reference, atol=1e-7)
    ours, theirs = (
        _squared_objective(out.curves, latent, w),
        _squared_objective(reference, latent, w),
    )
    assert ours <= theirs + 1e-10


def test_projected_gradient_bound_returns_best_feasible_iterate():
    latent = _latent(3, k=3, m=4, spread=6.0)
    w = np.array([1e-6, 1.0, 1.0])
    cost = LogisticCost()
    eps = 0.3 * pairwise_grid_distances(latent, 2).max()
    with pytest.warns(ConvergenceWarning, match="max_iter=5 iterations ran out") as record:
        out = adjust_quantiles(latent, w, p=2, epsilon=eps, cost=cost, max_iter=5)
    assert len(record) == 1 and out.stopped_early and out.n_iter == 5
    assert pairwise_grid_distances(out.curves, 2).max() <= eps + 1e-12
    # the best of the feasible iterates: no worse than the first projected start
    start = adjust_quantiles(latent, w, p=2, epsilon=eps, method="projection")
    assert cost.objective(latent, out.curves, w) <= cost.objective(latent, start.curves, w)


@settings(max_examples=200, deadline=None)
@given(
    arrays(np.float64, st.integers(1, 60), elements=st.floats(-1e3, 1e3)),
    st.floats(1e-6, 2.0),
    st.sampled_from([(1, 1.0), (2, 2.0), (0, np.inf)]),
)
def test_compiled_gap_projection_matches_numpy_version(v, rel_eps, codes):
    from fairot.regression._dykstra import _project_gap

    code, p = codes
    eps = rel_eps * (grid_norm(v, p) + 1e-3)
    out = np.empty_like(v)
    _project_gap(v, out, code, eps)
    np.testing.assert_allclose(out, project_lp_ball(v, p, eps), rtol=1e-12, atol=1e-9)


def test_projected_gradient_stops_fast_when_its_projections_stall():
    # K = 4, M = 2, shares 1e-6 and 1, tau = 1e-3: every inner Dykstra projection ran to its
    # cycle cap, and projected gradient spent 499 steps (24 s) on an objective flat to 1e-16
    from scipy.optimize import minimize

    from fairot.regression import PinballGaussianCost
    from fairot.regression._dykstra import STALLED_STEPS

    latent = np.array([[0.0, 1.0], [-1.0, 1.0], [0.0, 2.0], [-1.0, 1.0]])
    weights = np.array([0.1, 1.0, 1e-6, 1.0])
    cost = PinballGaussianCost(0.3, 2.0)
    epsilon = 0.001 * 1.5811388300841898  # tau * the largest W2 gap
    with pytest.warns(ConvergenceWarning, match="stopped early"):
        out = adjust_quantiles(latent, weights, p=2, epsilon=epsilon, cost=cost, max_iter=500)
    assert out.stopped_early and out.feasible
    assert STALLED_STEPS <= out.n_iter < 200
    shares = weights / weights.sum()
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]

    def gaps(flat):
        q = flat.reshape(4, 2)
        w2 = [epsilon**2 - np.mean((q[i] - q[j]) ** 2) for i, j in pairs]
        return np.array(w2 + list(q[:, 1] - q[:, 0]))

    oracle = minimize(
        lambda flat: cost.objective(latent, flat.reshape(4, 2), shares),
        out.curves.ravel(),
        constraints=[{"type": "ineq", "fun": gaps}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    assert np.all(gaps(oracle.x) >= -1e-9)
    value = cost.objective(latent, out.curves, shares)
    assert value <= oracle.fun + 1e-6
