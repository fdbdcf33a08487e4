"""Residual averages that stay finite and exact at the ends of the float range.

Internal surface (plain names for the sibling modules of ``fairot.metrics``):
``residual_averages``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MSG_RESIDUAL_OVERFLOW = (
    "y_true - y_pred averages to more than the float maximum (about 1.8e308) in some group; "
    "rescale y_true and y_pred (e.g. divide both by 2) to get finite MAE/RMSE."
)


def residual_averages(
    y: np.ndarray, pred: np.ndarray, member: np.ndarray, weight: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the per-group MAE, RMSE and mean residual of ``y - pred``.

    Parameters
    ----------
    y, pred : ndarray of shape (n_replicates, n_samples)
        Responses and predictions.
    member : ndarray of shape (n_samples, n_groups)
        Group membership (0/1).
    weight : ndarray of shape (n_replicates, n_samples), optional
        Non-negative sample weights, a positive total in every group (``None``: unweighted).

    Returns
    -------
    mae, rmse, mean_residual : ndarray of shape (n_replicates, n_groups)

    Notes
    -----
    The residual is taken on halved values, so it cannot overflow (``1.7e308 - (-1.7e308)``),
    and each group's residuals are divided by a power of two near their largest magnitude
    before squaring, so squares neither overflow at 1e300 nor underflow to 0 at 1e-300; the
    averages are scaled back at the end. Where the true
    average exceeds the float range a ``ValueError`` says so.
    """
    largest = max(float(np.max(np.abs(y), initial=0.0)), float(np.max(np.abs(pred), initial=0.0)))
    # Halving is exact above the subnormal range, so y/2 - pred/2 cannot overflow and loses
    # nothing; below it the plain difference cannot overflow either.
    factor = 2.0 if largest > 1.0 else 1.0
    half = y / factor - pred / factor
    shape = (half.shape[0], member.shape[1])
    unit_mae, unit_rmse, unit_mean = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    scale = np.ones(shape)
    for g, inside in enumerate(_group_rows(member)):
        part = half[:, inside]
        average = _averaging(None if weight is None else weight[:, inside])
        # One power of two per group and replicate: a group of residuals near 1 beside one of
        # residuals near 1e308 keeps its own precision (its squares neither underflow nor overflow).
        top = np.max(np.abs(part), axis=1, initial=0.0)
        exponent = np.frexp(top)[1] - 1
        s_g = np.where(top > 0, np.ldexp(1.0, exponent), 1.0)
        unit = part / s_g[:, None]
        scale[:, g] = s_g
        unit_mae[:, g] = average(np.abs(unit))
        unit_rmse[:, g] = np.sqrt(average(unit * unit))
        unit_mean[:, g] = average(unit)
    # The true average is above the float maximum only when scaling back would overflow: say so
    # instead of returning inf with a stray RuntimeWarning.
    with np.errstate(over="ignore"):  # an infinite limit for tiny scales is the right one
        limit = np.finfo(float).max / factor / scale
    if np.any(unit_mae > limit) or np.any(unit_rmse > limit):
        raise ValueError(MSG_RESIDUAL_OVERFLOW)
    return (
        unit_mae * scale * factor,
        unit_rmse * scale * factor,
        unit_mean * scale * factor,
    )


def _group_rows(member: Any) -> list[np.ndarray]:
    """Each group's rows, in increasing order, from a dense or ``scipy.sparse`` membership."""
    if hasattr(member, "tocsc"):
        # A column of a compressed-column array is its slice of ``indices``: no dense column.
        csc = member.tocsc()
        csc.sort_indices()
        return [csc.indices[csc.indptr[g] : csc.indptr[g + 1]] for g in range(csc.shape[1])]
    return [np.flatnonzero(member[:, g] > 0) for g in range(member.shape[1])]


def _averaging(weight: np.ndarray | None):
    """The row-wise (weighted) mean over the samples of one group."""
    if weight is None:
        return lambda values: np.mean(values, axis=1)
    total = weight.sum(axis=1)
    return lambda values: np.sum(values * weight, axis=1) / total


def unit_scale(values: np.ndarray) -> float:
    """Return a power of two ``s`` with ``max|values| / s`` in [1, 2) (1.0 for all zeros).

    Dividing by it is exact, so distances of ``values / s`` times ``s`` are the distances of
    ``values`` without the overflow of their differences and squares at 1e300 and beyond.
    """
    largest = float(np.max(np.abs(values), initial=0.0))
    if largest == 0.0:
        return 1.0
    return float(np.ldexp(1.0, np.frexp(largest)[1] - 1))
