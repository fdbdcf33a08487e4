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

import warnings
from collections.abc import Callable

import numba
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._projections import _pav_rows, pairwise_grid_distances, project_monotone_box

__all__ = ["dykstra_projection", "projected_gradient", "shrink_to_feasible"]

MSG_DIVERGED = (
    "The projected-gradient iterates became non-finite after {n_iter} iterations; the cost's "
    "gradient is too steep for step_size={step_size}. Lower step_size or rescale the scores."
)


def _max_violation(curves: np.ndarray, p: float, epsilon: float) -> float:
    distances = pairwise_grid_distances(curves, p)
    return float(max(distances.max() - epsilon, 0.0))


def shrink_to_feasible(
    curves: np.ndarray, weights: np.ndarray, p: float, epsilon: float
) -> np.ndarray:
    r"""Scale every curve towards the weighted barycenter just enough to meet the tolerance.

    :math:`Q_s \leftarrow \bar Q + \theta (Q_s - \bar Q)` with :math:`\theta = \epsilon / \max_{ij}
    \|Q_i - Q_j\|_p` scales every pairwise gap by :math:`\theta` and keeps curves nondecreasing and
    inside the range (convex combinations of such curves). Dykstra converges only asymptotically;
    this last step turns its :math:`10^{-10}`-feasible answer into an exactly feasible one while
    moving it by at most the residual violation.
    """
    gap = pairwise_grid_distances(curves, p).max()
    if gap <= epsilon:
        return curves
    barycenter = weights @ curves
    theta = epsilon / gap
    return barycenter + theta * (curves - barycenter)


P_CODE = {1.0: 1, 2.0: 2}  # anything else (inf) is 0 in the kernel


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
        lam = (total - radius) / count
        if count == active:
            break
        active = count
    for k in range(m):
        shrunk = max(magnitude[k] - lam, 0.0)
        out[k] = shrunk if delta_star[k] > 0 else (-shrunk if delta_star[k] < 0 else 0.0)


@numba.njit(cache=True)
def _max_excess(x, p_code, epsilon):  # pragma: no cover - jit
    n_groups, m = x.shape
    worst = 0.0
    for i in range(n_groups):
        for j in range(i + 1, n_groups):
            acc = 0.0
            for k in range(m):
                d = abs(x[i, k] - x[j, k])
                if p_code == 0:
                    acc = max(acc, d)
                elif p_code == 1:
                    acc += d
                else:
                    acc += d * d
            if p_code == 1:
                acc /= m
            elif p_code == 2:
                acc = np.sqrt(acc / m)
            worst = max(worst, acc - epsilon)
    return worst


@numba.njit(cache=True)
def _dykstra_kernel(
    target, weights, p_code, epsilon, lower, upper, tol, max_iter
):  # pragma: no cover
    """Dykstra's cycles of :func:`dykstra_projection`, compiled (same steps and stopping rule)."""
    n_groups, m = target.shape
    n_pairs = n_groups * (n_groups - 1) // 2
    first = np.empty(n_pairs, dtype=np.int64)
    second = np.empty(n_pairs, dtype=np.int64)
    t = 0
    for i in range(n_groups):
        for j in range(i + 1, n_groups):
            first[t], second[t] = i, j
            t += 1
    x = target.copy()
    pair_increments = np.zeros((n_pairs, 2, m))
    box_increment = np.zeros((n_groups, m))
    y_i, y_j = np.empty(m), np.empty(m)
    delta_star, delta = np.empty(m), np.empty(m)
    y = np.empty((n_groups, m))
    change = np.inf
    for n_iter in range(1, max_iter + 1):
        previous = x.copy()
        change = 0.0
        for t in range(n_pairs):
            i, j = first[t], second[t]
            total = weights[i] + weights[j]
            r_i, r_j = weights[i] / total, weights[j] / total
            for k in range(m):
                y_i[k] = x[i, k] + pair_increments[t, 0, k]
                y_j[k] = x[j, k] + pair_increments[t, 1, k]
                delta_star[k] = y_i[k] - y_j[k]
            _project_gap(delta_star, delta, p_code, epsilon)
            for k in range(m):
                mean = r_i * y_i[k] + r_j * y_j[k]
                x[i, k] = mean + r_j * delta[k]
                x[j, k] = mean - r_i * delta[k]
                new_i, new_j = y_i[k] - x[i, k], y_j[k] - x[j, k]
                change = max(change, abs(new_i - pair_increments[t, 0, k]))
                change = max(change, abs(new_j - pair_increments[t, 1, k]))
                pair_increments[t, 0, k], pair_increments[t, 1, k] = new_i, new_j
        for s in range(n_groups):
            for k in range(m):
                y[s, k] = x[s, k] + box_increment[s, k]
        x = _pav_rows(y, lower, upper)
        for s in range(n_groups):
            for k in range(m):
                new = y[s, k] - x[s, k]
                change = max(change, abs(new - box_increment[s, k]))
                change = max(change, abs(x[s, k] - previous[s, k]))
                box_increment[s, k] = new
        if change <= tol and _max_excess(x, p_code, epsilon) <= tol:
            return x, n_iter, change
    return x, max_iter, change


def dykstra_projection(
    target: np.ndarray,
    weights: np.ndarray,
    *,
    p: float,
    epsilon: float,
    bounds: tuple[float, float],
    tol: float = 1e-10,
    max_iter: int = 100_000,
) -> tuple[np.ndarray, int]:
    r"""Group-weighted projection of ``target`` onto the feasible set, by Dykstra's algorithm.

    Solves :math:`\min \sum_s r_s \|Q_s - T_s\|_2^2` over curves with every pairwise
    :math:`\|Q_i - Q_j\|_p \le \epsilon`, nondecreasing and inside ``bounds``. Cycles over the
    pairwise balls and the monotone-box set with Dykstra's corrections and stops only when a
    full cycle moved the curves **and the corrections** by at most ``tol`` and the largest
    pairwise excess over ``epsilon`` is at most ``tol`` (stopping on a small change alone can
    leave violations of :math:`4\cdot10^{-10}`, and stops early where Dykstra stalls).

    Returns
    -------
    curves : ndarray of shape (K, M)
    n_iter : int
        Number of full Dykstra cycles.
    """
    target = np.asarray(target, dtype=np.float64)
    n_groups, _ = target.shape
    if epsilon == 0.0:
        # All curves equal: the weighted projection onto {Q_1 = ... = Q_K} is the weighted mean.
        common = project_monotone_box((weights @ target)[None, :], bounds)[0]
        return np.repeat(common[None, :], n_groups, axis=0), 1
    x = project_monotone_box(target, bounds)
    if _max_violation(x, p, epsilon) == 0.0 and np.array_equal(x, target):
        return x, 0
    x, n_iter, change = _dykstra_kernel(
        np.ascontiguousarray(target),
        np.asarray(weights, dtype=np.float64),
        P_CODE.get(float(p), 0),
        float(epsilon),
        float(bounds[0]),
        float(bounds[1]),
        float(tol),
        int(max_iter),
    )
    if change > tol or _max_violation(x, p, epsilon) > tol:
        warnings.warn(
            f"Dykstra's projection did not reach the tolerance {tol:g} in {max_iter} cycles "
            f"(last change {change:.3g}); raise max_iter or loosen the projection tolerance.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return shrink_to_feasible(x, weights, p, epsilon), n_iter


def projected_gradient(
    gradient: Callable[[np.ndarray], np.ndarray],
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
) -> tuple[np.ndarray, int]:
    r"""Projected gradient for :math:`\min \sum_s r_s \frac1M\sum_k c_s(u_k, q_{sk})`.

    Section 3.3.2 of [1]_. In the group-weighted metric the gradient of the objective is the
    pointwise derivative :math:`\partial_q c_s(u_k, q_{sk})`, so each step is
    :math:`q \leftarrow P_r(y - \eta\, \partial_q c(y))` with :math:`P_r` the weighted Dykstra
    projection. With ``accelerated=True`` the point :math:`y` carries Nesterov momentum (FISTA [3]_)
    reset whenever it points uphill (gradient restart [4]_); with ``False``, :math:`y = q`, the
    paper's plain iteration. Both stop when one projected step moves :math:`y` by at most ``tol``
    (sup norm). Momentum matters where the cost is nearly flat (logistic tails): the plain
    iteration with step 0.1 then contracts by only :math:`1 - \eta r_s c''` per step.

    References
    ----------
    .. [3] A. Beck, M. Teboulle, "A fast iterative shrinkage-thresholding algorithm for linear
       inverse problems", SIAM J. Imaging Sci. 2009.
    .. [4] B. O'Donoghue, E. Candès, "Adaptive restart for accelerated gradient schemes",
       Found. Comput. Math. 2015.
    """
    x, _ = dykstra_projection(
        start, weights, p=p, epsilon=epsilon, bounds=bounds, tol=projection_tol
    )
    y, momentum = x, 1.0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - n_iter is returned
        step = y - step_size * gradient(y)
        if not np.all(np.isfinite(step)):
            raise FloatingPointError(MSG_DIVERGED.format(n_iter=n_iter, step_size=step_size))
        new, _ = dykstra_projection(
            step, weights, p=p, epsilon=epsilon, bounds=bounds, tol=projection_tol
        )
        residual = np.abs(new - y).max()
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
        if residual <= tol:
            break
    else:
        warnings.warn(
            f"Projected gradient did not reach the outer tolerance {tol:g} in {max_iter} "
            f"iterations (last step {residual:.3g}); raise max_iter or step_size.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return x, n_iter
