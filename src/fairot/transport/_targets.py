r"""The target distribution :math:`p_{\bar S}` that every group's scores are moved to."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairot.transport._barycenter import barycenter_quantiles
from fairot.transport._quantiles import midpoint_grid, quantile_function
from fairot.utils.arrays import MSG_EMPTY, check_scores
from fairot.utils.groups import GroupEncoding

MSG_TARGET = (
    "target must be 'barycenter', the label or name of one group, or an array of target scores "
    "in [0, 1]; got {value!r} (known groups: {known})."
)

# The barycenter is stored as quantiles on a midpoint grid; this many levels resolve it far below
# the Monte-Carlo noise of a mini-batch while keeping the table small.
MAX_TARGET_LEVELS = 10_000


def build_target(
    target: Any,
    scores: np.ndarray,
    encoding: GroupEncoding,
    sample_weight: np.ndarray | None = None,
) -> np.ndarray:
    r"""Sorted samples of the target distribution :math:`p_{\bar S}`.

    Parameters
    ----------
    target : "barycenter", group label or name, or array-like
        ``"barycenter"``: the :math:`W_1` barycenter of the groups' score distributions with equal
        group weights, i.e. at each rank :math:`u` the median of the group quantiles
        :math:`Q_a(u)` (the paper's target, Section "Fixed Level of Unfairness"), evaluated on the
        midpoint grid with as many levels as the largest group (at most 10,000). A group label or
        name: that group's scores (the paper's "male outputs" target). An array: the target
        scores themselves.
    scores : ndarray of shape (n_samples,)
        Scores of the initial model on the training data.
    encoding : GroupEncoding
        The training groups.
    sample_weight : ndarray of shape (n_samples,), optional
        Weights of the training rows: the group quantiles are weighted, and a group's size
        (its number of grid levels) is the number of rows it stands for (its total weight for
        integer weights, so that they give the same target as rows repeated that many times;
        otherwise its total weight in units of its lightest row).

    Returns
    -------
    ndarray
        Sorted target samples in [0, 1], kept fixed while the model is adjusted.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.utils.sensitive import check_sensitive_features
    >>> groups = check_sensitive_features([0, 0, 1, 1])
    >>> build_target("barycenter", np.array([0.1, 0.3, 0.5, 0.7]), groups)
    array([0.3, 0.5])
    """
    rows = encoding.indices()
    weights = [None if sample_weight is None else sample_weight[r] for r in rows]
    if isinstance(target, str) and target == "barycenter":
        n_levels = int(
            min(max(_n_levels(r, w) for r, w in zip(rows, weights, strict=True)), MAX_TARGET_LEVELS)
        )
        u = midpoint_grid(n_levels)
        curves = np.stack(
            [quantile_function(scores[r], u, w) for r, w in zip(rows, weights, strict=True)]
        )
        return np.sort(barycenter_quantiles(curves, p=1))
    if isinstance(target, (str, int, tuple, np.integer)) and not isinstance(target, bool):
        try:
            g = encoding.index_of(target)
        except (ValueError, TypeError, KeyError):
            raise ValueError(MSG_TARGET.format(value=target, known=encoding.names)) from None
        if weights[g] is None:
            return np.sort(scores[rows[g]])
        # The weighted quantile function at the midpoint levels: with unit weights exactly the
        # sorted scores (level (k - 1/2)/n falls on the k-th sample).
        n_levels = int(
            min(_n_levels(rows[g], weights[g]), max(rows[g].shape[0], MAX_TARGET_LEVELS))
        )
        return quantile_function(scores[rows[g]], midpoint_grid(n_levels), weights[g])
    try:
        samples = check_scores(target, "target")
        if samples.size == 0:
            raise ValueError(MSG_EMPTY.format(name="target"))
    except ValueError as exc:
        raise ValueError(
            f"{MSG_TARGET.format(value=target, known=encoding.names)} ({exc})"
        ) from None
    return np.sort(samples)


def _n_levels(rows: np.ndarray, weights: np.ndarray | None) -> int:
    """A group's size: the number of rows it stands for.

    Its row count without weights; its total weight for integer weights (a row of weight
    ``k`` is ``k`` repeated rows, as in scikit-learn); otherwise its total weight in units of
    its lightest row (weights are then scale-free).
    """
    if weights is None:
        return int(rows.shape[0])
    positive = weights[weights > 0]
    if positive.size == 0:
        return 1
    if np.all(positive == np.round(positive)):
        return int(round(positive.sum()))
    # The slack only absorbs the rounding of the ratio.
    return max(1, int(np.ceil(positive.sum() / positive.min() - 1e-9)))
