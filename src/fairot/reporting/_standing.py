"""What an audit's headline rests on: how well the model ranks, and how many groups it compares.

Two facts a parity number cannot show by itself. A model that ranks its labels at chance meets
many parity targets (Wass1 of a constant is 0), so the summary carries the overall ROC AUC and
the lowest within-group AUC; and a gap over fewer groups than there are (a rate undefined for a
group without positives or negatives) says so, per rate.

Internal surface: :func:`add_standing`, :func:`auc_summary`, :func:`compared_text`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairot.metrics.resampling import UNDEFINED_REASONS, groups_compared, undefined_groups
from fairot.reporting._direction import favorable_ratio

#: What an undefined rate is left out of (beside the reason of ``UNDEFINED_REASONS``).
LEFT_OUT_OF = {
    "tpr": "left out of the equalized-odds difference",
    "fpr": "left out of the equalized-odds difference",
    "precision": "reported as undefined",
    "auc": "left out of the lowest within-group AUC",
}


def add_standing(
    summary: dict[str, Any],
    warnings: list[str],
    rates: pd.DataFrame,
    headline: pd.DataFrame,
    data: tuple,
    favorable_outcome: int,
) -> dict[str, int]:
    """Complete an audit's summary and warnings in place; return the groups each rate compares.

    ``rates`` are the per-group rates of every group, ``headline`` those of the summary's
    groups, ``data`` its ``(y_true, y_pred, sample_weight)``. Adds the favourable DP ratio
    (``favorable_outcome=0``), the overall and lowest within-group AUC (with labels),
    ``groups_compared``, and a warning per rate undefined for some group, with the reason.
    """
    y, pred, weight = data
    classification = "selection_rate" in headline.columns
    if favorable_outcome == 0 and classification:
        summary["demographic_parity_ratio"] = favorable_ratio(headline["selection_rate"])
    if classification and y is not None:
        summary.update(auc_summary(y, pred, weight, headline))
    compared = groups_compared(headline)
    if classification:
        summary["groups_compared"] = compared_text(compared, headline.shape[0])
    total = rates.shape[0]
    for column, names in undefined_groups(rates).items():
        warnings.append(
            f"{column} is undefined for {', '.join(names)} ({UNDEFINED_REASONS[column]}; "
            f"{LEFT_OUT_OF[column]}): its gap compares {total - len(names)} of {total} groups, "
            "never reading the missing rate as 0."
        )
    return compared


def auc_summary(y_true, y_pred, sample_weight, rates: pd.DataFrame) -> dict[str, Any]:
    """Overall ROC AUC and the lowest within-group AUC (where defined) and its group.

    A model that ranks no better than chance (0.5) meets many parity targets; these two numbers
    show it at the top of the report. Either is left out where it is undefined (one class).
    """
    from sklearn.metrics import roc_auc_score

    out: dict[str, Any] = {}
    y = np.asarray(y_true)
    if np.unique(y).shape[0] == 2:
        weight = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        out["auc"] = float(roc_auc_score(y, np.asarray(y_pred, float), sample_weight=weight))
    defined = rates["auc"].dropna() if "auc" in rates.columns else pd.Series(dtype=float)
    if not defined.empty:
        out["min_group_auc"] = float(defined.min())
        out["min_group_auc_group"] = str(defined.idxmin())
    return out


def compared_text(compared: dict[str, int], total: int) -> str:
    """How many groups each difference and ratio compares, e.g. ``selection rate 3/3, TPR 2/3``."""
    names = {"selection_rate": "selection rate", "tpr": "TPR", "fpr": "FPR", "auc": "AUC"}
    return ", ".join(f"{names.get(rate, rate)} {count}/{total}" for rate, count in compared.items())
