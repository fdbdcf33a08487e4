"""The ``stacklevel`` of fairot's warnings: the user's line, however deep the call.

Estimators are wrapped (scikit-learn's parameter validation, atomic fits) and trainers call one
another, so the depth of the user's call differs from one path to another. Every warning about
the user's data or settings is raised with ``stacklevel=user_stacklevel()`` (for a direct call
that is 2) so that it names the line the user wrote.
"""

from __future__ import annotations

import sys

__all__ = ["user_stacklevel"]


def user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the user's line, past fairot, sklearn and torch.

    Call it in the function that calls :func:`warnings.warn`.

    Returns
    -------
    int
    """
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        ("fairot.", "sklearn.", "torch.")
    ):
        frame = frame.f_back
        level += 1
    return level
