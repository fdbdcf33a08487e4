r"""The :math:`W_1` projection of small problems, by a primal-dual interior-point method.

Internal surface (plain names for :mod:`._adjust`): :func:`project_small_w1`, and
:data:`SMALL_PROBLEM` (the largest ``K * M`` it is meant for).

The group-weighted projection of :func:`~fairot.regression._dykstra.dykstra_projection` for
``p = 1``,

.. math::

    \min_{Q,\,t} \sum_s r_s \sum_k (Q_{sk} - T_{sk})^2
    \quad\text{s.t.}\quad -t_{ij} \le Q_i - Q_j \le t_{ij},\quad
    \frac1M\sum_k t_{ijk} \le \epsilon\ (i < j),\quad
    Q_{s,k} \le Q_{s,k+1},\quad a \le Q_{sk} \le b,

is a convex quadratic program once each pair's gap is bounded by a curve :math:`t_{ij}`.
Mehrotra's predictor-corrector [1]_ solves it in a few tens of Newton steps whatever the shares,
where Dykstra's cycles (block coordinate ascent on the dual) crawl when the shares are
:math:`10^6` apart and tied ranks make the monotone and pair constraints meet at a sharp angle
(millions of cycles, seconds, for K = 5 groups on M = 33 grid points). The curves
:math:`t` leave every Newton system in closed form (each pair's block is a diagonal plus a
rank-one term), so a step costs one Cholesky factorisation of a :math:`KM \times KM` matrix.

The answer is then made exactly feasible like Dykstra's: monotone and inside the range by one
pool-adjacent-violators pass, then within the tolerance by :func:`shrink_to_feasible`.

References
----------
.. [1] S. Mehrotra, "On the implementation of a primal-dual interior point method", SIAM J.
   Optim. 2(4), 1992; J. Nocedal, S. J. Wright, "Numerical Optimization", 2nd ed., Sec. 16.6.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from threadpoolctl import ThreadpoolController

from ._dykstra import Projection, WorkBudget
from ._feasibility import shrink_to_feasible
from ._projections import project_monotone_box

__all__ = ["SMALL_PROBLEM", "project_small_w1"]

#: Largest number of curve values ``K * M`` the interior-point solve is meant for: its Newton
#: systems are dense, about (K M)^3 / 3 flops each.
SMALL_PROBLEM = 400
MAX_STEPS = 100
STEP_TO_BOUNDARY = 0.995
STALL_STEPS = 3  # steps without a better iterate (once complementarity is met) before stopping
TARGET = 1e-4  # the solve stops at once when every residual is below TARGET * tol
DUAL_WEIGHT = 1e-2  # the dual residual is held to a hundred times less than the others


class _Problem:
    """Constraint values, Jacobian products and the reduced Newton system of one projection.

    The variables are the curves ``Q`` (K, M) and the gap bounds ``t`` (P, M), one row per
    pair. The inequalities ``g(Q, t) <= 0`` are concatenated in the order: monotone
    (K, M - 1), upper bound (K, M), lower bound (K, M) (only finite bounds), ``d - t`` and
    ``-d - t`` (P, M), ``sum_k t - epsilon M`` (P,), with ``d = Q_i - Q_j``.
    """

    def __init__(self, target, shares, epsilon, bounds):
        self.target = target
        self.shares = shares
        self.epsilon = epsilon
        k, m = self.k, self.m = target.shape
        self.first, self.second = np.triu_indices(k, 1)
        n_pairs = self.n_pairs = self.first.size
        self.lower, self.upper = bounds
        self.has_upper = bool(np.isfinite(self.upper))
        self.has_lower = bool(np.isfinite(self.lower))
        sizes = [k * (m - 1), k * m * self.has_upper, k * m * self.has_lower]
        sizes += [n_pairs * m, n_pairs * m, n_pairs]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.n_constraints = int(self.offsets[-1])
        incidence = np.zeros((n_pairs, k))
        incidence[np.arange(n_pairs), self.first] = 1.0
        incidence[np.arange(n_pairs), self.second] = -1.0
        self.incidence = incidence
        self.coupling = incidence[:, :, None] * incidence[:, None, :]
        index = np.arange(k * m).reshape(k, m)
        self.diagonal = index.ravel()
        self.left, self.right = index[:, :-1].ravel(), index[:, 1:].ravel()

    def _split(self, v):
        return [v[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:], strict=True)]

    def values(self, q, t):
        """The constraint values ``g(Q, t)``."""
        d = q[self.first] - q[self.second]
        return np.concatenate(
            [
                (q[:, :-1] - q[:, 1:]).ravel(),
                (q - self.upper).ravel() if self.has_upper else np.empty(0),
                (self.lower - q).ravel() if self.has_lower else np.empty(0),
                (d - t).ravel(),
                (-d - t).ravel(),
                t.sum(axis=1) - self.epsilon * self.m,
            ]
        )

    def gradient(self, q):
        return 2.0 * self.shares[:, None] * (q - self.target)

    def jac(self, dq, dt):
        """The constraints' Jacobian times the step ``(dq, dt)``."""
        dd = dq[self.first] - dq[self.second]
        return np.concatenate(
            [
                (dq[:, :-1] - dq[:, 1:]).ravel(),
                dq.ravel() if self.has_upper else np.empty(0),
                -dq.ravel() if self.has_lower else np.empty(0),
                (dd - dt).ravel(),
                (-dd - dt).ravel(),
                dt.sum(axis=1),
            ]
        )

    def _pair_to_groups(self, per_pair):
        """Each pair's row added to its first group and subtracted from its second."""
        return self.incidence.T @ per_pair

    def jac_t(self, y):
        """The transposed Jacobian times ``y``: its parts on ``Q`` and on ``t``."""
        k, m = self.k, self.m
        mono, up, low, plus, minus, total = self._split(y)
        out = np.zeros((k, m))
        mono = mono.reshape(k, m - 1)
        out[:, :-1] += mono
        out[:, 1:] -= mono
        if self.has_upper:
            out += up.reshape(k, m)
        if self.has_lower:
            out -= low.reshape(k, m)
        plus, minus = plus.reshape(self.n_pairs, m), minus.reshape(self.n_pairs, m)
        out += self._pair_to_groups(plus - minus)
        return out, total[:, None] - plus - minus

    def factor(self, w):
        """Factor the Newton system ``H + J' diag(w) J`` with ``t`` eliminated.

        Returns the solver of the system for a right-hand side ``(rhs_q, rhs_t)``.
        """
        k, m = self.k, self.m
        n = k * m
        mono, up, low, w_plus, w_minus, w_sum = self._split(w)
        diag = np.repeat(2.0 * self.shares, m)
        mono = mono.reshape(k, m - 1)
        diag += np.pad(mono, ((0, 0), (0, 1))).ravel() + np.pad(mono, ((0, 0), (1, 0))).ravel()
        if self.has_upper:
            diag += up
        if self.has_lower:
            diag += low
        w_plus, w_minus = w_plus.reshape(self.n_pairs, m), w_minus.reshape(self.n_pairs, m)
        both = w_plus + w_minus
        a = w_minus - w_plus
        gamma = w_sum / (1.0 + w_sum * np.sum(1.0 / both, axis=1))
        g = a / both
        # each pair's block once t is eliminated: diag(4 w+ w- / (w+ + w-)) + gamma g g'
        # (the difference form of diag(both) - diag(a) (diag(both) + w_sum 1 1')^-1 diag(a))
        blocks = gamma[:, None, None] * g[:, :, None] * g[:, None, :]
        blocks[:, np.arange(m), np.arange(m)] += 4.0 * w_plus * w_minus / both
        # sum over the pairs of (e_i - e_j)(e_i - e_j)' (x) block, in one contraction
        system = np.tensordot(self.coupling, blocks, axes=(0, 0)).transpose(0, 2, 1, 3)
        system = system.reshape(n, n)
        system[self.diagonal, self.diagonal] += diag
        system[self.left, self.right] -= mono.ravel()
        system[self.right, self.left] -= mono.ravel()
        factor = cho_factor(system, check_finite=False)

        def solve_t(rhs):
            # each pair's (diag(both) + w_sum 1 1') x = rhs, by Sherman-Morrison
            return rhs / both - (gamma * np.sum(rhs / both, axis=1))[:, None] / both

        def solve(rhs_q, rhs_t):
            rhs_q = rhs_q - self._pair_to_groups(a * solve_t(rhs_t))
            dq = cho_solve(factor, rhs_q.ravel(), check_finite=False).reshape(k, m)
            dd = dq[self.first] - dq[self.second]
            return dq, solve_t(rhs_t - a * dd)

        return solve


@functools.cache
def _blas_controller() -> ThreadpoolController:
    """One controller for the process.

    Finding the loaded BLAS libraries costs milliseconds, more than a small solve; limiting the
    threads of libraries already found costs microseconds.
    """
    return ThreadpoolController()


def _max_step(v, dv):
    """Largest step in (0, 1] keeping ``v + step * dv`` nonnegative."""
    shrinking = dv < 0
    if not np.any(shrinking):
        return 1.0
    return float(min(1.0, np.min(-v[shrinking] / dv[shrinking])))


def _direction(problem, solve, s, w, residuals, complementarity):
    """The Newton step ``(dq, dt, ds, dz)`` for the complementarity target ``s z = ...``.

    ``ds = -r_p - J dx``, ``dz = w (J dx + r_p) - r_c / s`` and
    ``(H + J' W J) dx = -r_d - J' (w r_p - r_c / s)``, with ``w = z / s``.
    """
    primal, dual_q, dual_t = residuals
    back_q, back_t = problem.jac_t(w * primal - complementarity / s)
    dq, dt = solve(-dual_q - back_q, -dual_t - back_t)
    jdx = problem.jac(dq, dt)
    return dq, dt, -primal - jdx, w * (jdx + primal) - complementarity / s


def project_small_w1(
    target: np.ndarray,
    weights: np.ndarray,
    *,
    epsilon: float,
    bounds: tuple[float, float],
    tol: float = 1e-10,
    budget: WorkBudget | None = None,
) -> Projection:
    r"""Group-weighted :math:`W_1` projection of ``target``, by interior point.

    The same answer as :func:`~fairot.regression._dykstra.dykstra_projection` with ``p = 1``
    (see the module docstring), for curves of magnitude about one
    (:func:`fairot.regression.adjust_quantiles` solves curves divided by a power of two near
    their magnitude).

    Parameters
    ----------
    target : ndarray of shape (K, M)
    weights : ndarray of shape (K,)
        Group shares, positive.
    epsilon : float > 0
    bounds : (float, float)
    tol : float
        The solve is converged when the largest primal residual, complementarity
        :math:`s^\top z / n` and a hundredth of the dual residual (shares scaled to a largest
        of one) are at most ``tol``; it stops at once below ``1e-4 * tol``, else when ten steps
        in a row found no better iterate.
    budget : WorkBudget, optional
        Each Newton step spends about ``(K M)^3 / 60`` units.

    Returns
    -------
    Projection
        ``curves`` exactly feasible (the best iterate, made feasible), ``n_iter`` the Newton
        steps, ``converged`` False when the best iterate misses ``tol`` (the caller then falls
        back to Dykstra).
    """
    budget = WorkBudget(np.inf) if budget is None else budget
    # Small dense systems: BLAS threads only add synchronisation (see ._dual_newton).
    with _blas_controller().limit(limits=1, user_api="blas"):
        best, n_iter, converged = _iterate(target, weights, epsilon, bounds, tol, budget)
    curves = project_monotone_box(best, bounds)
    return Projection(shrink_to_feasible(curves, weights, 1.0, epsilon), n_iter, converged)


def _iterate(target, weights, epsilon, bounds, tol, budget):
    """Mehrotra's predictor-corrector steps; returns (best curves, steps, converged)."""
    target = np.ascontiguousarray(target, dtype=np.float64)
    shares = np.asarray(weights, dtype=np.float64)
    problem = _Problem(target, shares / shares.max(), float(epsilon), bounds)
    k, m = target.shape
    q = project_monotone_box(target, bounds)
    t = np.abs(q[problem.first] - q[problem.second])
    g = problem.values(q, t)
    s = np.maximum(-g, 1.0)
    z = np.ones_like(s)
    n_c = problem.n_constraints
    step_cost = (k * m) ** 3 / 60.0 + 20.0 * n_c
    best, best_merit = q, np.inf
    n_iter = since_best = 0
    while n_iter < MAX_STEPS and since_best < STALL_STEPS:
        grad_q, dual_t = problem.jac_t(z)
        dual_q = problem.gradient(q) + grad_q
        primal = g + s
        mu = float(s @ z) / n_c
        # Near the answer the dual residual stops falling (the rounding of the Newton systems
        # grows with z / s): the iterate that best balances the three residuals is kept.
        dual = max(np.abs(dual_q).max(), np.abs(dual_t).max())
        merit = max(DUAL_WEIGHT * dual, np.abs(primal).max(), mu)
        if merit < best_merit:
            best, best_merit, since_best = q, merit, 0
        elif mu <= TARGET * tol:
            since_best += 1
        if merit <= TARGET * tol or budget.remaining < step_cost:
            break
        budget.spend(step_cost)
        n_iter += 1
        w = z / s
        try:
            solve = problem.factor(w)
        except (LinAlgError, ValueError):
            break

        residuals = (primal, dual_q, dual_t)
        dq, dt, ds, dz = _direction(problem, solve, s, w, residuals, s * z)
        alpha = min(_max_step(s, ds), _max_step(z, dz))
        sigma = (float((s + alpha * ds) @ (z + alpha * dz)) / n_c / mu) ** 3
        dq, dt, ds, dz = _direction(problem, solve, s, w, residuals, s * z + ds * dz - sigma * mu)
        alpha = STEP_TO_BOUNDARY * min(_max_step(s, ds), _max_step(z, dz))
        q, t = q + alpha * dq, t + alpha * dt
        s, z = s + alpha * ds, z + alpha * dz
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(s)) and np.all(np.isfinite(z))):
            break
        g = problem.values(q, t)
    return best, n_iter, bool(best_merit <= tol)
