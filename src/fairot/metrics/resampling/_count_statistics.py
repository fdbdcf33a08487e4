r"""Compiled statistics of count-weighted sorted samples: two passes over the rows per replicate.

A bootstrap replicate given by counts :math:`c_j` on the rows in pooled sorted order
(:class:`fairot.metrics.resampling._count_draws.CountLayout`) gives group :math:`g` of
:math:`n_g` rows the quantile function :math:`Q_g(u) = x_{(j)}` for
:math:`u \in (C_{g,j-1}/n_g, C_{g,j}/n_g]` (:math:`C_{g,j}` the cumulative counts of the
group's rows; a zero count is a step of zero width). All groups' quantile functions are
constant on the cells between their merged breakpoints, so **one merge of the K groups** (K
pointers over their cumulative counts) gives

.. math::

    W_p^p(g, h) = \sum_{\text{cells}} |Q_g - Q_h|^p \, \text{mass}, \qquad
    \text{wass1} = \sum_{\text{cells}} \sum_g |Q_g - \operatorname{med}_g Q_g| \, \text{mass}

for every pair at once (a pair's own cells are unions of the merged cells; its
:math:`W_\infty` is the largest gap on a pair cell of positive mass), the latter the W1 to the
median barycenter of Section "Metrics" of the COT paper, as
:func:`fairot.transport.joint_quantile_cells` cuts the cells. The W1 of each group to the pooled
replicate (``sdd``) is read from the distribution functions instead, in **one pass over the
pooled order**, :math:`W_1(g, \text{pooled}) = \int |F_g(t) - F(t)| \, dt`, and that pass also
sums the counts of every (cell, decision, label) atom and the counted scores of every cell, the
sufficient statistics of the threshold rates.

Internal surface (for :mod:`fairot.metrics.resampling._replicate_metrics`):
:func:`count_statistics`, :func:`draw_statistics`.
"""

from __future__ import annotations

import numba
import numpy as np

from fairot.metrics.resampling._count_draws import draw_cells
from fairot.transport import MASS_TOLERANCE


@numba.njit(cache=True, nogil=True)
def _spread(ordered):
    # Sum of |x - median| over values in increasing order: the upper half's sum minus the lower
    # half's (a middle value, for an odd count, is its own median and adds nothing).
    n = ordered.shape[0]
    total = 0.0
    for k in range(n // 2):
        total += ordered[n - 1 - k] - ordered[k]
    return total


@numba.njit(cache=True, nogil=True)
def _raise(g, value, ordered, group_at, slot_of):
    # Group ``g``'s quantile moved up to ``value``: one insertion step keeps ``ordered`` sorted.
    k = slot_of[g]
    while k + 1 < ordered.shape[0] and ordered[k + 1] < value:
        ordered[k] = ordered[k + 1]
        group_at[k] = group_at[k + 1]
        slot_of[group_at[k]] = k
        k += 1
    ordered[k] = value
    group_at[k] = g
    slot_of[g] = k


@numba.njit(cache=True, nogil=True)
def _close(g, level, current, pair_of, opened, w1, w2, winf, tol):
    # The cells of the pairs of group ``g`` end at ``level`` (``g`` steps there): each pair's
    # gap was constant since its cell opened, so its cell adds gap * mass at once, and counts
    # for W_inf if it has mass (cells thinner than the tolerance are rounding, not mass).
    # ``pair_of[g, g]`` is a spare slot with a gap of 0: no branch skips it.
    for h in range(current.shape[0]):
        p = pair_of[g, h]
        mass = level - opened[p]
        gap = abs(current[g] - current[h])
        w1[p] += gap * mass
        w2[p] += gap * gap * mass
        winf[p] = max(winf[p], gap if mass > tol else 0.0)
        opened[p] = level


@numba.njit(cache=True, nogil=True)
def _pairs(n_groups):
    # The index of every pair in itertools.combinations order, both ways; n_pairs on the
    # diagonal (the spare slot).
    n_pairs = n_groups * (n_groups - 1) // 2
    pair_of = np.full((n_groups, n_groups), n_pairs, dtype=np.int64)
    p = 0
    for g in range(n_groups):
        for h in range(g + 1, n_groups):
            pair_of[g, h] = p
            pair_of[h, g] = p
            p += 1
    return pair_of


@numba.njit(cache=True, nogil=True)
def _drawn_rows(counts, values, lo, hi, drawn_counts, drawn_values, drawn_lo):
    # Every group's rows drawn at least once, in order, written without a branch: each row is
    # written at the next place, which moves on only when the row was drawn.
    k = 0
    for g in range(lo.shape[0]):
        drawn_lo[g] = k
        for i in range(lo[g], hi[g]):
            drawn_counts[k] = counts[i]
            drawn_values[k] = values[i]
            k += counts[i] > 0


@numba.njit(cache=True, nogil=True)
def _level(cum, size, inverse):
    # The quantile level reached: exactly 1 at the group's end (the others are at most 1 - 1/n
    # below it); cells of a few ulps from the product are rounding (no W_inf, no mass to speak
    # of), where a division per step would cost more than the rest of the step.
    return 1.0 if cum >= size else cum * inverse


@numba.njit(cache=True, nogil=True)
def _merge(counts, values, lo, hi, tol, w1, w2, winf, drawn_counts, drawn_values):
    """wass1, and the pairwise W1, W2^2 and W_inf (into ``w1``, ``w2``, ``winf``).

    Group ``g``'s counts and sorted values are ``counts[lo[g]:hi[g]]``, ``values[lo[g]:hi[g]]``;
    ``drawn_counts`` and ``drawn_values`` are room for them (as long as ``values``).
    """
    n_groups = lo.shape[0]
    at = np.empty(n_groups, dtype=np.int64)
    _drawn_rows(counts, values, lo, hi, drawn_counts, drawn_values, at)
    size = np.empty(n_groups)
    inverse = np.empty(n_groups)
    cum = np.empty(n_groups)
    frac = np.empty(n_groups)
    current = np.empty(n_groups)
    for g in range(n_groups):
        size[g] = hi[g] - lo[g]  # a stratified replicate keeps every group's size
        inverse[g] = 1.0 / size[g]
        cum[g] = drawn_counts[at[g]]
        frac[g] = _level(cum[g], size[g], inverse[g])
        current[g] = drawn_values[at[g]]
    n_pairs = n_groups * (n_groups - 1) // 2
    pair_of = _pairs(n_groups)
    opened = np.zeros(n_pairs + 1)  # where each pair's current cell began (and the spare)
    acc_w1, acc_w2, acc_winf = np.zeros(n_pairs + 1), np.zeros(n_pairs + 1), np.zeros(n_pairs + 1)
    # The current quantiles in increasing order, kept sorted as they rise (for the median).
    group_at = np.argsort(current)
    ordered = current[group_at]
    slot_of = np.empty(n_groups, dtype=np.int64)
    slot_of[group_at] = np.arange(n_groups)
    level, wass1 = 0.0, 0.0
    while True:
        # The group whose quantile function steps first (the first of equal ones: the others
        # step next, after a cell of zero mass, which adds nothing); selects, not branches.
        step, top = 0, frac[0]
        for g in range(1, n_groups):
            f = frac[g]
            step = g if f < top else step
            top = min(top, f)
        wass1 += _spread(ordered) * (top - level)
        level = top
        if cum[step] >= size[step]:  # the lowest level is 1: every group is done
            for g in range(n_groups - 1):  # the last cells of every pair end at 1
                _close(g, level, current, pair_of, opened, acc_w1, acc_w2, acc_winf, tol)
            w1[:] += acc_w1[:n_pairs]
            w2[:] += acc_w2[:n_pairs]
            winf[:] = np.maximum(winf, acc_winf[:n_pairs])
            return wass1
        _close(step, level, current, pair_of, opened, acc_w1, acc_w2, acc_winf, tol)
        at[step] += 1
        cum[step] += drawn_counts[at[step]]
        frac[step] = _level(cum[step], size[step], inverse[step])
        current[step] = drawn_values[at[step]]
        _raise(step, current[step], ordered, group_at, slot_of)


@numba.njit(cache=True, nogil=True)
def _pooled_pass(counts, slot, values, cell_of, cell_groups, sizes, category, atoms, scores):
    """Sum over groups of the W1 to the pooled replicate; atom counts and counted scores.

    ``counts`` is in the cell order; the count of pooled position ``j`` is ``counts[slot[j]]``.
    """
    n = values.shape[0]
    inverse, per_row = 1.0 / sizes, 1.0 / n
    below = np.zeros(sizes.shape[0])  # counted rows of each group up to the current value
    total, sdd, gaps = 0.0, 0.0, 0.0
    for j in range(n):
        c = counts[slot[j]]
        # The distribution functions were constant since the previous row: their gaps (zero
        # before the first row) count over the values in between. No branch on c: a row not
        # drawn adds nothing, and an unpredictable branch would cost more than the sums.
        if j:
            sdd += gaps * (values[j] - values[j - 1])
        cell = cell_of[j]
        total += c
        for k in range(cell_groups.shape[1]):
            g = cell_groups[cell, k]
            if g < 0:
                break
            below[g] += c
        pooled = total * per_row
        gaps = 0.0
        for g in range(sizes.shape[0]):
            gaps += abs(below[g] * inverse[g] - pooled)
        atoms[cell, category[j]] += c
        scores[cell] += c * values[j]
    return sdd


@numba.njit(cache=True, nogil=True)
def _measure(b, counts, room, arrays, category, pooled, tol, out):
    """Every statistic of replicate ``b`` (``counts`` in the cell order) into row ``b``."""
    values, slot, cell_starts, cell_of, cell_groups, m_values, m_slots, m_lo, m_hi = arrays
    gathered, drawn_counts, drawn_values = room  # work space, allocated once per batch
    wass1, w1, w2, winf, sdd, atoms, scores = out
    merge_counts = counts
    if m_slots.shape[0]:  # groups that are unions of cells: their counts gathered in order
        for i in range(m_slots.shape[0]):
            gathered[i] = counts[m_slots[i]]
        merge_counts = gathered
    wass1[b] = _merge(
        merge_counts, m_values, m_lo, m_hi, tol, w1[b], w2[b], winf[b], drawn_counts, drawn_values
    )
    if pooled:
        sizes = (m_hi - m_lo).astype(np.float64)
        sdd[b] = _pooled_pass(
            counts, slot, values, cell_of, cell_groups, sizes, category, atoms[b], scores[b]
        )  # fmt: skip


@numba.njit(cache=True, nogil=True)
def _outputs(n_rep, n_groups, n_cells, n_atoms):
    n_pairs = n_groups * (n_groups - 1) // 2
    return (
        np.empty(n_rep),
        np.zeros((n_rep, n_pairs)),
        np.zeros((n_rep, n_pairs)),
        np.zeros((n_rep, n_pairs)),
        np.zeros(n_rep),
        np.zeros((n_rep, n_cells, n_atoms)),
        np.zeros((n_rep, n_cells)),
    )


@numba.njit(cache=True, nogil=True)
def _room(arrays):
    m_values, m_slots = arrays[5], arrays[6]
    return (
        np.empty(m_slots.shape[0], dtype=np.int32),
        np.empty(m_values.shape[0], dtype=np.int32),
        np.empty(m_values.shape[0]),
    )


@numba.njit(cache=True, nogil=True)
def _of_counts(pooled_counts, cell_ranks, arrays, category, n_atoms, pooled, tol):
    n_rep, n = pooled_counts.shape
    out = _outputs(n_rep, arrays[7].shape[0], arrays[4].shape[0], n_atoms)
    counts = np.empty(n, dtype=np.int32)
    room = _room(arrays)
    for b in range(n_rep):
        for k in range(n):
            counts[k] = pooled_counts[b, cell_ranks[k]]
        _measure(b, counts, room, arrays, category, pooled, tol, out)
    return out


@numba.njit(cache=True, nogil=True)
def _of_draws(seeds, n, arrays, category, n_atoms, pooled, tol):
    out = _outputs(seeds.shape[0], arrays[7].shape[0], arrays[4].shape[0], n_atoms)
    counts = np.empty(n, dtype=np.int32)
    room = _room(arrays)
    for b in range(seeds.shape[0]):
        draw_cells(counts, seeds[b], arrays[2])
        _measure(b, counts, room, arrays, category, pooled, tol, out)
    return out


def _arrays(layout):
    return (
        layout.values,
        layout.pooled_slot,
        layout.cell_starts,
        layout.cell_of,
        layout.cell_groups,
        layout.merge_values,
        layout.merge_slots,
        layout.merge_lo,
        layout.merge_hi,
    )


def _result(out, pooled):
    wass1, w1, w2sq, winf, sdd, atoms, scores = out
    result = {"wass1": wass1, "w1": w1, "w2": np.sqrt(w2sq), "winf": winf}
    if pooled:
        result.update(sdd=sdd, atoms=atoms, scores=scores)
    return result


def count_statistics(layout, counts, category=None, n_atoms=1):
    """Distances (and atom sums) of count-weighted sorted groups for every replicate.

    ``layout`` is a :class:`fairot.metrics.resampling._count_draws.CountLayout` and ``counts``
    (B, n) every replicate's counts in its pooled order. With ``category`` (n,), the atom
    (0 .. ``n_atoms`` - 1) of every pooled position, the pooled pass runs too.

    Returns a dict: ``wass1`` (B,); ``w1``, ``w2``, ``winf`` (B, pairs in
    ``itertools.combinations`` order); with ``category``: ``sdd`` (B,), the sum of the groups'
    W1 to the pooled replicate, ``atoms`` (B, n_cells, n_atoms), the counts of every atom of
    every cell, and ``scores`` (B, n_cells), the counted (scaled) scores of every cell. The
    distances are in the layout's scaled unit.
    """
    pooled = category is not None
    out = _of_counts(
        np.ascontiguousarray(counts, dtype=np.int32),
        layout.cell_ranks,
        _arrays(layout),
        np.zeros(1, dtype=np.int64) if category is None else category,
        int(n_atoms),
        pooled,
        MASS_TOLERANCE,
    )
    return _result(out, pooled)


def draw_statistics(layout, seeds, category=None, n_atoms=1):
    """:func:`count_statistics` of the replicates drawn from ``seeds``, without their counts.

    The same replicates as ``count_statistics(layout, draw_counts(layout, seeds), ...)``, drawn
    and measured one at a time in the cell order (no (B, n) array).
    """
    pooled = category is not None
    out = _of_draws(
        np.ascontiguousarray(seeds, dtype=np.uint64),
        layout.n_rows,
        _arrays(layout),
        np.zeros(1, dtype=np.int64) if category is None else category,
        int(n_atoms),
        pooled,
        MASS_TOLERANCE,
    )
    return _result(out, pooled)
