"""Decision-threshold validation for the Dask metrics, as in the in-memory fairness_report."""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

# Same text as the in-memory fairness_report, so one ``match=`` serves both paths.
MSG_THRESHOLD = "threshold must be a number in [0, 1]; got {value!r}."


def check_threshold(threshold: Any) -> float:
    """Return a decision threshold in [0, 1], or raise naming the value (NaN included)."""
    if isinstance(threshold, bool) or not isinstance(threshold, Real):
        raise ValueError(MSG_THRESHOLD.format(value=threshold))
    if not (math.isfinite(threshold) and 0.0 <= threshold <= 1.0):
        raise ValueError(MSG_THRESHOLD.format(value=threshold))
    return float(threshold)
