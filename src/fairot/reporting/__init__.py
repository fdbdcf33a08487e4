"""Audits: fairness reports with bootstrap intervals, plots, HTML, markdown and metrics.json."""

from fairot.reporting._audit import Audit, audit
from fairot.reporting._builtin import (
    BUILTIN_DATASETS,
    audit_logistic_regression,
    load_baseline_split,
)
from fairot.reporting._plots import (
    plot_group_histograms,
    plot_group_metrics,
    plot_group_quantile_functions,
)

__all__ = [
    "BUILTIN_DATASETS",
    "Audit",
    "audit",
    "audit_logistic_regression",
    "load_baseline_split",
    "plot_group_histograms",
    "plot_group_metrics",
    "plot_group_quantile_functions",
]
