"""Validation of binary class labels at the public boundary (every fairot classifier).

Missing labels are named by row before scikit-learn's own target check, which would only say
that the type is unknown.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import check_classification_targets, type_of_target

MSG_NOT_BINARY = (
    "Only binary classification is supported: y must have exactly two classes. The type of the "
    "target is {y_type}, with {n} class(es): {classes}."
)
# What to do with more than two classes, appended to MSG_NOT_BINARY (every fairot classifier).
MSG_MULTICLASS_ADVICE = (
    " fairot's classifiers adjust one score per row, the probability of the positive class "
    "(binary labels). For {n} classes, fit one binary fairot classifier per class on "
    "y == class (one-vs-rest) and predict the class of highest adjusted score, or use "
    "fairlearn's reductions (ExponentiatedGradient), which accept multiclass targets."
)
MSG_Y_NAN = (
    "{name} contains a missing or infinite label (NaN, inf or None) at row {row}; give every "
    "row a class label."
)


def check_binary_target(y: np.ndarray, classes=None, name: str = "y") -> np.ndarray:
    """The two classes of ``y`` (and of ``classes`` when given), or a ValueError."""
    missing = pd.isna(y)
    if np.asarray(y).dtype.kind == "f":
        missing = missing | ~np.isfinite(y)
    if np.any(missing):
        row = int(np.flatnonzero(missing)[0])
        raise ValueError(MSG_Y_NAN.format(name=name, row=row))
    check_classification_targets(y)
    found = np.unique(y if classes is None else np.concatenate([np.unique(y), classes]))
    if found.shape[0] != 2:
        advice = MSG_MULTICLASS_ADVICE.format(n=found.shape[0]) if found.shape[0] > 2 else ""
        raise ValueError(
            f"{name}: "
            + MSG_NOT_BINARY.format(
                y_type=type_of_target(y), n=found.shape[0], classes=found[:10].tolist()
            )
            + advice
        )
    return found
