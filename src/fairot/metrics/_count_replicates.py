r"""Bootstrap replicates as counts on the sorted groups, without resampled copies of the rows.

A stratified bootstrap replicate that draws, in a group of :math:`n_g` rows, the rows
:math:`i_1, \dots, i_{n_g}` with replacement is the count vector
:math:`c_j = \#\{k : i_k = j\}` (a multinomial draw of :math:`n_g` trials over the group's
rows). Every statistic of the replicate is a statistic of the weighted empirical distribution
:math:`\sum_j c_j \delta_{x_j}`:

* a rate is a ratio of counted indicators, :math:`\sum_j c_j \mathbb 1[\cdot]`, one matrix
  product of the counts for all groups and replicates;
* the sorted replicate of a group is read from its *presorted* values: with the counts in the
  sorted order, position :math:`k` of the sorted replicate holds :math:`x_{(j)}` for the first
  :math:`j` with :math:`c_{(1)} + \dots + c_{(j)} > k`, i.e. ``np.repeat(sorted_values, counts)``
  (the quantile function of the weighted distribution), so no replicate is sorted; the
  distances are read from the counts directly (:mod:`fairot.metrics._count_kernels`).

Internal surface (for :mod:`fairot.metrics.resampling`): :func:`replicate_counts`,
:class:`SortedGroups`.
"""

from __future__ import annotations

import numpy as np

from fairot.metrics._scaled import unit_scale


def replicate_counts(take: np.ndarray) -> np.ndarray:
    """Counts (B, n) of every row in each replicate of the index matrix ``take`` (B, n)."""
    n_rep, n = take.shape
    offsets = (np.arange(n_rep, dtype=np.intp) * n)[:, None]
    flat = np.bincount((take + offsets).ravel(), minlength=n_rep * n)
    return flat.reshape(n_rep, n).astype(float)


class SortedGroups:
    """The groups' values sorted once, scaled (:func:`unit_scale`), laid end to end.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The scores.
    rows : list of ndarray
        Positions of each group's rows (groups may overlap, as marginal groups do).

    Attributes
    ----------
    values : ndarray
        The groups' sorted values divided by ``scale``, group after group, then all rows sorted.
    starts : ndarray of shape (n_groups + 1,)
        Where each group starts in ``values`` (the last entry: where the pooled rows start).
    scale : float
        The power of two the values were divided by (exact).
    """

    def __init__(self, values: np.ndarray, rows: list[np.ndarray]) -> None:
        self.scale = unit_scale(values)  # as the point estimate: W_p of scaled scores
        orders = [r[np.argsort(values[r], kind="stable")] for r in rows]
        orders.append(np.argsort(values, kind="stable"))
        self._orders = np.concatenate(orders)
        self.values = values[self._orders] / self.scale
        self.starts = np.cumsum([0] + [o.shape[0] for o in orders[:-1]])
        self._groups_end = int(self.starts[-1])

    def positions(self, pooled: bool) -> np.ndarray:
        """The rows in the order of ``values`` (with or without the pooled block)."""
        return self._orders if pooled else self._orders[: self._groups_end]
