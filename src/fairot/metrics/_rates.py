r"""Per-group rates at a decision threshold, their disparities, and bootstrap intervals.

The threshold-based group metrics practitioners know from fairlearn and AIF360 (selection rate,
TPR, FPR, precision, AUC, calibration gap, disparate-impact ratio; MAE/RMSE/mean residual for
regression) and the demographic-parity and equalized-odds differences, next to the distributional
metrics of the seed papers. A decision is ``score > threshold``, the convention of
:func:`fairot.metrics.error_rate` (Err-.5 of the COT paper).

:func:`bootstrap_intervals` resamples rows *within each group* (stratified, so every replicate has
the groups' sizes) and recomputes every summary metric of :func:`fairot.metrics.fairness_report`
and the rate disparities for all replicates at once: counts are one matrix product, the sorted
group samples one vectorised sort, and the Wasserstein distances are read on the joint quantile
cells, which depend only on the sample sizes and are therefore shared by all replicates.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fairot.metrics._classification import UNIT_INTERVAL, check_binary_labels
from fairot.metrics._scaled import residual_averages, unit_scale
from fairot.transport import MASS_TOLERANCE, joint_quantile_cells
from fairot.utils.arrays import check_array_1d, check_consistent_length
from fairot.utils.groups import GroupsMode
from fairot.utils.sensitive import check_sensitive_features

MSG_THRESHOLD = "threshold must be a finite number in [0, 1]; got {value!r}."
MSG_TASK = "task must be 'classification' or 'regression'; got {value!r}."
MSG_N_BOOTSTRAP = "n_bootstrap must be an integer >= 10; got {value!r}."
MSG_CONFIDENCE = "confidence must be in (0, 1); got {value!r}."
MSG_LABELS_NEEDED = "{metric} needs labels: y_true is None."
# Replicates are processed in chunks so that the (replicates x samples) matrices stay small.
_CHUNK_CELLS = 4_000_000

CLASSIFICATION_RATES = (
    "selection_rate",
    "tpr",
    "fpr",
    "precision",
    "auc",
    "calibration_gap",
    "disparate_impact",
)
REGRESSION_RATES = ("mae", "rmse", "mean_residual")


def check_threshold(threshold: Any) -> float:
    """Return ``threshold`` as a float in [0, 1], or raise naming the value."""
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        raise ValueError(MSG_THRESHOLD.format(value=threshold)) from None
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(MSG_THRESHOLD.format(value=threshold))
    return value


def _check_inputs(y_true, y_pred, sensitive_features, task, groups, threshold):
    if task not in ("classification", "regression"):
        raise ValueError(MSG_TASK.format(value=task))
    pred = check_array_1d(
        y_pred, "y_pred", bounds=UNIT_INTERVAL if task == "classification" else None
    )
    enc = check_sensitive_features(sensitive_features, pred.shape[0], groups=groups)
    y = None
    if y_true is not None:
        y = (
            check_binary_labels(y_true)
            if task == "classification"
            else check_array_1d(y_true, "y_true")
        )
        check_consistent_length(y_true=y, y_pred=pred)
    if task == "classification":
        threshold = check_threshold(threshold)
    return y, pred, enc, threshold


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    # An empty denominator (a group without positives, negatives or selections) is undefined:
    # NaN here, named in the report's warnings rather than replaced by a made-up 0.
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _rate_matrix(
    y: np.ndarray | None, pred: np.ndarray, member: np.ndarray, task: str, threshold: float
) -> dict[str, np.ndarray]:
    """Rates of every group for a batch of replicates.

    ``y`` and ``pred`` have shape (n_replicates, n_samples); ``member`` (n_samples, n_groups) is
    the membership of each *position* (a stratified resample keeps every row's group). Returns
    arrays of shape (n_replicates, n_groups).
    """
    size = member.sum(axis=0)
    out: dict[str, np.ndarray] = {}
    if task == "classification":
        decision = (pred > threshold).astype(float)
        selected = decision @ member
        out["selection_rate"] = selected / size
        top = out["selection_rate"].max(axis=1, keepdims=True)
        out["disparate_impact"] = _ratio(
            out["selection_rate"], np.broadcast_to(top, selected.shape)
        )
        if y is not None:
            positive = y.astype(float)
            n_pos = positive @ member
            true_pos = (positive * decision) @ member
            false_pos = selected - true_pos
            correct = (decision == positive).astype(float) @ member
            out["tpr"] = _ratio(true_pos, n_pos)
            out["fpr"] = _ratio(false_pos, size - n_pos)
            out["precision"] = _ratio(true_pos, selected)
            out["calibration_gap"] = (pred - positive) @ member / size
            out["accuracy"] = correct / size
    elif y is not None:
        out["mae"], out["rmse"], out["mean_residual"] = residual_averages(y, pred, member)
    return out


def _group_auc(y: np.ndarray, scores: np.ndarray) -> float:
    """ROC AUC by the Mann-Whitney statistic with mid-ranks for ties; NaN with one class."""
    n_pos = int(y.sum())
    n_neg = y.shape[0] - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = pd.Series(scores).rank(method="average").to_numpy()
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def group_rates(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    sensitive_features: Any,
    *,
    task: str = "classification",
    groups: GroupsMode = "intersection",
    threshold: float = 0.5,
) -> pd.DataFrame:
    r"""Per-group rates at a decision threshold (classification) or residual errors (regression).

    Classification, with decisions :math:`\hat y = \mathbb 1\{s > t\}`: ``selection_rate``
    :math:`P(\hat y = 1 \mid a)`, ``disparate_impact`` (selection rate over the highest group's),
    and with labels ``tpr``, ``fpr``, ``precision``, ``auc`` (threshold-free ROC AUC of the scores)
    and ``calibration_gap`` :math:`E[s - y \mid a]` (calibration in the large: positive when the
    group's scores overstate its positive rate). Regression, with responses: ``mae``, ``rmse`` and
    ``mean_residual`` :math:`E[y - \hat y \mid a]`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Binary labels or responses; ``None`` leaves out every column that needs them.
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1] (classification) or predictions (regression).
    sensitive_features : array-like or DataFrame
        Group membership, one or several columns.
    task : {"classification", "regression"}, default="classification"
    groups : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.
    threshold : float in [0, 1], default=0.5
        Decision threshold.

    Returns
    -------
    pandas.DataFrame
        One row per group (index ``group``). A rate with an empty denominator (e.g. TPR of a group
        without positives) is NaN.

    Examples
    --------
    >>> from fairot.metrics import group_rates
    >>> rates = group_rates([0, 1, 1, 0], [0.2, 0.9, 0.6, 0.7], ["a", "a", "b", "b"])
    >>> rates.loc["a", ["selection_rate", "tpr", "fpr"]].tolist()
    [0.5, 1.0, 0.0]
    >>> rates.loc["b", ["selection_rate", "tpr", "fpr"]].tolist()
    [1.0, 1.0, 1.0]
    """
    y, pred, enc, threshold = _check_inputs(
        y_true, y_pred, sensitive_features, task, groups, threshold
    )
    member = enc.membership.astype(float)
    rates = _rate_matrix(None if y is None else y[None, :], pred[None, :], member, task, threshold)
    columns = CLASSIFICATION_RATES if task == "classification" else REGRESSION_RATES
    table = pd.DataFrame(index=pd.Index(enc.names, name="group"))
    for column in columns:
        if column == "auc" and y is not None:
            table[column] = [_group_auc(y[idx], pred[idx]) for idx in enc.indices()]
        elif column in rates:
            table[column] = rates[column][0]
    return table


def demographic_parity_difference(
    y_pred: ArrayLike,
    sensitive_features: Any,
    *,
    groups: GroupsMode = "intersection",
    threshold: float = 0.5,
) -> float:
    r"""Largest difference of selection rates between groups at a threshold.

    .. math:: \max_a P(\hat y = 1 \mid a) - \min_a P(\hat y = 1 \mid a),
       \quad \hat y = \mathbb 1\{s > t\}

    fairlearn's ``demographic_parity_difference`` of the decisions. It looks at one threshold;
    the COT paper's SDD (:func:`strong_demographic_disparity`) integrates over all of them.

    Parameters
    ----------
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1] (or 0/1 decisions).
    sensitive_features : array-like or DataFrame
    groups : {"intersection", "marginal"}, default="intersection"
    threshold : float in [0, 1], default=0.5

    Returns
    -------
    float

    Examples
    --------
    >>> from fairot.metrics import demographic_parity_difference
    >>> demographic_parity_difference([0.2, 0.9, 0.6, 0.7], ["a", "a", "b", "b"])
    0.5
    """
    rates = group_rates(None, y_pred, sensitive_features, groups=groups, threshold=threshold)[
        "selection_rate"
    ]
    return float(rates.max() - rates.min())


def equalized_odds_difference(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    sensitive_features: Any,
    *,
    groups: GroupsMode = "intersection",
    threshold: float = 0.5,
) -> float:
    r"""The larger of the between-group TPR and FPR differences at a threshold.

    .. math:: \max\big(\max_a \mathrm{TPR}_a - \min_a \mathrm{TPR}_a,\;
       \max_a \mathrm{FPR}_a - \min_a \mathrm{FPR}_a\big)

    fairlearn's ``equalized_odds_difference`` (``agg="worst_case"``) of the decisions
    :math:`\mathbb 1\{s > t\}`. Groups whose TPR (FPR) is undefined, having no positive
    (negative) label, are left out of that difference.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1] (or 0/1 decisions).
    sensitive_features : array-like or DataFrame
    groups : {"intersection", "marginal"}, default="intersection"
    threshold : float in [0, 1], default=0.5

    Returns
    -------
    float

    Examples
    --------
    >>> from fairot.metrics import equalized_odds_difference
    >>> equalized_odds_difference([0, 1, 1, 0], [0.2, 0.9, 0.6, 0.7], ["a", "a", "b", "b"])
    1.0
    """
    if y_true is None:
        raise ValueError(MSG_LABELS_NEEDED.format(metric="equalized_odds_difference"))
    rates = group_rates(y_true, y_pred, sensitive_features, groups=groups, threshold=threshold)
    return float(_spread(rates[["tpr", "fpr"]].to_numpy().T[None]).max())


def _spread(values: np.ndarray) -> np.ndarray:
    """Max minus min over the last axis, ignoring NaN (0 when fewer than one value is defined)."""
    finite = np.isfinite(values)
    high = np.where(finite, values, -np.inf).max(axis=-1)
    low = np.where(finite, values, np.inf).min(axis=-1)
    return np.where(finite.any(axis=-1), high - low, np.nan)


def rate_summary(rates: dict[str, np.ndarray], task: str) -> dict[str, np.ndarray]:
    """Summary disparities of a batch of per-group rates (arrays of shape (..., n_groups))."""
    summary: dict[str, np.ndarray] = {}
    if task == "classification":
        selection = rates["selection_rate"]
        summary["demographic_parity_difference"] = _spread(selection)
        top = selection.max(axis=-1)
        summary["demographic_parity_ratio"] = _ratio(selection.min(axis=-1), top)
        if "tpr" in rates:
            summary["equalized_odds_difference"] = np.fmax(
                _spread(rates["tpr"]), _spread(rates["fpr"])
            )
    return summary


class BootstrapIntervals(NamedTuple):
    """Percentile bootstrap intervals of :func:`bootstrap_intervals`.

    Attributes
    ----------
    summary : pandas.DataFrame
        One row per summary metric, columns ``low`` and ``high``.
    groups : dict of str to pandas.DataFrame
        For each per-group rate (``selection_rate``, ``tpr``, ...), a frame indexed by group with
        columns ``low`` and ``high``.
    replicates : pandas.DataFrame
        The summary metrics of every replicate (one row each).
    confidence : float
        Coverage of the intervals.

    Examples
    --------
    :func:`bootstrap_intervals` returns one; every interval is a ``low``/``high`` row.

    >>> import numpy as np
    >>> from fairot.metrics import bootstrap_intervals
    >>> g = np.repeat(["a", "b"], 50)
    >>> s = np.r_[np.linspace(0.2, 0.6, 50), np.linspace(0.4, 0.8, 50)]
    >>> ci = bootstrap_intervals(None, s, g, n_bootstrap=20, random_state=0)
    >>> ci.confidence, list(ci.summary.columns), len(ci.replicates)
    (0.95, ['low', 'high'], 20)
    """

    summary: pd.DataFrame
    groups: dict[str, pd.DataFrame]
    replicates: pd.DataFrame
    confidence: float


def _stratified_indices(
    strata: np.ndarray, n_replicates: int, rng: np.random.Generator
) -> np.ndarray:
    """Row indices of shape (n_replicates, n): each position redrawn among its stratum's rows."""
    n = strata.shape[0]
    out = np.empty((n_replicates, n), dtype=np.intp)
    order = np.argsort(strata, kind="stable")
    bounds = np.flatnonzero(np.diff(strata[order])) + 1
    for rows in np.split(order, bounds):
        out[:, rows] = rows[rng.integers(0, rows.shape[0], size=(n_replicates, rows.shape[0]))]
    return out


def _batched_wasserstein(a: np.ndarray, b: np.ndarray, orders: tuple[float, ...]) -> list:
    """Exact W_p between row-wise sorted samples ``a`` (B, n) and ``b`` (B, m), for each p.

    The joint quantile cells depend only on the sizes (equal weights), so one set of cells
    serves every replicate; see :func:`fairot.transport._coupling.joint_quantile_cells`.
    """
    index, mass = joint_quantile_cells([a[0], b[0]], [None, None])
    gaps = np.abs(a[:, index[0]] - b[:, index[1]])
    out = []
    for p in orders:
        if math.isinf(p):
            out.append(gaps[:, mass > MASS_TOLERANCE].max(axis=1))
        elif p == 1:
            out.append(gaps @ mass)
        else:
            out.append(((gaps**p) @ mass) ** (1.0 / p))
    return out


def _distribution_summary(
    pred: np.ndarray, rows: list[np.ndarray], task: str
) -> dict[str, np.ndarray]:
    """The distributional summary metrics of :func:`fairness_report` for a batch of replicates."""
    scale = unit_scale(pred)  # as the point estimate: W_p of scaled scores, scaled back
    sorted_groups = [np.sort(pred[:, r] / scale, axis=1) for r in rows]
    out: dict[str, np.ndarray] = {}
    # The W1 barycenter of equally weighted groups is a median of their quantiles on each joint
    # cell, and every median gives the same sum of distances (Section "Metrics" of the COT paper).
    index, mass = joint_quantile_cells([g[0] for g in sorted_groups], [None] * len(rows))
    quantiles = np.stack([g[:, i] for g, i in zip(sorted_groups, index, strict=True)])
    out["wass1"] = np.abs(quantiles - np.median(quantiles, axis=0)).sum(axis=0) @ mass
    orders = (1.0, 2.0) if task == "classification" else (1.0, 2.0, math.inf)
    pair_values = [
        _batched_wasserstein(sorted_groups[i], sorted_groups[j], orders)
        for i, j in itertools.combinations(range(len(rows)), 2)
    ]
    by_order = {p: np.stack([v[k] for v in pair_values], axis=1) for k, p in enumerate(orders)}
    if task == "classification":
        pooled = np.sort(pred, axis=1)
        out["sdd"] = sum(_batched_wasserstein(g, pooled, (1.0,))[0] for g in sorted_groups)
        out["spdd"] = by_order[1.0].sum(axis=1)
    else:
        out["max_pairwise_w1"] = by_order[1.0].max(axis=1)
    out["max_pairwise_w2"] = by_order[2.0].max(axis=1)
    if task == "regression":
        out["max_pairwise_winf"] = by_order[math.inf].max(axis=1)
    with np.errstate(over="ignore"):  # inf only where the true distance exceeds the float max
        return {k: v * scale for k, v in out.items()}


def _replicate_summary(y, pred, member, rows, task, threshold):
    rates = _rate_matrix(y, pred, member, task, threshold)
    summary = _distribution_summary(pred, rows, task)
    summary.update(rate_summary(rates, task))
    if y is not None and task == "classification":
        summary["err"] = 1.0 - ((pred > threshold) == (y == 1)).mean(axis=1)
        accuracy = rates["accuracy"]
        summary["accuracy_std"] = accuracy.std(axis=1)
        errors = 1.0 - accuracy
        with np.errstate(divide="ignore"):
            summary["skewed_error_ratio"] = np.where(
                errors.min(axis=1) > 0, errors.max(axis=1) / errors.min(axis=1), np.inf
            )
    elif y is not None:
        mse = ((y - pred) ** 2).mean(axis=1)
        summary["mse"] = mse
        variance = y.var(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            summary["r2"] = np.where(variance > 0, 1.0 - mse / variance, np.nan)
    return rates, summary


def bootstrap_intervals(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    sensitive_features: Any,
    *,
    task: str = "classification",
    groups: GroupsMode = "intersection",
    threshold: float = 0.5,
    n_bootstrap: int = 200,
    confidence: float = 0.95,
    random_state: int | np.random.Generator | None = None,
) -> BootstrapIntervals:
    r"""Stratified percentile-bootstrap intervals of every summary metric and per-group rate.

    Each replicate redraws, with replacement, the rows of every group (of every intersectional
    cell of the sensitive columns, which also keeps the sizes of overlapping marginal groups), so
    group sizes are those of the data; the interval is the central ``confidence`` range of the
    replicates' values (percentile bootstrap, [1]_). Metrics are those of
    :func:`fairot.metrics.fairness_report`'s summary (``wass1``, ``sdd``, ``spdd``, pairwise W_p,
    ``err``, ``accuracy_std``, ``skewed_error_ratio``; ``mse``, ``r2``) and the threshold
    disparities (``demographic_parity_difference``, ``demographic_parity_ratio``,
    ``equalized_odds_difference``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Labels or responses; ``None`` bootstraps the label-free metrics only.
    y_pred : array-like of shape (n_samples,)
    sensitive_features : array-like or DataFrame
    task : {"classification", "regression"}, default="classification"
    groups : {"intersection", "marginal"}, default="intersection"
    threshold : float in [0, 1], default=0.5
    n_bootstrap : int >= 10, default=200
        Number of replicates.
    confidence : float in (0, 1), default=0.95
    random_state : int, numpy.random.Generator or None
        Seed of the resampling.

    Returns
    -------
    BootstrapIntervals

    References
    ----------
    .. [1] B. Efron and R. Tibshirani, "An Introduction to the Bootstrap", Chapman & Hall, 1993,
       Chapter 13.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.metrics import bootstrap_intervals
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(["a", "b"], 200)
    >>> s = np.clip(rng.normal(0.4 + 0.2 * (g == "b"), 0.1), 0, 1)
    >>> ci = bootstrap_intervals(None, s, g, n_bootstrap=50, random_state=0)
    >>> low, high = ci.summary.loc["sdd"]
    >>> bool(0 < low < high)
    True
    """
    y, pred, enc, threshold = _check_inputs(
        y_true, y_pred, sensitive_features, task, groups, threshold
    )
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)):
        raise ValueError(MSG_N_BOOTSTRAP.format(value=n_bootstrap))
    if n_bootstrap < 10:
        raise ValueError(MSG_N_BOOTSTRAP.format(value=n_bootstrap))
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise ValueError(MSG_CONFIDENCE.format(value=confidence))
    rng = np.random.default_rng(random_state)
    cells = check_sensitive_features(
        sensitive_features, pred.shape[0], groups="intersection", min_groups=1
    ).codes
    member = enc.membership.astype(float)
    rows = enc.indices()
    chunk = max(1, _CHUNK_CELLS // max(pred.shape[0], 1))
    rate_parts: dict[str, list] = {}
    summary_parts: dict[str, list] = {}
    for start in range(0, n_bootstrap, chunk):
        take = _stratified_indices(cells, min(chunk, n_bootstrap - start), rng)
        rates, summary = _replicate_summary(
            None if y is None else y[take], pred[take], member, rows, task, threshold
        )
        for key, value in rates.items():
            rate_parts.setdefault(key, []).append(value)
        for key, value in summary.items():
            summary_parts.setdefault(key, []).append(value)
    alpha = (1.0 - confidence) / 2
    replicates = pd.DataFrame({k: np.concatenate(v) for k, v in summary_parts.items()})
    summary_ci = pd.DataFrame(
        {
            "low": replicates.quantile(alpha),
            "high": replicates.quantile(1 - alpha),
        }
    )
    group_ci = {}
    for key, parts in rate_parts.items():
        values = pd.DataFrame(np.concatenate(parts), columns=enc.names)
        group_ci[key] = pd.DataFrame(
            {"low": values.quantile(alpha), "high": values.quantile(1 - alpha)}
        ).rename_axis("group")
    return BootstrapIntervals(summary_ci, group_ci, replicates, float(confidence))
