r"""Scale and feasibility guarantee of :func:`fairot.regression.adjust_quantiles`.

Internal surface (plain names for :mod:`._adjust`): :data:`FEASIBILITY_RTOL`,
:data:`FEASIBILITY_ATOL`, :func:`magnitude_scale`, :func:`feasibility_bound`, and
:func:`shrink_to_feasible` (the last step of every projection, re-exported by :mod:`._dykstra`).

Every solve runs on curves divided by a power of two close to their magnitude and multiplies
the answer back. :math:`W_p` on the grid is homogeneous of degree 1 and every solver is a
projection in the squared group-weighted norm, so the problem at scale :math:`s` is the problem
at scale 1 multiplied by :math:`s`; dividing by a power of two is exact, so the scaled problem is
the same numbers with another exponent, and the squares of the :math:`L_2` norm neither
overflow (curves near :math:`10^{155}`) nor underflow (near :math:`10^{-155}`).

The guarantee: the largest pairwise grid distance of the answer satisfies

.. math::

    \max_{i<j} \|Q_i - Q_j\|_p \le \epsilon\,(1 + \mathrm{rtol}) + \mathrm{atol}\cdot S,

with :math:`S = \max_{s,k} |Q^*_{s}(u_k)|` the magnitude of the latent curves (of the squared
target for the observed-loss cost). The two terms are the rounding of :math:`\epsilon` and of the
curves' values: the last shrink towards the barycenter aims at :math:`\epsilon` exactly, and a
difference of two values near :math:`S` is exact only to an ulp of :math:`S`.
"""

from __future__ import annotations

import numpy as np

from ._projections import pairwise_grid_distances

__all__ = [
    "FEASIBILITY_ATOL",
    "FEASIBILITY_RTOL",
    "feasibility_bound",
    "magnitude_scale",
    "shrink_to_feasible",
]

#: Relative slack on the tolerance in the feasibility guarantee (rounding of epsilon).
FEASIBILITY_RTOL = 16 * np.finfo(np.float64).eps
#: Slack in units of the curves' magnitude (an ulp or a few of the largest value).
FEASIBILITY_ATOL = 16 * np.finfo(np.float64).eps


def magnitude_scale(values: np.ndarray) -> float:
    """The power of two nearest below ``max |values|`` (1.0 for all-zero values).

    A power of two, so that dividing by it and multiplying back are exact.
    """
    largest = float(np.abs(values).max())
    if largest == 0.0:
        return 1.0
    return float(np.ldexp(1.0, int(np.frexp(largest)[1]) - 1))


def feasibility_bound(epsilon: float, magnitude: float) -> float:
    r"""Largest grid gap the guarantee allows.

    :math:`\epsilon\,(1 + \mathrm{rtol}) + \mathrm{atol}\cdot S` with ``magnitude`` :math:`= S`.
    """
    return epsilon * (1.0 + FEASIBILITY_RTOL) + FEASIBILITY_ATOL * magnitude


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
