"""Distances between groups' score or prediction distributions."""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fairot._validation import GroupsMode, check_array_1d, check_sensitive_features
from fairot.transport import check_p, wasserstein_1d
from fairot.transport._coupling import _wasserstein_sorted_orders


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

    Examples
    --------
    >>> from fairot.metrics import wasserstein_distance
    >>> wasserstein_distance([0.0, 1.0], [0.5, 1.5], p=2)
    0.5
    """
    return wasserstein_1d(u, v, p, u_weights, v_weights)


class PairwiseGap(NamedTuple):
    """Largest pairwise Wasserstein distance between groups.

    Attributes
    ----------
    distance : float
        The largest :math:`W_p` between two groups' distributions.
    pair : tuple of str
        Names of the two groups that attain it.
    matrix : pandas.DataFrame
        Every pairwise distance, indexed by group name on both axes.
    """

    distance: float
    pair: tuple[str, str]
    matrix: pd.DataFrame


def max_pairwise_wasserstein(
    pred: ArrayLike,
    sensitive_features: Any,
    p: float | str = 2,
    *,
    groups: GroupsMode = "intersection",
) -> PairwiseGap:
    r"""Largest pairwise :math:`W_p` between groups' prediction distributions.

    The regression paper's fairness "gap": :math:`\max_{i<j} W_p(\hat Y_i, \hat Y_j)`, the
    quantity its tolerance :math:`\varepsilon` bounds (Section 2 of [1]_).

    Parameters
    ----------
    pred : array-like of shape (n_samples,)
        Predictions or scores.
    sensitive_features : array-like or DataFrame
        Group membership (see :func:`fairot.metrics.wass1`).
    p : float or "inf", default=2
        Order of the Wasserstein distance.
    groups : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.

    Returns
    -------
    PairwiseGap
        The distance, the pair attaining it and the full matrix.

    References
    ----------
    .. [1] Approximate demographic parity for regression, seed paper 001.
    """
    p = check_p(p)
    values = check_array_1d(pred, "pred")
    enc = check_sensitive_features(sensitive_features, values.shape[0], groups=groups)
    sorted_groups = [np.sort(values[idx]) for idx in enc.indices()]
    return pairwise_gap(sorted_groups, enc.names, p)


def pairwise_gap(sorted_groups: list[np.ndarray], names: list[str], p: float) -> PairwiseGap:
    """:func:`max_pairwise_wasserstein` on sorted, validated group samples."""
    return pairwise_gaps(sorted_groups, names, (p,))[p]


def pairwise_gaps(
    sorted_groups: list[np.ndarray], names: list[str], orders: tuple[float, ...]
) -> dict[float, PairwiseGap]:
    """Pairwise gaps for several orders, coupling each pair of groups once."""
    k = len(sorted_groups)
    matrices = {p: np.zeros((k, k)) for p in orders}
    for a, b in itertools.combinations(range(k), 2):
        values = _wasserstein_sorted_orders(sorted_groups[a], sorted_groups[b], orders)
        for p, value in zip(orders, values, strict=True):
            matrices[p][a, b] = matrices[p][b, a] = value
    gaps = {}
    for p, matrix in matrices.items():
        a, b = np.unravel_index(np.argmax(matrix), matrix.shape)
        a, b = min(a, b), max(a, b)
        frame = pd.DataFrame(matrix, index=names, columns=names)
        gaps[p] = PairwiseGap(float(matrix[a, b]), (names[a], names[b]), frame)
    return gaps
