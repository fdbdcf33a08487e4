"""The final reductions of the metrics: from group distances to SDD, SPDD, Wass1 and gaps.

Every backend ends here. The in-memory metrics sort each group and compute its distances
exactly; the Dask backend integrates the same distances window by window on the cluster; the
torch trainers' monitoring has the sorted samples of a batch. Each then reduces the distances
with these functions (a sum over groups, a sum over pairs, the largest pair, the report's
summary), so that one formula gives one number whichever path computed the distances.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from fairot.metrics._groups import group_accuracy_std, skewed_error_ratio
from fairot.metrics._pairwise import PairwiseGap, largest_pair
from fairot.metrics.checks import Task
from fairot.transport import barycenter_distribution, wasserstein_sorted

__all__ = [
    "PairwiseGap",
    "finish_report",
    "largest_pair",
    "sum_of_distances",
    "sum_over_pairs",
    "sum_pairwise_w1",
    "sum_w1_to_barycenter",
    "sum_w1_to_reference",
]


def sum_of_distances(distances: Iterable[float]) -> float:
    """Sum of per-group distances, in group order: SDD (to the pooled sample), Wass1 (to a target).

    Summed one after the other, so that the same distances give the same float on every path.

    Examples
    --------
    >>> sum_of_distances([0.25, 0.5])
    0.75
    """
    total = 0.0
    for d in distances:
        total += float(d)
    return total


def sum_over_pairs(matrix: Any) -> float:
    """Sum of a symmetric matrix of group distances over unordered pairs (SPDD from W1).

    Examples
    --------
    >>> sum_over_pairs(np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 0.5], [2.0, 0.5, 0.0]]))
    3.5
    """
    m = np.asarray(matrix, dtype=float)
    return sum_of_distances(m[a, b] for a, b in itertools.combinations(range(m.shape[0]), 2))


def sum_w1_to_barycenter(
    sorted_groups: list[np.ndarray], weights: Any = None, sample_weights: list | None = None
) -> float:
    """Sum of exact W1 distances from each sorted group sample to their W1 barycenter."""
    bary, mass, group_q, _ = barycenter_distribution(
        sorted_groups, weights, p=1, sample_weights=sample_weights, assume_sorted=True
    )
    return sum_of_distances(_w1_on_cells(q, bary, mass) for q in group_q)


def _w1_on_cells(q: np.ndarray, bary: np.ndarray, mass: np.ndarray) -> float:
    # Divided by the largest gap first, so that values near the float limit cannot overflow.
    with np.errstate(over="ignore"):
        gaps = np.abs(q - bary)
    if not np.isfinite(gaps.max()):
        return 2.0 * float(mass @ np.abs(0.5 * q - 0.5 * bary))
    scale = float(gaps.max())
    return 0.0 if scale == 0.0 else scale * float(mass @ (gaps / scale))


def sum_w1_to_reference(
    sorted_groups: list[np.ndarray], reference: np.ndarray, sample_weights: list | None = None
) -> float:
    """Sum of exact W1 distances from each sorted group sample to one sorted reference."""
    ws = [None] * len(sorted_groups) if sample_weights is None else sample_weights
    return sum_of_distances(
        wasserstein_sorted(g, reference, 1.0, w) for g, w in zip(sorted_groups, ws, strict=True)
    )


def sum_pairwise_w1(sorted_groups: list[np.ndarray], sample_weights: list | None = None) -> float:
    """Sum of exact W1 distances over unordered pairs of sorted group samples."""
    ws = [None] * len(sorted_groups) if sample_weights is None else sample_weights
    pairs = itertools.combinations(zip(sorted_groups, ws, strict=True), 2)
    return sum_of_distances(wasserstein_sorted(a, b, 1.0, wa, wb) for (a, wa), (b, wb) in pairs)


def finish_report(
    report: pd.DataFrame, summary: dict, gaps: dict, task: Task, *, labelled: bool
) -> pd.DataFrame:
    """Add the distance summaries (SDD, SPDD, pairwise gaps, STD, SER) and attach the summary.

    The report's final reduction, shared by :func:`fairot.metrics.fairness_report` and
    :mod:`fairot.dask`, which compute the per-group table (its ``w1_to_pooled`` column, and
    ``accuracy`` with labels), ``summary["wass1"]`` and the pairwise ``gaps``
    (``{p: PairwiseGap}``, :func:`largest_pair` of each order's matrix) their own ways;
    ``gaps=None`` leaves the pairwise summaries to the caller (more groups than
    :data:`fairot.metrics.MAX_PAIRWISE_GROUPS`, too many to couple every pair).
    """
    if task == "classification":
        summary["sdd"] = sum_of_distances(report["w1_to_pooled"].iloc[:-1].to_numpy())
    # gaps=None: too many groups to couple every pair; the caller summarised what it could.
    if gaps is not None:
        if task == "classification":
            summary["spdd"] = sum_over_pairs(gaps[1.0].matrix.to_numpy())
        else:
            summary["max_pairwise_w1"] = gaps[1.0].distance
        summary["max_pairwise_w2"] = gaps[2.0].distance
        summary["max_pairwise_w2_pair"] = " vs ".join(gaps[2.0].pair)
        if task == "regression":
            summary["max_pairwise_winf"] = gaps[np.inf].distance
    if labelled and task == "classification":
        accuracies = report["accuracy"].iloc[:-1]
        summary["accuracy_std"] = group_accuracy_std(accuracies.to_numpy())
        summary["skewed_error_ratio"] = (
            skewed_error_ratio(accuracies.to_numpy()) if accuracies.max() < 1 else float("inf")
        )
    report.attrs["summary"] = summary
    return report
