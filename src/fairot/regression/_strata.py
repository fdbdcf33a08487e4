r"""The regressor within strata of ``control_features``: one adjustment per stratum.

The score model is fitted once, on all strata; the calibration split is stratified by
(stratum, group) cell when every cell has two rows or more (else by group). Each stratum whose
cells all have ``SMALL_GROUP_SIZE`` calibration rows or more then gets the adjustment that
:class:`WassersteinFairRegressor` would fit on that stratum's calibration rows alone: its own
latent curves, its own :math:`D_{\max}` (so ``tau`` is relative to the stratum's own gap) and
``epsilon`` bounding the stratum's own pairwise gaps. The other strata, and strata unseen at
prediction, follow ``small_strata`` (:mod:`fairot.utils.strata`): the adjustment of all strata
together, or an error.

Internal surface of :mod:`._estimator`: :func:`fit_strata`, :func:`strata_of_rows`,
:func:`split_labels`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone

from fairot.utils.strata import MSG_DASK_CONTROL as DASK_CONTROL
from fairot.utils.strata import (
    StrataFit,
    check_control_at_predict,
    report_small_strata,
    small_strata,
    strata_codes,
)

MSG_DASK_CONTROL = DASK_CONTROL.format(estimator="WassersteinFairRegressor")
MSG_CONTROL_CALIBRATION = (
    "control_features cannot be combined with an explicit calibration set (calibration=...); "
    "pass all rows as X, y (the calibration split is then stratified by stratum and group), "
    "or wrap a trained model in sklearn.frozen.FrozenEstimator."
)


def split_labels(codes: np.ndarray, strata: np.ndarray | None, n_groups: int) -> np.ndarray:
    """The labels the calibration split is stratified by.

    The (stratum, group) cells if each has two rows or more (``train_test_split`` needs two),
    else the groups.
    """
    if strata is None:
        return codes
    cells = strata * n_groups + codes
    if np.bincount(cells)[np.unique(cells)].min() >= 2:
        return cells
    return codes


def fit_strata(
    model: Any,
    scores: np.ndarray,
    codes: np.ndarray,
    stratum: np.ndarray,
    strata,
    *,
    encoding: Any,
    sensitive_columns: list[str] | None,
    sample_weight: np.ndarray | None,
    responses: np.ndarray,
    precision: float,
    columns: list[str] | None,
    stacklevel: int,
) -> tuple[StrataFit, list]:
    """Each large enough stratum's adjustment, fitted on its calibration rows alone.

    Returns the strata's record and, per stratum, a fitted ``WassersteinFairRegressor``
    (sharing ``model.estimators_``) or ``None`` for a stratum mapped by ``model`` itself.
    """
    reasons = small_strata(stratum, strata.names, codes, model.group_names_, sample_weight)
    report_small_strata(reasons, model.small_strata, stacklevel=stacklevel + 1)
    maps: list = []
    for s in range(strata.n_groups):
        if s in reasons:
            maps.append(None)
            continue
        rows = np.flatnonzero(stratum == s)
        sub = clone(model)
        sub.fit_from_group_statistics(
            scores[rows],
            codes[rows],
            encoding=encoding,
            estimators=model.estimators_,
            sample_weight=None if sample_weight is None else sample_weight[rows],
            responses=responses[rows],
            precision=precision,
            n_features_in=getattr(model, "n_features_in_", None),
            feature_names_in=getattr(model, "feature_names_in_", None),
            sensitive_columns=sensitive_columns,
        )
        maps.append(sub)
    fitted = np.array([m is not None for m in maps], dtype=bool)
    return StrataFit(strata, columns, fitted), maps


def strata_of_rows(
    model: Any,
    strata: StrataFit | None,
    X: Any,
    n_samples: int,
    control_features: Any,
    *,
    stacklevel: int,
) -> np.ndarray | None:
    """Each row's stratum (``POOLED``: the map of all strata), or ``None`` without strata.

    ``strata`` is ``model``'s record of the strata it was fitted on (``None`` without).
    """
    control = check_control_at_predict(strata, control_features, type(model).__name__)
    if control is None:
        return None
    return strata_codes(
        strata, control, n_samples, X, model.small_strata, stacklevel=stacklevel + 1
    )
