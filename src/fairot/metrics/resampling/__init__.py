r"""The stratified bootstrap of the fairness metrics: intervals for every number of a report.

The room of one idea: how much the fairness metrics of a sample would move on another sample of
the same groups. :func:`bootstrap_intervals` (also :func:`fairot.metrics.bootstrap_intervals`,
where users find it) resamples the rows *within each intersectional cell* of the sensitive
columns, so every replicate keeps the groups' sizes, and recomputes on every replicate each
summary metric of :func:`fairot.metrics.fairness_report` (``wass1``, ``sdd``, ``spdd``, the
pairwise W_p, the errors) and each per-group rate with its disparities
(:func:`rate_summary`); the intervals are percentile or bias-corrected
(:func:`bias_corrected_interval`), or say why none can be shown (``NOT_ESTIMABLE_*``,
``ONE_SIDED``). :func:`undefined_groups` and :func:`groups_compared` say which groups a rate
does not exist for and how many groups each difference compares (``UNDEFINED_REASONS`` says
why).

Why it is an engine of its own rather than a loop over the metrics: a replicate is kept as
counts of the rows sorted once, never as a copy, its counts are drawn in compiled code from
its own seed (the same ``random_state`` gives the same replicates whatever the threads), and
one merge of the groups' quantile functions plus one pass over the pooled order read every
distance and every rate of a replicate. The user case, at 2×10⁵ rows in 8 groups: 100
replicates of *every* metric and rate took 14 s where fairlearn's
``MetricFrame(..., n_boot=100)`` took 411 s for the selection rate alone, measured in one run
on a 2-core machine shared with a dozen other processes (29×; about 0.5 s against 59 s was
reported on a quiet machine). That is what makes intervals affordable by default in
:func:`fairot.reporting.audit` and in every window of the drift monitor.
``benchmarks/bench_bootstrap.py --metricframe`` measures it and ``docs/benchmarks.md`` records
the run.

The modules, one idea each:

- ``_bootstrap.py``: :func:`bootstrap_intervals` and :class:`BootstrapIntervals` (checks,
  chunks of replicates, the intervals assembled);
- ``_replicate_metrics.py``: every metric and rate of a batch of replicates, on threads;
- ``_count_draws.py``: the rows sorted once (``CountLayout``) and the compiled stratified
  multinomial draws (SplitMix64, Lemire's bounded integers);
- ``_count_statistics.py``: the compiled distances and rate counts of count-weighted sorted
  groups;
- ``_weighted_metrics.py``: the metrics of weighted replicates, coupled one at a time;
- ``_intervals.py``: intervals read off replicates (percentile, bias-corrected, or why none);
- ``_row_replicates.py``: replicates held as row indices, for a caller with its own replicates
  (the drift monitor): :func:`stratified_indices` and :func:`batched_wasserstein`.

Examples
--------
>>> import numpy as np
>>> from fairot.metrics.resampling import bootstrap_intervals
>>> g = np.repeat(["a", "b"], 100)
>>> s = np.r_[np.linspace(0.2, 0.6, 100), np.linspace(0.4, 0.8, 100)]
>>> ci = bootstrap_intervals(None, s, sensitive_features=g, n_bootstrap=50, random_state=0)
>>> low, high = ci.summary.loc["wass1"]
>>> bool(low < high)
True
"""

from fairot.metrics._rates import (
    UNDEFINED_REASONS,
    groups_compared,
    rate_summary,
    undefined_groups,
)
from fairot.metrics.resampling._bootstrap import BootstrapIntervals, bootstrap_intervals
from fairot.metrics.resampling._intervals import (
    NOT_ESTIMABLE_CONSTANT,
    NOT_ESTIMABLE_ESTIMATE,
    NOT_ESTIMABLE_FEW,
    NOT_ESTIMABLE_POINT,
    NOT_ESTIMABLE_TAIL,
    NOT_ESTIMABLE_UNDEFINED,
    ONE_SIDED,
    bias_corrected_interval,
)
from fairot.metrics.resampling._row_replicates import batched_wasserstein, stratified_indices

__all__ = [
    "NOT_ESTIMABLE_CONSTANT",
    "NOT_ESTIMABLE_ESTIMATE",
    "NOT_ESTIMABLE_FEW",
    "NOT_ESTIMABLE_POINT",
    "NOT_ESTIMABLE_TAIL",
    "NOT_ESTIMABLE_UNDEFINED",
    "ONE_SIDED",
    "UNDEFINED_REASONS",
    "BootstrapIntervals",
    "batched_wasserstein",
    "bias_corrected_interval",
    "bootstrap_intervals",
    "groups_compared",
    "rate_summary",
    "stratified_indices",
    "undefined_groups",
]
