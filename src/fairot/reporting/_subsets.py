"""The rows an audit summarises: its per-group rates, and the data without its small groups.

Kept apart from ``_audit.py`` (the :class:`~fairot.reporting.Audit` and its renderings) so that
each module has one purpose; every function threads ``sample_weight`` with the rows it keeps.
"""

from __future__ import annotations

import numpy as np

from fairot.metrics import fairness_report, group_rates
from fairot.reporting._audit_data import AuditData
from fairot.utils.sensitive import check_sensitive_features

ALL_SMALL_WARNING = (
    "only {left} group(s) reach min_group_size={size}; a headline needs two, so it keeps every "
    "group: read its gaps as noise."
)
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


def with_pooled_rates(table, y_true, y_pred, sample_weight, task, threshold):
    """``table`` with the rates of its ``overall`` row filled in: the rates of all rows pooled.

    The per-group rates have no pooled row of their own, so the audit's ``overall`` row would
    read NaN (an overall MAE of NaN); a ratio to the most-selected group
    (``disparate_impact``) has no pooled value and stays undefined.
    """
    if "overall" not in table.index:
        return table
    # group_rates needs two groups: the rows twice, as group 0 and group 1, give group 0's rates
    # on exactly the rows (no private kernel of fairot.metrics reached).
    n = len(y_pred)
    twice = [None if a is None else np.r_[np.asarray(a), np.asarray(a)] for a in
             (y_true, y_pred, sample_weight)]  # fmt: skip
    two = np.repeat(np.array([0, 1]), n)
    pooled = rates(twice[0], twice[1], two, twice[2], task, "intersection", threshold)
    table = table.copy()
    for column in pooled.columns.drop("disparate_impact", errors="ignore"):
        if column in table.columns and np.isnan(table.loc["overall", column]):
            table.loc["overall", column] = pooled[column].iloc[0]
    return table


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


def summary_without(data: AuditData, small, min_size, task, group_mode, threshold):
    """Rows outside the small groups, the summary of :func:`fairness_report` on them, their groups.

    ``data`` holds the groups as the audit encoded them, and their data, from which the rows
    kept are taken and encoded anew, once (they hold fewer groups).
    """
    y_true, y_pred, sensitive_features, sample_weight = (
        data.y_true, data.y_pred, data.sensitive_features, data.sample_weight
    )  # fmt: skip
    enc = data.groups
    position = {name: g for g, name in enumerate(enc.names)}
    small_groups = [position[str(g)] for g in small]
    if enc.codes is not None:  # a partition: no (rows x groups) matrix
        drop = np.isin(enc.codes, small_groups)
    else:
        drop = enc.membership[:, small_groups].any(axis=1)
    rows = np.flatnonzero(~drop)
    y_s, p_s, sf_s, w_s = take(y_true, y_pred, sensitive_features, sample_weight, rows)
    left = enc.n_groups - len(small)
    if left < 2:
        raise ValueError(MSG_ALL_SMALL.format(size=min_size, left=left))
    sf_s = check_sensitive_features(sf_s, len(p_s), group_mode=group_mode)
    kept = fairness_report(
        y_s,
        p_s,
        sensitive_features=sf_s,
        task=task,
        group_mode=group_mode,
        threshold=threshold,
        sample_weight=w_s,
    )
    return rows, dict(kept.attrs["summary"]), sf_s


def small_group_policy(table, groups_only, small, exclude_small_groups, min_group_size):
    """Whether the headline leaves the small groups out, and the warnings that say so.

    ``exclude_small_groups=None`` (the default) leaves them out unless fewer than two groups
    would remain; ``True`` / ``False`` force it either way.
    """
    warnings = []
    exclude = bool(small) and exclude_small_groups is not False
    if exclude and exclude_small_groups is None and len(groups_only) - len(small) < 2:
        exclude = False
        warnings.append(
            ALL_SMALL_WARNING.format(left=len(groups_only) - len(small), size=min_group_size)
        )
    if small:
        what = (
            "excluded from the summary (the headline)"
            if exclude
            else "kept in the summary (the headline)"
        )
        listed = ", ".join(f"{g} (n={int(table.loc[g, 'size'])})" for g in small)
        warnings.append(
            f"{len(small)} group(s) under min_group_size={min_group_size} samples ({listed}): "
            f"their metrics are noisy; {what}."
        )
    return exclude, warnings
