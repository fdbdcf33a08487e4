r"""Wasserstein barycenters of one-dimensional distributions.

In one dimension the :math:`W_2` barycenter of :math:`K` distributions with weights :math:`r_a` has
quantile function :math:`\sum_a r_a Q_a(u)` and the :math:`W_1` barycenter has, at each rank
:math:`u`, the :math:`r`-weighted median of the :math:`Q_a(u)` (Jiang et al. 2019, used as the COT
paper's target distribution).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from fairot.transport._coupling import joint_quantile_cells
from fairot.transport._quantiles import MASS_TOLERANCE
from fairot.utils.arrays import check_array_1d, check_sample_weight

MSG_CURVES = "curves must be a 2-D array of shape (n_groups, n_levels); got shape {shape}."
MSG_BARY_P = "p must be 1 (weighted median) or 2 (weighted mean); got {value!r}."
MSG_GROUP_WEIGHTS = "weights must hold one non-negative weight per group ({k}) with a positive sum."
MSG_SAMPLE_WEIGHTS = "sample_weights must hold one entry per sample ({k} groups); got {got}."


def _check_group_weights(weights: ArrayLike | None, k: int) -> np.ndarray:
    if weights is None:
        return np.full(k, 1.0 / k)
    w = check_array_1d(weights, "weights")
    if w.shape[0] != k or np.any(w < 0) or not w.sum() > 0:
        raise ValueError(MSG_GROUP_WEIGHTS.format(k=k))
    return w / w.sum()


def weighted_median(values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    r"""Weighted median along axis 0, averaging the two middle values on an exact tie.

    With equal weights this is :func:`numpy.median`. Any point between the lower and upper
    weighted medians minimises :math:`\sum_a r_a |Q_a - x|`; taking their midpoint keeps the
    result symmetric in the group order.

    Parameters
    ----------
    values : numpy.ndarray of shape (K, ...)
        Values to take the median of, along the first axis.
    weights : numpy.ndarray of shape (K,), optional
        Non-negative weights summing to 1.

    Returns
    -------
    numpy.ndarray of shape values.shape[1:]

    Examples
    --------
    An exact tie (weights 1/2, 1/2 between 1 and 3) gives the midpoint:

    >>> import numpy as np
    >>> from fairot.transport import weighted_median
    >>> values = np.array([[1.0, 2.0], [3.0, 4.0], [10.0, 0.0]])
    >>> weighted_median(values).tolist()
    [3.0, 2.0]
    >>> weighted_median(values, np.array([0.5, 0.5, 0.0])).tolist()
    [2.0, 3.0]
    """
    if weights is None or np.allclose(weights, weights[0]):
        return np.median(values, axis=0)
    order = np.argsort(values, axis=0, kind="stable")
    sorted_values = np.take_along_axis(values, order, axis=0)
    cum = np.cumsum(weights[order], axis=0)
    lower = np.argmax(cum >= 0.5 - MASS_TOLERANCE, axis=0)
    upper = np.argmax(cum > 0.5 + MASS_TOLERANCE, axis=0)
    lo = np.take_along_axis(sorted_values, lower[None], axis=0)[0]
    hi = np.take_along_axis(sorted_values, upper[None], axis=0)[0]
    return 0.5 * (lo + hi)


def barycenter_quantiles(
    curves: ArrayLike,
    weights: ArrayLike | None = None,
    *,
    p: int = 1,
) -> np.ndarray:
    r"""Quantile curve of the Wasserstein barycenter of several groups.

    Parameters
    ----------
    curves : array-like of shape (n_groups, n_levels)
        Quantile curves :math:`Q_a(u_k)` of the groups on a common grid of ranks.
    weights : array-like of shape (n_groups,), optional
        Group weights :math:`r_a` (equal by default); normalised to sum to 1.
    p : {1, 2}, default=1
        ``1``: the :math:`W_1` barycenter, weighted median of the quantiles at each rank.
        ``2``: the :math:`W_2` barycenter, weighted mean :math:`\sum_a r_a Q_a(u)`.

    Returns
    -------
    numpy.ndarray of shape (n_levels,)
        The barycenter's quantile curve (nondecreasing when the inputs are).

    Examples
    --------
    >>> from fairot.transport import barycenter_quantiles
    >>> barycenter_quantiles([[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]], p=2).tolist()
    [1.0, 2.0, 3.0]
    >>> barycenter_quantiles([[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]], weights=[3, 1], p=2).tolist()
    [0.5, 1.5, 2.5]
    """
    q = np.array(curves, dtype=float, copy=True)
    if q.ndim != 2:
        raise ValueError(MSG_CURVES.format(shape=q.shape))
    if not np.all(np.isfinite(q)):
        raise ValueError("curves contains NaN or infinite values.")
    w = _check_group_weights(weights, q.shape[0])
    if p == 2:
        return w @ q
    if p == 1:
        return weighted_median(q, w)
    raise ValueError(MSG_BARY_P.format(value=p))


def barycenter_distribution(
    samples: Sequence[ArrayLike],
    weights: ArrayLike | None = None,
    *,
    p: int = 1,
    sample_weights: Sequence[ArrayLike | None] | None = None,
    assume_sorted: bool = False,
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], np.ndarray]:
    """Exact barycenter of several empirical distributions, as a weighted sample.

    The group quantile functions are step functions, constant on the cells between their joint
    breakpoints; the barycenter is evaluated on each cell, so no grid approximation is made.

    Parameters
    ----------
    samples : sequence of array-like
        One sample per group (sizes may differ).
    weights : array-like of shape (n_groups,), optional
        Group weights (equal by default).
    p : {1, 2}, default=1
        Barycenter for :math:`W_1` (weighted median) or :math:`W_2` (weighted mean).
    sample_weights : sequence of array-like or None, optional
        Non-negative weights of each group's samples (``None`` entries: equal weights), so that
        each group is a weighted empirical distribution.
    assume_sorted : bool, default=False
        Skip validation and sorting when every sample is an already sorted float array (and its
        sample weights, if any, are validated and in the same order).

    Returns
    -------
    values : numpy.ndarray of shape (n_cells,)
        Barycenter support points, nondecreasing.
    mass : numpy.ndarray of shape (n_cells,)
        Probability mass of each support point.
    group_quantiles : list of numpy.ndarray
        Each group's quantile on the same cells (so :math:`W_p` from any group to the barycenter is
        ``(mass @ abs(group_quantiles[a] - values) ** p) ** (1/p)``).
    cell_ends : numpy.ndarray of shape (n_cells,)
        Right end of each cell on the rank axis.

    Examples
    --------
    The :math:`W_2` barycenter of {0, 2} and {1, 3} puts mass 1/2 on each mean of matched
    quantiles:

    >>> from fairot.transport import barycenter_distribution
    >>> values, mass, group_quantiles, cell_ends = barycenter_distribution(
    ...     [[0.0, 2.0], [1.0, 3.0]], p=2
    ... )
    >>> values.tolist(), mass.tolist(), cell_ends.tolist()
    ([0.5, 2.5], [0.5, 0.5], [0.5, 1.0])
    """
    ws = [None] * len(samples) if sample_weights is None else list(sample_weights)
    if len(ws) != len(samples):
        raise ValueError(MSG_SAMPLE_WEIGHTS.format(k=len(samples), got=len(ws)))
    if assume_sorted:
        xs = list(samples)
    else:
        xs, sorted_ws = [], []
        for i, (s, w) in enumerate(zip(samples, ws, strict=True)):
            x = check_array_1d(s, f"samples[{i}]")
            w = check_sample_weight(w, x.shape[0], f"sample_weights[{i}]")
            order = np.argsort(x, kind="stable")
            xs.append(x[order])
            sorted_ws.append(None if w is None else w[order])
        ws = sorted_ws
    index, mass = joint_quantile_cells(xs, ws)
    group_q = np.stack([x[i] for x, i in zip(xs, index, strict=True)])
    values = barycenter_quantiles(group_q, weights, p=p)
    return values, mass, list(group_q), np.cumsum(mass)
