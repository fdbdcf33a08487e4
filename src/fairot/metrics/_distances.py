"""Distances between groups' score or prediction distributions."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from fairot.metrics._calling import (
    check_labels_length,
    dispatches_collections,
    group_metric,
    sorted_group_samples,
)
from fairot.metrics.reductions import PairwiseGap, largest_pair
from fairot.transport import check_p, wasserstein_1d, wasserstein_sorted_orders
from fairot.utils.arrays import check_array_1d, check_sample_weight
from fairot.utils.groups import GroupsMode
from fairot.utils.sensitive import check_sensitive_features


@dispatches_collections("u", "v")
def wasserstein_distance(
    u: ArrayLike,
    v: ArrayLike,
    p: float | str = 1,
    u_weights: ArrayLike | None = None,
    v_weights: ArrayLike | None = None,
) -> float:
    r"""Exact p-Wasserstein distance between two one-dimensional empirical distributions.

    The metrics-side name of :func:`fairot.transport.wasserstein_1d` (same parameters:
    samples of any sizes, optional weights, ``1 <= p <= inf``); unlike
    :func:`scipy.stats.wasserstein_distance`, every order ``p`` is exact, not only ``p = 1``.
    The gaps are divided by the largest one before they are raised to the power ``p`` (and
    ``p > 2`` is summed in log space), so that values from 1e-300 to 1e300 and orders up to the
    thousands neither overflow nor underflow.

    Examples
    --------
    >>> from fairot.metrics import wasserstein_distance
    >>> wasserstein_distance([0.0, 1.0], [0.5, 1.5], p=2)
    0.5
    """
    return wasserstein_1d(u, v, p, u_weights, v_weights)


@group_metric("y_true", "y_pred")
def max_pairwise_wasserstein(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    p: float | str = 2,
    sample_weight: ArrayLike | None = None,
    group_mode: GroupsMode = "intersection",
) -> PairwiseGap:
    r"""Largest pairwise :math:`W_p` between groups' prediction distributions.

    The regression paper's fairness "gap": :math:`\max_{i<j} W_p(\hat Y_i, \hat Y_j)`, the
    quantity its tolerance :math:`\varepsilon` bounds (Section 2 of [1]_).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Responses; unused (the gap compares prediction distributions), checked for length when
        given (fairlearn's form, see :func:`fairot.metrics.wass1`).
    y_pred : array-like of shape (n_samples,)
        Predictions or scores.
    sensitive_features : array-like or DataFrame
        Group membership (a required keyword, see :func:`fairot.metrics.wass1`).
    p : float or "inf", default=2
        Order of the Wasserstein distance.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights.
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.

    Returns
    -------
    PairwiseGap
        The distance, the pair attaining it and the full matrix.

    References
    ----------
    .. [1] Approximate demographic parity for regression, seed paper 001.

    Examples
    --------
    >>> from fairot.metrics import max_pairwise_wasserstein
    >>> pred, groups = [1.0, 2.0, 4.0, 5.0, 3.0], ["a", "a", "b", "b", "c"]
    >>> gap = max_pairwise_wasserstein(None, pred, sensitive_features=groups)
    >>> gap.distance, gap.pair
    (3.0, ('a', 'b'))
    """
    p = check_p(p)
    check_labels_length(y_true, y_pred)
    values = check_array_1d(y_pred, "pred")
    enc = check_sensitive_features(sensitive_features, values.shape[0], group_mode=group_mode)
    w = check_sample_weight(sample_weight, values.shape[0])
    xs, ws = sorted_group_samples(values, enc.indices(), w, enc.names)
    return pairwise_gaps(xs, enc.names, (p,), ws)[p]


def pairwise_gaps(
    sorted_groups: list[np.ndarray],
    names: list[str],
    orders: tuple[float, ...],
    sample_weights: list | None = None,
) -> dict[float, PairwiseGap]:
    """Pairwise gaps for several orders, coupling each pair of groups once."""
    k = len(sorted_groups)
    ws = [None] * k if sample_weights is None else sample_weights
    matrices = {p: np.zeros((k, k)) for p in orders}
    for a, b in itertools.combinations(range(k), 2):
        values = wasserstein_sorted_orders(sorted_groups[a], sorted_groups[b], orders, ws[a], ws[b])
        for p, value in zip(orders, values, strict=True):
            matrices[p][a, b] = matrices[p][b, a] = value
    return {p: largest_pair(matrix, names) for p, matrix in matrices.items()}
