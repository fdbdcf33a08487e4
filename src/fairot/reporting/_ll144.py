"""The bias-audit table of New York City Local Law 144 (automated employment decision tools).

Internal surface: :func:`ll144_table`, :func:`ll144`, :data:`LL144_MIN_SHARE`.

The rules of the Department of Consumer and Worker Protection (6 RCNY § 5-300 and 5-301, 2023)
ask for, per sex category, per race/ethnicity category and per intersection of the two:

- the *selection rate* (share of the category selected) and the *impact ratio* (the category's
  rate over the highest category's rate), for a tool that selects;
- the *scoring rate* (share of the category scoring above the sample's median score) and its
  impact ratio, for a tool that scores;
- an auditor may leave a category under 2 % of the data out of the impact ratios; its numbers
  are still reported.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fairot.reporting._standards import Verdict

LL144_MIN_SHARE = 0.02


def _categories(frame: pd.DataFrame) -> list[tuple[str, pd.Series]]:
    """(dimension, category name per row): each column, then the intersection of all of them."""
    out = []
    for column in frame.columns:
        out.append((str(column), f"{column}=" + frame[column].astype(str)))
    if frame.shape[1] > 1:
        joined = out[0][1]
        for _, names in out[1:]:
            joined = joined + ", " + names  # column-wise: no Python call per row
        out.append((" × ".join(map(str, frame.columns)), joined))
    return out


def ll144_table(
    scores: np.ndarray,
    sensitive: pd.DataFrame,
    threshold: float,
    min_share: float,
    favorable_outcome: int = 1,
) -> pd.DataFrame:
    """One row per category: counts, selection and scoring rates and their impact ratios.

    With ``favorable_outcome=0`` (a risk score) *selected* is the favourable decision
    ``score <= threshold`` and the scoring rate counts the scores below the median (the
    favourable side); the column names stay the law's.
    """
    scores = np.asarray(scores, dtype=float)
    selected = scores > threshold
    above = scores > np.median(scores)
    if favorable_outcome == 0:
        selected = ~selected
        above = scores < np.median(scores)
    n_total = scores.shape[0]
    parts = []
    for dimension, names in _categories(sensitive.reset_index(drop=True)):
        codes, uniques = pd.factorize(names, sort=True)
        n = np.bincount(codes, minlength=len(uniques))
        part = pd.DataFrame(
            {
                "dimension": dimension,
                "n": n,
                "share": n / n_total,
                "selected": np.bincount(codes, selected, minlength=len(uniques)).astype(int),
                "above_median": np.bincount(codes, above, minlength=len(uniques)).astype(int),
            },
            index=pd.Index(list(uniques), name="category"),
        )
        part["selection_rate"] = part["selected"] / part["n"]
        part["scoring_rate"] = part["above_median"] / part["n"]
        kept = part["share"] >= min_share
        for rate, ratio in (
            ("selection_rate", "impact_ratio"),
            ("scoring_rate", "scoring_impact_ratio"),
        ):
            best = part.loc[kept, rate].max() if kept.any() else math.nan
            part[ratio] = np.where(kept & (best > 0), part[rate] / best, np.nan)
        part["note"] = np.where(kept, "", f"under {min_share:.0%}: excluded from the ratios")
        parts.append(part)
    columns = [
        "dimension",
        "n",
        "share",
        "selected",
        "selection_rate",
        "impact_ratio",
        "above_median",
        "scoring_rate",
        "scoring_impact_ratio",
        "note",
    ]
    return pd.concat(parts)[columns]


def ll144(
    scores: np.ndarray,
    sensitive: pd.DataFrame,
    threshold: float,
    min_share: float,
    favorable_outcome: int = 1,
) -> Verdict:
    """The LL144 table as a :class:`Verdict` (information, no pass mark)."""
    table = ll144_table(scores, sensitive, threshold, min_share, favorable_outcome)
    if favorable_outcome == 1:
        selection, scoring = f"score > {threshold:g}", "above the sample median score"
    else:
        selection, scoring = f"score <= {threshold:g}", "below the sample median score"
    lines = [
        "LL144 sets no pass mark: it requires these numbers to be published."
        if sensitive.shape[1] > 1
        else "LL144 sets no pass mark: it requires these numbers to be published. Only one "
        "sensitive column was given; the law asks for sex, race/ethnicity and their "
        "intersection."
    ]
    for ratio, what in (("impact_ratio", "selection"), ("scoring_impact_ratio", "scoring")):
        values = table[ratio].dropna()
        if values.empty:
            lines.append(
                f"No {what}-rate impact ratio is defined (no category has a positive rate)."
            )
        else:
            worst = values.idxmin()
            lines.append(f"Lowest {what}-rate impact ratio: {values.min():.3f} ({worst}).")
    excluded = table.index[table["note"] != ""].tolist()
    if excluded:
        lines.append(
            f"{len(excluded)} {'category' if len(excluded) == 1 else 'categories'} under "
            f"{min_share:.0%} of the data excluded from the ratios: {', '.join(excluded)}."
        )
    return Verdict(
        "ll144",
        "NYC Local Law 144 bias-audit table",
        f"Selection rate = share of a category given the favourable decision ({selection}); "
        f"scoring rate = share scoring {scoring} (the favourable side); impact ratio = a "
        "category's rate over the highest rate among the categories kept. Categories: each "
        "sensitive column, and the "
        f"intersection of all of them; a category under {min_share:.0%} of the data is reported "
        "but excluded from the ratios.",
        "New York City Local Law 144 of 2021 (Admin. Code § 20-870 to 20-874) and the rules "
        "of the Department of Consumer and Worker Protection, 6 RCNY § 5-300 and 5-301 (2023).",
        None,
        " ".join(lines),
        table,
    )
