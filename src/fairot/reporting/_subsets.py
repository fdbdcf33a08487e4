"""The rows an audit summarises: its per-group rates, and the data without its small groups.

Kept apart from ``_audit.py`` (the :class:`~fairot.reporting.Audit` and its renderings) so that
each module has one purpose; every function threads ``sample_weight`` with the rows it keeps.
"""

from __future__ import annotations

import numpy as np

from fairot.metrics import fairness_report, group_rates
from fairot.utils.sensitive import check_sensitive_features

MSG_ALL_SMALL = (
    "excluding groups under min_group_size={size} leaves {left} group(s); a summary needs two. "
    "Lower --min-group-size or keep the small groups."
)


def rates(y_true, y_pred, sensitive_features, sample_weight, task, group_mode, threshold):
    """:func:`group_rates`, weighted only when weights are given (the unweighted call form)."""
    weights = {} if sample_weight is None else {"sample_weight": sample_weight}
    return group_rates(
        y_true,
        y_pred,
        sensitive_features=sensitive_features,
        task=task,
        group_mode=group_mode,
        threshold=threshold,
        **weights,
    )


def take(y_true, y_pred, sensitive_features, sample_weight, rows):
    """The given rows of every input (all of them when ``rows`` is None); None stays None."""
    if rows is None:
        return y_true, y_pred, sensitive_features, sample_weight

    def pick(a):
        if a is None:
            return None
        if hasattr(a, "iloc"):
            return a.iloc[rows]
        return np.asarray(a)[rows]

    return pick(y_true), pick(y_pred), pick(sensitive_features), pick(sample_weight)


def summary_without(
    y_true, y_pred, sensitive_features, sample_weight, small, min_size, task, group_mode, threshold
):
    """Rows outside the small groups, and the summary of :func:`fairness_report` on them."""
    n = len(y_pred)
    enc = check_sensitive_features(sensitive_features, n, group_mode=group_mode)
    drop = np.zeros(n, dtype=bool)
    for g in small:
        drop |= enc.membership[:, enc.names.index(str(g))]
    rows = np.flatnonzero(~drop)
    y_s, p_s, sf_s, w_s = take(y_true, y_pred, sensitive_features, sample_weight, rows)
    left = enc.n_groups - len(small)
    if left < 2:
        raise ValueError(MSG_ALL_SMALL.format(size=min_size, left=left))
    kept = fairness_report(
        y_s,
        p_s,
        sensitive_features=sf_s,
        task=task,
        group_mode=group_mode,
        threshold=threshold,
        sample_weight=w_s,
    )
    return rows, dict(kept.attrs["summary"])
