"""One table of every fairness metric, per group and overall."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fairot._validation import (
    GroupsMode,
    check_array_1d,
    check_consistent_length,
    check_sensitive_features,
)
from fairot.metrics._classification import (
    UNIT_INTERVAL,
    check_binary_labels,
    sum_w1_to_barycenter,
)
from fairot.metrics._distances import pairwise_gaps
from fairot.metrics._groups import group_accuracy_std, skewed_error_ratio
from fairot.transport._coupling import _wasserstein_sorted

Task = Literal["classification", "regression"]
MSG_TASK = "task must be 'classification' or 'regression'; got {value!r}."
OVERALL = "overall"


def fairness_report(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    sensitive_features: Any,
    *,
    task: Task = "classification",
    groups: GroupsMode = "intersection",
    threshold: float = 0.5,
) -> pd.DataFrame:
    """Per-group table of accuracy and distribution metrics, with every fairness metric.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Labels (binary for classification) or responses (regression); ``None`` audits the scores
        alone (the accuracy columns are then left out).
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1] for classification; predictions for regression.
    sensitive_features : array-like or DataFrame
        Group membership, one or several columns.
    task : {"classification", "regression"}, default="classification"
        Which columns and summary metrics to compute.
    groups : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups (``"marginal"`` groups overlap, so their
        shares can add up to more than 1).
    threshold : float, default=0.5
        Decision threshold for the accuracy of classification scores.

    Returns
    -------
    pandas.DataFrame
        One row per group plus a final ``"overall"`` row, with columns ``size``, ``share``,
        ``accuracy`` (classification) or ``mse`` and ``r2`` (regression), ``mean_score`` and
        ``w1_to_pooled`` (the group's :math:`W_1` distance to the pooled distribution).
        ``report.attrs["summary"]`` holds the summary metrics as a dict: for classification
        ``err`` (with labels), ``wass1``, ``sdd``, ``spdd``, ``max_pairwise_w2`` and its pair,
        ``accuracy_std`` and ``skewed_error_ratio`` (with labels); for regression ``mse`` and
        ``r2`` (with responses), ``wass1`` (W1 to the barycenter, unbounded range),
        ``max_pairwise_w1``, ``max_pairwise_w2`` and its pair, ``max_pairwise_winf``.

    See Also
    --------
    fairness_summary : the summary metrics alone, as a Series.

    Examples
    --------
    >>> from fairot.metrics import fairness_report
    >>> report = fairness_report([0, 1, 1, 0], [0.2, 0.9, 0.6, 0.4], ["a", "a", "b", "b"])
    >>> list(report.index)
    ['a', 'b', 'overall']
    """
    if task not in ("classification", "regression"):
        raise ValueError(MSG_TASK.format(value=task))
    pred = check_array_1d(
        y_pred, "y_pred", bounds=UNIT_INTERVAL if task == "classification" else None
    )
    enc = check_sensitive_features(sensitive_features, pred.shape[0], groups=groups)
    y = _check_targets(y_true, pred, task)
    indices = enc.indices()
    sorted_groups = [np.sort(pred[idx]) for idx in indices]
    pooled = np.sort(pred)

    rows = []
    for name, idx, sorted_group in zip(
        [*enc.names, OVERALL],
        [*indices, np.arange(pred.shape[0])],
        [*sorted_groups, pooled],
        strict=True,
    ):
        row: dict[str, float] = {"size": idx.shape[0], "share": idx.shape[0] / pred.shape[0]}
        if y is not None:
            row.update(_accuracy_columns(y[idx], pred[idx], task, threshold))
        row["mean_score"] = float(pred[idx].mean())
        row["w1_to_pooled"] = _wasserstein_sorted(sorted_group, pooled, 1.0)
        rows.append(pd.Series(row, name=name))
    report = pd.DataFrame(rows)
    report["size"] = report["size"].astype(int)
    report.index.name = "group"

    summary: dict[str, Any] = {"n_samples": int(pred.shape[0]), "n_groups": enc.n_groups}
    if y is not None:
        summary.update(_accuracy_columns(y, pred, task, threshold))
        if task == "classification":
            summary["err"] = 1.0 - summary.pop("accuracy")
    # Each pair of groups is coupled once for every order needed; SDD is the sum of the rows'
    # distances to the pooled scores, already computed for the table.
    orders = (1.0, 2.0) if task == "classification" else (1.0, 2.0, np.inf)
    gaps = pairwise_gaps(sorted_groups, enc.names, orders)
    summary["wass1"] = sum_w1_to_barycenter(sorted_groups)
    if task == "classification":
        summary["sdd"] = float(report["w1_to_pooled"].iloc[:-1].sum())
        summary["spdd"] = float(np.triu(gaps[1.0].matrix.to_numpy(), 1).sum())
    else:
        summary["max_pairwise_w1"] = gaps[1.0].distance
    summary["max_pairwise_w2"] = gaps[2.0].distance
    summary["max_pairwise_w2_pair"] = " vs ".join(gaps[2.0].pair)
    if task == "regression":
        summary["max_pairwise_winf"] = gaps[np.inf].distance
    if y is not None and task == "classification":
        accuracies = report["accuracy"].iloc[:-1]
        summary["accuracy_std"] = group_accuracy_std(accuracies)
        summary["skewed_error_ratio"] = (
            skewed_error_ratio(accuracies) if accuracies.max() < 1 else float("inf")
        )
    report.attrs["summary"] = summary
    return report


def fairness_summary(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    sensitive_features: Any,
    *,
    task: Task = "classification",
    groups: GroupsMode = "intersection",
    threshold: float = 0.5,
) -> pd.Series:
    """Every summary fairness metric of :func:`fairness_report`, as a Series.

    Parameters
    ----------
    y_true, y_pred, sensitive_features, task, groups, threshold
        As in :func:`fairness_report`.

    Returns
    -------
    pandas.Series
        Metric name to value (the group pair attaining ``max_pairwise_w2`` as a string).
    """
    report = fairness_report(
        y_true, y_pred, sensitive_features, task=task, groups=groups, threshold=threshold
    )
    return pd.Series(report.attrs["summary"], dtype=object)


def _check_targets(y_true: ArrayLike | None, pred: np.ndarray, task: Task) -> np.ndarray | None:
    if y_true is None:
        return None
    if task == "classification":
        y = check_binary_labels(y_true)
    else:
        y = check_array_1d(y_true, "y_true")
    check_consistent_length(y_true=y, y_pred=pred)
    return y


def _accuracy_columns(
    y: np.ndarray, pred: np.ndarray, task: Task, threshold: float
) -> dict[str, float]:
    if task == "classification":
        return {"accuracy": float(np.mean((pred > threshold).astype(int) == y))}
    mse = float(np.mean((y - pred) ** 2))
    variance = float(np.var(y))
    # R² is undefined for a constant response; NaN here is reported, not silently averaged.
    return {"mse": mse, "r2": 1.0 - mse / variance if variance > 0 else float("nan")}
