r"""The projection of problem (6) of [1]_: Dykstra by default, two engines where it crawls.

Internal surface (a plain name for :mod:`._adjust`): :func:`fastest_projection`.

Three exact solvers compute the same projection (Proposition 1 of [1]_):

* **Dykstra's cycles** (:mod:`._dykstra`, any ``p``), the default path. On ordinary problems
  (:math:`\epsilon` a fair fraction of the largest latent distance, a few groups) it finishes
  in 0.1 to 15 ms on our loaded 2-core machine, where either engine alone costs 17 to 70 ms.
  But its cycle count grows about as :math:`1/\tau`, with
  :math:`\tau = \epsilon / \max_{ij} \|T_i - T_j\|_p` (near-exact parity), on tied ranks
  with shares far apart, and with the number of groups for :math:`W_2`: millions of cycles,
  seconds, or the work cap.
* **A primal-dual interior point for** :math:`W_1` (:mod:`._interior_point`), few groups and
  at most :data:`~._interior_point.SMALL_PROBLEM` curve values: 10 to 30 Newton steps whatever
  the conditioning.
* **Projected Newton on the** :math:`W_2` **dual** (:mod:`._dual_newton`), targets nondecreasing
  and inside the range: a few tens of steps over the binding pairs, whatever the conditioning.

The rule:

1. :math:`W_1` with at most :data:`INTERIOR_POINT_MAX_GROUPS` groups and
   :data:`~._interior_point.SMALL_PROBLEM` curve values: Dykstra on :data:`QUICK_TRY_WORK_W1`
   units of the work budget, then the interior point.
2. :math:`W_2` with nondecreasing targets inside the range: Dykstra on
   :data:`QUICK_TRY_WORK_W2` units first when there are at most :data:`QUICK_TRY_MAX_GROUPS`
   groups, then the dual Newton.
3. Anything else, or should the engine stall: Dykstra from scratch on what remains of the
   budget.

Each engine stays for a case a user meets, measured by ``benchmarks/bench_projection.py`` and
written in ``docs/benchmarks.md`` ("The projection's three solvers: the case for each"): the
interior point for :math:`W_1` at :math:`\tau \le 10^{-5}` or on tied ranks with shares
:math:`10^6` apart (1.9 to 32 s for Dykstra alone, under 0.1 s for the portfolio); the dual
Newton for :math:`W_2` at the same tolerances with few groups (7 s to the cap, against under
0.1 s) and from K = 100 groups on (1.3 to 16 s, and the cap at K = 1000, against 0.1 to 5 s).

References
----------
.. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).
"""

from __future__ import annotations

import numpy as np

from ._dual_newton import project_pairs_w2
from ._dykstra import ALL_PAIRS_GROUPS, Projection, WorkBudget, dykstra_projection
from ._interior_point import SMALL_PROBLEM, project_small_w1

__all__ = ["fastest_projection"]

# The interior point's Newton systems carry one gap curve per pair, K (K - 1) / 2 of them; it
# was built and measured for the few groups of tied problems (K <= 5 in benchmarks/bench_tied.py).
INTERIOR_POINT_MAX_GROUPS = 10
# Up to this many groups Dykstra cycles over every pair in one compiled call and ends ordinary
# W2 problems in 0.1 to 15 ms, where the dual Newton's dense algebra alone costs 17 to 30 ms
# (K = 5, M = 50) and a K = 3 path of 25 tolerances takes 2 ms against 200 ms; beyond it the
# cycles grow with K (K = 100: 12,078 cycles) and W2 goes to the dual Newton at once.
QUICK_TRY_MAX_GROUPS = ALL_PAIRS_GROUPS
# Dykstra's quick try before the dual Newton: at 1 to 4e8 units a second, 25 to 100 ms at most,
# the order of what the dual Newton then costs (30 to 40 ms alone on the benchmark's tight and
# tied problems, whose portfolio time of 70 to 110 ms is mostly this failed try).
QUICK_TRY_WORK_W2 = 1e7
# Before the W1 interior point, about ten milliseconds: the problems Dykstra cannot finish in it
# need millions of cycles, which the interior point replaces by 10 to 30 steps. Less
# (3e5) sent tied problems that Dykstra ends in ~900 cycles to the interior point, whose answer
# is as cheap but keeps the weighted mean of the curves (Proposition 1) only to ~1e-5.
QUICK_TRY_WORK_W1 = 3e6


def _quick_dykstra(target, weights, p, epsilon, bounds, tol, budget, work):
    """Dykstra on at most ``work`` units of the budget."""
    quick_budget = WorkBudget(min(budget.remaining, work))
    quick = dykstra_projection(
        target, weights, p=p, epsilon=epsilon, bounds=bounds, tol=tol, budget=quick_budget
    )
    budget.spend(quick_budget.used)
    return quick


def fastest_projection(
    target: np.ndarray,
    weights: np.ndarray,
    p: float,
    epsilon: float,
    bounds: tuple[float, float],
    tol: float,
    budget: WorkBudget,
    target_is_curve: bool,
) -> Projection:
    r"""The weighted projection of ``target`` onto the feasible set, by the rule of this module.

    Solves :math:`\min_Q \sum_s r_s \|Q_s - T_s\|_2^2` over nondecreasing curves inside
    ``bounds`` with every pairwise :math:`\|Q_i - Q_j\|_p \le \epsilon`. ``p = 1`` with at
    most :data:`INTERIOR_POINT_MAX_GROUPS` groups and :data:`~._interior_point.SMALL_PROBLEM`
    curve values: a quick Dykstra, then the interior point
    (:func:`._interior_point.project_small_w1`). ``p = 2`` with ``target_is_curve``
    (nondecreasing rows inside ``bounds``): a quick Dykstra with at most
    :data:`QUICK_TRY_MAX_GROUPS` groups, then projected Newton on the dual
    (:func:`._dual_newton.project_pairs_w2`). Otherwise, or should the engine stall, Dykstra
    from scratch on the remaining work ``budget``, which every try draws on.
    """
    n_groups = target.shape[0]
    if (
        p == 1.0
        and epsilon > 0.0
        and n_groups <= INTERIOR_POINT_MAX_GROUPS
        and target.size <= SMALL_PROBLEM
    ):
        quick = _quick_dykstra(target, weights, p, epsilon, bounds, tol, budget, QUICK_TRY_WORK_W1)
        if quick.converged:
            return quick
        interior = project_small_w1(
            target, weights, epsilon=epsilon, bounds=bounds, tol=tol, budget=budget
        )
        if interior.converged or budget.remaining <= 0:
            return interior
    if p == 2.0 and epsilon > 0.0 and target_is_curve:
        if n_groups <= QUICK_TRY_MAX_GROUPS:
            quick = _quick_dykstra(
                target, weights, p, epsilon, bounds, tol, budget, QUICK_TRY_WORK_W2
            )
            if quick.converged:
                return quick
        newton = project_pairs_w2(target, weights, epsilon=epsilon, tol=tol, budget=budget)
        if newton.converged or budget.remaining <= 0:
            return newton
    return dykstra_projection(
        target, weights, p=p, epsilon=epsilon, bounds=bounds, tol=tol, budget=budget
    )
