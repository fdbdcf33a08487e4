r"""The target distribution :math:`p_{\bar S}` that every group's scores are moved to."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairot._validation import GroupEncoding, check_array_1d
from fairot.transport import barycenter_quantiles, midpoint_grid, quantile_function

MSG_TARGET = (
    "target must be 'barycenter', the label or name of one group, or an array of target scores "
    "in [0, 1]; got {value!r} (known groups: {known})."
)

# The barycenter is stored as quantiles on a midpoint grid; this many levels resolve it far below
# the Monte-Carlo noise of a mini-batch while keeping the table small.
MAX_TARGET_LEVELS = 10_000


def build_target(target: Any, scores: np.ndarray, encoding: GroupEncoding) -> np.ndarray:
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

    Returns
    -------
    ndarray
        Sorted target samples in [0, 1], kept fixed while the model is adjusted.
    """
    if isinstance(target, str) and target == "barycenter":
        n_levels = int(min(encoding.counts.max(), MAX_TARGET_LEVELS))
        u = midpoint_grid(n_levels)
        curves = np.stack([quantile_function(scores[rows], u) for rows in encoding.indices()])
        return np.sort(barycenter_quantiles(curves, p=1))
    if isinstance(target, (str, int, tuple, np.integer)) and not isinstance(target, bool):
        try:
            g = encoding.index_of(target)
        except (ValueError, TypeError, KeyError):
            raise ValueError(MSG_TARGET.format(value=target, known=encoding.names)) from None
        return np.sort(scores[encoding.membership[:, g]])
    try:
        samples = check_array_1d(target, "target", bounds=(0.0, 1.0))
    except ValueError as exc:
        raise ValueError(
            f"{MSG_TARGET.format(value=target, known=encoding.names)} ({exc})"
        ) from None
    return np.sort(samples)
