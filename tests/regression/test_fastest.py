"""The projection's dispatcher: Dykstra by default, each extra engine where it has its case.

``docs/benchmarks.md`` ("The projection's three solvers: the case for each") times the cases;
these tests pin them down in work units (deterministic, whatever the machine's load): on an
ordinary problem the answer is Dykstra's, bit for bit; on a tight tolerance with few groups
(W1: the interior point, W2: the dual Newton) and on many groups (W2: the dual Newton), the
portfolio finishes within a work bound where Dykstra alone cannot, and its answer agrees with
Dykstra run to the end (a different algorithm: block coordinate ascent on the dual, no linear
algebra) and, for W1, with an oracle we did not write (scipy's SLSQP on the same problem).
"""

import numpy as np
import pytest

from fairot.regression import SquaredCost, adjust_quantiles
from fairot.regression._dykstra import WorkBudget, dykstra_projection
from fairot.regression._fastest import fastest_projection
from fairot.regression._projections import pairwise_grid_distances

from ._oracle import solve_generic

UNBOUNDED = (-np.inf, np.inf)
TOL = 1e-10  # adjust_quantiles' projection tolerance


def _groups(k, m, seed):
    """K groups' quantile curves of normal samples of random location, scale and size."""
    rng = np.random.default_rng(seed)
    u = (np.arange(m) + 0.5) / m
    latent = np.stack(
        [
            np.quantile(rng.normal(rng.normal(), rng.uniform(0.5, 2.0), rng.integers(20, 200)), u)
            for _ in range(k)
        ]
    )
    shares = rng.uniform(0.2, 1.0, k)
    return latent, shares / shares.sum()


def _objective(curves, latent, shares):
    return float(shares @ np.mean((curves - latent) ** 2, axis=1))


@pytest.mark.parametrize("p", [1, 2])
def test_ordinary_problems_get_dykstras_answer_bit_for_bit(p):
    # half the largest distance, five groups: the quick Dykstra finishes, no engine runs
    latent, shares = _groups(5, 20, seed=0)
    epsilon = 0.5 * pairwise_grid_distances(latent, p).max()
    portfolio_budget, dykstra_budget = WorkBudget(3e9), WorkBudget(3e9)
    portfolio = fastest_projection(
        latent, shares, p, epsilon, UNBOUNDED, TOL, portfolio_budget, True
    )
    alone = dykstra_projection(
        latent, shares, p=p, epsilon=epsilon, bounds=UNBOUNDED, tol=TOL, budget=dykstra_budget
    )
    assert portfolio.converged and alone.converged
    np.testing.assert_array_equal(portfolio.curves, alone.curves)
    assert portfolio.n_iter == alone.n_iter
    assert portfolio_budget.used == dykstra_budget.used


# Near-exact parity (epsilon a millionth of the largest distance) on three groups and eight grid
# points: Dykstra alone needs 1.1e8 (W1, 672,455 cycles) and 2.0e8 (W2, 1,176,324 cycles) work
# units; the portfolio 3.0e6 and 1.0e7, nearly all of it the quick Dykstra try that fails.
TIGHT_WORK = {1: 1e7, 2: 3e7}


@pytest.mark.parametrize("p", [1, 2])
def test_tight_tolerance_few_groups_finishes_where_dykstra_alone_cannot(p):
    latent, shares = _groups(3, 8, seed=2)
    epsilon = 1e-6 * pairwise_grid_distances(latent, p).max()
    alone = dykstra_projection(
        latent, shares, p=p, epsilon=epsilon, bounds=UNBOUNDED, tol=TOL,
        budget=WorkBudget(TIGHT_WORK[p]),
    )  # fmt: skip
    assert not alone.converged
    out = adjust_quantiles(latent, shares, p=p, epsilon=epsilon, max_work=TIGHT_WORK[p])
    assert out.method == "projection" and not out.stopped_early
    assert out.feasible and out.violation <= 1e-12
    assert np.all(np.diff(out.curves, axis=1) >= 0)
    ours = _objective(out.curves, latent, shares)
    # Dykstra run to the end (1.1 and 2.0e8 units) gives the same answer
    finished = dykstra_projection(latent, shares, p=p, epsilon=epsilon, bounds=UNBOUNDED, tol=TOL)
    assert finished.converged
    assert abs(ours - _objective(finished.curves, latent, shares)) <= 1e-10 * ours
    np.testing.assert_allclose(out.curves, finished.curves, atol=1e-8)
    if p == 1:
        # and SLSQP on the linear program's form (a gap curve per pair); on W2 its quadratic
        # constraint at epsilon^2 ~ 1e-12 leaves SLSQP infeasible by more than the answer's gain
        cost = SquaredCost()
        bounds = (latent.min() - 1.0, latent.max() + 1.0)
        oracle, oracle_value = solve_generic(
            latent, shares, p, epsilon, bounds, cost.value, cost.gradient
        )
        assert ours <= oracle_value + 1e-9
        np.testing.assert_allclose(out.curves, oracle, atol=1e-4)


def test_many_groups_w2_finishes_where_dykstra_alone_cannot():
    # K = 40 groups, half the largest distance: Dykstra alone needs 1.4e8 work units (28,891
    # cycles), the dual Newton 3.3e5
    latent, shares = _groups(40, 20, seed=3)
    epsilon = 0.5 * pairwise_grid_distances(latent, 2).max()
    work = 1e7
    alone = dykstra_projection(
        latent, shares, p=2, epsilon=epsilon, bounds=UNBOUNDED, tol=TOL, budget=WorkBudget(work)
    )
    assert not alone.converged
    out = adjust_quantiles(latent, shares, p=2, epsilon=epsilon, max_work=work)
    assert out.method == "projection" and not out.stopped_early
    assert out.feasible and out.violation <= 1e-12
    finished = dykstra_projection(latent, shares, p=2, epsilon=epsilon, bounds=UNBOUNDED, tol=1e-12)
    assert finished.converged
    ours, theirs = (_objective(c, latent, shares) for c in (out.curves, finished.curves))
    assert abs(ours - theirs) <= 1e-9 * theirs
    np.testing.assert_allclose(out.curves, finished.curves, atol=1e-6)
