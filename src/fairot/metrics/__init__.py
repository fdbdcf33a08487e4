"""Fairness metrics of the three seed papers.

Classification (COT paper): :func:`error_rate` (Err-.5), :func:`wass1`,
:func:`strong_demographic_disparity` (SDD), :func:`strong_pairwise_demographic_disparity` (SPDD).
Regression (approximate demographic parity paper): :func:`max_pairwise_wasserstein`.
Face recognition (MBN paper): :func:`group_accuracy_std` (STD), :func:`skewed_error_ratio` (SER).
Any task: :func:`wasserstein_distance`, :func:`fairness_report`, :func:`fairness_summary`.
Rates at a threshold: :func:`group_rates`, :func:`demographic_parity_difference`,
:func:`equalized_odds_difference`, :func:`bootstrap_intervals`.
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
    BootstrapIntervals,
    bootstrap_intervals,
    demographic_parity_difference,
    equalized_odds_difference,
    group_rates,
)
from fairot.metrics._report import fairness_report, fairness_summary

__all__ = [
    "BootstrapIntervals",
    "bootstrap_intervals",
    "demographic_parity_difference",
    "equalized_odds_difference",
    "group_rates",
    "PairwiseGap",
    "error_rate",
    "fairness_report",
    "fairness_summary",
    "group_accuracy_std",
    "max_pairwise_wasserstein",
    "skewed_error_ratio",
    "strong_demographic_disparity",
    "strong_pairwise_demographic_disparity",
    "wass1",
    "wasserstein_distance",
]
