r"""Group-weighted Dykstra projection and the projected-gradient solver (Section 3.3.2 of [1]_).

The feasible set of problem (6) of [1]_ on the grid is the intersection of

* one :math:`W_p` ball per pair of groups, :math:`\|Q_i - Q_j\|_p \le \epsilon`;
* nondecreasing curves inside the prediction range :math:`[a, b]` (one set, separable by group).

Projections use the group-weighted norm :math:`\sum_s r_s \|Q_s\|_2^2`, so that the projected
gradient step of the weighted objective is a plain pointwise gradient step. Each pair's projection
is the two-group closed form in the pair's weights (:func:`project_pair`).

References
----------
.. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).
.. [2] R. L. Dykstra, "An algorithm for restricted least squares regression", JASA 1983.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import numba
import numpy as np

from fairot.exceptions import DivergenceError

from ._feasibility import shrink_to_feasible
from ._projections import (
    P_CODE,
    curve_grid_norm,
    grid_distance,
    pairwise_grid_distances,
    pav_row,
    project_monotone_box,
)

__all__ = [
    "Projection",
    "SolverPath",
    "WorkBudget",
    "dykstra_projection",
    "projected_gradient",
    "shrink_to_feasible",
]

INNER_MAX_CYCLES = 100_000
ALL_PAIRS_GROUPS = 10  # up to this many groups Dykstra cycles over every pair, unscreened
# Projected-gradient steps in a row that move by at most ``tol`` while their inner projection
# cannot meet its own tolerance, before projected gradient stops early: more steps only repeat
# the same shrunk-feasible point at a full projection's cost each (499 steps, 24 s,
# for K = 4, M = 2 with shares 1e-6 and 1, the objective flat to 1e-16 after 60 steps).
STALLED_STEPS = 10

MSG_DIVERGED = (
    "The projected-gradient iterates became non-finite after {n_iter} iterations; the cost's "
    "gradient is too steep for step_size={step_size}. Lower step_size or rescale the scores."
)


def _max_violation(curves: np.ndarray, p: float, epsilon: float) -> float:
    distances = pairwise_grid_distances(curves, p)
    return float(max(distances.max() - epsilon, 0.0))


class WorkBudget:
    """A cap on the work of one solve, shared by every projection inside it.

    One unit is about one grid value read or written: a pair whose constraint is checked costs
    ``M`` units, a pair projected ``5 M``, a monotone-box projection of a curve ``2 M``, a screen
    of one pair ``M`` (a dual Newton step counts a twentieth of its flops); 1 to 4·10^8 units a
    second on one core of our loaded 2-core machine. Counting work, not seconds, keeps the
    answer deterministic whatever the machine's load.
    """

    def __init__(self, limit: float) -> None:
        self.limit = float(limit)
        self.used = 0.0

    @property
    def remaining(self) -> float:
        return max(self.limit - self.used, 0.0)

    def spend(self, units: float) -> None:
        self.used += float(units)


class Projection(NamedTuple):
    """Result of :func:`dykstra_projection`: exactly feasible curves and how they were found."""

    curves: np.ndarray
    n_iter: int
    converged: bool


class SolverPath(NamedTuple):
    """Result of :func:`projected_gradient`: the best feasible curves found."""

    curves: np.ndarray
    n_iter: int
    converged: bool


@numba.njit(cache=True)
def _project_gap(delta_star, out, p_code, epsilon):  # pragma: no cover - jit
    """In-place ``project_lp_ball`` (same arithmetic, inactive constraint copies exactly)."""
    m = delta_star.size
    if p_code == 0:
        for k in range(m):
            out[k] = min(max(delta_star[k], -epsilon), epsilon)
        return
    if p_code == 2:
        total = 0.0
        for k in range(m):
            total += delta_star[k] * delta_star[k]
        norm = np.sqrt(total / m)
        factor = 1.0 if norm <= epsilon else epsilon / norm
        for k in range(m):
            out[k] = delta_star[k] if factor == 1.0 else delta_star[k] * factor
        return
    radius = epsilon * m
    magnitude = np.abs(delta_star)
    if magnitude.sum() <= radius:
        out[:] = delta_star
        return
    # Michelot's fixed point for the soft threshold (exact, like the sort of Duchi et al., but
    # O(m) per pass and a few passes): lambda only grows and the active set only shrinks.
    lam = (magnitude.sum() - radius) / m
    active = m
    for _ in range(m + 1):  # at most m shrinks of the active set; the cap guards rounding
        count, total = 0, 0.0
        for k in range(m):
            if magnitude[k] > lam:
                count += 1
                total += magnitude[k]
        if count == 0:
            # A radius below the rounding of the magnitudes (epsilon ~ 1e-300): lambda already
            # equals the largest magnitude, so every entry is shrunk to zero, which is feasible.
            break
        lam = (total - radius) / count
        if count == active:
            break
        active = count
    for k in range(m):
        shrunk = max(magnitude[k] - lam, 0.0)
        out[k] = shrunk if delta_star[k] > 0 else (-shrunk if delta_star[k] < 0 else 0.0)


@numba.njit(cache=True)
def _screen_pairs(x, p_code, epsilon, tol, in_set, moved):  # pragma: no cover - jit
    """Each group's most violated partner among the pairs outside the working set.

    Pairs of two groups that never moved keep their (already screened) target distance and are
    skipped. Returns ``partner`` (-1: none with an excess over ``tol``), that pair's excess and
    the number of pairs checked.
    """
    n_groups = x.shape[0]
    worst = np.full(n_groups, tol)
    partner = np.full(n_groups, -1, dtype=np.int64)
    n_checked = 0
    for i in range(n_groups):
        for j in range(i + 1, n_groups):
            if in_set[i, j] or not (moved[i] or moved[j]):
                continue
            n_checked += 1
            excess = grid_distance(x, i, j, p_code) - epsilon
            if excess > worst[i]:
                worst[i], partner[i] = excess, j
            if excess > worst[j]:
                worst[j], partner[j] = excess, i
    return partner, worst, n_checked


@numba.njit(cache=True)
def _dykstra_cycles(
    x,
    weights,
    first,
    second,
    pair_increments,
    corrected,
    groups,
    box_increment,
    p_code,
    epsilon,
    lower,
    upper,
    tol,
    max_cycles,
    max_work,
):  # pragma: no cover - jit
    """Dykstra's cycles over the working pairs and the box of the groups they touch, in place.

    Stops when a full cycle moved the curves and the corrections by at most ``tol`` and every
    working pair's excess over ``epsilon`` is at most ``tol``, or after ``max_cycles`` cycles or
    ``max_work`` units (see :class:`WorkBudget`). Returns (cycles, last change, work done).
    """
    m = x.shape[1]
    n_pairs = first.size
    y_i, y_j = np.empty(m), np.empty(m)
    delta_star, delta = np.empty(m), np.empty(m)
    y, new_row = np.empty(m), np.empty(m)
    block_sum, block_len = np.empty(m), np.empty(m, dtype=np.int64)
    previous = np.empty((groups.size, m))
    change = np.inf
    work = 0.0
    for cycle in range(1, max_cycles + 1):
        if work >= max_work:
            return cycle - 1, change, work
        for g in range(groups.size):
            previous[g] = x[groups[g]]
        change = 0.0
        for t in range(n_pairs):
            i, j = first[t], second[t]
            # A pair whose correction is zero and whose constraint holds projects to itself:
            # one distance instead of a projection (most working pairs, most cycles).
            work += m
            if not corrected[t] and grid_distance(x, i, j, p_code) <= epsilon:
                continue
            work += 2 * m
            total = weights[i] + weights[j]
            r_i, r_j = weights[i] / total, weights[j] / total
            for k in range(m):
                y_i[k] = x[i, k] + pair_increments[t, 0, k]
                y_j[k] = x[j, k] + pair_increments[t, 1, k]
                delta_star[k] = y_i[k] - y_j[k]
            if curve_grid_norm(delta_star, p_code) <= epsilon:
                # the point is in the ball: the projection is the identity, the correction 0
                for k in range(m):
                    change = max(change, abs(pair_increments[t, 0, k]))
                    change = max(change, abs(pair_increments[t, 1, k]))
                    x[i, k], x[j, k] = y_i[k], y_j[k]
                    pair_increments[t, 0, k] = pair_increments[t, 1, k] = 0.0
                corrected[t] = False
                continue
            corrected[t] = True
            work += 2 * m
            _project_gap(delta_star, delta, p_code, epsilon)
            for k in range(m):
                mean = r_i * y_i[k] + r_j * y_j[k]
                x[i, k] = mean + r_j * delta[k]
                x[j, k] = mean - r_i * delta[k]
                new_i, new_j = y_i[k] - x[i, k], y_j[k] - x[j, k]
                change = max(change, abs(new_i - pair_increments[t, 0, k]))
                change = max(change, abs(new_j - pair_increments[t, 1, k]))
                pair_increments[t, 0, k], pair_increments[t, 1, k] = new_i, new_j
        for g in range(groups.size):
            s = groups[g]
            work += 2 * m
            for k in range(m):
                y[k] = x[s, k] + box_increment[s, k]
            pav_row(y, new_row, lower, upper, block_sum, block_len)
            for k in range(m):
                new = y[k] - new_row[k]
                change = max(change, abs(new - box_increment[s, k]))
                change = max(change, abs(new_row[k] - previous[g, k]))
                box_increment[s, k] = new
                x[s, k] = new_row[k]
        if change <= tol:
            excess = 0.0
            for t in range(n_pairs):
                excess = max(excess, grid_distance(x, first[t], second[t], p_code) - epsilon)
            work += n_pairs * m
            if excess <= tol:
                return cycle, change, work
    return max_cycles, change, work


@functools.lru_cache(maxsize=ALL_PAIRS_GROUPS)
def _all_pairs(n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair ``i < j`` (cached: ``np.triu_indices`` costs more than a small projection)."""
    first, second = np.triu_indices(n_groups, 1)
    first.flags.writeable = second.flags.writeable = False
    return first, second


def new_pairs(
    partner: np.ndarray, excess: np.ndarray, limit: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs ``(i, partner[i])`` of a screen, most violated first, at most ``limit``.

    Returns the arrays of first and second groups (``first < second``).
    """
    order = np.argsort(-excess, kind="stable")
    pairs: dict[tuple[int, int], None] = {}  # insertion-ordered set
    for i in order[partner[order] >= 0].tolist():
        j = int(partner[i])
        pairs[(min(i, j), max(i, j))] = None
        if limit is not None and len(pairs) >= limit:
            break
    both = np.array(list(pairs), dtype=np.int64).reshape(-1, 2)
    return both[:, 0].copy(), both[:, 1].copy()


def dykstra_projection(
    target: np.ndarray,
    weights: np.ndarray,
    *,
    p: float,
    epsilon: float,
    bounds: tuple[float, float],
    tol: float = 1e-10,
    max_iter: int | None = None,
    budget: WorkBudget | None = None,
) -> Projection:
    r"""Group-weighted projection of ``target`` onto the feasible set, by Dykstra's algorithm.

    Solves :math:`\min \sum_s r_s \|Q_s - T_s\|_2^2` over curves with every pairwise
    :math:`\|Q_i - Q_j\|_p \le \epsilon`, nondecreasing and inside ``bounds``. Dykstra's cycles
    [2]_ run over a **working set** of pairs and the monotone-box sets of the groups those pairs
    touch, and stop only when a full cycle moved the curves **and the corrections** by at most
    ``tol`` and every working pair's excess over ``epsilon`` is at most ``tol`` (stopping on a
    small change alone can leave violations of :math:`4\cdot10^{-10}`, and stops early where
    Dykstra stalls). Then every pair is screened: each group's most violated partner joins the
    working set with a zero correction, and the cycles resume from where they were.

    Notes
    -----
    Why a working set is exact: Dykstra is block-coordinate ascent on the dual of the
    projection, one block per constraint set; a pair outside the working set is a block whose
    dual variable (its correction) is zero, and a zero correction on a satisfied constraint is
    optimal for that block. So the cycles over the working set solve the projection onto the
    relaxed set, warm starts keep the dual point, and once the screen finds no violated pair the
    relaxed answer is feasible for the full problem, hence its projection. With K groups only the
    few pairs that bind at the answer are ever cycled over (tens at K = 160 out of 12,720), so
    one cycle costs O(|W| M) instead of O(K^2 M); each screen costs O(K^2 M) and runs only when
    the working set has converged. Groups no pair touches never move.

    Returns
    -------
    Projection
        ``curves`` (K, M), exactly feasible (a last :func:`shrink_to_feasible` step removes the
        residual violation, at most ``tol``); ``n_iter`` the Dykstra cycles; ``converged``
        False when ``max_iter`` cycles (default: no cap) or the ``budget`` ran out first.
    """
    target = np.ascontiguousarray(target, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    n_groups, m = target.shape
    budget = WorkBudget(np.inf) if budget is None else budget
    if epsilon == 0.0:
        # All curves equal: the weighted projection onto {Q_1 = ... = Q_K} is the weighted mean.
        common = project_monotone_box((weights @ target)[None, :], bounds)[0]
        budget.spend(n_groups * m)
        return Projection(np.repeat(common[None, :], n_groups, axis=0), 1, True)
    p_code = P_CODE.get(float(p), 0)
    x = project_monotone_box(target, bounds)
    box_increment = target - x
    in_set = np.zeros((n_groups, n_groups), dtype=np.bool_)
    moved = np.ones(n_groups, dtype=np.bool_)  # the first screen checks every pair
    touched = np.zeros(n_groups, dtype=np.bool_)
    first = np.empty(0, dtype=np.int64)
    second = np.empty(0, dtype=np.int64)
    pair_increments = np.zeros((0, 2, m))
    corrected = np.zeros(0, dtype=np.bool_)  # pairs whose Dykstra correction is not zero
    n_iter, converged = 0, False
    # the work budget bounds the cycles; a cycle cap of its own is optional
    max_iter = 2**62 if max_iter is None else int(max_iter)
    if n_groups <= ALL_PAIRS_GROUPS:
        # Few groups: every pair from the start, no screen and no rounds. The kernel skips
        # satisfied uncorrected pairs anyway, and the bookkeeping of rounds would cost more than
        # the cycles (projected gradient calls this thousands of times).
        first, second = _all_pairs(n_groups)
        cycles, change, work = _dykstra_cycles(
            x, weights, first, second, np.zeros((first.size, 2, m)),
            np.zeros(first.size, dtype=np.bool_), np.arange(n_groups), box_increment,
            p_code, float(epsilon), float(bounds[0]), float(bounds[1]), float(tol),
            max_iter, budget.remaining,
        )  # fmt: skip
        budget.spend(work)
        return Projection(shrink_to_feasible(x, weights, p, epsilon), cycles, change <= tol)
    while True:
        partner, excess, n_checked = _screen_pairs(
            x, p_code, float(epsilon), float(tol), in_set, moved
        )
        budget.spend(n_checked * m)
        new_first, new_second = new_pairs(partner, excess)
        if new_first.size == 0:
            converged = True
            break
        in_set[new_first, new_second] = True
        touched[new_first] = touched[new_second] = True
        first = np.concatenate([first, new_first])
        second = np.concatenate([second, new_second])
        pair_increments = np.concatenate([pair_increments, np.zeros((new_first.size, 2, m))])
        corrected = np.concatenate([corrected, np.zeros(new_first.size, dtype=np.bool_)])
        groups = np.flatnonzero(touched)
        if n_iter >= max_iter or budget.remaining <= 0:
            break
        cycles, change, work = _dykstra_cycles(
            x, weights, first, second, pair_increments, corrected, groups, box_increment,
            p_code, float(epsilon), float(bounds[0]), float(bounds[1]), float(tol),
            max_iter - n_iter, budget.remaining,
        )  # fmt: skip
        n_iter += cycles
        budget.spend(work)
        moved = touched
        if change > tol:
            break
    return Projection(shrink_to_feasible(x, weights, p, epsilon), n_iter, converged)


def projected_gradient(
    gradient: Callable[[np.ndarray], np.ndarray],
    objective: Callable[[np.ndarray], float],
    start: np.ndarray,
    weights: np.ndarray,
    *,
    p: float,
    epsilon: float,
    bounds: tuple[float, float],
    step_size: float = 0.1,
    tol: float = 1e-8,
    projection_tol: float = 1e-10,
    max_iter: int = 20_000,
    accelerated: bool = True,
    budget: WorkBudget | None = None,
) -> SolverPath:
    r"""Projected gradient for :math:`\min \sum_s r_s \frac1M\sum_k c_s(u_k, q_{sk})`.

    Section 3.3.2 of [1]_. In the group-weighted metric the gradient of the objective is the
    pointwise derivative :math:`\partial_q c_s(u_k, q_{sk})`, so each step is
    :math:`q \leftarrow P_r(y - \eta\, \partial_q c(y))` with :math:`P_r` the weighted Dykstra
    projection. With ``accelerated=True`` the point :math:`y` carries Nesterov momentum (FISTA [3]_)
    reset whenever it points uphill (gradient restart [4]_); with ``False``, :math:`y = q`, the
    paper's plain iteration. Both stop when one projected step moves :math:`y` by at most ``tol``
    (sup norm). Momentum matters where the cost is nearly flat (logistic tails): the plain
    iteration with step 0.1 then contracts by only :math:`1 - \eta r_s c''` per step.

    Every iterate :math:`q` is a projection, hence exactly feasible; the one with the lowest
    ``objective`` is returned. ``max_iter`` steps and the shared work ``budget`` bound the
    whole solve (every inner projection draws on the same budget); ``converged`` is False when
    either ran out, or when the last inner projection did, or when ``STALLED_STEPS`` steps in a
    row moved by at most ``tol`` while their inner projections stalled (no progress left).

    References
    ----------
    .. [3] A. Beck, M. Teboulle, "A fast iterative shrinkage-thresholding algorithm for linear
       inverse problems", SIAM J. Imaging Sci. 2009.
    .. [4] B. O'Donoghue, E. Candès, "Adaptive restart for accelerated gradient schemes",
       Found. Comput. Math. 2015.
    """
    budget = WorkBudget(np.inf) if budget is None else budget

    def project(point):
        # each inner projection keeps its own cycle cap, so that one slow projection cannot
        # spend the whole budget of the outer iteration
        return dykstra_projection(
            point,
            weights,
            p=p,
            epsilon=epsilon,
            bounds=bounds,
            tol=projection_tol,
            max_iter=INNER_MAX_CYCLES,
            budget=budget,
        )

    x, _, projected = project(start)
    best, best_value = x, objective(x)
    y, momentum = x, 1.0
    converged = False
    n_iter = stalled = 0
    while n_iter < max_iter and budget.remaining > 0 and stalled < STALLED_STEPS:
        n_iter += 1
        step = y - step_size * gradient(y)
        if not np.all(np.isfinite(step)):
            raise DivergenceError(MSG_DIVERGED.format(n_iter=n_iter, step_size=step_size))
        new, _, projected = project(step)
        residual = np.abs(new - y).max()
        value = objective(new)
        if value <= best_value:
            best, best_value = new, value
        if accelerated:
            next_momentum = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * momentum**2))
            if np.sum(weights[:, None] * (y - new) * (new - x)) > 0:
                y, next_momentum = new, 1.0
            else:
                y = new + ((momentum - 1.0) / next_momentum) * (new - x)
            momentum = next_momentum
        else:
            y = new
        x = new
        if residual <= tol and projected:
            converged = True
            break
        stalled = stalled + 1 if residual <= tol else 0
    return SolverPath(x if converged else best, n_iter, converged)
