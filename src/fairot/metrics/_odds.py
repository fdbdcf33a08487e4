r"""Strong equalized odds and strong equal opportunity: demographic parity given the label.

Strong demographic parity asks the score distribution of every group to be the same; strong
equalized odds asks it *given the label*: for each :math:`y \in \{0, 1\}`, the scores of group
:math:`a` among the rows with :math:`Y = y` follow a common distribution :math:`\bar p_y`.
Strong equal opportunity asks it for :math:`y = 1` only. The disparities mirror the COT paper's
SDD and SPDD label by label,

.. math::

    \mathrm{SEOD} = \sum_{y} \sum_a W_1(p_{S \mid a, y}, \bar p_y), \qquad
    \mathrm{SPEOD} = \sum_{y} \sum_{a < b} W_1(p_{S \mid a, y}, p_{S \mid b, y}),

and, because in one dimension :math:`W_1(p, q) = \int_0^1 |F_p(t) - F_q(t)|\,dt`, with
:math:`P(S > t \mid a, Y = 1) = \mathrm{TPR}_a(t)` and :math:`P(S > t \mid a, Y = 0) =
\mathrm{FPR}_a(t)`, each term is the gap of true (or false) positive rates integrated over
every threshold :math:`t` (``docs/metrics.md`` has the derivation and the choice of weights).

Internal surface (none: the public names are re-exported by :mod:`fairot.metrics`).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from fairot.metrics._calling import group_metric, sorted_group_samples, sorted_sample
from fairot.metrics.checks import UNIT_INTERVAL, check_binary_labels
from fairot.metrics.reductions import (
    sum_of_distances,
    sum_pairwise_w1,
    sum_w1_to_barycenter,
)
from fairot.transport import wasserstein_sorted
from fairot.utils.arrays import check_array_1d, check_consistent_length, check_sample_weight
from fairot.utils.groups import GroupsMode
from fairot.utils.sensitive import check_sensitive_features

MSG_EMPTY_CELL = (
    "group {group!r} has no rows with label y_true={label} (the strong {criterion} disparity "
    "compares the groups' scores given each label); merge small groups or use the demographic "
    "disparity."
)
MSG_TARGET = "target must be 'pooled' or 'barycenter'; got {value!r}."

Target = Literal["pooled", "barycenter"]
EQUALIZED_ODDS_LABELS = (0, 1)
EQUAL_OPPORTUNITY_LABELS = (1,)


def _label_cells(
    y_true: Any,
    y_pred: Any,
    sensitive_features: Any,
    sample_weight: Any,
    group_mode: GroupsMode,
    labels: tuple[int, ...],
    criterion: str,
):
    """Per label: the groups' sorted (weighted) scores given the label and the label's rows."""
    y = check_binary_labels(y_true)
    s = check_array_1d(y_pred, "scores", bounds=UNIT_INTERVAL)
    check_consistent_length(y_true=y, y_pred=s)
    enc = check_sensitive_features(sensitive_features, s.shape[0], group_mode=group_mode)
    w = check_sample_weight(sample_weight, s.shape[0])
    cells = []
    for label in labels:
        rows = [idx[y[idx] == label] for idx in enc.indices()]
        for idx, name in zip(rows, enc.names, strict=True):
            if idx.shape[0] == 0:
                raise ValueError(
                    MSG_EMPTY_CELL.format(group=name, label=label, criterion=criterion)
                )
        xs, ws = sorted_group_samples(s, rows, w, [f"{n}, y={label}" for n in enc.names])
        pooled = np.flatnonzero(y == label)
        cells.append((xs, ws, s[pooled], None if w is None else w[pooled]))
    return cells


def _to_target(cells, target: Any) -> float:
    if target not in ("pooled", "barycenter"):
        raise ValueError(MSG_TARGET.format(value=target))
    total = 0.0
    for xs, ws, pooled, pooled_w in cells:
        if target == "barycenter":
            total += sum_w1_to_barycenter(xs, None, ws)
        else:
            p, pw = sorted_sample(pooled, pooled_w)
            total += sum_of_distances(
                wasserstein_sorted(g, p, 1.0, gw, pw) for g, gw in zip(xs, ws, strict=True)
            )
    return total


def _pairwise(cells) -> float:
    return sum_of_distances(sum_pairwise_w1(xs, ws) for xs, ws, _, _ in cells)


@group_metric("y_true", "y_pred", labels_optional=False, backend=False)
def strong_equalized_odds_disparity(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    sample_weight: ArrayLike | None = None,
    target: Target = "pooled",
    group_mode: GroupsMode = "intersection",
) -> float:
    r"""Strong equalized odds disparity: SDD within each label, summed over the labels.

    .. math::

        \mathrm{SEOD} = \sum_{y \in \{0, 1\}} \sum_a W_1(p_{S \mid a, y}, \bar p_y)
        = \sum_a \int_0^1 |\mathrm{TPR}_a(t) - \overline{\mathrm{TPR}}(t)|
          + |\mathrm{FPR}_a(t) - \overline{\mathrm{FPR}}(t)|\,dt,

    with :math:`\mathrm{TPR}_a(t) = P(S > t \mid A = a, Y = 1)`,
    :math:`\mathrm{FPR}_a(t) = P(S > t \mid A = a, Y = 0)` and the bars the rates of the target
    :math:`\bar p_y`: the pooled scores of the rows with :math:`Y = y` (``target="pooled"``,
    SDD's choice, so the integrand is the gap of the group's rates to the overall rates), or
    the equal-weight :math:`W_1` barycenter of the groups given :math:`Y = y`
    (``target="barycenter"``, the target of the in-processing ``constraint="equalized_odds"``;
    see :func:`fairot.metrics.wass1`). Every (group, label) cell has weight 1, as every group
    in SDD. Zero exactly when every group has the same score distribution within each label
    (strong equalized odds), hence the same TPR and FPR at every threshold.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels in {0, 1} (required: the criterion conditions on them).
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1].
    sensitive_features : array-like or DataFrame
        Group membership (a required keyword).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights (weighted ECDFs, the pooled ones included).
    target : {"pooled", "barycenter"}, default="pooled"
        :math:`\bar p_y`, as above.
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        When a group has no rows of one label (its rates given that label are undefined).

    See Also
    --------
    strong_pairwise_equalized_odds_disparity, strong_equal_opportunity_disparity
    strong_demographic_disparity : the same without conditioning on the label.

    Examples
    --------
    Group a's positives score 0.5 lower than the pooled positives' median, its negatives agree
    with group b's:

    >>> from fairot.metrics import strong_equalized_odds_disparity
    >>> y = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> s = [0.2, 0.4, 0.1, 0.3, 0.7, 0.9, 0.1, 0.3]
    >>> g = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> round(strong_equalized_odds_disparity(y, s, sensitive_features=g), 6)
    0.5
    """
    cells = _label_cells(
        y_true,
        y_pred,
        sensitive_features,
        sample_weight,
        group_mode,
        EQUALIZED_ODDS_LABELS,
        "equalized odds",
    )
    return _to_target(cells, target)


@group_metric("y_true", "y_pred", labels_optional=False, backend=False)
def strong_equal_opportunity_disparity(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    sample_weight: ArrayLike | None = None,
    target: Target = "pooled",
    group_mode: GroupsMode = "intersection",
) -> float:
    r"""Strong equal opportunity disparity: SDD among the positives.

    .. math::

        \mathrm{SEOpD} = \sum_a W_1(p_{S \mid a, 1}, \bar p_1)
        = \sum_a \int_0^1 |\mathrm{TPR}_a(t) - \overline{\mathrm{TPR}}(t)|\,dt,

    the label-1 half of :func:`strong_equalized_odds_disparity` (same ``target`` choices).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels in {0, 1}.
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1].
    sensitive_features : array-like or DataFrame
        Group membership (a required keyword).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights.
    target : {"pooled", "barycenter"}, default="pooled"
        :math:`\bar p_1`: the pooled positives' scores or the groups' barycenter.
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.

    Returns
    -------
    float

    Examples
    --------
    >>> from fairot.metrics import strong_equal_opportunity_disparity
    >>> y = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> s = [0.2, 0.4, 0.1, 0.3, 0.7, 0.9, 0.1, 0.3]
    >>> g = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> round(strong_equal_opportunity_disparity(y, s, sensitive_features=g), 6)
    0.5
    """
    cells = _label_cells(
        y_true,
        y_pred,
        sensitive_features,
        sample_weight,
        group_mode,
        EQUAL_OPPORTUNITY_LABELS,
        "equal opportunity",
    )
    return _to_target(cells, target)


@group_metric("y_true", "y_pred", labels_optional=False, backend=False)
def strong_pairwise_equalized_odds_disparity(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    sample_weight: ArrayLike | None = None,
    group_mode: GroupsMode = "intersection",
) -> float:
    r"""Strong pairwise equalized odds disparity: SPDD within each label, summed over labels.

    .. math::

        \mathrm{SPEOD} = \sum_{y \in \{0, 1\}} \sum_{a < b} W_1(p_{S \mid a, y}, p_{S \mid b, y})
        = \sum_{a < b} \int_0^1 |\mathrm{TPR}_a(t) - \mathrm{TPR}_b(t)|
          + |\mathrm{FPR}_a(t) - \mathrm{FPR}_b(t)|\,dt.

    With two groups it equals :func:`strong_equalized_odds_disparity` with
    ``target="barycenter"`` (the barycenter of two distributions lies between them).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels in {0, 1}.
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
    >>> from fairot.metrics import strong_pairwise_equalized_odds_disparity
    >>> y = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> s = [0.2, 0.4, 0.1, 0.3, 0.7, 0.9, 0.1, 0.3]
    >>> g = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> round(strong_pairwise_equalized_odds_disparity(y, s, sensitive_features=g), 6)
    0.5
    """
    cells = _label_cells(
        y_true,
        y_pred,
        sensitive_features,
        sample_weight,
        group_mode,
        EQUALIZED_ODDS_LABELS,
        "equalized odds",
    )
    return _pairwise(cells)


@group_metric("y_true", "y_pred", labels_optional=False, backend=False)
def strong_pairwise_equal_opportunity_disparity(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    sample_weight: ArrayLike | None = None,
    group_mode: GroupsMode = "intersection",
) -> float:
    r"""Strong pairwise equal opportunity disparity: SPDD among the positives.

    .. math::

        \mathrm{SPEOpD} = \sum_{a < b} W_1(p_{S \mid a, 1}, p_{S \mid b, 1})
        = \sum_{a < b} \int_0^1 |\mathrm{TPR}_a(t) - \mathrm{TPR}_b(t)|\,dt.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels in {0, 1}.
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
    >>> from fairot.metrics import strong_pairwise_equal_opportunity_disparity
    >>> y = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> s = [0.2, 0.4, 0.1, 0.3, 0.7, 0.9, 0.1, 0.3]
    >>> g = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> round(strong_pairwise_equal_opportunity_disparity(y, s, sensitive_features=g), 6)
    0.5
    """
    cells = _label_cells(
        y_true,
        y_pred,
        sensitive_features,
        sample_weight,
        group_mode,
        EQUAL_OPPORTUNITY_LABELS,
        "equal opportunity",
    )
    return _pairwise(cells)
