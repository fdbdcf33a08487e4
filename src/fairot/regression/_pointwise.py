r"""W-infinity (and epsilon = 0) by rank, for any convex cost (Section 2.6 of [1]_).

Internal surface (a plain name for :mod:`._adjust`): :func:`pointwise_sup`.

References
----------
.. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).
"""

from __future__ import annotations

import numpy as np

__all__ = ["pointwise_sup"]


def pointwise_sup(cost, latent, weights, epsilon, bounds, n_bisection=200):
    r"""W-infinity by rank (Section 2.6 of [1]_): one endpoint per rank, clip, then sort.

    At each rank the band :math:`[c, c + \epsilon]` holds every group's value, and group
    :math:`s` takes its unconstrained minimiser :math:`m_s` clipped to the band (the minimiser of
    a convex function over an interval). The endpoint :math:`c` minimises the convex
    :math:`\phi(c) = \sum_s r_s c_s(\mathrm{clip}(m_s, c, c + \epsilon))`; its derivative
    :math:`\sum_s r_s [1\{m_s < c\}\,c_s'(c) + 1\{m_s > c + \epsilon\}\,c_s'(c + \epsilon)]` is
    nondecreasing, so bisection finds it to machine precision. Sorting each curve afterwards
    (increasing rearrangement, Lemma 2 of [1]_) restores quantile order without widening any gap.
    """
    a, b = bounds
    m = np.clip(cost.minimizer(latent), a, b)
    if epsilon >= b - a:
        return np.sort(m, axis=1), 0
    lo = np.maximum(m.min(axis=0) - epsilon, a)
    hi = np.minimum(m.max(axis=0), b - epsilon)
    lo = np.minimum(lo, hi)
    w = weights[:, None]
    # the bisection's resolution is relative below magnitude 1, so that a 1e-155 problem is
    # solved like its scaled-up copy instead of stopping at the first midpoint
    floor = min(1.0, float(np.abs(m).max())) or 1.0
    n_iter = 0
    for n_iter in range(1, n_bisection + 1):  # noqa: B007 - n_iter is reported
        c = 0.5 * (lo + hi)
        below = m < c
        above = m > c + epsilon
        slope = np.where(below, cost.gradient(latent, np.broadcast_to(c, m.shape)), 0.0)
        slope += np.where(above, cost.gradient(latent, np.broadcast_to(c + epsilon, m.shape)), 0.0)
        g = (w * slope).sum(axis=0)
        lo = np.where(g < 0, c, lo)
        hi = np.where(g > 0, c, hi)
        flat = g == 0
        lo = np.where(flat, c, lo)
        hi = np.where(flat, c, hi)
        if np.all(hi - lo <= 4 * np.finfo(float).eps * np.maximum(floor, np.abs(c))):
            break
    c = 0.5 * (lo + hi)
    curves = np.clip(m, c, c + epsilon)
    return np.sort(curves, axis=1), n_iter
