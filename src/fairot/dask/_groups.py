"""Rank integrals between the groups of a Dask collection: what every Dask metric reduces."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from fairot.dask._collections import (
    aligned_blocks,
    check_block_lengths,
    checked_values,
    compute,
    delayed,
    distinct_rows,
    encoding_from_distinct,
    label_arrays,
)
from fairot.dask._exact import WindowSums, curve_sums, sort_labels, window_sums
from fairot.dask._options import check_quantiles
from fairot.dask._sketch import DEFAULT_K, check_sketch_k, sketch_curves
from fairot.metrics.checks import check_group_weights
from fairot.metrics.reductions import PairwiseGap, largest_pair
from fairot.utils.groups import GroupEncoding, GroupsMode

Quantiles = Literal["exact", "sketch"]


@dataclass
class GroupDistances:
    """Rank integrals between the groups and the pooled sample of a Dask collection.

    Attributes
    ----------
    encoding : GroupEncoding
        The groups (fitted on the distinct rows of the sensitive features).
    counts : numpy.ndarray of shape (K + 1,)
        Size of each group, then of the pooled sample.
    sums : WindowSums
        Labels ``0 .. K - 1`` are the groups, label ``K`` the pooled sample.
    ranges : numpy.ndarray of shape (K + 1,) or None
        ``max - min`` of each label (sketch path, for its error bound).
    """

    encoding: GroupEncoding
    counts: np.ndarray
    sums: WindowSums
    ranges: np.ndarray | None = None

    def distance(self, a: int, b: int, p: float) -> float:
        """:math:`W_p` between labels ``a`` and ``b``."""
        return float(self.sums.distance(p)[a, b])

    def gap(self, p: float) -> PairwiseGap:
        """Largest pairwise :math:`W_p` between groups, as ``max_pairwise_wasserstein``."""
        k = self.encoding.n_groups
        matrix = np.array(
            [[self.distance(a, b, p) if a != b else 0.0 for b in range(k)] for a in range(k)]
        )
        return largest_pair(matrix, self.encoding.names)

    def to_pooled(self) -> np.ndarray:
        """Each group's :math:`W_1` distance to the pooled sample (the terms of SDD)."""
        k = self.encoding.n_groups
        return self.sums.power[1.0][:k, k]

    def pairwise_w1(self) -> np.ndarray:
        """:math:`W_1` between every pair of groups (the terms of SPDD)."""
        k = self.encoding.n_groups
        return self.sums.power[1.0][:k, :k]


def _blocks_info(block: Any) -> tuple[pd.DataFrame, int]:
    return distinct_rows(block), len(block)


def _labelled(
    i: int, values: Any, sf: Any, encoding: GroupEncoding, name: str, bounds: Any
) -> list[np.ndarray]:
    v = checked_values(values, name, bounds)
    check_block_lengths(i, **{name: v, "sensitive_features": sf})
    return label_arrays(v, sf, encoding)


def group_distances(
    values: Any,
    sensitive_features: Any,
    *,
    name: str,
    bounds: tuple[float, float] | None,
    group_mode: GroupsMode,
    orders: tuple[float, ...],
    group_weights: Literal["uniform", "proportional"] | None = "uniform",
    quantiles: Quantiles = "exact",
    sketch_k: int = DEFAULT_K,
) -> GroupDistances:
    """Encode the groups of a Dask collection and integrate their quantile gaps.

    The groups, then the pooled sample, are the labels of :mod:`fairot.dask._exact` (exact) or
    of :mod:`fairot.dask._sketch` (``quantiles="sketch"``).
    """
    check_quantiles(quantiles)
    if group_weights is not None:
        check_group_weights(group_weights)
    if quantiles == "sketch":
        sketch_k = check_sketch_k(sketch_k)
    blocks = aligned_blocks({name: values, "sensitive_features": sensitive_features})
    info = compute(*[delayed(_blocks_info)(b) for b in blocks["sensitive_features"]])
    encoding = encoding_from_distinct([d for d, _ in info], group_mode)
    chunk_rows = max(1, max(n for _, n in info))
    labelled = [
        delayed(_labelled)(i, v, s, encoding, name, bounds)
        for i, (v, s) in enumerate(zip(blocks[name], blocks["sensitive_features"], strict=True))
    ]
    k = encoding.n_groups
    if quantiles == "exact":
        sorted_labels = sort_labels(labelled, chunk_rows)
        counts = np.array(sorted_labels.sizes)
        weights = None if group_weights != "proportional" else counts[:k].astype(float)
        sums = window_sums(
            sorted_labels,
            orders,
            n_groups=k if group_weights else None,
            group_weights=weights,
            window_rows=chunk_rows,
        )
        return GroupDistances(encoding, counts, sums)
    curves, ranges, counts = sketch_curves(labelled, sketch_k)
    weights = None if group_weights != "proportional" else counts[:k].astype(float)
    sums = curve_sums(curves, orders, n_groups=k if group_weights else None, group_weights=weights)
    return GroupDistances(encoding, counts, sums, ranges)
