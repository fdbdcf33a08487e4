r"""The :math:`W_1` distance of many sorted samples to one reference, in one pass over both.

:math:`W_1(x, r) = \int_{\mathbb{R}} |F_x(t) - F_r(t)| \, dt` with both distribution functions
steps. On an interval :math:`[s, e)` where the sample's :math:`F_x = c` is constant,

.. math::

    \int_s^e |c - F_r(t)| \, dt = c (e - s) - \big(P(e) - P(s)\big)
        + 2 \Big( P(e) - P(m) - c (e - m) \Big)_{m < e}, \qquad m = \max(s, \tau_c),

where :math:`P(t) = \int_{r_{(1)}}^t F_r` is the primitive of the reference's distribution
function (prefix sums over its sorted points, read at any :math:`t` by a binary search) and
:math:`\tau_c` the first reference point where :math:`F_r` exceeds :math:`c`. Each sample costs
:math:`O(n \log M)` instead of a merge with the whole reference of :math:`M` points, so the
distances of :math:`K` groups to their pooled sample cost :math:`O(N \log N)`, not
:math:`O(K N)`.
"""

from __future__ import annotations

import numpy as np


def _cumulative(weights: np.ndarray | None, n: int) -> np.ndarray:
    if weights is None:
        return np.arange(1, n + 1) / n
    cum = np.cumsum(weights, dtype=float)
    return cum / cum[-1]


def w1_to_reference(
    sorted_samples: list[np.ndarray],
    reference: np.ndarray,
    sample_weights: list | None = None,
    reference_weights: np.ndarray | None = None,
) -> np.ndarray:
    r"""Exact :math:`W_1` from each sorted sample to one sorted reference, all at once.

    Parameters
    ----------
    sorted_samples : list of numpy.ndarray
        Samples sorted nondecreasingly, each non-empty.
    reference : numpy.ndarray
        The reference sample, sorted nondecreasingly (e.g. the pooled samples).
    sample_weights : list of (numpy.ndarray or None), optional
        Non-negative weights of each sample in its sorted order (positive sum); ``None``:
        equal weights.
    reference_weights : numpy.ndarray, optional
        Weights of the reference in its sorted order.

    Returns
    -------
    numpy.ndarray of shape (n_samples,)
        :math:`W_1(x_k, r)` for each sample, as
        :func:`fairot.transport.wasserstein_sorted` gives it one by one (up to rounding of
        the prefix sums, relative to the reference's range).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import wasserstein_distance
    >>> pooled = np.array([0.0, 0.2, 0.5, 0.9])
    >>> groups = [np.array([0.0, 0.5]), np.array([0.2, 0.9])]
    >>> got = w1_to_reference(groups, pooled)
    >>> bool(np.allclose(got, [wasserstein_distance(g, pooled) for g in groups]))
    True
    """
    r = np.asarray(reference, dtype=float)
    c_ref = _cumulative(reference_weights, r.shape[0])
    # P at the reference points: P(r_j) = sum_{i<j} F_r(r_i) (r_{i+1} - r_i).
    p_ref = np.concatenate([[0.0], np.cumsum(c_ref[:-1] * np.diff(r))])

    def primitive(t: np.ndarray) -> np.ndarray:
        j = np.searchsorted(r, t, side="right") - 1  # the last reference point <= t
        inside = j >= 0
        k = np.maximum(j, 0)
        return np.where(inside, p_ref[k] + c_ref[k] * (t - r[k]), 0.0)

    ws = [None] * len(sorted_samples) if sample_weights is None else sample_weights
    starts, ends, levels, owner = [], [], [], []
    for g, (x, w) in enumerate(zip(sorted_samples, ws, strict=True)):
        x = np.asarray(x, dtype=float)
        c = _cumulative(w, x.shape[0])
        # Intervals (-inf, x_1), [x_k, x_{k+1}), [x_n, +inf) with F_x = 0, c_k, 1; outside the
        # span of both samples both functions are 0 or both 1.
        low, high = min(x[0], r[0]), max(x[-1], r[-1])
        starts.append(np.concatenate([[low], x]))
        ends.append(np.concatenate([x, [high]]))
        levels.append(np.concatenate([[0.0], c]))
        owner.append(np.full(x.shape[0] + 1, g))
    s, e, level = np.concatenate(starts), np.concatenate(ends), np.concatenate(levels)
    first_above = np.searchsorted(c_ref, level, side="right")
    tau = np.where(first_above < r.shape[0], r[np.minimum(first_above, r.shape[0] - 1)], np.inf)
    m = np.minimum(np.maximum(s, tau), e)
    p_s, p_e, p_m = primitive(s), primitive(e), primitive(m)
    part = level * (e - s) - (p_e - p_s) + 2.0 * ((p_e - p_m) - level * (e - m))
    out = np.bincount(np.concatenate(owner), weights=part, minlength=len(sorted_samples))
    # Rounding of the prefix sums can leave -1e-17 where the distance is 0.
    return np.maximum(out, 0.0)
