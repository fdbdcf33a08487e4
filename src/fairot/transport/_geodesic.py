r"""Partial transport: points on the Wasserstein geodesic between a group and its target.

In one dimension the :math:`W_p` geodesic (McCann's displacement interpolation) between a
distribution with quantile function :math:`Q_a` and a target with quantile function
:math:`\bar Q` is the family

.. math:: Q_a^\tau(u) = \tau\, Q_a(u) + (1 - \tau)\, \bar Q(u), \qquad \tau \in [0, 1],

so that, for every :math:`p \ge 1`, :math:`W_p(\mu_a^\tau, \bar\mu) = \tau\, W_p(\mu_a, \bar\mu)`
exactly: a tolerance :math:`\tau` keeps that fraction of the raw distance to the target (the
regression paper's relative tolerance, Section 5.1 of the regression seed paper). The same holds
for a map: if :math:`T` is nondecreasing, :math:`\tau\,\mathrm{id} + (1 - \tau) T` is too, so the
pushforward of any sample by it lies at :math:`\tau` times the distance of that sample from its
image by :math:`T`.

The unit of tau in messages: :data:`TAU_MEANING`, :data:`MSG_TAU`, :func:`check_tau`.
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike

from fairot.transport._quantiles import ecdf_rank, midpoint_grid, quantile_function
from fairot.utils.arrays import check_array_1d

__all__ = ["check_tau", "geodesic_map", "geodesic_quantiles", "geodesic_targets"]

# The unit of tau, added to every message about it (the regression's TOLERANCE_UNITS["tau"]).
TAU_MEANING = (
    "tau is the fraction of the raw disparity kept: each group's scores move 1 - tau of the way "
    "along the Wasserstein geodesic to the target, so tau=1 keeps the model's own scores and "
    "tau=0 is full demographic parity"
)
MSG_TAU = "tau must be a real number in [0, 1]; got {value!r}. " + TAU_MEANING + "."


def check_tau(tau) -> float:
    """``tau`` as a float in [0, 1], or a ValueError that says what tau means.

    Parameters
    ----------
    tau : float
        The fraction of the raw disparity kept.

    Returns
    -------
    float

    Examples
    --------
    >>> from fairot.transport import check_tau
    >>> check_tau(1)
    1.0
    >>> check_tau(1.5)
    Traceback (most recent call last):
    ...
    ValueError: tau must be ...
    """
    if (
        isinstance(tau, bool)
        or not isinstance(tau, numbers.Real)
        or not np.isfinite(tau)
        or not 0.0 <= tau <= 1.0
    ):
        raise ValueError(MSG_TAU.format(value=tau))
    return float(tau)


def geodesic_quantiles(source: ArrayLike, target: ArrayLike, tau: float) -> np.ndarray:
    r"""Quantiles of the point at :math:`\tau` on the geodesic from ``target`` to ``source``.

    :math:`Q^\tau(u) = \tau\, Q_{\text{source}}(u) + (1 - \tau)\, Q_{\text{target}}(u)`.

    Parameters
    ----------
    source, target : array-like of shape (n_levels,) or (n_groups, n_levels)
        Quantile curves on a common grid of ranks (a group's raw curve and its target).
    tau : float in [0, 1]
        ``1``: the source itself; ``0``: the target itself.

    Returns
    -------
    numpy.ndarray
        The interpolated curves (nondecreasing when the inputs are); ``tau=0`` returns the
        target and ``tau=1`` the source exactly.

    Examples
    --------
    >>> from fairot.transport import geodesic_quantiles
    >>> geodesic_quantiles([0.0, 0.4, 0.8], [0.2, 0.4, 0.6], 0.5).tolist()
    [0.1, 0.4, 0.7]
    """
    tau = check_tau(tau)
    q_source = np.asarray(source, dtype=np.float64)
    q_target = np.asarray(target, dtype=np.float64)
    if q_source.shape != q_target.shape:
        raise ValueError(
            f"source and target must have the same shape; got {q_source.shape} and "
            f"{q_target.shape}."
        )
    if tau == 0.0:
        return q_target.copy()
    if tau == 1.0:
        return q_source.copy()
    return tau * q_source + (1.0 - tau) * q_target


def geodesic_map(
    scores: ArrayLike,
    source_samples: ArrayLike,
    target_samples: ArrayLike,
    tau: float = 0.0,
    *,
    source_weights: ArrayLike | None = None,
    rank_offset: float = 0.0,
    assume_sorted: bool = False,
) -> np.ndarray:
    r"""Move scores a fraction :math:`1 - \tau` of the way to the target, by their rank.

    .. math:: \tilde s = \tau\, s + (1 - \tau)\, \bar Q\big(F(s)\big),

    with :math:`F` the right-continuous ECDF of ``source_samples`` and :math:`\bar Q` the
    left-continuous quantile function of ``target_samples``. The map is nondecreasing, so
    for any sample of scores, :math:`W_p(\tilde s, T(s)) = \tau\, W_p(s, T(s))` exactly, with
    :math:`T(s) = \bar Q(F(s))` the full transport (``tau=0``) of the same scores.

    Parameters
    ----------
    scores : array-like of shape (n_scores,)
        Scores to move (of the group whose fit-time scores are ``source_samples``).
    source_samples : array-like of shape (n_source,)
        The group's fit-time scores, defining :math:`F`.
    target_samples : array-like of shape (n_target,)
        Samples of the target distribution.
    tau : float in [0, 1], default=0.0
        Fraction of the distance to the target kept (``0``: the full transport, ``1``: the
        scores unchanged).
    source_weights : array-like of shape (n_source,), optional
        Weights of ``source_samples``.
    rank_offset : float, default=0.0
        Added to the scores before ranking only (a rounding tolerance of the caller).
    assume_sorted : bool, default=False
        Both ``source_samples`` (with their weights) and ``target_samples`` are sorted.

    Returns
    -------
    numpy.ndarray of shape (n_scores,)

    Examples
    --------
    >>> from fairot.transport import geodesic_map
    >>> source, target = [0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]
    >>> geodesic_map([0.1, 0.4], source, target).tolist()
    [0.5, 0.8]
    >>> geodesic_map([0.1, 0.4], source, target, tau=0.5).tolist()
    [0.3, 0.6000000000000001]
    """
    tau = check_tau(tau)
    s = check_array_1d(scores, "scores", allow_empty=True)
    if tau == 1.0:
        return s.copy()
    rank = ecdf_rank(source_samples, s + rank_offset, source_weights, assume_sorted=assume_sorted)
    image = quantile_function(target_samples, rank, assume_sorted=assume_sorted)
    if tau == 0.0:
        return image
    return tau * s + (1.0 - tau) * image


def geodesic_targets(
    target_samples: ArrayLike,
    group_samples: list[ArrayLike],
    tau: float,
    *,
    group_weights: list[ArrayLike | None] | None = None,
) -> list[np.ndarray]:
    r"""Each group's own target: its point at :math:`\tau` on the geodesic to the shared target.

    Group :math:`a`'s target has quantiles :math:`\tau Q_a(u_k) + (1 - \tau)\bar Q(u_k)` on the
    midpoint grid with as many levels as ``target_samples`` has samples, so that
    :math:`W_p(\text{target}_a, \bar\mu) = \tau\, W_p(\mu_a, \bar\mu)` up to the grid's
    resolution of :math:`\mu_a`.

    Parameters
    ----------
    target_samples : array-like of shape (n_target,)
        Samples of the shared target :math:`\bar\mu` (e.g. the barycenter).
    group_samples : list of array-like
        Each group's raw scores (e.g. at the start :math:`\theta^*` of an in-processing method).
    tau : float in [0, 1]
    group_weights : list of (array-like or None), optional
        Each group's sample weights.

    Returns
    -------
    list of numpy.ndarray of shape (n_target,)
        Sorted samples of each group's target. With ``tau=0`` every entry is the (sorted)
        shared target itself.

    Examples
    --------
    >>> from fairot.transport import geodesic_targets
    >>> [t.tolist() for t in geodesic_targets([0.4, 0.6], [[0.0, 0.2], [0.8, 1.0]], 0.5)]
    [[0.2, 0.4], [0.6000000000000001, 0.8]]
    """
    tau = check_tau(tau)
    target = np.sort(check_array_1d(target_samples, "target_samples"))
    weights = [None] * len(group_samples) if group_weights is None else list(group_weights)
    if tau == 0.0:
        return [target.copy() for _ in group_samples]
    u = midpoint_grid(target.shape[0])
    return [
        geodesic_quantiles(quantile_function(g, u, w), target, tau)
        for g, w in zip(group_samples, weights, strict=True)
    ]
