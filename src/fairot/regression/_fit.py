"""The regressor's in-memory fit: inputs read, calibration split, score models, strata.

:meth:`WassersteinFairRegressor.fit` on in-memory data (Stage 1 of :mod:`._estimator`): read
and check the inputs, split the calibration rows (stratified by group, or by (stratum, group)
cell with ``control_features``), fit the score models and score the calibration set, then hand
the scores to the seam ``fit_from_group_statistics`` and, with strata, fit each stratum's
adjustment (:mod:`._strata`).

Internal surface of :mod:`._estimator`: :func:`fit_in_memory`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LinearRegression
from sklearn.utils.validation import _check_y, _num_samples, has_fit_parameter

from fairot.utils.arrays import check_sample_weight
from fairot.utils.groups import group_attributes, warn_small_groups
from fairot.utils.sensitive import check_sensitive_features, resolve_sensitive_features
from fairot.utils.strata import StrataFit, encode_strata

from ._inputs import check_X, split_calibration
from ._strata import MSG_CONTROL_CALIBRATION, fit_strata, split_labels
from .checks import (
    MSG_WEIGHTS_ESTIMATOR,
    MSG_WEIGHTS_OBSERVED,
    check_calibration_groups,
    is_observed_cost,
)
from .scores import fit_score_model, is_frozen, predict_scores


def fit_in_memory(
    model: Any,
    X: Any,
    y: Any,
    sensitive_features: Any,
    control_features: Any,
    weights: Any,
    calibration: Any,
) -> StrataFit | None:
    """Fit ``model`` (a ``WassersteinFairRegressor``) on in-memory data.

    Sets ``model``'s public fitted attributes (through ``fit_from_group_statistics`` for the
    adjustment) and returns the strata's record for ``model`` to keep (``None`` without
    ``control_features``).
    """
    X = check_X(model, X, reset=True)
    n_samples = _num_samples(X)
    y = np.asarray(_check_y(y, y_numeric=True, estimator=model), dtype=np.float64)
    if y.shape[0] != n_samples:
        raise ValueError(f"X has {n_samples} rows but y has {y.shape[0]}.")
    weights = check_sample_weight(weights, y.shape[0])
    sensitive_features, columns = resolve_sensitive_features(X, sensitive_features)
    groups = check_sensitive_features(sensitive_features, n_samples)
    strata = control_columns = None
    if control_features is not None:
        if calibration is not None:
            raise ValueError(MSG_CONTROL_CALIBRATION)
        control, control_columns = resolve_sensitive_features(
            X, control_features, name="control_features"
        )
        strata = encode_strata(control, n_samples)
    if is_observed_cost(model.cost) and weights is not None:
        raise ValueError(MSG_WEIGHTS_OBSERVED.format(cost=model.cost))
    model.groups_, model.group_names_ = group_attributes(groups)
    codes = groups.codes
    base = LinearRegression() if model.estimator is None else model.estimator
    frozen = is_frozen(base)
    if weights is not None and not frozen and not has_fit_parameter(base, "sample_weight"):
        raise ValueError(MSG_WEIGHTS_ESTIMATOR.format(name=type(base).__name__))
    labels = split_labels(codes, None if strata is None else strata.codes, groups.n_groups)
    train, w_train, (X_cal, y_cal, codes_cal, w_cal), cal_rows = split_calibration(
        model,
        X,
        y,
        codes,
        weights,
        frozen=frozen,
        calibration=calibration,
        encoding=groups,
        stratify=labels,
    )
    if frozen:
        estimators = [base]
    else:
        members = (
            [train[codes[train] == s] for s in range(groups.n_groups)]
            if model.groupwise
            else [train]
        )
        estimators = [fit_score_model(clone(base), X, y, w_train, rows) for rows in members]
    # before scoring, so that a too small calibration set fails fast
    check_calibration_groups(codes_cal, model.group_names_, sample_weight=w_cal)
    warn_small_groups(groups.counts, model.group_names_, stacklevel=3)  # usable, yet small
    scores, precision = predict_scores(estimators, X_cal, codes_cal, with_precision=True)
    model.fit_from_group_statistics(
        scores,
        codes_cal,
        encoding=groups,
        estimators=estimators,
        sample_weight=w_cal,
        responses=y_cal,
        precision=precision,
        sensitive_columns=columns,
    )
    if strata is None:
        return None
    fitted_strata, model.stratum_maps_ = fit_strata(
        model,
        scores,
        codes_cal,
        strata.codes[cal_rows],
        strata,
        encoding=groups,
        sensitive_columns=columns,
        sample_weight=w_cal,
        responses=y_cal,
        precision=precision,
        columns=control_columns,
        stacklevel=3,
    )
    model.strata_, model.pooled_strata_ = fitted_strata.labels, fitted_strata.pooled_names
    return fitted_strata
