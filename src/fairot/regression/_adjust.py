r"""The functional core: adjust group quantile curves to a pairwise Wasserstein tolerance.

Problem (6) of [1]_ on the midpoint grid :math:`u_k = (k - 1/2)/M`:

.. math::

    \min_{Q_1,\dots,Q_K}\ \sum_{s=1}^K r_s \frac1M\sum_{k=1}^M c_s(u_k, Q_s(u_k))
    \quad\text{s.t.}\quad \|Q_i - Q_j\|_p \le \epsilon\ \ \forall i < j,\quad
    Q_s \text{ nondecreasing},\quad a \le Q_s \le b,

with :math:`r_s` the group shares, :math:`c_s` the induced cost (:mod:`._costs`), and the grid norm
of :mod:`._projections`.

References
----------
.. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from fairot.transport import check_p as _check_wasserstein_order
from fairot.transport import midpoint_grid

from ._costs import InducedCost, resolve_cost
from ._dykstra import WorkBudget, projected_gradient
from ._fastest import fastest_projection
from ._feasibility import feasibility_bound, magnitude_scale
from ._pointwise import pointwise_sup
from ._projections import pairwise_grid_distances, project_lp_ball, project_monotone_box

__all__ = ["QuantileAdjustment", "adjust_quantiles", "check_bounds", "check_p"]

MSG_EPSILON = (
    "epsilon must be a non-negative number, an absolute tolerance in the unit of the curves; "
    "got {value!r}."
)
MSG_P = "p must be 1, 2, numpy.inf or 'inf'; got {value!r}."
MSG_CURVES = "latent_curves must be a finite 2-D array of shape (n_groups, n_grid); {detail}."
MSG_NOT_MONOTONE = "latent_curves must be nondecreasing along each row (quantile curves)."
MSG_WEIGHTS = "weights must be {n_groups} positive finite numbers (one per group); got {value!r}."
MSG_BOUNDS = "bounds must be a pair (a, b) of numbers with a < b; got {value!r}."
MSG_BOUNDS_EXCLUDE = (
    "bounds={bounds!r} exclude the data: the latent curves span [{low:.6g}, {high:.6g}]. "
    "Widen the prediction range."
)
MSG_METHOD = (
    "method must be one of 'auto', 'closed_form', 'projection', 'pointwise', "
    "'projected_gradient', 'barycenter_ball'; got {value!r}."
)
MSG_METHOD_NEEDS = "method={method!r} needs {what}."
MSG_MAX_WORK = "max_work must be a positive number; got {value!r}."
MSG_STOPPED_EARLY = (
    "adjust_quantiles({method!r}) stopped early: {reason}. The answer is feasible (largest "
    "pairwise excess {violation:.3g}) but may not be optimal; raise {knob} or loosen the "
    "tolerances (result.stopped_early is True)."
)

# A tolerance this far below the curves' magnitude is below their rounding: only equal curves
# meet it in floating point, so it is solved as epsilon = 0 (and a 1e-300 radius no longer
# reaches the soft threshold's arithmetic).
EPSILON_RESOLUTION = 8 * np.finfo(np.float64).eps

Method = Literal[
    "auto", "closed_form", "projection", "pointwise", "projected_gradient", "barycenter_ball"
]


@dataclass(frozen=True)
class QuantileAdjustment:
    r"""Result of :func:`adjust_quantiles`.

    Attributes
    ----------
    curves : ndarray of shape (n_groups, n_grid)
        Adjusted quantile curves on the midpoint grid.
    grid : ndarray of shape (n_grid,)
        The midpoint grid :math:`u_k = (k - 1/2)/M`.
    grid_gap : float
        Largest pairwise grid distance :math:`\max_{i<j}\|Q_i - Q_j\|_p` of the adjusted curves.
    violation : float
        Excess of ``grid_gap`` over ``epsilon`` (0 when the constraint holds); guaranteed at most
        ``epsilon * FEASIBILITY_RTOL + FEASIBILITY_ATOL * magnitude`` (rounding, see ``feasible``).
    n_iter : int
        Iterations of the solver (0 when nothing had to move).
    active_pairs : tuple of (int, int)
        Pairs of groups whose constraint binds (distance within
        ``1e-8 * max(min(1, magnitude), epsilon)`` of ``epsilon``).
    method : str
        The solver that ran.
    p : float
    epsilon : float
    stopped_early : bool
        True when the work bound (``max_iter`` or ``max_work``) ran out before the tolerances
        were met: ``curves`` are then the best feasible answer found (a warning says so).

    Examples
    --------
    :func:`adjust_quantiles` returns one. Two groups one unit apart on every rank, within
    :math:`\epsilon = 1/2` in :math:`W_2`: each moves by 1/4 towards the other (closed form):

    >>> import numpy as np
    >>> from fairot.regression import adjust_quantiles
    >>> u = (np.arange(1, 5) - 0.5) / 4
    >>> result = adjust_quantiles(np.stack([u, u + 1.0]), [0.5, 0.5], p=2, epsilon=0.5)
    >>> result.curves[0] - u
    array([0.25, 0.25, 0.25, 0.25])
    >>> result.grid_gap, result.violation, result.active_pairs, result.method
    (0.5, 0.0, ((0, 1),), 'closed_form')
    """

    curves: np.ndarray
    grid: np.ndarray
    grid_gap: float
    violation: float
    n_iter: int
    active_pairs: tuple[tuple[int, int], ...]
    method: str
    p: float
    epsilon: float
    stopped_early: bool = False
    magnitude: float = 1.0  # largest |latent value|: the scale of the rounding slack

    @property
    def feasible(self) -> bool:
        """Whether ``grid_gap <= epsilon * (1 + FEASIBILITY_RTOL) + FEASIBILITY_ATOL * magnitude``.

        The guarantee of :func:`adjust_quantiles` (see ``fairot.regression._feasibility``).
        """
        return self.grid_gap <= feasibility_bound(self.epsilon, self.magnitude)


def check_p(p) -> float:
    """Validate the Wasserstein order: 1, 2, ``numpy.inf`` or ``"inf"``."""
    if isinstance(p, bool):
        raise ValueError(MSG_P.format(value=p))
    try:
        value = _check_wasserstein_order(p)
    except ValueError:
        raise ValueError(MSG_P.format(value=p)) from None
    if value not in (1.0, 2.0, np.inf):
        raise ValueError(MSG_P.format(value=p))
    return value


def _check_epsilon(epsilon) -> float:
    if (
        not isinstance(epsilon, numbers.Real)
        or isinstance(epsilon, bool)
        or np.isnan(epsilon)
        or epsilon < 0
    ):
        raise ValueError(MSG_EPSILON.format(value=epsilon))
    return float(epsilon)


def _check_curves(latent_curves) -> np.ndarray:
    curves = np.array(latent_curves, dtype=np.float64)
    if curves.ndim != 2:
        raise ValueError(MSG_CURVES.format(detail=f"got {curves.ndim} dimension(s)"))
    if curves.shape[0] < 2:
        raise ValueError(MSG_CURVES.format(detail="at least two groups are needed"))
    if curves.shape[1] < 1:
        raise ValueError(MSG_CURVES.format(detail="the grid is empty"))
    if not np.all(np.isfinite(curves)):
        raise ValueError(MSG_CURVES.format(detail="it contains NaN or infinite values"))
    if np.any(np.diff(curves, axis=1) < 0):
        raise ValueError(MSG_NOT_MONOTONE)
    return curves


def _check_weights(weights, n_groups: int) -> np.ndarray:
    if weights is None:
        return np.full(n_groups, 1.0 / n_groups)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n_groups,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(MSG_WEIGHTS.format(n_groups=n_groups, value=weights))
    return w / w.sum()


def check_bounds(bounds, low: float = np.inf, high: float = -np.inf) -> tuple[float, float]:
    """Validate ``bounds`` and check that they contain ``[low, high]`` (when given)."""
    if bounds is None:
        return (-np.inf, np.inf)
    try:
        a, b = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(MSG_BOUNDS.format(value=bounds)) from None
    if np.isnan(a) or np.isnan(b) or not a < b:
        raise ValueError(MSG_BOUNDS.format(value=bounds))
    if low < a or high > b:
        raise ValueError(MSG_BOUNDS_EXCLUDE.format(bounds=(a, b), low=low, high=high))
    return (a, b)


def _closed_form(target, weights, p, epsilon):
    r"""Two groups, squared cost: Table 1 of [1]_ (keep the mean, project the gap)."""
    delta_star = target[0] - target[1]
    delta = project_lp_ball(delta_star, p, epsilon)
    if np.array_equal(delta, delta_star):
        return target.copy(), 0
    r1, r2 = weights
    mean = r1 * target[0] + r2 * target[1]
    curves = np.stack([mean + r2 * delta, mean - r1 * delta])
    # Ranks whose gap the projection left alone (W-inf clipping inside the band) keep their
    # latent values bit for bit, instead of a rounded mean +/- share * gap.
    same = delta == delta_star
    curves[:, same] = target[:, same]
    return curves, 1


def _barycenter_ball(target, weights, p, epsilon):
    r"""Sufficient rule of Section 2.6 of [1]_: each group near the latent barycenter.

    Each group is projected within :math:`\epsilon/2` of :math:`\bar Q^* = \sum_s r_s Q^*_s`, so
    every pair is within :math:`\epsilon` by the triangle inequality.
    """
    barycenter = weights @ target
    curves = np.stack(
        [barycenter + project_lp_ball(t - barycenter, p, epsilon / 2) for t in target]
    )
    return curves, 1


def adjust_quantiles(
    latent_curves,
    weights=None,
    *,
    p: float | str = 2,
    epsilon: float,
    bounds: tuple[float, float] | None = None,
    cost: str | InducedCost = "squared",
    method: Method = "auto",
    step_size: float = 0.1,
    tol: float = 1e-8,
    projection_tol: float = 1e-10,
    max_iter: int = 20_000,
    max_work: float = 3e9,
) -> QuantileAdjustment:
    r"""Adjust group quantile curves so that every pair is within :math:`\epsilon` in :math:`W_p`.

    Solves problem (6) of [1]_ on the midpoint grid (see the module docstring).

    Parameters
    ----------
    latent_curves : array-like of shape (n_groups, n_grid)
        Latent quantile curves :math:`Q^*_s(u_k)` of the fitted scores within each group,
        nondecreasing along each row.
    weights : array-like of shape (n_groups,), default=None
        Group shares :math:`r_s` (normalised to sum to one); ``None`` means equal shares.
    p : {1, 2, numpy.inf, "inf"}, default=2
        Order of the Wasserstein distance.
    epsilon : float >= 0
        Tolerance :math:`\epsilon`; 0 is strict demographic parity (every curve equal).
    bounds : (float, float), default=None
        Prediction range :math:`[a, b]`; must contain the latent curves. ``None``: unbounded.
    cost : {"squared", "absolute", "pinball", "logistic"} or InducedCost, default="squared"
        Induced cost :math:`c_s(u, q)`; names use default parameters (noise scale 1, level 1/2).
        An :class:`ObservedLossCost` gives the observed-loss variant.
    method : str, default="auto"
        One of ``"auto"``, ``"closed_form"``, ``"projection"``, ``"pointwise"``,
        ``"projected_gradient"``, ``"barycenter_ball"``. ``"closed_form"``: two groups with a
        squared cost (Table 1 of [1]_). ``"projection"``: the exact answer for a squared cost and
        any number of groups, one group-weighted Dykstra projection of the target curves
        (Proposition 1 of [1]_). ``"pointwise"``: ``p = inf`` (or one grid point, where every
        ``p`` is the same), any convex cost, by rank then sorted
        (Section 2.6). ``"projected_gradient"``: any convex cost (Section 3.3.2).
        ``"barycenter_ball"``: the sufficient rule, each group within :math:`\epsilon/2` of the
        latent barycenter (squared cost; not optimal, always feasible). ``"auto"`` picks closed
        form, pointwise, projection, then projected gradient, in that order of preference.
    step_size : float, default=0.1
        Projected-gradient step :math:`\eta`.
    tol : float, default=1e-8
        Outer tolerance of projected gradient (sup-norm change of one step).
    projection_tol : float, default=1e-10
        Dykstra tolerance on both the change per cycle and the constraint violation, relative to
        the curves' magnitude (they are solved divided by a power of two near it).
    max_iter : int, default=20000
        Cap on projected-gradient iterations.
    max_work : float, default=3e9
        Cap on the work of the whole solve, shared by every inner projection, in units of about
        one grid value read or written (see ``fairot.regression._dykstra.WorkBudget``; 1 to
        4·10^8 units a second on one core). Work, not time, so that the answer is deterministic.
        When it (or ``max_iter``) runs out, the best feasible answer found is returned with
        ``stopped_early=True`` and one :class:`~sklearn.exceptions.ConvergenceWarning`: feasible,
        but with no bound on its distance to the optimum (K = 1000 can stop 9 % above it under
        the default; raise ``max_work`` and compare objectives).

    Returns
    -------
    QuantileAdjustment
        ``curves``, ``grid``, ``grid_gap``, ``violation``, ``n_iter``, ``active_pairs``, ...

    Notes
    -----
    For two groups and squared cost (Table 1 of [1]_), with :math:`\Delta^* = Q^*_1 - Q^*_2` and
    :math:`\bar Q^* = r_1Q^*_1 + r_2Q^*_2`, :math:`\Delta` is the projection of :math:`\Delta^*`
    onto the :math:`L_p` ball (``p = 2``: scaling by :math:`\min(1, \epsilon/\|\Delta^*\|_2)`;
    ``p = 1``: soft-thresholding with the exact threshold; ``p = inf``: clipping), and
    :math:`Q_1 = \bar Q^* + r_2\Delta`, :math:`Q_2 = \bar Q^* - r_1\Delta`. When the constraint is
    inactive the curves are returned unchanged, bit for bit.

    References
    ----------
    .. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.regression import adjust_quantiles
    >>> u = (np.arange(1, 5) - 0.5) / 4
    >>> result = adjust_quantiles(np.stack([u, u + 1.0]), [0.5, 0.5], p=2, epsilon=0.5)
    >>> result.curves[1] - result.curves[0]
    array([0.5, 0.5, 0.5, 0.5])
    """
    curves = _check_curves(latent_curves)
    n_groups, n_grid = curves.shape
    w = _check_weights(weights, n_groups)
    p = check_p(p)
    epsilon = _check_epsilon(epsilon)
    if (
        not isinstance(max_work, numbers.Real)
        or isinstance(max_work, bool)
        or np.isnan(max_work)
        or max_work <= 0
    ):
        raise ValueError(MSG_MAX_WORK.format(value=max_work))
    budget = WorkBudget(max_work)
    bounds = check_bounds(bounds, curves.min(), curves.max())
    cost = resolve_cost(cost)
    if method not in (
        "auto",
        "closed_form",
        "projection",
        "pointwise",
        "projected_gradient",
        "barycenter_ball",
    ):
        raise ValueError(MSG_METHOD.format(value=method))

    target = cost.squared_target(curves)
    target_is_curve = (
        target is not None
        and bool(np.all(np.diff(target, axis=1) >= 0))
        and target.min() >= bounds[0]
        and target.max() <= bounds[1]
    )
    reference = curves if target is None else target
    # W_p is homogeneous: the squared-target solvers run on curves divided by a power of two
    # near their magnitude (exact), so that squares neither overflow nor underflow.
    scale = magnitude_scale(reference)
    magnitude = float(np.abs(reference).max())
    solve_epsilon = epsilon
    if epsilon <= EPSILON_RESOLUTION * np.abs(reference).max():
        solve_epsilon = 0.0
    flat = target is not None and bool(np.all(target == target[:, :1]))
    # One grid point: every W_p distance is the absolute difference of the two values, so the
    # problem is the W-inf one whatever p, solved exactly by rank (pointwise). Dykstra would
    # need about 1 / r_min cycles there: the two constraints that bind on a group of share
    # r_min (1e-6 beside 1, 1) are nearly parallel in the share-weighted metric (cosine
    # 1 - r_min), so alternating projections crawl (68 s, then the work bound).
    one_point = n_grid == 1
    if method == "auto":
        if target_is_curve and n_groups == 2:
            method = "closed_form"
        elif (np.isinf(p) or solve_epsilon == 0.0 or one_point) and target is None:
            # epsilon = 0 is one common curve for every p: the same rank-wise solve, exact and
            # immune to the slow flat regions of a projected gradient (logistic tails)
            method = "pointwise"
        elif target is not None:
            # Flat targets (every rank tied within each group) are p-free: a constant gap has the
            # same grid norm for every p, so the exact by-rank band solve applies, where Dykstra
            # needs millions of cycles on groups of shares 1e-6 and 1.
            by_rank = np.isinf(p) or flat
            method = "pointwise" if by_rank and target_is_curve else "projection"
        else:
            method = "projected_gradient"

    if target is not None:
        target = target / scale
    bounds_s = (bounds[0] / scale, bounds[1] / scale)
    latent_feasible = (
        target_is_curve and pairwise_grid_distances(target, p).max() <= epsilon / scale
    )
    converged, knob = True, "max_work"
    if latent_feasible and method != "barycenter_ball":
        # the unconstrained optimum is feasible: nothing moves, bit for bit
        adjusted, n_iter = target.copy(), 0
    elif method == "closed_form":
        if n_groups != 2 or not target_is_curve:
            raise ValueError(
                MSG_METHOD_NEEDS.format(method=method, what="two groups and a squared cost")
            )
        adjusted, n_iter = _closed_form(target, w, p, solve_epsilon / scale)
    elif method == "projection":
        if target is None:
            raise ValueError(MSG_METHOD_NEEDS.format(method=method, what="a squared cost"))
        adjusted, n_iter, converged = fastest_projection(
            target, w, p, solve_epsilon / scale, bounds_s, projection_tol, budget, target_is_curve
        )
    elif method == "pointwise":
        if not (np.isinf(p) or solve_epsilon == 0.0 or flat or one_point):
            raise ValueError(MSG_METHOD_NEEDS.format(method=method, what="p = inf or epsilon = 0"))
        adjusted, n_iter = pointwise_sup(cost, curves, w, solve_epsilon, bounds)
        adjusted = adjusted / scale
    elif method == "barycenter_ball":
        if not target_is_curve:
            raise ValueError(MSG_METHOD_NEEDS.format(method=method, what="a squared cost"))
        adjusted, n_iter = _barycenter_ball(target, w, p, solve_epsilon / scale)
    else:
        start = project_monotone_box(np.clip(cost.minimizer(curves), *bounds), bounds)
        adjusted, n_iter, converged = projected_gradient(
            lambda q: cost.gradient(curves, q),
            lambda q: cost.objective(curves, q, w),
            start,
            w,
            p=p,
            epsilon=solve_epsilon,
            bounds=bounds,
            step_size=step_size,
            tol=tol,
            projection_tol=projection_tol,
            max_iter=max_iter,
            budget=budget,
        )
        adjusted = adjusted / scale
        if n_iter >= max_iter and budget.remaining > 0:
            knob = "max_iter"

    distances = pairwise_grid_distances(adjusted, p) * scale
    latent_distances = pairwise_grid_distances(curves / scale, p) * scale
    adjusted = adjusted * scale
    grid_gap = float(distances.max())
    # relative below magnitude 1, so that tiny problems bind like their scaled-up copies
    slack = 1e-8 * max(min(1.0, magnitude), epsilon)
    binding = (latent_distances > epsilon) & (distances >= epsilon - slack)
    first, second = np.triu_indices(n_groups, 1)
    chosen = binding[first, second]  # row-major upper triangle: the order of combinations()
    active = tuple(zip(first[chosen].tolist(), second[chosen].tolist(), strict=True))
    violation = max(grid_gap - epsilon, 0.0)
    if not converged:
        reason = (
            f"the work bound max_work={max_work:g} ran out"
            if knob == "max_work"
            else f"max_iter={max_iter} iterations ran out"
        )
        warnings.warn(
            MSG_STOPPED_EARLY.format(method=method, reason=reason, violation=violation, knob=knob),
            ConvergenceWarning,
            stacklevel=2,
        )
    return QuantileAdjustment(
        curves=adjusted,
        grid=midpoint_grid(n_grid),
        grid_gap=grid_gap,
        violation=violation,
        n_iter=int(n_iter),
        active_pairs=active,
        method=method,
        p=p,
        epsilon=epsilon,
        stopped_early=not converged,
        magnitude=magnitude,
    )
