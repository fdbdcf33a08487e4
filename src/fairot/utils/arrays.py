"""Validation of 1-D arrays, lengths, sample weights and probability scores at the public boundary.

Every public function and estimator of fairot checks its inputs with these helpers, so that a user
sees one kind of message for one kind of mistake: the message names the argument and what was
expected.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

MSG_NAN = "{name} contains NaN or infinite values; remove or impute them first."
MSG_NOT_1D = "{name} must be one-dimensional (array-like of shape (n_samples,)); got shape {shape}."
MSG_EMPTY = "{name} is empty; at least one sample is needed."
MSG_NOT_NUMERIC = "{name} must be numeric; got values of dtype {dtype}."
MSG_OUT_OF_BOUNDS = "{name} must lie in [{low}, {high}]; got values in [{vmin}, {vmax}]."
MSG_LENGTH = "Found inconsistent numbers of samples: {lengths}."

MSG_WEIGHTS = (
    "{name} must be finite and non-negative with a positive sum; got {value!r} at row {row}."
)
MSG_WEIGHTS_SUM = "{name} must have a positive sum; all {n} weights are zero."
MSG_SCORE_NAN = "{name} must be finite probabilities; got {value!r} at row {row}."
MSG_SCORE_RANGE = (
    "{name} must lie in [0, 1] (values within {tol:g} of it are clipped); got {value!r} at row "
    "{row}."
)

# Scores computed in floating point (1 - p, a sigmoid, a calibrator) can leave [0, 1] by a few
# ulps; those are clipped, anything farther is a real error.
SCORE_TOLERANCE = 1e-9


def check_array_1d(
    x: Any,
    name: str,
    *,
    allow_nan: bool = False,
    bounds: tuple[float, float] | None = None,
    dtype: Any = float,
    allow_empty: bool = False,
) -> np.ndarray:
    """Return ``x`` as a new one-dimensional array, checked.

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        Input values; a list, NumPy array or pandas Series. A column vector of shape
        ``(n_samples, 1)`` is accepted and flattened.
    name : str
        Argument name used in error messages.
    allow_nan : bool, default=False
        Accept NaN and infinite values.
    bounds : tuple of float, optional
        Closed interval the values must lie in.
    dtype : data-type, default=float
        Numeric type of the result.
    allow_empty : bool, default=False
        Accept an empty array.

    Returns
    -------
    numpy.ndarray of shape (n_samples,)
        A copy: the caller's data is never modified by fairot.

    Raises
    ------
    ValueError
        On a wrong shape, non-numeric values, NaN, emptiness or values outside ``bounds``.
    """
    if isinstance(x, (pd.Series, pd.DataFrame)):
        x = x.to_numpy()
    try:
        arr = np.array(x, dtype=dtype, copy=True)
    except (TypeError, ValueError):
        raw = np.asarray(x)
        raise ValueError(MSG_NOT_NUMERIC.format(name=name, dtype=raw.dtype)) from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(MSG_NOT_1D.format(name=name, shape=arr.shape))
    if arr.size == 0 and not allow_empty:
        raise ValueError(MSG_EMPTY.format(name=name))
    if not allow_nan and arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(MSG_NAN.format(name=name))
    if bounds is not None and arr.size:
        low, high = bounds
        vmin, vmax = np.nanmin(arr), np.nanmax(arr)
        if vmin < low or vmax > high:
            raise ValueError(
                MSG_OUT_OF_BOUNDS.format(name=name, low=low, high=high, vmin=vmin, vmax=vmax)
            )
    return arr


def check_consistent_length(**arrays: Any) -> int:
    """Check that every named array has the same number of samples and return it.

    Parameters
    ----------
    **arrays
        Keyword arguments ``name=array``; ``None`` values are skipped.

    Returns
    -------
    int
        The common number of samples.

    Raises
    ------
    ValueError
        Naming each argument and its length when they differ.
    """
    lengths = {name: number_of_samples(a) for name, a in arrays.items() if a is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise ValueError(MSG_LENGTH.format(lengths=desc))
    return next(iter(lengths.values())) if lengths else 0


def number_of_samples(a: Any) -> int:
    """Length of the first axis of an array-like (``shape[0]``, ``len`` or ``__array__``)."""
    if hasattr(a, "shape") and len(a.shape) > 0:
        return int(a.shape[0])
    if hasattr(a, "__len__"):
        return len(a)
    return int(np.asarray(a).shape[0])  # objects exposing only __array__


def check_sample_weight(
    sample_weight: Any, n_samples: int, name: str = "sample_weight"
) -> np.ndarray | None:
    """Validate sample weights: one finite, non-negative weight per sample, positive sum.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        Weights; ``None`` means equal weights and is returned as is.
    n_samples : int
        Expected number of samples.
    name : str, default="sample_weight"
        Argument name used in error messages.

    Returns
    -------
    numpy.ndarray of shape (n_samples,) or None
        A float64 copy.

    Raises
    ------
    ValueError
        On a wrong length, a negative or non-finite weight (naming its row), or a zero sum.

    Examples
    --------
    >>> check_sample_weight([1, 2, 0], 3)
    array([1., 2., 0.])
    """
    if sample_weight is None:
        return None
    w = check_array_1d(sample_weight, name, allow_nan=True, allow_empty=True)
    if w.shape[0] != n_samples:
        raise ValueError(MSG_LENGTH.format(lengths=f"{name}={w.shape[0]}, samples={n_samples}"))
    bad = ~np.isfinite(w) | (w < 0)
    if np.any(bad):
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(MSG_WEIGHTS.format(name=name, value=float(w[row]), row=row))
    if n_samples and not w.sum() > 0:
        raise ValueError(MSG_WEIGHTS_SUM.format(name=name, n=n_samples))
    return w


def check_scores(
    scores: Any, name: str = "scores", *, tolerance: float = SCORE_TOLERANCE
) -> np.ndarray:
    """Validate probabilities: finite, in [0, 1] up to ``tolerance`` (clipped), as a copy.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Scores of the positive class.
    name : str, default="scores"
        Argument name used in error messages.
    tolerance : float, default=1e-9
        Values within this distance of [0, 1] are clipped into it (rounding of ``1 - p``).

    Returns
    -------
    numpy.ndarray of shape (n_samples,)
        The scores, clipped to [0, 1].

    Raises
    ------
    ValueError
        On a NaN, infinite or out-of-range score, printing the first offending value and row.

    Examples
    --------
    >>> check_scores([0.2, 1.0 + 1e-12, -1e-12])
    array([0.2, 1. , 0. ])
    """
    s = check_array_1d(scores, name, allow_nan=True, allow_empty=True)
    # NaN compares false, so "not inside" catches it along with the values out of range.
    bad = ~((s >= -tolerance) & (s <= 1.0 + tolerance))
    if np.any(bad):
        row = int(np.flatnonzero(bad)[0])
        message = MSG_SCORE_RANGE if np.isfinite(s[row]) else MSG_SCORE_NAN
        raise ValueError(message.format(name=name, tol=tolerance, value=float(s[row]), row=row))
    return np.clip(s, 0.0, 1.0, out=s)
