"""``fairot.metrics.fairness_report`` on Dask collections: per-group statistics merged by tree."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from fairot.dask._collections import (
    aligned_blocks,
    check_block_lengths,
    checked_values,
    compute,
    delayed,
    label_arrays,
)
from fairot.dask._groups import GroupDistances, Quantiles, group_distances
from fairot.dask._sketch import DEFAULT_K
from fairot.metrics.checks import (
    OVERALL,
    UNIT_INTERVAL,
    Task,
    check_binary_labels,
    check_task,
    check_threshold,
    group_metric,
)
from fairot.metrics.reductions import finish_report, sum_of_distances
from fairot.utils.groups import GroupEncoding, GroupsMode

# Per-label sufficient statistics of the report, merged across partitions: count, sum of
# scores, correct decisions (classification), and mean / centred sum of squares of the
# responses and the squared error (regression, merged by Chan's update so that R² keeps the
# precision of a two-pass variance).
_N, _SUM, _CORRECT, _MEAN_Y, _M2_Y, _SSE = range(6)


def _block_stats(
    i: int, y: Any, pred: Any, sf: Any, encoding: GroupEncoding, task: str, threshold: float
) -> np.ndarray:
    bounds = UNIT_INTERVAL if task == "classification" else None
    p = checked_values(pred, "y_pred", bounds)
    labels = None
    if y is not None:
        labels = (
            check_binary_labels(y)
            if task == "classification"
            else checked_values(y, "y_true", None)
        )
    check_block_lengths(i, y_pred=p, y_true=labels, sensitive_features=sf)
    rows = label_arrays(np.arange(p.shape[0]), sf, encoding)
    stats = np.zeros((len(rows), 6))
    for label, idx in enumerate(rows):
        stats[label, _N] = idx.shape[0]
        stats[label, _SUM] = p[idx].sum()
        if labels is None or idx.shape[0] == 0:
            continue
        if task == "classification":
            stats[label, _CORRECT] = np.sum((p[idx] > threshold).astype(int) == labels[idx])
        else:
            yy = labels[idx]
            stats[label, _MEAN_Y] = yy.mean()
            stats[label, _M2_Y] = np.sum((yy - yy.mean()) ** 2)
            stats[label, _SSE] = np.sum((yy - p[idx]) ** 2)
    return stats


def _merge_stats(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = a + b
    n = out[:, _N]
    safe = np.where(n > 0, n, 1)
    delta = b[:, _MEAN_Y] - a[:, _MEAN_Y]
    out[:, _MEAN_Y] = (a[:, _N] * a[:, _MEAN_Y] + b[:, _N] * b[:, _MEAN_Y]) / safe
    out[:, _M2_Y] = a[:, _M2_Y] + b[:, _M2_Y] + delta**2 * a[:, _N] * b[:, _N] / safe
    return out


@group_metric("y_true", "y_pred", backend=False)
def fairness_report(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    task: Task = "classification",
    group_mode: GroupsMode = "intersection",
    threshold: float = 0.5,
    quantiles: Quantiles = "exact",
    sketch_k: int = DEFAULT_K,
) -> pd.DataFrame:
    """:func:`fairot.metrics.fairness_report` on Dask collections.

    The same table and ``attrs["summary"]``, computed on the active scheduler; with
    ``quantiles="exact"`` every number equals the in-memory one up to floating-point summation
    order.

    Parameters
    ----------
    y_true : Dask collection or None
        Labels or responses, partitioned as ``y_pred``.
    y_pred : Dask array or Series
        Scores (classification) or predictions (regression).
    sensitive_features : Dask array, Series or DataFrame
        Group membership (a required keyword, as in fairlearn).
    task, group_mode, threshold
        As in :func:`fairot.metrics.fairness_report`.
    quantiles, sketch_k
        As in :func:`wasserstein_distance`.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> import dask.array as da
    >>> from fairot.dask import fairness_report
    >>> scores = da.from_array([0.2, 0.9, 0.6, 0.4], chunks=2)
    >>> groups = da.from_array(["a", "a", "b", "b"], chunks=2)
    >>> report = fairness_report(None, scores, sensitive_features=groups)
    >>> list(report.index), round(report.attrs["summary"]["sdd"], 3)
    (['a', 'b', 'overall'], 0.25)
    """
    check_task(task)
    threshold = check_threshold(threshold)
    orders = (1.0, 2.0) if task == "classification" else (1.0, 2.0, math.inf)
    d = group_distances(
        y_pred,
        sensitive_features,
        name="y_pred",
        bounds=UNIT_INTERVAL if task == "classification" else None,
        group_mode=group_mode,
        orders=orders,
        group_weights="uniform",
        quantiles=quantiles,
        sketch_k=sketch_k,
    )
    blocks = aligned_blocks(
        {"y_pred": y_pred, "sensitive_features": sensitive_features, "y_true": y_true}
    )
    ys = blocks.get("y_true", [None] * len(blocks["y_pred"]))
    per_block = [
        delayed(_block_stats)(i, y, p, s, d.encoding, task, threshold)
        for i, (y, p, s) in enumerate(
            zip(ys, blocks["y_pred"], blocks["sensitive_features"], strict=True)
        )
    ]
    while len(per_block) > 1:
        per_block = [
            delayed(_merge_stats)(per_block[i], per_block[i + 1])
            if i + 1 < len(per_block)
            else per_block[i]
            for i in range(0, len(per_block), 2)
        ]
    (stats,) = compute(per_block[0])
    return _report_frame(d, stats, task, y_true is not None)


def _accuracy(stats: np.ndarray, task: str) -> dict[str, float]:
    n = stats[_N]
    if task == "classification":
        return {"accuracy": float(stats[_CORRECT] / n)}
    rmse = math.sqrt(stats[_SSE] / n)
    variance = float(stats[_M2_Y] / n)
    # As in memory: mse is rmse squared; R² is undefined (NaN, reported) for a constant response.
    r2 = 1.0 - (stats[_SSE] / n) / variance if variance > 0 else float("nan")
    return {"mse": rmse * rmse, "rmse": rmse, "r2": float(r2)}


def _report_frame(d: GroupDistances, stats: np.ndarray, task: str, labelled: bool) -> pd.DataFrame:
    enc = d.encoding
    k = enc.n_groups
    n_total = stats[k, _N]
    rows = []
    for label, name in enumerate([*enc.names, OVERALL]):
        row: dict[str, float] = {"size": stats[label, _N], "share": stats[label, _N] / n_total}
        if labelled:
            row.update(_accuracy(stats[label], task))
        row["mean_score"] = float(stats[label, _SUM] / stats[label, _N])
        row["w1_to_pooled"] = float(d.sums.power[1.0][label, k]) if label < k else 0.0
        rows.append(pd.Series(row, name=name))
    report = pd.DataFrame(rows)
    report["size"] = report["size"].astype(int)
    report.index.name = "group"
    summary: dict[str, Any] = {"n_samples": int(n_total), "n_groups": k}
    if labelled:
        overall = _accuracy(stats[k], task)
        if task == "classification":
            summary["err"] = 1.0 - overall["accuracy"]
        else:
            summary.update(overall)
    summary["wass1"] = sum_of_distances(d.sums.to_barycenter)
    gaps = {p: d.gap(p) for p in d.sums.power}
    return finish_report(report, summary, gaps, task, labelled=labelled)
