r"""The rows of the rate program, as the solver's loop reads them: the seam of every backend.

:func:`~fairot.classification.solve_rate_program` solves its program on a working set of rows
(:mod:`fairot.classification._rate_program`); all it asks of the other rows is a few sums and
selections over them, listed here as the methods of :class:`ArrayRows` (the rows in memory):

- ``subsample()``: the rows whose global index hashes into one eighth
  (:func:`subsample_mask`, a function of the index alone, so a partition computes its share
  without the others), their weights renormalised;
- ``nearest(mu, size)``: the ``size`` rows of smallest :math:`|s_i|`,
  :math:`s_i = a_i - \sum_j \mu_j v_{ij}`, ties broken by the lower index
  (:func:`smallest_rows`), so that the choice is the same however the rows are partitioned;
- ``fixed_sums(centre, work)``: :math:`\sum_{i \notin W} w_i t_i v_{ij}` and
  :math:`\sum_{i \notin W} w_i t_i a_i` of the rows outside the working set :math:`W`, fixed
  at :math:`t_i = [s_i(\text{centre}) > 0]`;
- ``disagreeing(centre, mu, work)``: the fixed rows whose decision disagrees with the sign of
  :math:`s_i(\mu)`;
- ``take(index)`` and ``decisions(centre, work, t_work)``.

Each is a sum or a selection over rows, so a partitioned backend (``fairot.dask``) runs the
same methods on every partition (an :class:`ArrayRows` of its rows, indices shifted by its
offset) and adds the sums or merges the selections; only the working set is gathered into
one process. :func:`weighted_totals` and :func:`check_totals` are the validation both share.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "MSG_EMPTY_UNIT",
    "MSG_NOT_FINITE",
    "MSG_SHAPES",
    "SIGN_TOLERANCE",
    "SUBSAMPLE",
    "ArrayRows",
    "check_totals",
    "row_hash",
    "smallest_rows",
    "subsample_mask",
    "weighted_totals",
]

#: How far past zero a fixed row's score may be, against its decision, and still count as
#: agreeing (HiGHS's dual feasibility tolerance is 1e-7).
SIGN_TOLERANCE = 1e-7
#: The guess of the multipliers is the optimum of about one row in SUBSAMPLE.
SUBSAMPLE = 8

MSG_SHAPES = (
    "margins ({n},), unit_probabilities ({rows}, {units}), families ({families},) and "
    "sample_weight must agree in length."
)
MSG_NOT_FINITE = "{name} contains NaN or infinite values; the program needs finite numbers."
MSG_EMPTY_UNIT = (
    "unit {unit} has zero expected share (its probabilities sum to 0 over the weighted rows): "
    "its rate is undefined."
)

# splitmix64's constants: a bijective mix of the 64-bit index, so that every eighth of the
# hashed rows is a pseudo-random subset, whatever the order of the rows (by group, by label).
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def row_hash(start: int, stop: int, seed: int = 0) -> np.ndarray:
    """splitmix64 of the global row indices ``start .. stop - 1``, keyed by ``seed``.

    The seed goes into the high 32 bits of the index, so a row's hash depends on its index and
    the seed only: whatever reads it (the subsample here, the Dask fit's sample and folds) is the
    same however the rows are partitioned.

    Examples
    --------
    >>> bool((row_hash(5, 10) == row_hash(0, 10)[5:]).all())
    True
    """
    with np.errstate(over="ignore"):
        x = np.arange(start, stop, dtype=np.uint64) ^ (np.uint64(seed) << np.uint64(32))
        x = x + _GOLDEN
        x = (x ^ (x >> np.uint64(30))) * _MIX1
        x = (x ^ (x >> np.uint64(27))) * _MIX2
        return x ^ (x >> np.uint64(31))


def subsample_mask(start: int, stop: int) -> np.ndarray:
    """Which of the rows ``start, ..., stop - 1`` (global indices) are in the subsample.

    A fixed hash of the index (:func:`row_hash`, seed 0), so the subsample depends neither on
    ``random_state`` nor on how the rows are partitioned.

    Examples
    --------
    >>> subsample_mask(0, 10_000).mean().round(2)
    np.float64(0.12)
    """
    return (row_hash(start, stop) % np.uint64(SUBSAMPLE)) == 0


def smallest_rows(values: np.ndarray, size: int) -> np.ndarray:
    """Sorted positions of the ``size`` smallest ``values``, ties broken by the lower position.

    The order is lexicographic in (value, position), so the ``size`` smallest of a union of
    partitions are the ``size`` smallest of the partitions' own ``size`` smallest, concatenated
    in order.

    Examples
    --------
    >>> smallest_rows(np.array([0.3, 0.1, 0.2, 0.1]), 2).tolist()
    [1, 3]
    """
    n = values.shape[0]
    if size >= n:
        return np.arange(n)
    if size <= 0:
        return np.arange(0)
    kth = np.partition(values, size - 1)[size - 1]
    below = np.flatnonzero(values < kth)
    ties = np.flatnonzero(values == kth)[: size - below.shape[0]]
    return np.sort(np.concatenate([below, ties]))


def weighted_totals(margins, probabilities, weights) -> tuple[np.ndarray, float, np.ndarray]:
    """Per block: finiteness of (margins, probabilities, weights), their sum and ``w @ Q``.

    ``weights`` ``None`` stands for weight 1 on every row.
    """
    w = np.ones(margins.shape[0]) if weights is None else weights
    finite = np.array(
        [np.isfinite(margins).all(), np.isfinite(probabilities).all(), np.isfinite(w).all()]
    )
    return finite, float(w.sum()), w @ probabilities


def check_totals(finite, shares: np.ndarray) -> None:
    """One ValueError for a non-finite input or a unit of zero share (``shares = w @ Q``)."""
    for name, ok in zip(("margins", "unit_probabilities", "sample_weight"), finite, strict=True):
        if not ok:
            raise ValueError(MSG_NOT_FINITE.format(name=name))
    if np.any(shares <= 0):
        raise ValueError(MSG_EMPTY_UNIT.format(unit=int(np.flatnonzero(shares <= 0)[0])))


class ArrayRows:
    r"""Rows of the program in memory: margins :math:`a`, normalised :math:`V` and weights.

    Parameters
    ----------
    margins : ndarray of shape (n,)
    normalised : ndarray of shape (n, n_units)
        :math:`v_{ij} = q_j(x_i) / Q_j`.
    weights : ndarray of shape (n,)
        :math:`w_i` (summing to 1 over all rows of the program, not necessarily these).

    Examples
    --------
    >>> rows = ArrayRows(np.array([0.5, -0.5]), np.ones((2, 1)), np.array([0.5, 0.5]))
    >>> rows.fixed_sums(np.zeros(1), np.arange(0))
    (array([0.5]), 0.25)
    """

    #: Rows the solver may gather at once, for its last resort (the program on every row).
    gather_limit = math.inf

    def __init__(self, margins: np.ndarray, normalised: np.ndarray, weights: np.ndarray):
        self.margins = margins
        self.normalised = normalised
        self.weights = weights

    @property
    def n(self) -> int:
        """Rows."""
        return int(self.margins.shape[0])

    def scores(self, mu: np.ndarray) -> np.ndarray:
        r""":math:`s_i = a_i - \sum_j \mu_j v_{ij}`."""
        return self.margins - self.normalised @ mu

    def centre_decisions(self, centre: np.ndarray | None) -> np.ndarray:
        r""":math:`[s_i(\text{centre}) > 0]` as floats (all 0 without a centre)."""
        if centre is None:
            return np.zeros(self.n)
        return (self.scores(centre) > 0).astype(float)

    def subsample(self) -> ArrayRows:
        """The rows of :func:`subsample_mask`, weights renormalised (none if they weigh 0)."""
        mask = subsample_mask(0, self.n)
        w = self.weights[mask]
        total = w.sum()
        if total <= 0:
            mask[:] = False
            w = w[:0]
        return ArrayRows(self.margins[mask], self.normalised[mask], w / max(total, 1e-300))

    def take(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(a, V, w)`` of the rows ``index``."""
        return self.margins[index], self.normalised[index], self.weights[index]

    def nearest(self, mu: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
        r"""The ``size`` rows of smallest :math:`|s_i(\mu)|` (sorted) and those values."""
        distance = np.abs(self.scores(mu))
        index = smallest_rows(distance, size)
        return index, distance[index]

    def fixed_sums(self, centre: np.ndarray | None, work: np.ndarray) -> tuple[np.ndarray, float]:
        """The rates and objective of the rows outside ``work``, at their centre decisions."""
        t = self.centre_decisions(centre)
        t[work] = 0.0
        wt = self.weights * t
        return wt @ self.normalised, float(wt @ self.margins)

    def disagreeing(self, centre: np.ndarray | None, mu: np.ndarray, work: np.ndarray):
        """Sorted rows outside ``work`` whose centre decision disagrees with the sign of s(mu)."""
        t = self.centre_decisions(centre)
        s_mu = self.scores(mu)
        mask = ((t == 1) & (s_mu < -SIGN_TOLERANCE)) | ((t == 0) & (s_mu > SIGN_TOLERANCE))
        mask[work] = False
        return np.flatnonzero(mask)

    def decisions(self, centre: np.ndarray | None, work: np.ndarray, t_work: np.ndarray):
        """Every row's decision: the centre's, but the working set's solved ones."""
        t = self.centre_decisions(centre)
        t[work] = t_work
        return t
