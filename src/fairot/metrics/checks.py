"""The checks of the metrics' calling form, scalar options and labels, shared by every backend.

The in-memory metrics and :mod:`fairot.dask` (and the rates, the audit and the monitor) validate
fairlearn's calling form (:func:`group_metric`), a decision threshold, binary labels, a task,
group weights and scores in [0, 1] with these, so that one input gives one error message
whichever path reads it. The checks of verification pairs are :mod:`fairot.verification.checks`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fairot.metrics._calling import group_metric

#: Scores (estimates of P(Y = 1 | A, X)) lie in this closed interval.
UNIT_INTERVAL = (0.0, 1.0)
#: Name of the last row of a report: the pooled sample.
OVERALL = "overall"

Task = Literal["classification", "regression"]
GroupWeights = Literal["uniform", "proportional"]

MSG_NOT_BINARY = "{name} must be binary with values in {{0, 1}} (or booleans); got values {values}."
MSG_THRESHOLD = "threshold must be a number in [0, 1]; got {value!r}."
MSG_GROUP_WEIGHTS = "group_weights must be 'uniform' or 'proportional'; got {value!r}."
MSG_TASK = "task must be 'classification' or 'regression'; got {value!r}."

__all__ = [
    "MSG_GROUP_WEIGHTS",
    "MSG_NOT_BINARY",
    "MSG_TASK",
    "MSG_THRESHOLD",
    "OVERALL",
    "UNIT_INTERVAL",
    "GroupWeights",
    "Task",
    "check_binary_labels",
    "group_metric",
    "check_group_weights",
    "check_task",
    "check_threshold",
]


def check_threshold(threshold: Any) -> float:
    """Return a decision threshold in [0, 1], or raise naming the value (NaN included).

    Only real numbers are thresholds: a string or a boolean is refused rather than converted.

    Examples
    --------
    >>> check_threshold(0.25)
    0.25
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)):
        raise ValueError(MSG_THRESHOLD.format(value=threshold))
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(MSG_THRESHOLD.format(value=threshold))
    return float(threshold)


def check_binary_labels(y_true: ArrayLike, name: str = "y_true") -> np.ndarray:
    """Return binary labels as an int array of 0/1, or raise naming the values found.

    Examples
    --------
    >>> check_binary_labels([True, False, True])
    array([1, 0, 1])
    """
    raw = np.asarray(y_true.to_numpy() if hasattr(y_true, "to_numpy") else y_true)
    if raw.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {raw.shape}.")
    if raw.dtype == bool:
        return raw.astype(int)
    if raw.dtype.kind in "iuf":
        ok = bool(np.all((raw == 0) | (raw == 1)))
    else:
        try:
            ok = bool(np.all(np.isin(raw.astype(float), (0.0, 1.0))))
        except (TypeError, ValueError):
            ok = False
    if not ok:
        found = pd.unique(pd.Series(raw))[:10].tolist()
        raise ValueError(MSG_NOT_BINARY.format(name=name, values=found))
    return raw.astype(float).astype(int)


def check_task(task: Any) -> Task:
    """Return ``task`` if it is ``"classification"`` or ``"regression"``, else raise."""
    if task not in ("classification", "regression"):
        raise ValueError(MSG_TASK.format(value=task))
    return task


def check_group_weights(group_weights: Any) -> GroupWeights:
    """Return ``group_weights`` if it is ``"uniform"`` or ``"proportional"``, else raise."""
    if group_weights not in ("uniform", "proportional"):
        raise ValueError(MSG_GROUP_WEIGHTS.format(value=group_weights))
    return group_weights
