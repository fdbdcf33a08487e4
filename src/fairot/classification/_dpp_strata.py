r"""DPP within strata of ``control_features``: one map per stratum (conditional parity).

Each stratum :math:`C = c` with every (stratum, group) cell of at least
``SMALL_GROUP_SIZE`` rows gets the map that :class:`QuantileParityPostProcessor` would fit on
that stratum's rows alone (its groups' ECDFs :math:`F_{a,c}`, its own target, the same
:math:`\tau`), so that

.. math:: \tilde s = \tau s + (1 - \tau)\, Q_{\bar S_c}\big(F_{a,c}(s)\big)

and, at :math:`\tau = 0`, every group's scores follow the same distribution within each stratum
on the fit data: conditional demographic parity. The other strata (too small, or unseen at
prediction) follow ``small_strata`` (:mod:`fairot.utils.strata`).

Internal surface of :mod:`fairot.classification._postprocessing`: :func:`fit_strata`,
:func:`map_rows`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairot.utils.arrays import check_consistent_length
from fairot.utils.groups import sensitive_frame
from fairot.utils.sensitive import check_sensitive_features
from fairot.utils.strata import MSG_DASK_CONTROL as DASK_CONTROL
from fairot.utils.strata import (
    POOLED,
    StrataFit,
    check_control_at_predict,
    report_small_strata,
    small_strata,
    strata_codes,
)

from ._common import user_stacklevel
from ._dpp_groups import GroupMaps, group_statistics

MSG_DASK_CONTROL = DASK_CONTROL.format(estimator="QuantileParityPostProcessor")


def fit_strata(
    model: Any,
    scores: np.ndarray,
    sensitive_features: Any,
    cells_codes: np.ndarray,
    sample_weight: np.ndarray | None,
    strata,
    columns: list[str] | None,
) -> tuple[StrataFit, list]:
    """The map of each stratum large enough, fitted on its rows alone, and the strata's record.

    Parameters
    ----------
    model : QuantileParityPostProcessor
        Its ``target``, ``group_mode`` and ``small_strata`` are read.
    scores : ndarray of shape (n_samples,)
        The base scores of all fit rows.
    sensitive_features : array-like or DataFrame
        The groups of all fit rows, as data.
    cells_codes : ndarray of int of shape (n_samples,)
        Each row's intersectional cell among ``model.group_names_`` (the cells of all rows).
    sample_weight : ndarray or None
    strata : GroupEncoding
        The strata of the fit rows.
    columns : list of str or None
        The columns of ``X`` the strata were read from.

    Returns
    -------
    StrataFit, list of (GroupMaps or None)
    """
    reasons = small_strata(
        strata.codes, strata.names, cells_codes, model.group_names_, sample_weight
    )
    report_small_strata(reasons, model.small_strata, stacklevel=user_stacklevel())
    frame = sensitive_frame(sensitive_features, "sensitive_features")
    maps: list = []
    for s, rows in enumerate(strata.indices()):
        if s in reasons:
            maps.append(None)
            continue
        maps.append(_fit_one(model, scores[rows], frame.iloc[rows], _take(sample_weight, rows)))
    fitted = np.array([m is not None for m in maps], dtype=bool)
    return StrataFit(strata, columns, fitted), maps


def _take(values: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    return None if values is None else values[rows]


def _fit_one(model: Any, scores: np.ndarray, frame, sample_weight) -> GroupMaps:
    """One stratum's map: what ``fit`` computes from the stratum's rows alone."""
    encoding = check_sensitive_features(frame, scores.shape[0], group_mode=model.group_mode)
    cells, group_scores, group_weights, target_samples = group_statistics(
        model, scores, frame, encoding, sample_weight
    )
    return GroupMaps.from_groups(
        model.target, group_scores, group_weights, cells, target_samples=target_samples
    )


def map_rows(
    model: Any,
    X: Any,
    n_samples: int,
    scores_of,
    sensitive_features: Any,
    control_features: Any,
    all_strata: GroupMaps,
) -> np.ndarray:
    """The post-processed scores of the rows of ``X``: each row by its stratum's map.

    ``scores_of(X)`` gives the base scores; it is called after every group and stratum has been
    checked, so that a bad argument fails before the model runs.
    """
    strata = getattr(model, "_strata", None)
    control = check_control_at_predict(strata, control_features, type(model).__name__)
    if control is None:
        codes = all_strata.codes(sensitive_features, model.unseen_groups)
        check_consistent_length(X=X, sensitive_features=codes)
        return all_strata.apply(scores_of(X), codes, model.tau_)
    frame = sensitive_frame(sensitive_features, "sensitive_features")
    check_consistent_length(X=X, sensitive_features=frame)
    stratum = strata_codes(
        strata, control, n_samples, X, model.small_strata, stacklevel=user_stacklevel()
    )
    plan = []
    for s in np.unique(stratum):
        rows = np.flatnonzero(stratum == s)
        group_maps = all_strata if s == POOLED else model.stratum_maps_[s]
        plan.append((rows, group_maps, group_maps.codes(frame.iloc[rows], model.unseen_groups)))
    scores = scores_of(X)
    out = np.empty_like(scores)
    for rows, group_maps, codes in plan:
        out[rows] = group_maps.apply(scores[rows], codes, model.tau_)
    return out
