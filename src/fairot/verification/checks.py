"""The checks of verification pairs and their messages, shared by the package and the face code.

Pair labels say whether each pair is the same identity (booleans or 0/1), pair scores are
finite floats of the same length (:func:`check_pairs`), and a threshold can only be read from
pairs of both kinds (:func:`check_both_classes`). :mod:`fairot.face`, which checks embeddings
before it scores them, raises with the same messages (``MSG_BOTH_CLASSES``, ``MSG_FOLDS``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairot.utils.arrays import MSG_LENGTH, check_array_1d

__all__ = [
    "MSG_BOTH_CLASSES",
    "MSG_FOLDS",
    "MSG_IS_SAME",
    "check_both_classes",
    "check_pairs",
]

MSG_FOLDS = "n_folds must be an int in [2, n_pairs={n}]; got {value!r}."
MSG_BOTH_CLASSES = (
    "{where} needs both genuine (same identity) and impostor pairs; got {n_same} genuine and "
    "{n_diff} impostor pairs."
)
MSG_IS_SAME = (
    "y_true must say for each pair whether it is the same person: booleans or 0/1; got {values}."
)


def check_pairs(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    """Pair labels as bool and pair scores as finite floats of one length, or a ValueError."""
    scores = check_array_1d(y_pred, "y_pred")
    raw = np.asarray(y_true.to_numpy() if hasattr(y_true, "to_numpy") else y_true)
    if raw.dtype != bool:
        try:
            numbers = raw.astype(float)
        except (TypeError, ValueError):
            numbers = None
        if raw.ndim != 1 or numbers is None or not np.isin(numbers, (0.0, 1.0)).all():
            found = pd.unique(pd.Series(raw.ravel()))[:10].tolist()
            raise ValueError(MSG_IS_SAME.format(values=found))
        raw = numbers == 1.0
    if raw.shape != scores.shape:
        raise ValueError(MSG_LENGTH.format(lengths=f"y_true={raw.size}, y_pred={scores.size}"))
    return raw, scores


def check_both_classes(is_same: np.ndarray, where: str) -> None:
    """Refuse pairs that are all genuine or all impostor (no threshold can be read)."""
    n_same = int(is_same.sum())
    if n_same == 0 or n_same == is_same.size:
        raise ValueError(
            MSG_BOTH_CLASSES.format(where=where, n_same=n_same, n_diff=is_same.size - n_same)
        )
