r"""The summary metrics of weighted bootstrap replicates, one replicate at a time.

A weighted bootstrap resamples rows and carries their weights along, then computes the *weighted*
statistic on each replicate. Rates are ratios of weighted counts and stay one matrix product for
all replicates (:func:`fairot.metrics._rates.rate_matrix`), but the joint quantile cells of
weighted samples depend on the weights drawn, so the Wasserstein metrics cannot share one set of
cells as the unweighted bootstrap does: each replicate is coupled on its own, with the same
sorted-sample primitives as :func:`fairot.metrics.fairness_report` (so a replicate's value is
exactly the report's value on the resampled rows and weights).

Internal surface (for :mod:`fairot.metrics.resampling._replicate_metrics`):
:func:`weighted_distribution_summary`, :func:`accuracy_summary` (the error metrics of weighted
and unweighted replicates alike).
"""

from __future__ import annotations

import numpy as np

from fairot.metrics._calling import sorted_group_samples, sorted_sample
from fairot.metrics._distances import pairwise_gaps
from fairot.metrics._scaled import unit_scale
from fairot.metrics.reductions import sum_of_distances, sum_over_pairs, sum_w1_to_barycenter
from fairot.transport import wasserstein_sorted


def weighted_distribution_summary(
    pred: np.ndarray, weight: np.ndarray, rows: list[np.ndarray], names: list[str], task: str
) -> dict[str, np.ndarray]:
    """Weighted ``wass1``, ``sdd``/``spdd`` or pairwise ``W_1``/``W_inf``, ``max_pairwise_w2``.

    ``pred`` and ``weight`` have shape (n_replicates, n); ``rows`` are the positions of each
    group (a stratified resample keeps every position's group). Returns arrays of shape
    (n_replicates,).
    """
    classification = task == "classification"
    orders = (1.0, 2.0) if classification else (1.0, 2.0, np.inf)
    keys = (
        ("wass1", "sdd", "spdd", "max_pairwise_w2")
        if classification
        else ("wass1", "max_pairwise_w1", "max_pairwise_w2", "max_pairwise_winf")
    )
    out = {key: np.empty(pred.shape[0]) for key in keys}
    # One power of two for every replicate, as the unweighted bootstrap: exact, and no overflow.
    scale = unit_scale(pred)
    for b in range(pred.shape[0]):
        values, w = pred[b] / scale, weight[b]
        groups, group_w = sorted_group_samples(values, rows, w, names)
        gaps = pairwise_gaps(groups, names, orders, group_w)
        out["wass1"][b] = sum_w1_to_barycenter(groups, None, group_w)
        if classification:
            pooled, pooled_w = sorted_sample(values, w)
            to_pooled = [
                wasserstein_sorted(g, pooled, 1.0, gw, pooled_w)
                for g, gw in zip(groups, group_w, strict=True)
            ]
            out["sdd"][b] = sum_of_distances(np.asarray(to_pooled))
            out["spdd"][b] = sum_over_pairs(gaps[1.0].matrix.to_numpy())
        else:
            out["max_pairwise_w1"][b] = gaps[1.0].distance
            out["max_pairwise_winf"][b] = gaps[np.inf].distance
        out["max_pairwise_w2"][b] = gaps[2.0].distance
    with np.errstate(over="ignore"):  # inf only where the true distance exceeds the float max
        return {key: value * scale for key, value in out.items()}


def accuracy_summary(
    y: np.ndarray, pred: np.ndarray, weight: np.ndarray | None, task: str, threshold: float
) -> dict[str, np.ndarray]:
    """``err`` (classification) or ``mse`` and ``r2`` (regression) of every replicate.

    ``weight`` ``None`` counts every row once. Regression errors are computed in a unit scaled
    by a power of two (exact), as :func:`fairot.metrics.fairness_report` does: residuals near
    1e200 square inside the float range, and ``mse`` is ``inf`` only where its true value
    exceeds the float maximum.
    """
    w = np.ones_like(pred) if weight is None else weight
    total = w.sum(axis=1)
    if task == "classification":
        correct = (pred > threshold) == (y == 1)
        return {"err": 1.0 - (correct * w).sum(axis=1) / total}
    scale = unit_scale(np.concatenate([y.ravel(), pred.ravel()]))
    ys, ps = y / scale, pred / scale
    mse_unit = ((ys - ps) ** 2 * w).sum(axis=1) / total
    mean = (ys * w).sum(axis=1, keepdims=True) / total[:, None]
    variance_unit = ((ys - mean) ** 2 * w).sum(axis=1) / total
    ratio = np.full(mse_unit.shape, np.nan)  # R² is undefined for a constant response
    np.divide(mse_unit, variance_unit, out=ratio, where=variance_unit > 0)
    rmse = np.sqrt(mse_unit) * scale
    with np.errstate(over="ignore"):  # inf only where the true mse exceeds the float max
        mse = rmse * rmse
    return {"mse": mse, "r2": 1.0 - ratio}
