"""The fairness metrics of ``fairot.metrics`` on Dask collections, exact or sketched."""

from __future__ import annotations

import math
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
from fairot.dask._exact import WindowSums, _window_sums, sort_labels, window_sums
from fairot.dask._sketch import DEFAULT_K, check_sketch_k, sketch_curves
from fairot.metrics._classification import (
    MSG_GROUP_WEIGHTS,
    UNIT_INTERVAL,
    check_binary_labels,
    check_threshold,
)
from fairot.metrics._distances import PairwiseGap
from fairot.metrics._report import MSG_TASK, OVERALL, Task, finish_report
from fairot.transport import check_p
from fairot.utils.groups import GroupEncoding, GroupsMode

Quantiles = Literal["exact", "sketch"]
MSG_QUANTILES = "quantiles must be 'exact' or 'sketch'; got {value!r}."


def check_quantiles(quantiles: str) -> str:
    """Validate the ``quantiles`` option."""
    if quantiles not in ("exact", "sketch"):
        raise ValueError(MSG_QUANTILES.format(value=quantiles))
    return quantiles


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
        names = self.encoding.names
        matrix = np.array(
            [[self.distance(a, b, p) if a != b else 0.0 for b in range(k)] for a in range(k)]
        )
        a, b = np.unravel_index(np.argmax(matrix), matrix.shape)
        a, b = min(a, b), max(a, b)
        frame = pd.DataFrame(matrix, index=names, columns=names)
        return PairwiseGap(float(matrix[a, b]), (names[a], names[b]), frame)


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
    groups: GroupsMode,
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
    if group_weights not in ("uniform", "proportional", None):
        raise ValueError(MSG_GROUP_WEIGHTS.format(value=group_weights))
    if quantiles == "sketch":
        sketch_k = check_sketch_k(sketch_k)
    blocks = aligned_blocks({name: values, "sensitive_features": sensitive_features})
    info = compute(*[delayed(_blocks_info)(b) for b in blocks["sensitive_features"]])
    encoding = encoding_from_distinct([d for d, _ in info], groups)
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
    m = curves.shape[1]
    n_labels = curves.shape[0]
    weights = None if group_weights != "proportional" else counts[:k].astype(float)
    sums = _window_sums(
        [[c] for c in curves],
        [0] * n_labels,
        [m] * n_labels,
        [m] * n_labels,
        0,
        m,
        orders,
        k if group_weights else None,
        weights,
    )
    return GroupDistances(encoding, counts, sums, ranges)


def wasserstein_distance(
    u: Any, v: Any, p: float | str = 1, *, quantiles: Quantiles = "exact", sketch_k: int = DEFAULT_K
) -> float:
    r"""Exact (or sketched) :math:`W_p` between two one-dimensional Dask samples.

    As :func:`fairot.metrics.wasserstein_distance` (unweighted samples), computed on the active
    scheduler.

    Parameters
    ----------
    u, v : dask.array.Array or dask.dataframe.Series
        The two samples (any sizes and partitions).
    p : float or "inf", default=1
        Order of the distance.
    quantiles : {"exact", "sketch"}, default="exact"
        Distributed sort, or merged KLL sketches (see :mod:`fairot.dask`).
    sketch_k : int, default=1000
        KLL accuracy parameter for ``quantiles="sketch"``.

    Returns
    -------
    float

    Examples
    --------
    >>> import dask.array as da
    >>> from fairot.dask import wasserstein_distance
    >>> u = da.from_array([0.0, 1.0, 2.0, 3.0], chunks=2)
    >>> wasserstein_distance(u, u + 0.5, p=2)
    0.5
    """
    from fairot.dask._collections import to_blocks

    p = check_p(p)
    check_quantiles(quantiles)
    blocks_u, blocks_v = to_blocks(u, "u_values"), to_blocks(v, "v_values")

    def pair(name, blocks, position):
        def block_labels(x):
            values = checked_values(x, name, None)
            empty = np.empty(0)
            return [values, empty] if position == 0 else [empty, values]

        return [delayed(block_labels)(b) for b in blocks]

    labelled = pair("u_values", blocks_u, 0) + pair("v_values", blocks_v, 1)
    if quantiles == "sketch":
        curves, _, _ = sketch_curves(labelled, check_sketch_k(sketch_k))
        m = curves.shape[1]
        sums = _window_sums([[c] for c in curves], [0, 0], [m, m], [m, m], 0, m, (p,), None, None)
    else:
        (lengths,) = compute([delayed(len)(b) for b in [*blocks_u, *blocks_v]])
        sums = window_sums(sort_labels(labelled, max(lengths)), (p,), window_rows=max(lengths))
    return float(sums.distance(p)[0, 1])


def wass1(
    scores: Any,
    sensitive_features: Any,
    *,
    group_weights: Literal["uniform", "proportional"] = "uniform",
    groups: GroupsMode = "intersection",
    quantiles: Quantiles = "exact",
    sketch_k: int = DEFAULT_K,
) -> float:
    """:func:`fairot.metrics.wass1` (barycenter target) on Dask collections.

    Parameters
    ----------
    scores, sensitive_features : Dask collections
        Scores in [0, 1] and group membership, partitioned alike.
    group_weights, groups
        As in :func:`fairot.metrics.wass1`.
    quantiles, sketch_k
        As in :func:`wasserstein_distance`.

    Returns
    -------
    float

    Examples
    --------
    >>> import dask.array as da
    >>> from fairot.dask import wass1
    >>> scores = da.from_array([0.1, 0.3, 0.6, 0.8], chunks=2)
    >>> round(wass1(scores, da.from_array(["a", "a", "b", "b"], chunks=2)), 6)
    0.5
    """
    d = group_distances(
        scores,
        sensitive_features,
        name="scores",
        bounds=UNIT_INTERVAL,
        groups=groups,
        orders=(1.0,),
        group_weights=group_weights,
        quantiles=quantiles,
        sketch_k=sketch_k,
    )
    return float(d.sums.to_barycenter.sum())


def strong_demographic_disparity(
    scores: Any,
    sensitive_features: Any,
    *,
    groups: GroupsMode = "intersection",
    quantiles: Quantiles = "exact",
    sketch_k: int = DEFAULT_K,
) -> float:
    """:func:`fairot.metrics.strong_demographic_disparity` on Dask collections.

    Parameters
    ----------
    scores, sensitive_features : Dask collections
        Scores in [0, 1] and group membership, partitioned alike.
    groups, quantiles, sketch_k
        As in :func:`wass1`.

    Returns
    -------
    float

    Examples
    --------
    >>> import dask.array as da
    >>> from fairot.dask import strong_demographic_disparity
    >>> scores = da.from_array([0.1, 0.3, 0.6, 0.8], chunks=2)
    >>> groups = da.from_array(["a", "a", "b", "b"], chunks=2)
    >>> round(strong_demographic_disparity(scores, groups), 6)
    0.5
    """
    d = _score_distances(scores, sensitive_features, groups, quantiles, sketch_k)
    k = d.encoding.n_groups
    return float(d.sums.power[1.0][:k, k].sum())


def strong_pairwise_demographic_disparity(
    scores: Any,
    sensitive_features: Any,
    *,
    groups: GroupsMode = "intersection",
    quantiles: Quantiles = "exact",
    sketch_k: int = DEFAULT_K,
) -> float:
    """:func:`fairot.metrics.strong_pairwise_demographic_disparity` on Dask collections.

    Parameters
    ----------
    scores, sensitive_features : Dask collections
        Scores in [0, 1] and group membership, partitioned alike.
    groups, quantiles, sketch_k
        As in :func:`wass1`.

    Returns
    -------
    float

    Examples
    --------
    >>> import dask.array as da
    >>> from fairot.dask import strong_pairwise_demographic_disparity as spdd
    >>> scores = da.from_array([0.1, 0.3, 0.6, 0.8, 0.5, 0.5], chunks=3)
    >>> round(spdd(scores, da.from_array(["a", "a", "b", "b", "c", "c"], chunks=3)), 6)
    1.0
    """
    d = _score_distances(scores, sensitive_features, groups, quantiles, sketch_k)
    k = d.encoding.n_groups
    return float(np.triu(d.sums.power[1.0][:k, :k], 1).sum())


def _score_distances(scores, sensitive_features, groups, quantiles, sketch_k) -> GroupDistances:
    return group_distances(
        scores,
        sensitive_features,
        name="scores",
        bounds=UNIT_INTERVAL,
        groups=groups,
        orders=(1.0,),
        group_weights=None,
        quantiles=quantiles,
        sketch_k=sketch_k,
    )


def max_pairwise_wasserstein(
    pred: Any,
    sensitive_features: Any,
    p: float | str = 2,
    *,
    groups: GroupsMode = "intersection",
    quantiles: Quantiles = "exact",
    sketch_k: int = DEFAULT_K,
) -> PairwiseGap:
    """:func:`fairot.metrics.max_pairwise_wasserstein` on Dask collections.

    Parameters
    ----------
    pred, sensitive_features : Dask collections
        Predictions and group membership, partitioned alike.
    p : float or "inf", default=2
        Order of the distance.
    groups, quantiles, sketch_k
        As in :func:`wass1`.

    Returns
    -------
    PairwiseGap

    Examples
    --------
    >>> import dask.array as da
    >>> from fairot.dask import max_pairwise_wasserstein
    >>> pred = da.from_array([1.0, 2.0, 4.0, 5.0], chunks=2)
    >>> gap = max_pairwise_wasserstein(pred, da.from_array(["a", "a", "b", "b"], chunks=2))
    >>> gap.distance, gap.pair
    (3.0, ('a', 'b'))
    """
    p = check_p(p)
    d = group_distances(
        pred,
        sensitive_features,
        name="pred",
        bounds=None,
        groups=groups,
        orders=(p,),
        group_weights=None,
        quantiles=quantiles,
        sketch_k=sketch_k,
    )
    return d.gap(p)


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


def fairness_report(
    y_true: Any,
    y_pred: Any,
    sensitive_features: Any,
    *,
    task: Task = "classification",
    groups: GroupsMode = "intersection",
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
        Group membership.
    task, groups, threshold
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
    >>> report = fairness_report(None, scores, groups)
    >>> list(report.index), round(report.attrs["summary"]["sdd"], 3)
    (['a', 'b', 'overall'], 0.25)
    """
    if task not in ("classification", "regression"):
        raise ValueError(MSG_TASK.format(value=task))
    threshold = check_threshold(threshold)
    orders = (1.0, 2.0) if task == "classification" else (1.0, 2.0, math.inf)
    d = group_distances(
        y_pred,
        sensitive_features,
        name="y_pred",
        bounds=UNIT_INTERVAL if task == "classification" else None,
        groups=groups,
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
    summary["wass1"] = float(d.sums.to_barycenter.sum())
    gaps = {p: d.gap(p) for p in d.sums.power}
    return finish_report(report, summary, gaps, task, labelled=labelled)
