r"""The rows of :func:`~fairot.classification.solve_rate_program` as Dask partitions.

The backend of the operation ``"solve_rate_program.rows"`` (see :mod:`fairot.utils.backends`).
The solver's working-set loop asks its rows for a few sums and selections (the methods of
:class:`fairot.classification.rate_rows.ArrayRows`); :class:`DaskRows` answers each by running
that very method on every partition (an ``ArrayRows`` of the partition's rows, the working
set's indices shifted by the partition's offset) and adding the sums (the fixed rows' rates
and objective) or merging the selections (the rows nearest the boundary, by a tree of
:func:`~fairot.classification.rate_rows.smallest_rows`; the disagreeing rows). Only the working
set — a bounded number of rows — is ever gathered into one process, and HiGHS solves it there
with the in-memory code. The decisions come back as a lazy Dask array aligned with the margins.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairot.classification.rate_rows import (
    MSG_SHAPES,
    ArrayRows,
    check_totals,
    smallest_rows,
    subsample_mask,
    weighted_totals,
)
from fairot.dask._collections import compute, dask_delayed_object, delayed

#: Partial selections merged by one task of the tree that finds the rows nearest the boundary.
MERGE_FAN_IN = 8


def _as_array(value: Any) -> Any:
    """A Dask array of ``value`` (a Dask Series / DataFrame, a Dask array, or in-memory)."""
    import dask.array as da

    if hasattr(value, "to_dask_array"):
        return value.to_dask_array(lengths=True)
    if hasattr(value, "__dask_graph__"):
        return value
    return da.asarray(np.asarray(value, dtype=float))


def _block_rows(a, Q, w, shares, scale) -> ArrayRows:
    """The partition's rows as the in-memory solver reads them (V = Q / shares, w / scale)."""
    a = np.asarray(a, dtype=float)
    weights = np.ones(a.shape[0]) if w is None else np.asarray(w, dtype=float)
    return ArrayRows(a, np.asarray(Q, dtype=float) / shares, weights / scale)


def _local(work: np.ndarray, offset: int, length: int) -> np.ndarray:
    """The indices of ``work`` inside the partition ``[offset, offset + length)``, shifted."""
    lo, hi = np.searchsorted(work, [offset, offset + length])
    return work[lo:hi] - offset


def _fixed_sums(rows, centre, work, offset):
    return rows.fixed_sums(centre, _local(work, offset, rows.n))


def _disagreeing(rows, centre, mu, work, offset):
    return rows.disagreeing(centre, mu, _local(work, offset, rows.n)) + offset


def _nearest(rows, mu, size, offset):
    index, distance = rows.nearest(mu, size)
    return index + offset, distance


def _merge(parts, size):
    """The ``size`` nearest of partial selections given in index order (ties: lower index)."""
    index = np.concatenate([p[0] for p in parts])
    distance = np.concatenate([p[1] for p in parts])
    keep = smallest_rows(distance, size)
    return index[keep], distance[keep]


def _take(rows, index, offset):
    return rows.take(_local(index, offset, rows.n))


def _decisions(rows, centre, work, t_work, offset):
    lo, hi = np.searchsorted(work, [offset, offset + rows.n])
    return rows.decisions(centre, work[lo:hi] - offset, t_work[lo:hi])


def _select(block, mask):
    return None if block is None else block[mask]


def _selected_weight(w, mask):
    return float(mask.sum()) if w is None else float(np.asarray(w, dtype=float)[mask].sum())


class DaskRows:
    """The rows of the rate program in partitions: the methods of ``ArrayRows``, partitioned.

    Parameters
    ----------
    blocks : list of tuple
        ``(a, Q, w)`` per partition, as delayed objects (``w`` may be ``None``: weight 1).
    lengths : list of int
        Rows per partition.
    shares : ndarray of shape (n_units,)
        :math:`Q_j` of the whole program (``V = Q / shares``).
    scale : float
        The weights' divisor (their sum over these rows).
    """

    #: The solver's last resort (the program on every row) would gather them all: refused.
    gather_limit = 0

    def __init__(self, blocks, lengths, shares, scale):
        self.blocks = blocks
        self.lengths = [int(n) for n in lengths]
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)]).astype(int)
        self.shares = shares
        self.scale = scale
        shares_d, scale_d = dask_delayed_object(shares), dask_delayed_object(scale)
        self._rows = [delayed(_block_rows)(a, Q, w, shares_d, scale_d) for a, Q, w in blocks]

    @property
    def n(self) -> int:
        """Rows."""
        return int(self.offsets[-1])

    def _each(self, fn, *args):
        args_d = [dask_delayed_object(x) for x in args]
        return [
            delayed(fn)(rows, *args_d, int(offset))
            for rows, offset in zip(self._rows, self.offsets[:-1], strict=True)
        ]

    def subsample(self) -> DaskRows:
        """The rows of ``subsample_mask`` over this collection's indices, reweighted."""
        masks = [
            subsample_mask(int(o), int(o) + n)
            for o, n in zip(self.offsets[:-1], self.lengths, strict=True)
        ]
        weight = sum(
            compute(
                *[
                    delayed(_selected_weight)(w, m)
                    for (_, _, w), m in zip(self.blocks, masks, strict=True)
                ]
            )
        )
        if weight <= 0:
            return DaskRows([], [], self.shares, 1.0)
        blocks = [
            (
                delayed(_select)(a, m),
                delayed(_select)(Q, m),
                None if w is None else delayed(_select)(w, m),
            )
            for (a, Q, w), m in zip(self.blocks, masks, strict=True)
        ]
        return DaskRows(blocks, [int(m.sum()) for m in masks], self.shares, weight)

    def take(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(a, V, w)`` of the rows ``index`` (sorted), gathered from their partitions."""
        parts = compute(*self._each(_take, index))
        n_units = self.shares.shape[0]
        if not parts:
            return np.zeros(0), np.zeros((0, n_units)), np.zeros(0)
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))

    def nearest(self, mu, size):
        """The ``size`` rows of smallest ``|s(mu)|``: each partition's, merged in a tree."""
        level = self._each(_nearest, mu, size)
        while len(level) > 1:
            level = [
                delayed(_merge)(level[i : i + MERGE_FAN_IN], size)
                for i in range(0, len(level), MERGE_FAN_IN)
            ]
        return compute(level[0])[0]

    def fixed_sums(self, centre, work):
        """The fixed rows' rates and objective: the partitions' sums added."""
        parts = compute(*self._each(_fixed_sums, centre, work))
        return sum(p[0] for p in parts), float(sum(p[1] for p in parts))

    def disagreeing(self, centre, mu, work):
        """The fixed rows that disagree with ``mu``, in index order."""
        parts = compute(*self._each(_disagreeing, centre, mu, work))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=int)

    def decisions(self, centre, work, t_work):
        """Every row's decision, lazily: a Dask array in the partitions of the margins."""
        import dask.array as da

        parts = self._each(_decisions, centre, work, t_work)
        return da.concatenate(
            [
                da.from_delayed(p, shape=(n,), dtype=float)
                for p, n in zip(parts, self.lengths, strict=True)
            ]
        )


def rate_program_rows(margins, unit_probabilities, families, sample_weight) -> DaskRows:
    """The validated rows of the rate program on Dask collections, with their shares.

    Raises the in-memory solver's errors (:data:`~fairot.classification.rate_rows.MSG_SHAPES`,
    non-finite inputs, a unit of zero share) after one pass over the partitions.
    """
    a = _as_array(margins)
    Q = _as_array(unit_probabilities)
    w = None if sample_weight is None else _as_array(sample_weight)
    for x in (a, Q, w):
        if x is not None and any(np.isnan(c) for c in x.chunks[0]):
            x.compute_chunk_sizes()
    n = a.shape[0]
    units = Q.shape[-1] if Q.ndim == 2 else 0
    if (
        a.ndim != 1
        or Q.ndim != 2
        or Q.shape[0] != n
        or families.shape != (units,)
        or (w is not None and w.shape != (n,))
    ):
        raise ValueError(
            MSG_SHAPES.format(n=n, rows=Q.shape[0], units=units, families=families.shape[0])
        )
    Q = Q.rechunk((a.chunks[0], -1))
    w = None if w is None else w.rechunk(a.chunks)
    a_blocks = list(a.to_delayed().ravel())
    Q_blocks = list(Q.to_delayed().ravel())
    w_blocks = [None] * len(a_blocks) if w is None else list(w.to_delayed().ravel())
    totals = compute(
        *[delayed(weighted_totals)(*b) for b in zip(a_blocks, Q_blocks, w_blocks, strict=True)]
    )
    finite = np.all([t[0] for t in totals], axis=0)
    total = float(sum(t[1] for t in totals))
    weighted = np.sum([t[2] for t in totals], axis=0)
    check_totals(finite, weighted)
    blocks = list(zip(a_blocks, Q_blocks, w_blocks, strict=True))
    return DaskRows(blocks, a.chunks[0], weighted / total, total)
