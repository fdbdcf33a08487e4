"""Summaries over seeds shared by the studies: mean and spread, t intervals, paired t tests.

The intervals and tests are scipy's (:func:`scipy.stats.t.interval`,
:func:`scipy.stats.ttest_1samp` on paired differences, which is :func:`scipy.stats.ttest_rel`);
this module only decides what one seed or a constant difference means, where scipy answers NaN:
one seed has no interval (NaN bounds), and a constant difference over several seeds has a
zero-width interval, with p-value 0 (nonzero) or 1 (zero).

Internal surface (for the study subpackages): :func:`mean_and_sd`, :func:`seed_intervals`,
:func:`paired_differences`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

#: Level of every interval (two-sided, Student t over seeds).
CONFIDENCE = 0.95
# Two methods on one seed can score nearly alike: scipy then warns of precision loss in the
# variance, and still returns the value of the textbook formula, which is what we report.
_PRECISION_LOSS = "Precision loss occurred in moment calculation"


def mean_and_sd(
    rows: pd.DataFrame,
    by: list[str],
    metrics: Sequence[str],
    sd_of: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Mean of ``metrics`` over seeds and the population standard deviation of ``sd_of``.

    One row per ``by`` combination (first-seen order): the means, ``<metric> sd`` (ddof=0, 0 for
    one seed) for each metric of ``sd_of`` (default: all), and ``seeds``. The COT paper reports
    mean and standard deviation over its runs; this is that table.
    """
    grouped = rows.groupby(by, sort=False)[list(metrics)]
    out = grouped.mean()
    std = grouped.std(ddof=0).fillna(0.0)
    for metric in metrics if sd_of is None else sd_of:
        out[f"{metric} sd"] = std[metric]
    out["seeds"] = grouped.size()
    return out.reset_index()


def _t_bounds(mean, sd, n, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Student t interval of a mean from n draws with sample standard deviation sd."""
    mean, sd, n = (np.asarray(a, dtype=float) for a in (mean, sd, n))
    several = n > 1
    with np.errstate(invalid="ignore", divide="ignore"):
        sem = sd / np.sqrt(n)
    spread = several & (sem > 0)
    # scipy wants df > 0 and scale > 0; the other cases are decided below, not by scipy's NaN.
    low, high = stats.t.interval(
        confidence,
        np.where(several, n - 1, 1.0),
        loc=mean,
        scale=np.where(spread, sem, 1.0),
    )
    # No spread: a zero-width interval; an undefined spread (an infinite value): NaN bounds.
    flat = mean + 0.0 * sd
    low, high = np.where(spread, low, flat), np.where(spread, high, flat)
    return np.where(several, low, np.nan), np.where(several, high, np.nan)


def seed_intervals(
    runs: pd.DataFrame, by: list[str], columns: list[str], confidence: float = CONFIDENCE
) -> pd.DataFrame:
    """Mean over seeds of each column with its t interval, one row per ``by`` combination.

    Columns ``<col>``, ``<col>_lo``, ``<col>_hi`` (the two-sided ``confidence`` interval of the
    mean over seeds, Student t with n - 1 degrees of freedom), then ``n_seeds``. With one seed the
    bounds are NaN: one draw says nothing about the spread.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairot.experiments._seeds import seed_intervals
    >>> runs = pd.DataFrame({"method": ["a", "a", "a"], "ser": [1.0, 2.0, 3.0]})
    >>> row = seed_intervals(runs, ["method"], ["ser"]).iloc[0]
    >>> [round(float(row[c]), 3) for c in ("ser_lo", "ser", "ser_hi")], int(row["n_seeds"])
    ([-0.484, 2.0, 4.484], 3)
    """
    grouped = runs.groupby(by, sort=False)[columns]
    mean, sd, count = grouped.mean(), grouped.std(ddof=1), grouped.count()
    table = pd.DataFrame(index=mean.index)
    for col in columns:
        low, high = _t_bounds(mean[col], sd[col], count[col], confidence)
        table[col] = mean[col]
        table[f"{col}_lo"] = low
        table[f"{col}_hi"] = high
    table["n_seeds"] = grouped.size()
    return table.reset_index()


def _paired_test(values: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Interval bounds and two-sided p-value of the mean of paired differences ``values``."""
    n, mean = len(values), float(values.mean())
    if n < 2:
        return np.nan, np.nan, np.nan
    sd = float(values.std(ddof=1))
    if sd > 0:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_PRECISION_LOSS, category=RuntimeWarning)
            result = stats.ttest_1samp(values, 0.0)
            low, high = result.confidence_interval(confidence_level=confidence)
        return float(low), float(high), float(result.pvalue)
    # A constant difference (sd 0: zero-width interval) or an undefined one (sd NaN: NaN bounds).
    flat = mean + 0.0 * sd
    return flat, flat, 0.0 if mean != 0 else 1.0


def paired_differences(
    runs: pd.DataFrame,
    by: list[str],
    key: str,
    pairs: Sequence[tuple[Any, Any]],
    columns: list[str],
    confidence: float = CONFIDENCE,
) -> pd.DataFrame:
    """Paired differences ``treatment - control`` over seeds, with t interval and p-value.

    Runs are matched on ``by`` and ``seed`` (same benchmark draw, initialisation and batches),
    so the seed-to-seed variation common to both runs cancels. One row per ``by`` combination,
    pair and column: ``difference`` (mean over seeds), ``ci_lo``, ``ci_hi`` (the two-sided
    ``confidence`` t interval of the mean difference), ``p_value`` (two-sided paired t test,
    :func:`scipy.stats.ttest_rel`; 0 for a constant nonzero difference, 1 for a constant zero
    one) and ``n_seeds``.
    """
    rows = []
    index = [*by, "seed"]
    for treatment, control in pairs:
        treated = runs[runs[key] == treatment].set_index(index)[columns]
        controls = runs[runs[key] == control].set_index(index)[columns]
        diff = treated.sub(controls).dropna(how="all")
        if diff.empty:
            continue
        for keys, part in diff.groupby(level=list(range(len(by))), sort=False):
            keys = keys if isinstance(keys, tuple) else (keys,)
            for col in columns:
                values = part[col].to_numpy(dtype=float)
                low, high, p_value = _paired_test(values, confidence)
                rows.append(
                    {
                        **dict(zip(by, keys, strict=True)),
                        "treatment": treatment,
                        "control": control,
                        "metric": col,
                        "difference": float(values.mean()),
                        "ci_lo": low,
                        "ci_hi": high,
                        "p_value": p_value,
                        "n_seeds": len(values),
                    }
                )
    columns_out = [*by, "treatment", "control", "metric", "difference", "ci_lo", "ci_hi"]
    return pd.DataFrame(rows, columns=[*columns_out, "p_value", "n_seeds"])
