r"""Conditional metrics: a group metric within each stratum of control features, recombined.

Conditional demographic parity (and every other criterion conditioned on legitimate strata,
fairlearn's ``control_features``) asks for parity *within* each stratum :math:`C = c` (the same
job level, the same credit band), not across them. A metric :math:`D` called with
``control_features=C`` is

.. math:: D(\cdot \mid C) = \sum_c \pi_c\, D(\cdot \text{ on the rows with } C = c),
          \qquad \pi_c = \frac{\sum_{i: C_i = c} w_i}{\sum_i w_i},

the strata's shares of the rows (of the total ``sample_weight`` when given), so that a
disparity confined to a tiny stratum weighs as little as its rows, and :math:`D(\cdot \mid C)
= 0` exactly when the metric is zero in every stratum. Structured results are recombined
entry by entry with the same weights: a :class:`~fairot.metrics.PairwiseGap`'s matrix (then
the largest pair of the recombined matrix), a report's summary numbers (the per-group rows of
every stratum are kept, under an outer index level ``stratum``), a Series' numbers.

Internal surface: :func:`stratified_call` (called by the ``group_metric`` decorator of
:mod:`fairot.metrics._calling`, the one place it is implemented for every metric).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from fairot.metrics._pairwise import PairwiseGap, largest_pair
from fairot.utils.arrays import check_sample_weight, number_of_samples
from fairot.utils.groups import sensitive_frame
from fairot.utils.sensitive import check_sensitive_features

MSG_STRATUM = "in the stratum control_features={stratum!r} ({n} rows): {error}"
MSG_NO_SAMPLES = "control_features needs the samples {names}; got None for all of them."
MSG_GROUPS_DIFFER = (
    "the strata of control_features have different groups ({first} in {a!r}, {second} in "
    "{b!r}): the pairwise matrices cannot be recombined; merge the strata or the groups."
)
MSG_RESULT = "{name} returns {kind}, which control_features cannot recombine."
MSG_EMPTY_STRATUM = (
    "the stratum control_features={stratum!r} has zero total sample_weight; every stratum "
    "needs a positive weight."
)
#: The outer index level of a per-group frame computed with ``control_features``.
STRATUM = "stratum"


def _take(values: Any, rows: np.ndarray) -> Any:
    """The ``rows`` of one per-sample argument, in its own container (``None`` stays ``None``)."""
    if values is None:
        return None
    if isinstance(values, (pd.Series, pd.DataFrame)):
        return values.iloc[rows]
    if isinstance(values, dict):
        return {key: _take(column, rows) for key, column in values.items()}
    return np.asarray(values)[rows]


def stratified_call(
    metric: Callable[..., Any],
    name: str,
    arguments: dict[str, Any],
    data: tuple[str, ...],
    control_features: Any,
) -> Any:
    r"""Call ``metric`` on the rows of each stratum of ``control_features`` and recombine.

    Parameters
    ----------
    metric : callable
        The (guarded) metric, called with every argument by keyword.
    name : str
        Its name, for the messages.
    arguments : dict
        The call's arguments, defaults applied.
    data : tuple of str
        The per-sample parameters besides ``sensitive_features`` and ``sample_weight``.
    control_features : array-like or DataFrame
        The strata: one column, or several (each combination of values is a stratum).

    Returns
    -------
    float, PairwiseGap, pandas.DataFrame or pandas.Series
        The strata's results recombined with the weights :math:`\pi_c` (module docstring).
    """
    per_sample = (*data, "sensitive_features", "sample_weight")
    given = [arguments[p] for p in data if arguments.get(p) is not None]
    if not given:
        raise ValueError(MSG_NO_SAMPLES.format(names=list(data)))
    n = number_of_samples(given[-1])
    strata = check_sensitive_features(
        control_features, n, group_mode="intersection", name="control_features", min_groups=1
    )
    sf = arguments["sensitive_features"]
    if isinstance(sf, dict) or np.ndim(sf) > 1:
        arguments = {**arguments, "sensitive_features": sensitive_frame(sf, "sensitive_features")}
    weight = check_sample_weight(arguments.get("sample_weight"), n)
    shares = []
    results = []
    for rows, stratum in zip(strata.indices(), strata.names, strict=True):
        share = rows.shape[0] if weight is None else float(weight[rows].sum())
        if not share > 0:
            raise ValueError(MSG_EMPTY_STRATUM.format(stratum=stratum))
        subset = {
            key: _take(value, rows) if key in per_sample else value
            for key, value in arguments.items()
        }
        try:
            results.append(metric(**subset))
        except ValueError as error:
            raise ValueError(
                MSG_STRATUM.format(stratum=stratum, n=rows.shape[0], error=error)
            ) from None
        shares.append(share)
    pi = np.asarray(shares, dtype=float) / float(np.sum(shares))
    return _recombine(results, pi, strata.names, name)


def _recombine(results: list, pi: np.ndarray, strata: list[str], name: str) -> Any:
    first = results[0]
    if isinstance(first, PairwiseGap):
        names = list(first.matrix.index)
        for result, stratum in zip(results, strata, strict=True):
            if list(result.matrix.index) != names:
                raise ValueError(
                    MSG_GROUPS_DIFFER.format(
                        first=names, a=strata[0], second=list(result.matrix.index), b=stratum
                    )
                )
        matrix = sum(p * r.matrix.to_numpy() for p, r in zip(pi, results, strict=True))
        return largest_pair(matrix, names)
    if isinstance(first, numbers.Real) and not isinstance(first, bool):
        return float(sum(p * float(r) for p, r in zip(pi, results, strict=True)))
    if isinstance(first, pd.DataFrame):
        frame = pd.concat(results, keys=strata, names=[STRATUM])
        summaries = [r.attrs.get("summary") for r in results]
        if all(s is not None for s in summaries):
            frame.attrs["summary"] = _weighted_numbers(summaries, pi)
            frame.attrs["strata"] = dict(zip(strata, summaries, strict=True))
        return frame
    if isinstance(first, pd.Series):
        return pd.Series(_weighted_numbers([dict(r) for r in results], pi), dtype=object)
    raise TypeError(MSG_RESULT.format(name=name, kind=type(first).__name__))


def _weighted_numbers(dicts: list[dict], pi: np.ndarray) -> dict[str, Any]:
    """Each number recombined with the strata's weights (sizes summed); strings left out."""
    out: dict[str, Any] = {}
    for key in dicts[0]:
        values = [d.get(key) for d in dicts]
        if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
            continue
        if key.startswith("n_"):
            out[key] = int(sum(values)) if key == "n_samples" else max(values)
        else:
            out[key] = float(sum(p * float(v) for p, v in zip(pi, values, strict=True)))
    return out
