"""Residual averages that stay finite and exact at the ends of the float range.

Internal surface (plain names for the sibling modules of ``fairot.metrics``):
``residual_averages``.
"""

from __future__ import annotations

import math

import numpy as np

MSG_RESIDUAL_OVERFLOW = (
    "y_true - y_pred averages to more than the float maximum (about 1.8e308) in some group; "
    "rescale y_true and y_pred (e.g. divide both by 2) to get finite MAE/RMSE."
)


def _power_of_two(largest: float) -> float:
    # A power of two makes the division exact (no rounding), unlike dividing by ``largest``;
    # 2**(e - 1) <= largest < 2**e, and 2**(e - 1) is representable even at the float maximum.
    if largest == 0.0 or not math.isfinite(largest):
        return 1.0
    return math.ldexp(1.0, math.frexp(largest)[1] - 1)


def residual_averages(
    y: np.ndarray, pred: np.ndarray, member: np.ndarray, size: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the per-group MAE, RMSE and mean residual of ``y - pred``.

    Parameters
    ----------
    y, pred : ndarray of shape (n_replicates, n_samples)
        Responses and predictions.
    member : ndarray of shape (n_samples, n_groups)
        Group membership (0/1).
    size : ndarray of shape (n_groups,) or (n_replicates, n_groups)
        Members per group.

    Returns
    -------
    mae, rmse, mean_residual : ndarray of shape (n_replicates, n_groups)

    Notes
    -----
    Both arrays are divided by one power of two near their largest magnitude first, so the
    difference cannot overflow (``1.7e308 - (-1.7e308)``) and its square cannot overflow at
    1e300 nor underflow to 0 at 1e-300; the averages are scaled back at the end. Where the true
    average exceeds the float range a ``ValueError`` says so.
    """
    largest = max(float(np.max(np.abs(y), initial=0.0)), float(np.max(np.abs(pred), initial=0.0)))
    scale = _power_of_two(largest)
    residual = y / scale - pred / scale
    unit_mae = np.abs(residual) @ member / size
    unit_rmse = np.sqrt((residual * residual) @ member / size)
    unit_mean = residual @ member / size
    # The true average is above the float maximum only when scaling back would overflow: say so
    # instead of returning inf with a stray RuntimeWarning.
    limit = np.finfo(float).max / scale if scale > 1.0 else np.inf
    if np.any(unit_mae > limit) or np.any(unit_rmse > limit):
        raise ValueError(MSG_RESIDUAL_OVERFLOW)
    return unit_mae * scale, unit_rmse * scale, unit_mean * scale
