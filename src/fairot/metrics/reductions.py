"""The final reductions of the metrics: sums of exact W1 distances over sorted group samples.

Every backend ends here. The in-memory metrics sort each group and call these; the Dask backend
and the torch trainers' monitoring call them on the sorted samples they gathered, so that one
formula gives one number whichever path computed the sorted groups.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from fairot.transport import barycenter_distribution, wasserstein_sorted


def sum_w1_to_barycenter(
    sorted_groups: list[np.ndarray], weights: Any = None, sample_weights: list | None = None
) -> float:
    """Sum of exact W1 distances from each sorted group sample to their W1 barycenter."""
    bary, mass, group_q, _ = barycenter_distribution(
        sorted_groups, weights, p=1, sample_weights=sample_weights, assume_sorted=True
    )
    return float(sum(_w1_on_cells(q, bary, mass) for q in group_q))


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
    return float(
        sum(
            wasserstein_sorted(g, reference, 1.0, w) for g, w in zip(sorted_groups, ws, strict=True)
        )
    )


def sum_pairwise_w1(sorted_groups: list[np.ndarray], sample_weights: list | None = None) -> float:
    """Sum of exact W1 distances over unordered pairs of sorted group samples."""
    ws = [None] * len(sorted_groups) if sample_weights is None else sample_weights
    pairs = itertools.combinations(zip(sorted_groups, ws, strict=True), 2)
    return float(sum(wasserstein_sorted(a, b, 1.0, wa, wb) for (a, wa), (b, wb) in pairs))
