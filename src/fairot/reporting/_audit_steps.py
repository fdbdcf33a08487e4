"""The steps of an audit: validate, table, summary, intervals, verdicts, figures, provenance.

:func:`fairot.reporting.audit` reads like the list of these steps. :func:`validate` turns its
keywords into one :class:`AuditOptions` and :func:`grouped` its columns into one
:class:`AuditData`, in which the groups are encoded once (fairlearn's ``MetricFrame`` pattern):
every later step takes ``(data, options)`` and the pieces before it, and hands the encoding
down, never the raw column. (The headline without its small groups holds other rows and fewer
groups: it is encoded once more, by :func:`summary`, for all the steps that read it.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairot.metrics import BootstrapIntervals, bootstrap_intervals, fairness_report
from fairot.metrics.checks import UNIT_INTERVAL, check_task, check_threshold
from fairot.metrics.resampling import rate_summary
from fairot.reporting._audit_data import AuditData
from fairot.reporting._conditional import check_constraint, constraint_summary
from fairot.reporting._direction import check_favorable_outcome, direction_line, favorable_intervals
from fairot.reporting._format import SUMMARY_LABELS
from fairot.reporting._group_table import attach_counts
from fairot.reporting._plots import (
    audit_metrics_figure,
    plot_group_histograms,
    plot_group_quantile_functions,
)
from fairot.reporting._provenance import MIN_GROUP_SIZE_RATIONALE, provenance
from fairot.reporting._rules import apply_standards, thresholds_used
from fairot.reporting._scale import many_group_limits
from fairot.reporting._standards import MSG_STANDARD, STANDARDS, Verdict
from fairot.reporting._standing import add_standing
from fairot.reporting._subsets import rates as group_rates_of
from fairot.reporting._subsets import small_group_policy, summary_without, take, with_pooled_rates
from fairot.utils.arrays import check_array_1d
from fairot.utils.sensitive import check_sensitive_features

MSG_MIN_GROUP_SIZE = "min_group_size must be an integer >= 1; got {value!r}."
MSG_N_BOOTSTRAP = "n_bootstrap must be 0 (no intervals) or an integer >= 10; got {value!r}."
SMALL_GROUP_NOTE = "n < {size}"
MSG_STANDARD_TASK = "standards {value!r} need task='classification' (decisions at a threshold)."


@dataclass(frozen=True)
class AuditOptions:
    """How an audit runs: the keywords of :func:`fairot.reporting.audit`, checked once."""

    task: str
    group_mode: str
    threshold: float
    title: str
    plots: bool
    n_bootstrap: int
    confidence: float
    random_state: int | None
    min_group_size: int
    exclude_small_groups: bool | None
    reference: Any
    standards: tuple[str, ...]
    model: str | None
    provenance_extra: dict[str, Any] | None
    constraint: str
    favorable_outcome: int


@dataclass(frozen=True)
class Table:
    """The per-group table and what it rests on."""

    report: pd.DataFrame
    rates: pd.DataFrame
    table: pd.DataFrame
    small: list
    groups_only: pd.Index


@dataclass(frozen=True)
class Headline:
    """The summary, the rows it reads and the groups it compares."""

    summary: dict[str, Any]
    warnings: list[str]
    exclude: bool
    included: list[str]
    rows: tuple  # (y_true, y_pred, groups, sample_weight, groups' data) of the headline's rows
    rates: pd.DataFrame
    compared: Any


def _check_bootstrap(n_bootstrap: Any) -> int:
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)):
        raise ValueError(MSG_N_BOOTSTRAP.format(value=n_bootstrap))
    if n_bootstrap != 0 and n_bootstrap < 10:
        raise ValueError(MSG_N_BOOTSTRAP.format(value=n_bootstrap))
    return int(n_bootstrap)


def validate(y_true: Any, **keywords: Any) -> AuditOptions:
    """Check every keyword of :func:`fairot.reporting.audit` and return them as options."""
    task = keywords["task"]
    if task == "classification":
        keywords["threshold"] = check_threshold(keywords["threshold"])
    keywords["favorable_outcome"] = check_favorable_outcome(keywords["favorable_outcome"], task)
    keywords["n_bootstrap"] = _check_bootstrap(keywords["n_bootstrap"])
    keywords["constraint"] = check_constraint(keywords["constraint"], y_true, task)
    min_group_size = keywords["min_group_size"]
    if (
        isinstance(min_group_size, bool)
        or not isinstance(min_group_size, (int, np.integer))
        or min_group_size < 1
    ):
        raise ValueError(MSG_MIN_GROUP_SIZE.format(value=min_group_size))
    standards = keywords["standards"]
    if standards is None:
        standards = (
            ("four-fifths", "distributional") if task == "classification" else ("distributional",)
        )
    standards = tuple(standards)
    if isinstance(standards, str) or any(k not in STANDARDS for k in standards):
        raise ValueError(MSG_STANDARD.format(choices=STANDARDS, value=standards))
    needs_decisions = [k for k in standards if k != "distributional"]
    if task != "classification" and needs_decisions:
        raise ValueError(MSG_STANDARD_TASK.format(value=needs_decisions))
    keywords["standards"] = standards
    return AuditOptions(**keywords)


def grouped(
    y_true: Any, y_pred: Any, sensitive_features: Any, sample_weight: Any, options: AuditOptions
) -> AuditData:
    """The audited columns, with the groups encoded: the one encoding of the audit."""
    # The task, the scores, then the groups: the order in which fairness_report checked them
    # when it parsed the groups, so that an input wrong twice names the same fault first.
    check_task(options.task)
    bounds = UNIT_INTERVAL if options.task == "classification" else None
    n_samples = check_array_1d(y_pred, "y_pred", bounds=bounds).shape[0]
    groups = check_sensitive_features(sensitive_features, n_samples, group_mode=options.group_mode)
    return AuditData(y_true, y_pred, sensitive_features, groups, sample_weight)


def table(data: AuditData, options: AuditOptions) -> Table:
    """:func:`fairness_report` joined with the per-group rates, small groups noted."""
    y_true, y_pred, w = data.y_true, data.y_pred, data.sample_weight
    task, mode, threshold = options.task, options.group_mode, options.threshold
    report = fairness_report(
        y_true,
        y_pred,
        sensitive_features=data.groups,
        task=task,
        group_mode=mode,
        threshold=threshold,
        sample_weight=w,
    )
    rates = group_rates_of(y_true, y_pred, data.groups, w, task, mode, threshold)
    groups_only = report.index[:-1]
    # A rate the report already has (``rmse`` of a regression with responses) is the same number;
    # the report's column is kept, since it also holds the pooled ("overall") value.
    joined = report.join(rates.drop(columns=report.columns.intersection(rates.columns)), how="left")
    joined = with_pooled_rates(joined, y_true, y_pred, w, task, threshold)
    sizes = joined.loc[groups_only, "size"]
    small = list(sizes.index[sizes.to_numpy() < options.min_group_size])
    # One assignment for every small group (a .loc write per group costs a millisecond each).
    joined["note"] = np.where(
        joined.index.isin(small), SMALL_GROUP_NOTE.format(size=options.min_group_size), ""
    ).astype(object)
    return Table(report, rates, joined, small, groups_only)


def summary(data: AuditData, options: AuditOptions, tabled: Table) -> Headline:
    """The headline: the summary metrics, without the small groups unless told otherwise."""
    o = options
    summary_: dict[str, Any] = dict(tabled.report.attrs["summary"])
    exclude, warnings = small_group_policy(
        tabled.table, tabled.groups_only, tabled.small, o.exclude_small_groups, o.min_group_size
    )
    rows, kept_groups = None, data.groups
    if exclude:
        rows, summary_, kept_groups = summary_without(
            data,
            tabled.small,
            o.min_group_size,
            o.task,
            o.group_mode,
            o.threshold,
        )
    left_out = set(tabled.small) if exclude else set()  # a set: thousands of groups
    included = [str(g) for g in tabled.groups_only if g not in left_out]
    y_s, p_s, raw_s, w_s = take(
        data.y_true, data.y_pred, data.sensitive_features, data.sample_weight, rows
    )
    rates_s = (
        tabled.rates
        if rows is None
        else group_rates_of(y_s, p_s, kept_groups, w_s, o.task, o.group_mode, o.threshold)
    )
    summary_.update(
        {
            k: float(v[0])
            for k, v in rate_summary(
                {c: rates_s[c].to_numpy()[None, :] for c in rates_s.columns}, o.task
            ).items()
        }
    )
    summary_.update(constraint_summary(o.constraint, y_s, p_s, kept_groups, w_s, o.group_mode))
    compared = add_standing(
        summary_, warnings, tabled.rates, rates_s, (y_s, p_s, w_s), o.favorable_outcome
    )
    order = list(SUMMARY_LABELS)  # reading order: sizes, accuracy, the papers' metrics, gaps
    summary_ = dict(
        sorted(summary_.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
    )
    return Headline(
        summary_,
        warnings,
        exclude,
        included,
        (y_s, p_s, kept_groups, w_s, raw_s),
        rates_s,
        compared,
    )


def counts(
    data: AuditData, options: AuditOptions, tabled: Table, headline: Headline
) -> tuple[pd.DataFrame, str | None, str]:
    """The table with the decisions' counts and intervals, and its reference group."""
    if options.task != "classification":
        return tabled.table, None, ""
    return attach_counts(
        tabled.table,
        (data.y_true, data.y_pred, data.groups, data.sample_weight),
        pooled=options.group_mode == "intersection"
        or getattr(data.sensitive_features, "ndim", 1) == 1,
        group_mode=options.group_mode,
        threshold=options.threshold,
        confidence=options.confidence,
        reference=options.reference,
        included=headline.included,
        favorable_outcome=options.favorable_outcome,
    )


def intervals(
    data: AuditData, options: AuditOptions, headline: Headline
) -> BootstrapIntervals | None:
    """Bootstrap intervals of the headline's metrics (BC), read in the favourable direction."""
    y_s, p_s, groups_s, w_s, raw_s = headline.rows
    found = bootstrap_intervals(
        y_s,
        p_s,
        # The bootstrap encodes other groups than the audit's in two cases: marginal groups (it
        # resamples within the intersectional cells) and zero weights (it drops those rows).
        sensitive_features=groups_s if _encoding_suffices(options.group_mode, w_s) else raw_s,
        task=options.task,
        group_mode=options.group_mode,
        threshold=options.threshold,
        n_bootstrap=options.n_bootstrap,
        confidence=options.confidence,
        random_state=options.random_state,
        sample_weight=w_s,
        method="bc",
    )
    return favorable_intervals(found, options.favorable_outcome)


def _encoding_suffices(group_mode: str, sample_weight: Any) -> bool:
    """Whether the bootstrap can take the encoding rather than the groups' data."""
    if group_mode != "intersection":
        return False
    return sample_weight is None or bool((np.asarray(sample_weight, dtype=float) > 0).all())


def verdicts(
    data: AuditData,
    options: AuditOptions,
    table_: pd.DataFrame,
    headline: Headline,
    reference: str | None,
) -> list[Verdict]:
    """The verdict of every rule of ``standards``."""
    return apply_standards(
        options.standards,
        table_,
        headline.summary,
        data,
        options.group_mode,
        options.threshold,
        reference,
        headline.included,
        options.min_group_size,
        options.favorable_outcome,
    )


def direction(options: AuditOptions) -> str:
    """The line that says which decision is favourable (classification only)."""
    if options.task != "classification":
        return ""
    return direction_line(options.favorable_outcome, options.threshold)


def figures(
    data: AuditData,
    options: AuditOptions,
    table_: pd.DataFrame,
    tabled: Table,
    found: BootstrapIntervals | None,
) -> dict[str, Any]:
    """The score histograms, the quantile functions and the metric chart (none without plots)."""
    if not options.plots:
        return {}
    value_range = (0.0, 1.0) if options.task == "classification" else None
    mode = options.group_mode
    return {
        "score_histograms": plot_group_histograms(
            data.y_pred, data.groups, group_mode=mode, value_range=value_range
        ),
        "quantile_functions": plot_group_quantile_functions(
            data.y_pred, data.groups, group_mode=mode
        ),
        "group_metrics": audit_metrics_figure(
            table_, tabled.rates, tabled.groups_only, found, options.confidence, direction(options)
        ),
    }


def settings(
    data: AuditData,
    options: AuditOptions,
    tabled: Table,
    headline: Headline,
    reference: tuple[str | None, str],
) -> dict[str, Any]:
    """How the audit was run, as the report states it."""
    o = options
    small = [str(g) for g in tabled.small]
    return {
        "task": o.task,
        "group_mode": o.group_mode,
        "threshold": o.threshold,
        "n_bootstrap": o.n_bootstrap,
        "confidence": o.confidence,
        "random_state": o.random_state,
        "min_group_size": o.min_group_size,
        "min_group_size_rationale": MIN_GROUP_SIZE_RATIONALE,
        "small_groups": small,
        "excluded_groups": list(small) if headline.exclude else [],
        "weighted": data.sample_weight is not None,
        "reference": reference[0],
        "reference_reason": reference[1],
        "standards": list(o.standards),
        "constraint": o.constraint,
        "favorable_outcome": o.favorable_outcome,
        "direction": direction(o),
        "groups_compared": headline.compared,
    }


def audit_provenance(options: AuditOptions) -> dict[str, Any]:
    """Date, versions, model and every threshold applied, with its rationale."""
    o = options
    thresholds = thresholds_used(o.task, o.threshold, o.min_group_size, o.standards)
    return provenance(model=o.model, thresholds=thresholds, extra=o.provenance_extra)


def bootstrap_and_limits(
    options: AuditOptions, tabled: Table, headline: Headline
) -> tuple[bool, list[str]]:
    """Whether the bootstrap runs, and the warnings of what many groups leave out."""
    return many_group_limits(
        len(tabled.groups_only), len(headline.included), options.n_bootstrap, options.plots
    )
