r"""Compiled W_p of count-weighted sorted samples: one merge of quantile functions per pair.

A bootstrap replicate given by counts :math:`c_j` on the sorted values :math:`x_{(j)}` of a
group of :math:`n` rows has the quantile function :math:`Q(u) = x_{(j)}` for
:math:`u \in (C_{j-1}/n, C_j/n]` (:math:`C_j` the cumulative counts; a zero count is a step of
zero width). Two (or more) such functions are constant on the cells between their merged
breakpoints, so

.. math::

    W_p^p = \sum_{\text{cells}} |Q_a - Q_b|^p \, \text{mass}, \qquad
    W_\infty = \max_{\text{cells of positive mass}} |Q_a - Q_b|,

and the W1 to the median barycenter of several groups is
:math:`\sum_{\text{cells}} \sum_g |Q_g - \operatorname{med}_g Q_g| \, \text{mass}` (Section
"Metrics" of the COT paper): the same cells as :func:`fairot.transport.joint_quantile_cells`,
read in one pass of the counts, without the sorted copies.

Internal surface (for :mod:`fairot.metrics.resampling`): :func:`count_distances`.
"""

from __future__ import annotations

import numba
import numpy as np

from fairot.transport import MASS_TOLERANCE


@numba.njit(cache=True, nogil=True)
def _advance(counts, start, stop, i, cum):
    # Move to the next row of positive count (its cumulative count ends the next step).
    i += 1
    while i < stop and counts[i] == 0:
        i += 1
    return i, cum + (counts[i] if i < stop else 0.0)


@numba.njit(cache=True, nogil=True)
def _pair(values, counts, a0, a1, b0, b1, tol):
    """W1, W2^2 and W_inf between groups [a0, a1) and [b0, b1) of ``values``/``counts``."""
    na = 0.0
    for k in range(a0, a1):
        na += counts[k]
    nb = 0.0
    for k in range(b0, b1):
        nb += counts[k]
    i, ca = _advance(counts, a0, a1, a0 - 1, 0.0)
    j, cb = _advance(counts, b0, b1, b0 - 1, 0.0)
    level, w1, w2, winf = 0.0, 0.0, 0.0, 0.0
    while True:
        fa, fb = ca / na, cb / nb
        top = min(fa, fb)
        mass = top - level
        gap = abs(values[i] - values[j])
        w1 += gap * mass
        w2 += gap * gap * mass
        if mass > tol and gap > winf:
            winf = gap
        level = top
        if ca >= na and cb >= nb:
            return w1, w2, winf
        if fa == top and ca < na:
            i, ca = _advance(counts, a0, a1, i, ca)
        if fb == top and cb < nb:
            j, cb = _advance(counts, b0, b1, j, cb)


@numba.njit(cache=True, nogil=True)
def _median(values, buffer):
    # np.median of a few values without its allocation: insertion sort, then the middle (or the
    # mean of the two middle values, as np.median).
    n = values.shape[0]
    for k in range(n):
        v = values[k]
        m = k
        while m > 0 and buffer[m - 1] > v:
            buffer[m] = buffer[m - 1]
            m -= 1
        buffer[m] = v
    half = n // 2
    if n % 2:
        return buffer[half]
    return (buffer[half - 1] + buffer[half]) / 2


@numba.njit(cache=True, nogil=True)
def _to_median(values, counts, starts):
    """Sum over groups of the W1 to the median of their quantile functions."""
    n_groups = starts.shape[0] - 1
    size = np.zeros(n_groups)
    idx = np.empty(n_groups, dtype=np.int64)
    cum = np.zeros(n_groups)
    for g in range(n_groups):
        for k in range(starts[g], starts[g + 1]):
            size[g] += counts[k]
        idx[g], cum[g] = _advance(counts, starts[g], starts[g + 1], starts[g] - 1, 0.0)
    level, total = 0.0, 0.0
    current = np.empty(n_groups)
    buffer = np.empty(n_groups)
    while True:
        top = 2.0
        for g in range(n_groups):
            top = min(top, cum[g] / size[g])
            current[g] = values[idx[g]]
        median = _median(current, buffer)
        deviation = 0.0
        for g in range(n_groups):
            deviation += abs(current[g] - median)
        total += deviation * (top - level)
        level = top
        done = True
        for g in range(n_groups):
            if cum[g] < size[g]:
                done = False
                if cum[g] / size[g] == top:
                    idx[g], cum[g] = _advance(counts, starts[g], starts[g + 1], idx[g], cum[g])
        if done:
            return total


@numba.njit(cache=True, nogil=True)
def _batch(values, counts, starts, pooled, tol):
    n_rep = counts.shape[0]
    n_groups = starts.shape[0] - 1
    n_pairs = n_groups * (n_groups - 1) // 2
    wass1 = np.empty(n_rep)
    w1 = np.empty((n_rep, n_pairs))
    w2 = np.empty((n_rep, n_pairs))
    winf = np.empty((n_rep, n_pairs))
    sdd = np.zeros(n_rep)
    for b in range(n_rep):
        row = counts[b]
        wass1[b] = _to_median(values, row, starts)
        p = 0
        for g in range(n_groups):
            for h in range(g + 1, n_groups):
                w1[b, p], w2[b, p], winf[b, p] = _pair(
                    values, row, starts[g], starts[g + 1], starts[h], starts[h + 1], tol
                )
                p += 1
            if pooled:  # the last block of ``values`` is the pooled sample
                sdd[b] += _pair(
                    values,
                    row,
                    starts[g],
                    starts[g + 1],
                    starts[n_groups],
                    values.shape[0],
                    tol,
                )[0]
    return wass1, w1, w2, winf, sdd


def count_distances(values, counts, starts, pooled):
    """W_p of count-weighted sorted groups for every replicate (rows of ``counts``).

    ``values`` (m,) concatenates the groups' sorted (scaled) values, group ``g`` at
    ``starts[g]:starts[g + 1]``, then, with ``pooled``, the sorted values of all rows;
    ``counts`` (B, m) holds every replicate's counts in that order. Returns ``wass1`` (B,),
    the pairwise ``W1``, ``W2`` and ``W_inf`` (B, pairs in ``itertools.combinations`` order)
    and ``sdd`` (B,), the sum of the groups' W1 to the pooled sample (0 without ``pooled``).
    """
    wass1, w1, w2sq, winf, sdd = _batch(
        np.ascontiguousarray(values, dtype=float),
        np.ascontiguousarray(counts, dtype=float),
        np.asarray(starts, dtype=np.int64),
        bool(pooled),
        MASS_TOLERANCE,
    )
    return wass1, w1, np.sqrt(w2sq), winf, sdd
