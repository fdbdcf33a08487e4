"""The rules of an audit's ``standards=``, applied to its per-group table (see ``_standards.py``).

Internal surface: :func:`apply_standards`, :func:`thresholds_used`.
"""

from __future__ import annotations

import numpy as np

from fairot.metrics import MAX_PAIRWISE_GROUPS, wasserstein_distance
from fairot.reporting._audit_data import AuditData
from fairot.reporting._direction import decision_text, favorable_rates
from fairot.reporting._ll144 import LL144_MIN_SHARE, ll144
from fairot.reporting._provenance import MIN_GROUP_SIZE_RATIONALE, THRESHOLD_RATIONALE
from fairot.reporting._standards import (
    FOUR_FIFTHS,
    SMD_FLAG,
    Verdict,
    credit_practice,
    distributional_view,
    four_fifths,
)
from fairot.transport import w1_to_reference
from fairot.utils.groups import sensitive_frame
from fairot.utils.sensitive import check_sensitive_features


def apply_standards(
    standards,
    table,
    summary,
    data: AuditData,
    group_mode,
    threshold,
    reference,
    included,
    min_size,
    favorable_outcome=1,
) -> list[Verdict]:
    """Every rule of ``standards`` on the favourable reading of the decisions (``_direction``).

    ``data`` holds the groups as the audit encoded them, and their data, whose columns LL144
    reads one by one. Unweighted rows are exact counts (``exact``): weighted ones are not.
    """
    y_true, y_pred, sensitive_features, columns = (
        data.y_true, data.y_pred, data.groups, data.sensitive_features
    )  # fmt: skip
    exact = data.sample_weight is None
    rows = [g for g in table.index if g != "overall"]
    per_group = table.loc[rows].assign(n=table.loc[rows, "size"])
    per_group = favorable_rates(per_group, favorable_outcome, exact=exact)
    decision = decision_text(favorable_outcome, threshold)
    scores = np.asarray(y_pred, float)
    out = []
    for key in standards:
        if key == "four-fifths":
            out.append(four_fifths(per_group, included, min_size, exact, decision))
        elif key == "ll144":
            frame = sensitive_frame(columns, "sensitive_features")
            out.append(ll144(scores, frame, threshold, LL144_MIN_SHARE, favorable_outcome))
        elif key == "credit":
            enc = check_sensitive_features(sensitive_features, len(y_pred), group_mode=group_mode)
            index = dict(zip(enc.names, enc.indices(), strict=True))
            # The favourable score: a risk score's 1 - s, so that SMD < 0 is the adverse side.
            favorable = scores if favorable_outcome == 1 else 1.0 - scores
            out.append(
                credit_practice(
                    per_group, favorable, index, reference, included, min_size, decision
                )
            )
        else:
            out.append(
                distributional_view(
                    table,
                    summary,
                    # Strong equalized odds needs labels and decisions, and reads rows unweighted.
                    _strong_eo(y_true, y_pred, sensitive_features, group_mode)
                    if "selection_rate" in table.columns and exact
                    else {},
                    included,
                )
            )
    return out


def _strong_eo(y_true, y_pred, sensitive_features, group_mode) -> dict[str, dict[str, float]]:
    """W1 from each group's scores to the pooled scores, within each label (strong EO)."""
    if y_true is None:
        return {}
    pred = np.asarray(y_pred, dtype=float)
    y = np.asarray(y_true) == 1
    enc = check_sensitive_features(sensitive_features, pred.shape[0], group_mode=group_mode)
    out: dict[str, dict[str, float]] = {}
    for label, mask in (("y=1", y), ("y=0", ~y)):
        if enc.n_groups > MAX_PAIRWISE_GROUPS:
            out[label] = _w1_to_pooled_many(pred, mask, enc)
            continue
        pooled = pred[mask]
        out[label] = {
            name: (
                wasserstein_distance(pred[rows][mask[rows]], pooled)
                if mask[rows].any()
                else float("nan")
            )
            for name, rows in zip(enc.names, enc.indices(), strict=True)
        }
    return out


def _w1_to_pooled_many(pred, mask, enc) -> dict[str, float]:
    """Every group's W1 to the pooled scores of one label in one pass (thousands of groups)."""
    parts = [np.sort(pred[rows][mask[rows]]) for rows in enc.indices()]
    present = [part.size > 0 for part in parts]
    values = iter(
        w1_to_reference([p for p in parts if p.size], np.sort(pred[mask])) if any(present) else []
    )
    return {
        name: float(next(values)) if ok else float("nan")
        for name, ok in zip(enc.names, present, strict=True)
    }


def thresholds_used(task: str, threshold: float, min_group_size: int, standards) -> dict:
    """Every threshold the audit applied, with the reason for its value."""
    thresholds = {"min_group_size": (min_group_size, MIN_GROUP_SIZE_RATIONALE)}
    if task == "classification":
        thresholds["decision threshold"] = (threshold, THRESHOLD_RATIONALE)
    if "four-fifths" in standards or "credit" in standards:
        thresholds["impact ratio"] = (FOUR_FIFTHS, "the four-fifths rule, 29 CFR 1607.4(D)")
    if "credit" in standards:
        thresholds["|SMD|"] = (SMD_FLAG, "Cohen's small effect size")
    if "ll144" in standards:
        thresholds["LL144 category share"] = (
            LL144_MIN_SHARE,
            "6 RCNY 5-301: categories under 2% may be excluded from the impact ratios",
        )
    return thresholds
