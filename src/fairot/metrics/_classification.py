"""Fairness metrics of the COT paper: Err-.5, Wass1, SDD and SPDD (Section "Results")."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from fairot.metrics._calling import (
    check_labels_length,
    group_metric,
    sorted_group_samples,
    sorted_sample,
)
from fairot.metrics.checks import (
    UNIT_INTERVAL,
    check_binary_labels,
    check_group_weights,
    check_threshold,
)
from fairot.metrics.reductions import (
    sum_of_distances,
    sum_pairwise_w1,
    sum_w1_to_barycenter,
    sum_w1_to_reference,
)
from fairot.transport import wasserstein_sorted
from fairot.utils.arrays import check_array_1d, check_consistent_length, check_sample_weight
from fairot.utils.groups import GroupEncoding, GroupsMode
from fairot.utils.sensitive import check_sensitive_features


def error_rate(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    threshold: float = 0.5,
    sample_weight: ArrayLike | None = None,
) -> float:
    r"""Classification error at a threshold (the COT paper's Err-.5).

    .. math:: \mathrm{Err}_\tau = \frac1N \sum_n \mathbb{1}\{\mathbb{1}\{s^n > \tau\} \ne y^n\}

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels in {0, 1}.
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1] (estimates of :math:`P(Y = 1 \mid A, X)`), or hard 0/1 predictions; a
        sample is predicted positive when its score is strictly above ``threshold``.
    threshold : float, default=0.5
        Decision threshold :math:`\tau` (a keyword, as every option of the metrics).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights; the error is then the weighted share.

    Returns
    -------
    float
        Share of misclassified samples.

    Examples
    --------
    A per-group metric: it takes no groups, so it works as a fairlearn ``MetricFrame`` metric as
    it is:

    >>> from fairot.metrics import error_rate
    >>> error_rate([0, 1, 1, 0], [0.2, 0.7, 0.4, 0.9])
    0.5
    """
    threshold = check_threshold(threshold)
    y = check_binary_labels(y_true)
    s = check_array_1d(y_pred, "scores", bounds=UNIT_INTERVAL)
    check_consistent_length(y_true=y, scores=s)
    w = check_sample_weight(sample_weight, s.shape[0])
    return float(np.average((s > threshold).astype(int) != y, weights=w))


def _group_samples(
    y_pred: Any,
    sensitive_features: Any,
    sample_weight: Any,
    group_mode: GroupsMode,
    bounds: tuple[float, float] | None = UNIT_INTERVAL,
) -> tuple[np.ndarray, np.ndarray | None, GroupEncoding, list[np.ndarray], list]:
    """Validated scores, weights, groups and each group's sorted (weighted) sample."""
    s = check_array_1d(y_pred, "scores" if bounds else "y_pred", bounds=bounds)
    enc = check_sensitive_features(sensitive_features, s.shape[0], group_mode=group_mode)
    w = check_sample_weight(sample_weight, s.shape[0])
    xs, ws = sorted_group_samples(s, enc.indices(), w, enc.names)
    return s, w, enc, xs, ws


@group_metric("y_true", "y_pred")
def wass1(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    reference: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    group_weights: Literal["uniform", "proportional"] = "uniform",
    group_mode: GroupsMode = "intersection",
) -> float:
    r"""Sum over groups of the W1 distance to a target distribution (the COT paper's Wass1).

    .. math:: \mathrm{Wass1} = \sum_{a \in \mathcal A} W_1(p_{S_a}, p_{\bar S})

    The paper's :math:`p_{\bar S}` is a fixed target: the barycenter of the groups' training
    scores at the logistic start :math:`\theta^*` (Algorithm 1 of [1]_), which every fairot
    classifier stores as ``target_samples_``; pass it as ``reference`` to measure Table 1's
    Wass1. Without ``reference``, :math:`p_{\bar S}` is the :math:`W_1` barycenter of the
    evaluated groups themselves, whose quantile function is, at each rank :math:`u`, the median
    of the group quantiles :math:`Q_a(u)` with equal group weights, computed exactly on the
    joint breakpoints of the group quantile functions. For two groups, or for complementary
    marginal groups, that second value equals :func:`strong_demographic_disparity` exactly.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Labels; unused (the metric compares score distributions), checked for length when
        given, so that the call is fairlearn's ``metric(y_true, y_pred, *, sensitive_features)``.
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1].
    sensitive_features : array-like or DataFrame
        Group membership: one column, or several (see ``group_mode``); a required keyword.
    reference : array-like, optional
        Samples of a fixed target distribution, e.g. a fitted estimator's ``target_samples_``.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights: each group is then a weighted empirical distribution.
    group_weights : {"uniform", "proportional"}, default="uniform"
        Weights of the groups in the barycenter's median; ``"proportional"`` uses group sizes
        (total sample weight), which pulls the barycenter towards the largest group.
    group_mode : {"intersection", "marginal"}, default="intersection"
        ``"marginal"`` makes each value of each column a group (overlapping groups).

    Returns
    -------
    float
        The sum of distances.

    References
    ----------
    .. [1] Chiappa and Pacchiano, "Fairness with continuous optimal transport", seed paper 000.

    Examples
    --------
    >>> from fairot.metrics import wass1
    >>> scores, groups = [0.1, 0.3, 0.6, 0.8], ["a", "a", "b", "b"]
    >>> round(wass1(None, scores, sensitive_features=groups), 6)
    0.5
    >>> round(wass1(None, scores, sensitive_features=groups, reference=[0.0, 0.0]), 6)
    0.9
    >>> wass1(scores, groups)
    Traceback (most recent call last):
    ...
    TypeError: wass1 takes fairlearn's form wass1(y_true, y_pred, *, sensitive_features, ...
    """
    check_group_weights(group_weights)
    check_labels_length(y_true, y_pred)
    _, w, enc, xs, ws = _group_samples(y_pred, sensitive_features, sample_weight, group_mode)
    if reference is not None:
        t = np.sort(check_array_1d(reference, "reference", bounds=UNIT_INTERVAL))
        return sum_w1_to_reference(xs, t, ws)
    if group_weights == "uniform":
        weights = None
    elif w is None:
        weights = enc.counts
    else:
        weights = np.array([w[idx].sum() for idx in enc.indices()])
    return sum_w1_to_barycenter(xs, weights, ws)


@group_metric("y_true", "y_pred")
def strong_demographic_disparity(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    sample_weight: ArrayLike | None = None,
    group_mode: GroupsMode = "intersection",
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
    y_true : array-like of shape (n_samples,) or None
        Labels, unused (see :func:`wass1`).
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1].
    sensitive_features : array-like or DataFrame
        Group membership (a required keyword).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights (weighted ECDFs, pooled one included).
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.

    Returns
    -------
    float

    Examples
    --------
    >>> from fairot.metrics import strong_demographic_disparity
    >>> scores, groups = [0.1, 0.3, 0.6, 0.8], ["a", "a", "b", "b"]
    >>> round(strong_demographic_disparity(None, scores, sensitive_features=groups), 6)
    0.5
    """
    check_labels_length(y_true, y_pred)
    s, w, _, xs, ws = _group_samples(y_pred, sensitive_features, sample_weight, group_mode)
    pooled, pooled_w = sorted_sample(s, w)
    return sum_of_distances(
        wasserstein_sorted(g, pooled, 1.0, gw, pooled_w) for g, gw in zip(xs, ws, strict=True)
    )


@group_metric("y_true", "y_pred")
def strong_pairwise_demographic_disparity(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    sample_weight: ArrayLike | None = None,
    group_mode: GroupsMode = "intersection",
) -> float:
    r"""Strong pairwise demographic disparity (the COT paper's SPDD).

    .. math::

        \mathrm{SPDD} = \tfrac12 \sum_{a, \bar a} \mathbb{E}_{\tau \sim U[0,1]}
        \big|P(S_a > \tau) - P(S_{\bar a} > \tau)\big|,

    the sum over ordered pairs halved, i.e. each unordered pair once. With two groups it equals
    :func:`strong_demographic_disparity`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Labels, unused (see :func:`wass1`).
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1].
    sensitive_features : array-like or DataFrame
        Group membership (a required keyword).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights.
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.

    Returns
    -------
    float

    Examples
    --------
    >>> from fairot.metrics import strong_pairwise_demographic_disparity
    >>> spdd = strong_pairwise_demographic_disparity
    >>> scores, groups = [0.1, 0.3, 0.6, 0.8, 0.5], ["a", "a", "b", "b", "c"]
    >>> round(spdd(None, scores, sensitive_features=groups), 6)
    1.0
    """
    check_labels_length(y_true, y_pred)
    _, _, _, xs, ws = _group_samples(y_pred, sensitive_features, sample_weight, group_mode)
    return sum_pairwise_w1(xs, ws)
