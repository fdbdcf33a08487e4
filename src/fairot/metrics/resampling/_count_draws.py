r"""Drawing bootstrap replicates as counts on the rows sorted once, without copies of the rows.

A stratified bootstrap replicate that draws, in a cell of :math:`n_c` rows (an intersectional
cell of the sensitive columns), :math:`n_c` rows uniformly with replacement is the count vector
:math:`c_j = \#\{k : i_k = j\}`, a multinomial draw of :math:`n_c` trials over the cell's rows.
Every statistic of the replicate is a statistic of the weighted empirical distribution
:math:`\sum_j c_j \delta_{x_j}`, so the replicate is kept as its counts, laid out in the
*pooled sorted order* of the scores (:class:`CountLayout`): every group's sorted replicate is
read from the presorted values (:mod:`fairot.metrics.resampling._count_statistics`), and no
replicate is copied or sorted.

The draws are compiled: replicate :math:`b` has its own stream (SplitMix64, [1]_) seeded by the
:math:`b`-th of ``n_bootstrap`` seeds drawn from ``random_state``, and bounded integers are read
by Lemire's unbiased multiply-and-reject method [2]_ from 32-bit halves of the stream's outputs
(high half first), so the counts are an exact stratified
multinomial draw, and the same ``random_state`` gives the same replicates whatever the chunking
or the number of threads.

Internal surface (for the other modules of :mod:`fairot.metrics.resampling`):
:class:`CountLayout`, :func:`replicate_seeds`, :func:`draw_counts`, :func:`copy_indices` and the
compiled :func:`draw_cells` that the statistics call per replicate.

References
----------
.. [1] G. L. Steele, D. Lea and C. H. Flood, "Fast splittable pseudorandom number generators",
   OOPSLA 2014.
.. [2] D. Lemire, "Fast random integer generation in an interval", ACM TOMACS 29(1), 2019.
"""

from __future__ import annotations

import numba
import numpy as np

from fairot.metrics._scaled import unit_scale

MSG_CELL_TOO_LARGE = "a bootstrap cell has {size} rows; at most 2**32 - 1 rows per cell are drawn."

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_LOW_32 = np.uint64(0xFFFFFFFF)
_NO_SPARE = np.uint64(0x100000000)


@numba.njit(cache=True, nogil=True)
def _splitmix(state):
    # One SplitMix64 step: the next state and its 64 output bits.
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> np.uint64(30))) * _MIX_1
    z = (z ^ (z >> np.uint64(27))) * _MIX_2
    return state, z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def _below(state, spare, bound):
    # A uniform integer in [0, bound) for bound < 2**32 (Lemire): the high half of a 32 x 32-bit
    # product, redrawn while its low half falls in the short first stretch (no modulo bias).
    # Every 64-bit output serves two draws: its high 32 bits, then its low 32 bits (``spare``,
    # 2**32 when none is kept).
    while True:
        if spare < _NO_SPARE:
            bits, spare = spare, _NO_SPARE
        else:
            state, word = _splitmix(state)
            bits, spare = word >> np.uint64(32), word & _LOW_32
        product = bits * bound
        low = product & _LOW_32
        if low >= bound or low >= (np.uint64(0x100000000) - bound) % bound:
            return state, spare, product >> np.uint64(32)


@numba.njit(cache=True, nogil=True)
def draw_cells(scratch, seed, cell_starts):
    """One replicate's counts in the cell order of a :class:`CountLayout`, into ``scratch``.

    Cell ``c`` holds ``scratch[cell_starts[c]:cell_starts[c + 1]]``, its rows by increasing
    score: ``n_c`` uniform picks among them, from the replicate's own stream.
    """
    state = np.uint64(seed)
    state, _ = _splitmix(state)  # decorrelate neighbouring seeds
    spare = _NO_SPARE
    for k in range(scratch.shape[0]):
        scratch[k] = 0
    for c in range(cell_starts.shape[0] - 1):
        start = cell_starts[c]
        size = np.uint64(cell_starts[c + 1] - start)
        for _ in range(cell_starts[c + 1] - start):
            state, spare, pick = _below(state, spare, size)
            scratch[start + np.int64(pick)] += 1


@numba.njit(cache=True, nogil=True)
def _draw_batch(seeds, cell_ranks, cell_starts, out):
    scratch = np.empty(cell_ranks.shape[0], dtype=np.int32)
    for b in range(seeds.shape[0]):
        draw_cells(scratch, seeds[b], cell_starts)
        # The cell-ordered counts moved to the pooled order: each cell's ranks are increasing,
        # so the writes go forward through ``out[b]``.
        for k in range(scratch.shape[0]):
            out[b, cell_ranks[k]] = scratch[k]


def replicate_seeds(rng: np.random.Generator, n_replicates: int) -> np.ndarray:
    """One 64-bit seed per replicate (as ``uint64``), the only draws taken from ``rng``."""
    return rng.integers(0, 2**64, size=n_replicates, dtype=np.uint64)


class CountLayout:
    """The rows sorted once by score, with the cells and groups located in that order.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The scores.
    rows : list of ndarray
        Positions of each group's rows (groups may overlap, as marginal groups do).
    cells : ndarray of shape (n,)
        Integer stratum (intersectional cell) of every row, ``0 .. n_cells - 1``.

    Attributes
    ----------
    order : ndarray of shape (n,)
        The rows by increasing score (stable): position ``k`` of the pooled order is row
        ``order[k]``.
    values : ndarray of shape (n,)
        The sorted scores divided by ``scale``.
    scale : float
        The power of two the values were divided by (exact), as the point estimates do.
    cell_of : ndarray of shape (n,)
        The cell of each pooled position.
    cell_ranks, cell_starts : ndarray
        The pooled positions of cell ``c``, increasing, at ``cell_ranks[cell_starts[c]:
        cell_starts[c + 1]]``: the cell order, in which the counts are drawn.
    pooled_slot : ndarray of shape (n,)
        The place of each pooled position in the cell order.
    group_ranks, group_starts : ndarray
        The same for the groups.
    cell_member : ndarray of shape (n_cells, n_groups)
        Whether a cell lies in a group (uint8).
    cell_groups : ndarray of shape (n_cells, width)
        The groups of every cell, padded with -1.
    merge_values, merge_slots, merge_lo, merge_hi : ndarray
        Group ``g``'s sorted values at ``merge_values[merge_lo[g]:merge_hi[g]]``, and where
        its counts are in the cell order (``merge_slots``; empty where every group is a cell,
        whose counts are then read in place).
    """

    def __init__(self, values: np.ndarray, rows: list[np.ndarray], cells: np.ndarray) -> None:
        n = values.shape[0]
        self.scale = unit_scale(values)
        self.order = np.argsort(values, kind="stable")
        self.values = values[self.order] / self.scale
        self.cell_of = np.ascontiguousarray(cells[self.order], dtype=np.int64)
        n_cells = int(self.cell_of.max()) + 1 if n else 0
        sizes = np.bincount(self.cell_of, minlength=n_cells)
        if n and sizes.max() >= 2**32:
            raise ValueError(MSG_CELL_TOO_LARGE.format(size=int(sizes.max())))
        # Stable by cell: within a cell, the pooled positions stay increasing (numpy sorts
        # 16-bit keys by radix, in linear time).
        keys = self.cell_of.astype(np.int16) if n_cells < 2**15 else self.cell_of
        self.cell_ranks = np.argsort(keys, kind="stable").astype(np.int64)
        self.cell_starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        # Where each pooled position's count sits in the cell order (the inverse of cell_ranks).
        self.pooled_slot = np.empty(n, dtype=np.int64)
        self.pooled_slot[self.cell_ranks] = np.arange(n)
        self.cell_member = np.zeros((n_cells, len(rows)), dtype=np.uint8)
        for g, r in enumerate(rows):
            self.cell_member[cells[r], g] = 1
        # A group is a union of cells: its pooled positions, increasing.
        ranks = [np.flatnonzero(self.cell_member[self.cell_of, g]) for g in range(len(rows))]
        self.group_ranks = np.concatenate(ranks).astype(np.int64)
        self.group_starts = np.cumsum([0] + [r.shape[0] for r in ranks]).astype(np.int64)
        # The merge reads every group's counts and values contiguously: from the cell order
        # itself where every group is one cell (intersectional groups), else gathered.
        cell_of_group = [np.flatnonzero(self.cell_member[:, g]) for g in range(len(rows))]
        if all(found.shape[0] == 1 for found in cell_of_group):
            first = np.array([found[0] for found in cell_of_group], dtype=np.int64)
            self.merge_lo = self.cell_starts[first]
            self.merge_hi = self.cell_starts[first + 1]
            self.merge_slots = np.zeros(0, dtype=np.int64)
            self.merge_values = self.values[self.cell_ranks]
        else:
            self.merge_lo = self.group_starts[:-1].copy()
            self.merge_hi = self.group_starts[1:].copy()
            self.merge_slots = self.pooled_slot[self.group_ranks]
            self.merge_values = self.values[self.group_ranks]
        # The groups of every cell (-1 pads): the pooled pass adds a row to each of them.
        width = int(self.cell_member.sum(axis=1).max()) if n_cells else 0
        self.cell_groups = np.full((n_cells, max(width, 1)), -1, dtype=np.int64)
        for c in range(n_cells):
            found = np.flatnonzero(self.cell_member[c])
            self.cell_groups[c, : found.shape[0]] = found

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return self.values.shape[0]


def draw_counts(layout: CountLayout, seeds: np.ndarray) -> np.ndarray:
    """Counts (len(seeds), n) in pooled order: one stratified multinomial draw per seed."""
    out = np.empty((seeds.shape[0], layout.n_rows), dtype=np.int32)
    _draw_batch(
        np.ascontiguousarray(seeds, dtype=np.uint64), layout.cell_ranks, layout.cell_starts, out
    )
    return out


def copy_indices(layout: CountLayout, counts: np.ndarray) -> np.ndarray:
    """Row indices (B, n) of resampled copies with ``counts`` (pooled order), stratified.

    Position ``i`` of each copy holds a row of the same cell as row ``i``, as
    :func:`fairot.metrics.resampling.stratified_indices` does, so per-position group memberships
    still hold; for the statistics that couple each replicate on its own rows (the weighted
    distances) and for checking the counts against copies.
    """
    row_counts = np.empty_like(counts)
    row_counts[:, layout.order] = counts
    n = layout.n_rows
    cells = np.empty(n, dtype=np.int64)
    cells[layout.order] = layout.cell_of
    by_cell = np.argsort(cells, kind="stable")  # the positions of each cell, cell after cell
    take = np.empty(counts.shape, dtype=np.intp)
    for b in range(counts.shape[0]):
        # np.repeat of the cell-ordered rows fills the cell-ordered positions: cells keep sizes.
        take[b, by_cell] = np.repeat(by_cell, row_counts[b, by_cell])
    return take
