"""What the regressor reads of its inputs.

fairot reads only rows, width and column names of ``X``: the score model receives ``X`` as
given (strings, NaN, DataFrames), so that a ``Pipeline`` with its own preprocessing works.

Internal surface (plain names for :mod:`._estimator` and :mod:`._path`): :func:`check_X`,
:func:`encode_groups`, :func:`groups_or_columns`, :func:`check_calibration_set`,
:func:`split_calibration`, :class:`InputTagsMixin`.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split
from sklearn.utils import _safe_indexing, check_random_state, get_tags
from sklearn.utils.validation import (
    _check_feature_names,
    _check_n_features,
    _check_y,
    _num_samples,
    indexable,
)

from fairot.utils.arrays import check_sample_weight
from fairot.utils.sensitive import resolve_sensitive_features

from .checks import (
    MSG_CALIBRATION,
    MSG_FROZEN_CALIBRATION,
    MSG_WEIGHTS_OBSERVED,
    MSG_X_1D,
    check_group_sizes,
    is_observed_cost,
)


class InputTagsMixin:
    """Input tags of the wrapped ``estimator``: ``X`` reaches it untouched, so what it accepts."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        base = LinearRegression() if self.estimator is None else self.estimator
        inner = get_tags(base).input_tags
        tags.input_tags.allow_nan = inner.allow_nan
        tags.input_tags.string = inner.string
        tags.input_tags.sparse = inner.sparse
        tags.input_tags.categorical = inner.categorical
        return tags


def check_X(model: Any, X: Any, *, reset: bool) -> Any:
    """Index ``X``, and record (``reset``) or check its width and column names on ``model``."""
    X = indexable(X)[0]
    _check_feature_names(model, X, reset=reset)
    if reset:
        # a 1-D X (texts for a vectorizer pipeline) has no width; its model checks it
        with contextlib.suppress(TypeError):
            _check_n_features(model, X, reset=True)
    elif hasattr(model, "n_features_in_"):
        if np.ndim(X) == 1:
            raise ValueError(MSG_X_1D.format(n_features=model.n_features_in_))
        _check_n_features(model, X, reset=False)
    return X


def encode_groups(
    model: Any, X: Any, sensitive_features: Any, encoding: Any
) -> tuple[Any, np.ndarray]:
    """Checked ``X`` and the codes of its rows' groups in ``encoding`` (the groups of fit)."""
    X = check_X(model, X, reset=False)
    sensitive_features, _ = resolve_sensitive_features(X, sensitive_features)
    codes = encoding.encode(sensitive_features)
    n = _num_samples(X)
    if codes.shape[0] != n:
        raise ValueError(f"sensitive_features has {codes.shape[0]} rows but X has {n}.")
    return X, codes


def groups_or_columns(sensitive_features: Any, fitted_columns: Any) -> Any:
    """The groups given, else ``fitted_columns``: the columns of X that ``fit`` read them from.

    ``None`` when neither: the caller's own check then says that the groups are required.
    """
    return fitted_columns if sensitive_features is None else sensitive_features


def check_calibration_set(model: Any, calibration: Any, encoding: Any) -> tuple:
    """The explicit calibration set of ``fit``: ``(X, y, codes, sample_weight or None)``.

    Its groups are encoded, and its errors named, with fit's groups ``encoding``.
    """
    if not isinstance(calibration, (tuple, list)) or len(calibration) not in (3, 4):
        raise ValueError(MSG_CALIBRATION.format(value=type(calibration).__name__))
    X_cal, y_cal, sf_cal = calibration[:3]
    X_cal = check_X(model, X_cal, reset=False)
    n_cal = _num_samples(X_cal)
    y_cal = np.asarray(_check_y(y_cal, y_numeric=True, estimator=model), dtype=np.float64)
    if y_cal.shape[0] != n_cal:
        raise ValueError(f"calibration X has {n_cal} rows but calibration y has {y_cal.shape[0]}.")
    sf_cal, _ = resolve_sensitive_features(X_cal, sf_cal, name="calibration sensitive_features")
    codes_cal = encoding.encode(sf_cal, name="calibration sensitive_features")
    if codes_cal.shape[0] != n_cal:
        raise ValueError("calibration sensitive_features and X have different lengths.")
    w_cal = None
    if len(calibration) == 4 and calibration[3] is not None:
        if is_observed_cost(model.cost):
            raise ValueError(MSG_WEIGHTS_OBSERVED.format(cost=model.cost))
        w_cal = check_sample_weight(calibration[3], y_cal.shape[0], "calibration sample_weight")
    return X_cal, y_cal, codes_cal, w_cal


#: The most copies of rows that the calibration split of integer weights draws from (80 MB).
MAX_REPEATED_ROWS = 10_000_000


def split_calibration(
    model: Any,
    X: Any,
    y: np.ndarray,
    codes: np.ndarray,
    weights: np.ndarray | None,
    *,
    frozen: bool,
    calibration: Any,
    encoding: Any,
    stratify: np.ndarray | None = None,
) -> tuple[np.ndarray | None, np.ndarray | None, tuple, np.ndarray | None]:
    """The rows that train the score model, their weights, the calibration set, its positions.

    Returns ``(train, train_weights, (X, y, codes, weights), cal_rows)``; ``cal_rows`` (the
    calibration rows' positions in ``X``) is ``None`` for an explicit calibration set.

    A frozen model trains on nothing (``None``) and calibrates on all of ``X``; an explicit
    ``calibration`` set leaves all of ``X`` for training; else a split stratified by group (or
    by the labels ``stratify``), of ``model.calibration_size``, drawn with
    ``check_random_state(model.random_state)``.

    With integer ``sample_weight`` the split is drawn over the repeated rows (row ``i``
    counted ``w_i`` times, in the order of ``numpy.repeat``): a row's copies may fall on both
    sides, and it then trains with the weight of its training copies and calibrates with the
    weight of the others. So the fit with integer weights is the fit on
    ``numpy.repeat(X, w, axis=0)`` with the same ``random_state``: the same split, the same
    model.
    """
    n_samples = _num_samples(X)
    if frozen and calibration is not None:
        raise ValueError(MSG_FROZEN_CALIBRATION)
    if frozen:
        return None, None, (X, y, codes, weights), np.arange(n_samples)
    if calibration is not None:
        explicit = check_calibration_set(model, calibration, encoding)
        return np.arange(n_samples), weights, explicit, None
    labels = codes if stratify is None else stratify
    # the rows each unit of the split stands for: a row, or each copy of a row of whole weight
    copies = np.arange(n_samples)
    whole = (
        weights is not None
        and bool(np.all(weights == np.round(weights)))
        and weights.sum() <= MAX_REPEATED_ROWS
    )
    if whole:
        copies = np.repeat(copies, weights.astype(np.int64))
    n_groups = len(model.group_names_)
    check_group_sizes(np.bincount(codes[copies], minlength=n_groups), model.group_names_)
    train, cal = train_test_split(
        np.arange(copies.size),
        test_size=model.calibration_size,
        stratify=labels[copies],
        random_state=check_random_state(model.random_state),
    )
    if not whole:
        w_cal = None if weights is None else weights[cal]
        return train, weights, (_safe_indexing(X, cal), y[cal], codes[cal], w_cal), cal
    w_train = np.bincount(copies[train], minlength=n_samples).astype(np.float64)
    w_cal = np.bincount(copies[cal], minlength=n_samples).astype(np.float64)
    train, cal = np.flatnonzero(w_train), np.flatnonzero(w_cal)
    return train, w_train, (_safe_indexing(X, cal), y[cal], codes[cal], w_cal[cal]), cal
