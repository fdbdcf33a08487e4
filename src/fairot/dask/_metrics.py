"""The fairness metrics of ``fairot.metrics`` on Dask collections, exact or sketched.

Each computes group distances on the cluster (:mod:`fairot.dask._groups`) and reduces them
with the same functions as the in-memory metrics (:mod:`fairot.metrics.reductions`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairot.dask._collections import checked_values, compute, delayed, to_blocks
from fairot.dask._exact import curve_sums, sort_labels, window_sums
from fairot.dask._groups import GroupDistances, Quantiles, group_distances
from fairot.dask._options import check_quantiles
from fairot.dask._sketch import DEFAULT_K, check_sketch_k, sketch_curves
from fairot.metrics import PairwiseGap
from fairot.metrics.checks import UNIT_INTERVAL, GroupWeights, group_metric
from fairot.metrics.reductions import sum_of_distances, sum_over_pairs
from fairot.transport import check_p
from fairot.utils.groups import GroupsMode

__all__ = [
    "max_pairwise_wasserstein",
    "strong_demographic_disparity",
    "strong_pairwise_demographic_disparity",
    "wass1",
    "wasserstein_distance",
]


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
        sums = curve_sums(curves, (p,))
    else:
        (lengths,) = compute([delayed(len)(b) for b in [*blocks_u, *blocks_v]])
        sums = window_sums(sort_labels(labelled, max(lengths)), (p,), window_rows=max(lengths))
    return float(sums.distance(p)[0, 1])


@group_metric("y_true", "y_pred", backend=False)
def wass1(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    group_weights: GroupWeights = "uniform",
    group_mode: GroupsMode = "intersection",
    quantiles: Quantiles = "exact",
    sketch_k: int = DEFAULT_K,
) -> float:
    """:func:`fairot.metrics.wass1` (barycenter target) on Dask collections.

    Parameters
    ----------
    y_true : Dask collection or None
        Labels, unused: fairlearn's calling form, as :func:`fairot.metrics.wass1`.
    y_pred, sensitive_features : Dask collections
        Scores in [0, 1] and group membership (a required keyword), partitioned alike.
    group_weights, group_mode
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
    >>> groups = da.from_array(["a", "a", "b", "b"], chunks=2)
    >>> round(wass1(None, scores, sensitive_features=groups), 6)
    0.5
    """
    d = group_distances(
        y_pred,
        sensitive_features,
        name="scores",
        bounds=UNIT_INTERVAL,
        group_mode=group_mode,
        orders=(1.0,),
        group_weights=group_weights,
        quantiles=quantiles,
        sketch_k=sketch_k,
    )
    return sum_of_distances(d.sums.to_barycenter)


@group_metric("y_true", "y_pred", backend=False)
def strong_demographic_disparity(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    group_mode: GroupsMode = "intersection",
    quantiles: Quantiles = "exact",
    sketch_k: int = DEFAULT_K,
) -> float:
    """:func:`fairot.metrics.strong_demographic_disparity` on Dask collections.

    Parameters
    ----------
    y_true : Dask collection or None
        Labels, unused: fairlearn's calling form, as :func:`fairot.metrics.wass1`.
    y_pred, sensitive_features : Dask collections
        Scores in [0, 1] and group membership (a required keyword), partitioned alike.
    group_mode, quantiles, sketch_k
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
    >>> round(strong_demographic_disparity(None, scores, sensitive_features=groups), 6)
    0.5
    """
    d = _score_distances(y_pred, sensitive_features, group_mode, quantiles, sketch_k)
    return sum_of_distances(d.to_pooled())


@group_metric("y_true", "y_pred", backend=False)
def strong_pairwise_demographic_disparity(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    group_mode: GroupsMode = "intersection",
    quantiles: Quantiles = "exact",
    sketch_k: int = DEFAULT_K,
) -> float:
    """:func:`fairot.metrics.strong_pairwise_demographic_disparity` on Dask collections.

    Parameters
    ----------
    y_true : Dask collection or None
        Labels, unused: fairlearn's calling form, as :func:`fairot.metrics.wass1`.
    y_pred, sensitive_features : Dask collections
        Scores in [0, 1] and group membership (a required keyword), partitioned alike.
    group_mode, quantiles, sketch_k
        As in :func:`wass1`.

    Returns
    -------
    float

    Examples
    --------
    >>> import dask.array as da
    >>> from fairot.dask import strong_pairwise_demographic_disparity as spdd
    >>> scores = da.from_array([0.1, 0.3, 0.6, 0.8, 0.5, 0.5], chunks=3)
    >>> groups = da.from_array(["a", "a", "b", "b", "c", "c"], chunks=3)
    >>> round(spdd(None, scores, sensitive_features=groups), 6)
    1.0
    """
    d = _score_distances(y_pred, sensitive_features, group_mode, quantiles, sketch_k)
    return sum_over_pairs(d.pairwise_w1())


def _score_distances(scores, sensitive_features, group_mode, quantiles, sketch_k) -> GroupDistances:
    return group_distances(
        scores,
        sensitive_features,
        name="scores",
        bounds=UNIT_INTERVAL,
        group_mode=group_mode,
        orders=(1.0,),
        group_weights=None,
        quantiles=quantiles,
        sketch_k=sketch_k,
    )


@group_metric("y_true", "y_pred", backend=False)
def max_pairwise_wasserstein(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    p: float | str = 2,
    group_mode: GroupsMode = "intersection",
    quantiles: Quantiles = "exact",
    sketch_k: int = DEFAULT_K,
) -> PairwiseGap:
    """:func:`fairot.metrics.max_pairwise_wasserstein` on Dask collections.

    Parameters
    ----------
    y_true : Dask collection or None
        Responses, unused (fairlearn's calling form).
    y_pred, sensitive_features : Dask collections
        Predictions and group membership (a required keyword), partitioned alike.
    p : float or "inf", default=2
        Order of the distance.
    group_mode, quantiles, sketch_k
        As in :func:`wass1`.

    Returns
    -------
    PairwiseGap

    Examples
    --------
    >>> import dask.array as da
    >>> from fairot.dask import max_pairwise_wasserstein
    >>> pred = da.from_array([1.0, 2.0, 4.0, 5.0], chunks=2)
    >>> groups = da.from_array(["a", "a", "b", "b"], chunks=2)
    >>> gap = max_pairwise_wasserstein(None, pred, sensitive_features=groups)
    >>> gap.distance, gap.pair
    (3.0, ('a', 'b'))
    """
    p = check_p(p)
    d = group_distances(
        y_pred,
        sensitive_features,
        name="pred",
        bounds=None,
        group_mode=group_mode,
        orders=(p,),
        group_weights=None,
        quantiles=quantiles,
        sketch_k=sketch_k,
    )
    return d.gap(p)
