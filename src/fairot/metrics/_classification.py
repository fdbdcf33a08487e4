"""Fairness metrics of the COT paper: Err-.5, Wass1, SDD and SPDD (Section "Results")."""

from __future__ import annotations

import itertools
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
from fairot.transport import barycenter_distribution
from fairot.transport._coupling import _wasserstein_sorted

MSG_NOT_BINARY = "{name} must be binary with values in {{0, 1}} (or booleans); got values {values}."
MSG_THRESHOLD = "threshold must lie in [0, 1]; got {value!r}."
MSG_GROUP_WEIGHTS = "group_weights must be 'uniform' or 'proportional'; got {value!r}."
UNIT_INTERVAL = (0.0, 1.0)


def check_binary_labels(y_true: ArrayLike, name: str = "y_true") -> np.ndarray:
    """Return binary labels as an int array of 0/1, or raise naming the values found."""
    raw = np.asarray(y_true.to_numpy() if hasattr(y_true, "to_numpy") else y_true)
    if raw.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {raw.shape}.")
    if raw.dtype == bool:
        return raw.astype(int)
    if raw.dtype.kind in "iuf":
        ok = bool(np.all((raw == 0) | (raw == 1)))
    else:
        try:
            ok = bool(np.all(np.isin(raw.astype(float), (0.0, 1.0))))
        except (TypeError, ValueError):
            ok = False
    if not ok:
        found = pd.unique(pd.Series(raw))[:10].tolist()
        raise ValueError(MSG_NOT_BINARY.format(name=name, values=found))
    return raw.astype(float).astype(int)


def error_rate(y_true: ArrayLike, scores: ArrayLike, threshold: float = 0.5) -> float:
    r"""Classification error at a threshold (the COT paper's Err-.5).

    .. math:: \mathrm{Err}_\tau = \frac1N \sum_n \mathbb{1}\{\mathbb{1}\{s^n > \tau\} \ne y^n\}

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels in {0, 1}.
    scores : array-like of shape (n_samples,)
        Scores in [0, 1] (estimates of :math:`P(Y = 1 \mid A, X)`), or hard 0/1 predictions; a
        sample is predicted positive when its score is strictly above ``threshold``.
    threshold : float, default=0.5
        Decision threshold :math:`\tau`.

    Returns
    -------
    float
        Share of misclassified samples.

    Examples
    --------
    Works as a fairlearn ``MetricFrame`` metric:

    >>> from fairot.metrics import error_rate
    >>> error_rate([0, 1, 1, 0], [0.2, 0.7, 0.4, 0.9])
    0.5
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(MSG_THRESHOLD.format(value=threshold))
    y = check_binary_labels(y_true)
    s = check_array_1d(scores, "scores", bounds=UNIT_INTERVAL)
    check_consistent_length(y_true=y, scores=s)
    return float(np.mean((s > threshold).astype(int) != y))


def _group_scores(scores: ArrayLike, sensitive_features: Any, groups: GroupsMode):
    s = check_array_1d(scores, "scores", bounds=UNIT_INTERVAL)
    enc = check_sensitive_features(sensitive_features, s.shape[0], groups=groups)
    return s, enc, [np.sort(s[idx]) for idx in enc.indices()]


def wass1(
    scores: ArrayLike,
    sensitive_features: Any,
    *,
    reference: ArrayLike | None = None,
    group_weights: Literal["uniform", "proportional"] = "uniform",
    groups: GroupsMode = "intersection",
) -> float:
    r"""Sum over groups of the W1 distance to a target distribution (the COT paper's Wass1).

    .. math:: \mathrm{Wass1} = \sum_{a \in \mathcal A} W_1(p_{S_a}, p_{\bar S})

    By default :math:`p_{\bar S}` is the :math:`W_1` barycenter of the groups, whose quantile
    function is, at each rank :math:`u`, the median of the group quantiles :math:`Q_a(u)` with
    equal group weights (the paper's convention: it reproduces the published logistic-regression
    value on Adult). The barycenter is computed exactly on the joint breakpoints of the group
    quantile functions, not on a grid.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Scores in [0, 1].
    sensitive_features : array-like or DataFrame
        Group membership: one column, or several (see ``groups``).
    target : array-like, optional
        Samples of a fixed target distribution instead of the barycenter.
    group_weights : {"uniform", "proportional"}, default="uniform"
        Weights of the groups in the barycenter's median; ``"proportional"`` uses group sizes,
        which pulls the barycenter towards the largest group.
    groups : {"intersection", "marginal"}, default="intersection"
        ``"marginal"`` makes each value of each column a group (overlapping groups).

    Returns
    -------
    float
        The sum of distances.
    """
    if group_weights not in ("uniform", "proportional"):
        raise ValueError(MSG_GROUP_WEIGHTS.format(value=group_weights))
    _, enc, sorted_groups = _group_scores(scores, sensitive_features, groups)
    if reference is not None:
        t = np.sort(check_array_1d(reference, "reference", bounds=UNIT_INTERVAL))
        return sum_w1_to_reference(sorted_groups, t)
    weights = enc.counts if group_weights == "proportional" else None
    return sum_w1_to_barycenter(sorted_groups, weights)


def sum_w1_to_barycenter(sorted_groups: list[np.ndarray], weights: Any = None) -> float:
    """Sum of exact W1 distances from each sorted group sample to their W1 barycenter."""
    bary, mass, group_q, _ = barycenter_distribution(
        sorted_groups, weights, p=1, assume_sorted=True
    )
    return float(sum(mass @ np.abs(q - bary) for q in group_q))


def sum_w1_to_reference(sorted_groups: list[np.ndarray], reference: np.ndarray) -> float:
    """Sum of exact W1 distances from each sorted group sample to one sorted reference."""
    return float(sum(_wasserstein_sorted(g, reference, 1.0) for g in sorted_groups))


def sum_pairwise_w1(sorted_groups: list[np.ndarray]) -> float:
    """Sum of exact W1 distances over unordered pairs of sorted group samples."""
    return float(
        sum(_wasserstein_sorted(a, b, 1.0) for a, b in itertools.combinations(sorted_groups, 2))
    )


def strong_demographic_disparity(
    scores: ArrayLike,
    sensitive_features: Any,
    *,
    groups: GroupsMode = "intersection",
) -> float:
    r"""Strong demographic disparity (the COT paper's SDD).

    .. math::

        \mathrm{SDD} = \sum_{a} \mathbb{E}_{\tau \sim U[0,1]}
        \big|P(S_a > \tau) - P(S > \tau)\big|
        = \sum_a \int_0^1 |F_a(\tau) - F(\tau)|\,d\tau,

    with :math:`F_a` the ECDF of group :math:`a`'s scores and :math:`F` the pooled ECDF. For
    scores in [0, 1] each integral is exactly :math:`W_1(p_{S_a}, p_S)`, which is how it is
    computed.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Scores in [0, 1].
    sensitive_features : array-like or DataFrame
        Group membership.
    groups : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.

    Returns
    -------
    float
    """
    s, _, sorted_groups = _group_scores(scores, sensitive_features, groups)
    return sum_w1_to_reference(sorted_groups, np.sort(s))


def strong_pairwise_demographic_disparity(
    scores: ArrayLike,
    sensitive_features: Any,
    *,
    groups: GroupsMode = "intersection",
) -> float:
    r"""Strong pairwise demographic disparity (the COT paper's SPDD).

    .. math::

        \mathrm{SPDD} = \tfrac12 \sum_{a, \bar a} \mathbb{E}_{\tau \sim U[0,1]}
        \big|P(S_a > \tau) - P(S_{\bar a} > \tau)\big|,

    the sum over ordered pairs halved, i.e. each unordered pair once. With two groups it equals
    :func:`strong_demographic_disparity`.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Scores in [0, 1].
    sensitive_features : array-like or DataFrame
        Group membership.
    groups : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.

    Returns
    -------
    float
    """
    _, _, sorted_groups = _group_scores(scores, sensitive_features, groups)
    return sum_pairwise_w1(sorted_groups)
