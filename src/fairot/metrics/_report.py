"""One table of every fairness metric, per group and overall."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fairot.metrics._calling import group_metric, sorted_group_samples, sorted_sample
from fairot.metrics._distances import pairwise_gaps
from fairot.metrics.checks import (
    OVERALL,
    UNIT_INTERVAL,
    Task,
    check_binary_labels,
    check_task,
    check_threshold,
)
from fairot.metrics.reductions import (
    _w1_on_cells,
    finish_report,
    sum_of_distances,
    sum_w1_to_barycenter,
)
from fairot.transport import (
    MASS_TOLERANCE,
    barycenter_distribution,
    w1_to_reference,
    wasserstein_sorted,
)
from fairot.utils.arrays import check_array_1d, check_consistent_length, check_sample_weight
from fairot.utils.groups import GroupEncoding, GroupsMode
from fairot.utils.sensitive import check_sensitive_features

GroupIndex = Literal["names", "multi"]
MSG_GROUP_INDEX = "group_index must be 'names' or 'multi'; got {value!r}."
#: Most groups whose every pair is coupled (K (K - 1) / 2 couplings: 19,900 at 200 groups).
#: Beyond it the largest pairwise W1 and W2 (which have no formula cheaper than every pair) are
#: left out of the summary, with :data:`MSG_PAIRWISE_SKIPPED` in ``report.attrs["notes"]``;
#: SPDD and the largest pairwise W-infinity are still exact, from one pass over the groups'
#: quantiles on their common cells.
MAX_PAIRWISE_GROUPS = 200
MSG_PAIRWISE_SKIPPED = (
    "{metrics} not computed: {k} groups make {pairs} pairs, more than the {limit} groups "
    "(MAX_PAIRWISE_GROUPS) whose every pair is coupled; {exact} computed exactly from the "
    "groups' quantiles."
)


@group_metric("y_true", "y_pred")
def fairness_report(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    task: Task = "classification",
    group_mode: GroupsMode = "intersection",
    threshold: float = 0.5,
    sample_weight: ArrayLike | None = None,
    group_index: GroupIndex = "names",
) -> pd.DataFrame:
    """Per-group table of accuracy and distribution metrics, with every fairness metric.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Labels (binary for classification) or responses (regression); ``None`` audits the scores
        alone (the accuracy columns are then left out).
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1] for classification; predictions for regression.
    sensitive_features : array-like, DataFrame or GroupEncoding
        Group membership, one or several columns (a required keyword, as in fairlearn).
        An encoding from :func:`fairot.utils.sensitive.check_sensitive_features` is used as it is.
    task : {"classification", "regression"}, default="classification"
        Which columns and summary metrics to compute.
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups (``"marginal"`` groups overlap, so their
        shares can add up to more than 1).
    threshold : float, default=0.5
        Decision threshold in [0, 1] for the accuracy of classification scores.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights (e.g. survey weights): every share, mean, accuracy, error
        and distribution is weighted; integer weights give the report of the replicated rows
        (except ``size``, which counts rows).
    group_index : {"names", "multi"}, default="names"
        ``"names"``: one readable name per group (``"race=A, sex=F"``). ``"multi"``: the group
        labels themselves, as ``MetricFrame.by_group`` indexes them: a MultiIndex named after
        the sensitive columns for intersections of several columns (``(column, value)`` levels
        ``feature`` and ``value`` for marginal groups), a plain index for one column; the last
        row is then labelled ``"overall"`` on every level.

    Returns
    -------
    pandas.DataFrame
        One row per group plus a final ``"overall"`` row, with columns ``size`` (rows),
        ``share`` (of the total weight), ``accuracy`` (classification) or ``mse``, ``rmse`` and
        ``r2`` (regression), ``mean_score`` and ``w1_to_pooled`` (the group's :math:`W_1`
        distance to the pooled distribution). ``report.attrs["summary"]`` holds the summary
        metrics as a dict: for classification ``err`` (with labels), ``wass1``, ``sdd``,
        ``spdd``, ``max_pairwise_w2`` and its pair, ``accuracy_std`` and ``skewed_error_ratio``
        (with labels); for regression ``mse``, ``rmse`` and ``r2`` (with responses), ``wass1``
        (W1 to the barycenter, unbounded range), ``max_pairwise_w1``, ``max_pairwise_w2`` and its
        pair, ``max_pairwise_winf``.

    Notes
    -----
    Regression metrics are computed in a unit scaled by a power of two (exact), so that
    responses from 1e-300 to 1e300 give the right R² and distances; ``mse`` is the square of
    ``rmse`` and is infinite only where the true value exceeds the float range (residuals above
    about 1e154), when ``rmse`` is still finite. A group distance whose true value exceeds the
    float range (groups near ±1.7e308, whose gap is about 3.4e308) raises ``ValueError`` naming
    the cause rather than reporting ``inf`` or overflowing.

    See Also
    --------
    fairness_summary : the summary metrics alone, as a Series.

    Examples
    --------
    >>> from fairot.metrics import fairness_report
    >>> y, s, g = [0, 1, 1, 0], [0.2, 0.9, 0.6, 0.4], ["a", "a", "b", "b"]
    >>> report = fairness_report(y, s, sensitive_features=g)
    >>> list(report.index)
    ['a', 'b', 'overall']
    >>> report.loc["b", "accuracy"]
    np.float64(1.0)
    """
    check_task(task)
    if group_index not in ("names", "multi"):
        raise ValueError(MSG_GROUP_INDEX.format(value=group_index))
    threshold = check_threshold(threshold)
    pred = check_array_1d(
        y_pred, "y_pred", bounds=UNIT_INTERVAL if task == "classification" else None
    )
    enc = check_sensitive_features(sensitive_features, pred.shape[0], group_mode=group_mode)
    y = _check_targets(y_true, pred, task)
    w = check_sample_weight(sample_weight, pred.shape[0])
    indices = enc.indices()
    sorted_groups, sorted_weights = sorted_group_samples(pred, indices, w, enc.names)
    pooled, pooled_w = sorted_sample(pred, w)
    total = pred.shape[0] if w is None else float(w.sum())
    scale = _power_of_two_scale(pred if y is None else np.concatenate([pred, y]))

    # Beyond MAX_PAIRWISE_GROUPS, every group's W1 to the pooled scores in one pass
    # (O(N log N)); below it, one exact merge per group (O(K N) in all).
    many = enc.n_groups > MAX_PAIRWISE_GROUPS
    if many:
        to_pooled = w1_to_reference(
            [g / scale for g in sorted_groups], pooled / scale, sorted_weights, pooled_w
        )
        to_pooled = [_rescaled(float(d), scale) for d in to_pooled] + [0.0]
    rows = []
    for k, (idx, sorted_group, group_w) in enumerate(
        zip(
            [*indices, np.arange(pred.shape[0])],
            [*sorted_groups, pooled],
            [*sorted_weights, pooled_w],
            strict=True,
        )
    ):
        gw = None if w is None else w[idx]
        weight = idx.shape[0] if gw is None else float(gw.sum())
        row: dict[str, float] = {"size": idx.shape[0], "share": weight / total}
        if y is not None:
            row.update(_accuracy_columns(y[idx], pred[idx], gw, task, threshold, scale))
        row["mean_score"] = scale * float(np.average(pred[idx] / scale, weights=gw))
        row["w1_to_pooled"] = (
            to_pooled[k]
            if many
            else _rescaled(
                wasserstein_sorted(sorted_group / scale, pooled / scale, 1.0, group_w, pooled_w),
                scale,
            )
        )
        rows.append(row)
    report = pd.DataFrame(rows, index=_report_index(enc, group_index))
    report["size"] = report["size"].astype(int)

    summary: dict[str, Any] = {"n_samples": int(pred.shape[0]), "n_groups": enc.n_groups}
    if y is not None:
        overall = report.iloc[-1]
        if task == "classification":
            summary["err"] = 1.0 - float(overall["accuracy"])
        else:
            summary.update({k: float(overall[k]) for k in ("mse", "rmse", "r2")})
    # Each pair of groups is coupled once for every order needed; SDD is the sum of the rows'
    # distances to the pooled scores, already computed for the table.
    orders = (1.0, 2.0) if task == "classification" else (1.0, 2.0, np.inf)
    # Distances are computed on scores divided by a power of two, so the differences of scores
    # near +-1.7e308 cannot overflow, then scaled back.
    unit_groups = [g / scale for g in sorted_groups]
    if not many:
        wass1 = sum_w1_to_barycenter(unit_groups, None, sorted_weights)
        summary["wass1"] = _rescaled(wass1, scale)
    else:
        # One pass over the joint quantile cells gives Wass1, SPDD and the largest W-inf.
        cells = _cell_pairwise(unit_groups, sorted_weights)
        summary.update({k: _rescaled(v, scale) for k, v in cells.items()})
        if task == "classification":
            del summary["max_pairwise_winf"]
            skipped, exact = "max_pairwise_w2 (and its pair)", "SDD and SPDD are"
        else:
            del summary["spdd"]
            skipped, exact = "max_pairwise_w1 and max_pairwise_w2 (and its pair)", "W-inf is"
        report.attrs["notes"] = [
            MSG_PAIRWISE_SKIPPED.format(
                metrics=skipped,
                k=enc.n_groups,
                pairs=enc.n_groups * (enc.n_groups - 1) // 2,
                limit=MAX_PAIRWISE_GROUPS,
                exact=exact,
            )
        ]
        return finish_report(report, summary, None, task, labelled=y is not None)
    gaps = pairwise_gaps(unit_groups, enc.names, orders, sorted_weights)
    gaps = {p: _rescaled_gap(gap, scale) for p, gap in gaps.items()}
    return finish_report(report, summary, gaps, task, labelled=y is not None)


def _cell_pairwise(sorted_groups: list[np.ndarray], sample_weights: list) -> dict[str, float]:
    r"""Wass1, SPDD and the largest pairwise :math:`W_\infty` without a loop over pairs.

    Every group's quantile function is constant on the cells of the joint quantile grid
    (:func:`fairot.transport.barycenter_distribution`), so with :math:`q_{(1)} \le \dots \le
    q_{(K)}` the groups' quantiles sorted on a cell of mass :math:`m`,

    .. math::

        \sum_{a<b} W_1(a, b) = \sum_{\text{cells}} m \sum_{i=1}^{K} (2i - K - 1)\, q_{(i)},
        \qquad \max_{a,b} W_\infty(a, b) = \max_{m > 0} \big(q_{(K)} - q_{(1)}\big),

    :math:`O(C K \log K)` for :math:`C` cells instead of :math:`K^2/2` couplings.
    """
    bary, mass, group_q, _ = barycenter_distribution(
        sorted_groups, None, p=1, sample_weights=sample_weights, assume_sorted=True
    )
    # Wass1 exactly as sum_w1_to_barycenter sums it, from the same cells.
    wass1 = sum_of_distances(_w1_on_cells(q, bary, mass) for q in group_q)
    q = np.vstack(group_q)  # (K, cells)
    del group_q  # the list and the matrix are not both kept: K x cells floats each
    q.sort(axis=0)  # each cell's quantiles in order
    k = q.shape[0]
    coefficients = 2.0 * np.arange(1, k + 1) - k - 1.0
    spdd = float(mass @ (coefficients @ q))
    spread = q[-1] - q[0]
    winf = float(spread[mass > MASS_TOLERANCE].max(initial=0.0))
    return {"wass1": wass1, "spdd": spdd, "max_pairwise_winf": winf}


def _report_index(enc: GroupEncoding, group_index: GroupIndex) -> pd.Index:
    if group_index == "names":
        return pd.Index([*enc.names, OVERALL], name="group")
    level_names = ["feature", "value"] if enc.mode == "marginal" else list(enc.columns)
    if len(level_names) == 1:
        return pd.Index([*enc.labels, OVERALL], name=level_names[0], dtype=object)
    overall = (OVERALL,) * len(level_names)
    return pd.MultiIndex.from_tuples([*enc.labels, overall], names=level_names)


@group_metric("y_true", "y_pred", backend=False)
def fairness_summary(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    task: Task = "classification",
    group_mode: GroupsMode = "intersection",
    threshold: float = 0.5,
    sample_weight: ArrayLike | None = None,
) -> pd.Series:
    """Every summary fairness metric of :func:`fairness_report`, as a Series.

    Parameters
    ----------
    y_true, y_pred, sensitive_features, task, group_mode, threshold, sample_weight
        As in :func:`fairness_report`.

    Returns
    -------
    pandas.Series
        Metric name to value (the group pair attaining ``max_pairwise_w2`` as a string).

    Examples
    --------
    >>> from fairot.metrics import fairness_summary
    >>> s, g = [0.1, 0.3, 0.6, 0.8], ["a", "a", "b", "b"]
    >>> summary = fairness_summary(None, s, sensitive_features=g)
    >>> round(summary["sdd"], 6), summary["max_pairwise_w2_pair"]
    (0.5, 'a vs b')
    """
    report = fairness_report(
        y_true,
        y_pred,
        sensitive_features=sensitive_features,
        task=task,
        group_mode=group_mode,
        threshold=threshold,
        sample_weight=sample_weight,
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


MSG_DISTANCE_OVERFLOW = (
    "a Wasserstein distance between the groups' y_pred exceeds the float maximum (about "
    "1.8e308); rescale y_pred (e.g. divide it by 2) to get finite distances."
)


def _distance_limit(scale: float) -> float:
    # Below 1 the scale cannot push a unit distance past the float maximum.
    return float(np.finfo(float).max) / scale if scale >= 1.0 else math.inf


def _rescaled(value: float, scale: float) -> float:
    # The unit-scale distance times the scale overflows exactly when the true one does.
    if value > _distance_limit(scale):
        raise ValueError(MSG_DISTANCE_OVERFLOW)
    return float(value) * scale


def _rescaled_gap(gap: Any, scale: float) -> Any:
    matrix = gap.matrix
    if np.any(matrix.to_numpy() > _distance_limit(scale)):
        raise ValueError(MSG_DISTANCE_OVERFLOW)
    return gap._replace(distance=gap.distance * scale, matrix=matrix * scale)


def _power_of_two_scale(values: np.ndarray) -> float:
    """Return a power of two near the largest magnitude.

    Dividing by it is exact and keeps every square and product of the scaled values inside the
    float range.
    """
    largest = float(np.max(np.abs(values)))
    if largest == 0.0:
        return 1.0
    # 2**(e - 1) <= largest < 2**e; 2**e itself overflows at the float maximum.
    return math.ldexp(1.0, math.frexp(largest)[1] - 1)


def _accuracy_columns(
    y: np.ndarray,
    pred: np.ndarray,
    weights: np.ndarray | None,
    task: Task,
    threshold: float,
    scale: float,
) -> dict[str, float]:
    if task == "classification":
        correct = (pred > threshold).astype(int) == y
        return {"accuracy": float(np.average(correct, weights=weights))}
    ys, ps = y / scale, pred / scale
    mse_unit = float(np.average((ys - ps) ** 2, weights=weights))
    variance_unit = float(np.average((ys - np.average(ys, weights=weights)) ** 2, weights=weights))
    rmse = math.sqrt(mse_unit) * scale
    # R² is undefined for a constant response; NaN here is reported, not silently averaged.
    r2 = 1.0 - mse_unit / variance_unit if variance_unit > 0 else float("nan")
    return {"mse": rmse * rmse, "rmse": rmse, "r2": r2}
