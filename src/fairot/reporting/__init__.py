"""Reading a model's fairness: audits, plots, drift monitoring, and the writer of result folders.

- :func:`audit` / :class:`Audit` — the fairness report of one set of predictions with bootstrap
  intervals, per-group counts with exact intervals, rules with verdicts (:class:`Verdict`,
  :data:`AUDIT_STANDARDS`) and provenance (:func:`file_provenance`), rendered as text,
  markdown, self-contained HTML and ``metrics.json``; :func:`audit_logistic_regression` audits
  the COT paper's LR baseline on a built-in data set, :func:`audit_gradient_boosting` a
  regressor on the built-in regression data (ACS excerpts).
- :data:`FAVORABLE_OUTCOMES` / :func:`direction_line` — which decision an audit reads as
  favourable (``audit(favorable_outcome=...)``, ``--favorable-outcome``) and the line every
  rendering states beside its verdict.
- :func:`compare_audits` / :class:`AuditComparison` — audits of the same rows side by side (the
  raw and the mitigated model on one page: ``fairot mitigate``, ``fairot demo``).
- :func:`plot_group_histograms`, :func:`plot_group_quantile_functions`,
  :func:`plot_group_metrics` — ``matplotlib.figure.Figure`` objects, no pyplot state.
- :func:`audit_verification` / :class:`VerificationAudit` — face verification from pair scores:
  per-group FMR and FNMR at one threshold set for a target overall FMR (NIST FRVT's reading),
  their max/min ratios, per-group DET curves (:func:`plot_det_curves`) and MBN's 10-fold
  accuracy, STD and SER (``fairot audit --task verification``).
- :class:`FairnessMonitor` / :class:`WindowResult` — windowed metrics of a score stream (windows
  of rows or calendar periods, the last one reported as partial) with stratified bootstrap
  bands, alerts against a permutation null, and closed-loop re-adjustment of a COT/DOT estimator
  (``fairot monitor``); :data:`MONITOR_METRICS` lists what it can watch.
- :mod:`fairot.reporting.artifacts` — the one atomic writer of result folders, shared by the
  audits and :class:`fairot.experiments.StudyResult`.

:func:`load_baseline_split`, :data:`BUILTIN_DATASETS` and :data:`BUILTIN_REGRESSION_DATASETS`
live in :mod:`fairot.datasets` and are re-exported here for the import path users have.
"""

from fairot.datasets import BUILTIN_DATASETS, BUILTIN_REGRESSION_DATASETS, load_baseline_split
from fairot.reporting._audit import Audit, audit
from fairot.reporting._baseline import audit_logistic_regression
from fairot.reporting._baseline_regression import audit_gradient_boosting
from fairot.reporting._comparison import AuditComparison, compare_audits
from fairot.reporting._direction import FAVORABLE_OUTCOMES, direction_line
from fairot.reporting._monitor import MONITOR_METRICS, FairnessMonitor, WindowResult
from fairot.reporting._plots import (
    plot_group_histograms,
    plot_group_metrics,
    plot_group_quantile_functions,
)
from fairot.reporting._provenance import file_provenance
from fairot.reporting._standards import STANDARDS as AUDIT_STANDARDS
from fairot.reporting._standards import Verdict
from fairot.reporting._verification import (
    VerificationAudit,
    audit_verification,
    plot_det_curves,
)

__all__ = [
    "AUDIT_STANDARDS",
    "BUILTIN_DATASETS",
    "BUILTIN_REGRESSION_DATASETS",
    "FAVORABLE_OUTCOMES",
    "MONITOR_METRICS",
    "Audit",
    "AuditComparison",
    "FairnessMonitor",
    "Verdict",
    "VerificationAudit",
    "WindowResult",
    "audit",
    "audit_gradient_boosting",
    "audit_logistic_regression",
    "audit_verification",
    "compare_audits",
    "direction_line",
    "file_provenance",
    "load_baseline_split",
    "plot_group_histograms",
    "plot_group_metrics",
    "plot_group_quantile_functions",
    "plot_det_curves",
]
