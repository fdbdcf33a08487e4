r"""The group-weighted projection of problem (6) of [1]_ by the fastest exact solver that fits.

Internal surface (a plain name for :mod:`._adjust`): :func:`fastest_projection`.

Three solvers compute the same projection (Proposition 1 of [1]_): Dykstra's cycles
(:mod:`._dykstra`, any ``p``), projected Newton on the :math:`W_2` dual (:mod:`._dual_newton`)
and a primal-dual interior point for :math:`W_1` with few groups and grid points
(:mod:`._interior_point`). Dykstra is the fastest by far on most problems (well under a
millisecond with few groups), but its cycle count grows without bound on badly conditioned ones
(many groups; shares :math:`10^6` apart on tied ranks); the other two cost the same
whatever the conditioning. So Dykstra gets a small slice of the work budget first, and the other
solver the rest; Dykstra finishes from scratch should that one stall.

References
----------
.. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).
"""

from __future__ import annotations

import numpy as np

from ._dual_newton import project_pairs_w2
from ._dykstra import Projection, WorkBudget, dykstra_projection
from ._interior_point import SMALL_PROBLEM, project_small_w1

__all__ = ["fastest_projection"]

FEW_GROUPS = 10
# Dykstra's quick try: with few groups its compiled cycles usually finish in well under a
# millisecond, where Newton's dense algebra costs milliseconds (a K = 3 path of 25 tolerances:
# 2 ms against 200 ms).
QUICK_DYKSTRA_WORK = 1e7
# Before the W1 interior point, about ten milliseconds: the problems Dykstra cannot finish in it
# need millions of cycles, which the interior point replaces by 10 to 30 steps. Less
# (3e5) sent tied problems that Dykstra ends in ~900 cycles to the interior point, whose answer
# is as cheap but keeps the weighted mean of the curves (Proposition 1) only to ~1e-5.
QUICK_W1_WORK = 3e6


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
    r"""The weighted projection of ``target`` onto the feasible set, fastest solver first.

    ``p = 2`` with nondecreasing targets inside the range: projected Newton on the dual
    (:func:`._dual_newton.project_pairs_w2`), after a quick Dykstra with few groups.
    ``p = 1`` with few groups and at most ``SMALL_PROBLEM`` curve values: the interior point
    (:func:`._interior_point.project_small_w1`), after a quick Dykstra. Otherwise, or should
    the second solver stall, Dykstra from scratch on the remaining work budget.
    """
    few = target.shape[0] <= FEW_GROUPS
    if p == 1.0 and epsilon > 0.0 and few and target.size <= SMALL_PROBLEM:
        quick = _quick_dykstra(target, weights, p, epsilon, bounds, tol, budget, QUICK_W1_WORK)
        if quick.converged:
            return quick
        interior = project_small_w1(
            target, weights, epsilon=epsilon, bounds=bounds, tol=tol, budget=budget
        )
        if interior.converged or budget.remaining <= 0:
            return interior
    if p == 2.0 and epsilon > 0.0 and target_is_curve:
        if few:
            quick = _quick_dykstra(
                target, weights, p, epsilon, bounds, tol, budget, QUICK_DYKSTRA_WORK
            )
            if quick.converged:
                return quick
        newton = project_pairs_w2(target, weights, epsilon=epsilon, tol=tol, budget=budget)
        if newton.converged or budget.remaining <= 0:
            return newton
    return dykstra_projection(
        target, weights, p=p, epsilon=epsilon, bounds=bounds, tol=tol, budget=budget
    )
