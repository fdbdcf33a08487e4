"""Dispersion of per-group accuracies: the MBN paper's STD and SER."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fairot.utils.arrays import check_array_1d

MSG_ACCURACY_RANGE = (
    "accuracies must be fractions in [0, 1]; got values in [{vmin}, {vmax}] "
    "(divide percentages by 100)."
)
MSG_TWO_GROUPS = "accuracies needs at least two groups; got {n}."
MSG_ZERO_ERROR = (
    "the skewed error ratio is undefined: group(s) {groups} have zero error, so the ratio "
    "max error / min error is infinite."
)


def _check_accuracies(accuracies: Any) -> tuple[np.ndarray, list[str]]:
    if isinstance(accuracies, Mapping):
        names = [str(k) for k in accuracies]
        values = list(accuracies.values())
    elif hasattr(accuracies, "index") and hasattr(accuracies, "to_numpy"):
        names = [str(k) for k in accuracies.index]
        values = accuracies.to_numpy()
    else:
        values = accuracies
        names = [str(i) for i in range(len(values))]
    acc = check_array_1d(values, "accuracies")
    if acc.shape[0] < 2:
        raise ValueError(MSG_TWO_GROUPS.format(n=acc.shape[0]))
    if acc.min() < 0 or acc.max() > 1:
        raise ValueError(MSG_ACCURACY_RANGE.format(vmin=acc.min(), vmax=acc.max()))
    return acc, names


def group_accuracy_std(accuracies: Any, *, ddof: int = 0) -> float:
    r"""Standard deviation of per-group accuracies (the MBN paper's STD).

    .. math::

        \mathrm{STD} = \Big(\frac{1}{G - \mathrm{ddof}}
        \sum_g (acc_g - \overline{acc})^2\Big)^{1/2}

    Parameters
    ----------
    accuracies : array-like, dict or pandas.Series
        One accuracy in [0, 1] per group, e.g. ``MetricFrame(...).by_group``.
    ddof : int, default=0
        Delta degrees of freedom; 0 is the population standard deviation (NumPy's default,
        used for the tables in ``docs/results.md``).

    Returns
    -------
    float
        In the units of the accuracies (multiply by 100 for percentage points).

    Examples
    --------
    >>> from fairot.metrics import group_accuracy_std
    >>> group_accuracy_std({"light": 0.75, "dark": 0.25})
    0.25
    """
    acc, _ = _check_accuracies(accuracies)
    return float(np.std(acc, ddof=ddof))


def skewed_error_ratio(accuracies: Any) -> float:
    r"""Skewed error ratio (the MBN paper's SER): highest group error over lowest.

    .. math:: \mathrm{SER} = \frac{\max_g (1 - acc_g)}{\min_g (1 - acc_g)}

    Parameters
    ----------
    accuracies : array-like, dict or pandas.Series
        One accuracy in [0, 1] per group.

    Returns
    -------
    float
        At least 1; 1 means every group has the same error.

    Raises
    ------
    ValueError
        When some group has zero error (the ratio is infinite).

    Examples
    --------
    Group errors 0.25 and 0.5: the worst group errs twice as often as the best.

    >>> from fairot.metrics import skewed_error_ratio
    >>> skewed_error_ratio({"light": 0.75, "dark": 0.5})
    2.0
    """
    acc, names = _check_accuracies(accuracies)
    errors = 1.0 - acc
    if errors.min() <= 0:
        perfect = [n for n, e in zip(names, errors, strict=True) if e <= 0]
        raise ValueError(MSG_ZERO_ERROR.format(groups=perfect))
    return float(errors.max() / errors.min())
