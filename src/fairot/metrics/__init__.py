"""Fairness metrics of the three seed papers.

Classification (COT paper): :func:`error_rate` (Err-.5), :func:`wass1`,
:func:`strong_demographic_disparity` (SDD), :func:`strong_pairwise_demographic_disparity` (SPDD).
Regression (approximate demographic parity paper): :func:`max_pairwise_wasserstein`.
Face recognition (MBN paper): :func:`group_accuracy_std` (STD), :func:`skewed_error_ratio` (SER).
Any task: :func:`wasserstein_distance`, :func:`fairness_report`, :func:`fairness_summary`.
Rates at a threshold: :func:`group_rates`, :func:`demographic_parity_difference`,
:func:`equalized_odds_difference`, :func:`bootstrap_intervals` (stratified bootstrap; its building
blocks are public in :mod:`fairot.metrics.resampling`).

Every group metric checks how it is called: a positional third argument or a call without
``sensitive_features`` raises a ``TypeError`` naming the form below (``y_true=None`` is accepted
where no labels are needed).

The group metrics take one calling form (the score-only form is gone), fairlearn's
``metric(y_true, y_pred, *, sensitive_features, sample_weight=None)``. Model selection:
:func:`make_fairness_scorer` and the ready scorers (:data:`wass1_scorer`, :data:`sdd_scorer`,
:data:`spdd_scorer`, :data:`fair_accuracy_scorer`, :data:`fair_mse_scorer`,
:data:`wasserstein_gap_scorer`) route ``sensitive_features`` to the estimator and the metric;
:func:`within_fairness_budget` is a ``refit`` that keeps the best candidate within a budget.
"""

from fairot.metrics._classification import (
    error_rate,
    strong_demographic_disparity,
    strong_pairwise_demographic_disparity,
    wass1,
)
from fairot.metrics._distances import PairwiseGap, max_pairwise_wasserstein, wasserstein_distance
from fairot.metrics._groups import group_accuracy_std, skewed_error_ratio
from fairot.metrics._rates import (
    demographic_parity_difference,
    equalized_odds_difference,
    group_rates,
)
from fairot.metrics._report import fairness_report, fairness_summary
from fairot.metrics._scorers import (
    FairnessScorer,
    fair_accuracy_scorer,
    fair_mse_scorer,
    make_fairness_scorer,
    sdd_scorer,
    spdd_scorer,
    wass1_scorer,
    wasserstein_gap_scorer,
    within_fairness_budget,
)
from fairot.metrics.resampling import BootstrapIntervals, bootstrap_intervals

__all__ = [
    "BootstrapIntervals",
    "FairnessScorer",
    "PairwiseGap",
    "bootstrap_intervals",
    "demographic_parity_difference",
    "equalized_odds_difference",
    "error_rate",
    "fair_accuracy_scorer",
    "fair_mse_scorer",
    "fairness_report",
    "fairness_summary",
    "group_accuracy_std",
    "group_rates",
    "make_fairness_scorer",
    "max_pairwise_wasserstein",
    "sdd_scorer",
    "skewed_error_ratio",
    "spdd_scorer",
    "strong_demographic_disparity",
    "strong_pairwise_demographic_disparity",
    "wass1",
    "wass1_scorer",
    "wasserstein_distance",
    "wasserstein_gap_scorer",
    "within_fairness_budget",
]
