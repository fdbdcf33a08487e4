"""Fairness metrics of the three seed papers.

Classification (COT paper): :func:`error_rate` (Err-.5), :func:`wass1`,
:func:`strong_demographic_disparity` (SDD), :func:`strong_pairwise_demographic_disparity` (SPDD).
Regression (approximate demographic parity paper): :func:`max_pairwise_wasserstein`.
Face recognition (MBN paper): :func:`group_accuracy_std` (STD), :func:`skewed_error_ratio` (SER).
Beyond demographic parity: :func:`strong_equalized_odds_disparity`,
:func:`strong_equal_opportunity_disparity` and their pairwise forms (the score distributions
compared given the label, i.e. the TPR and FPR gaps integrated over every threshold).
Face verification on pair scores (FMR/FNMR per group at one threshold, DET curves, the LFW/RFW
10-fold protocol) has its own package, :mod:`fairot.verification`.
Any task: :func:`wasserstein_distance`, :func:`fairness_report`, :func:`fairness_summary`.
Rates at a threshold: :func:`group_rates`, :func:`demographic_parity_difference`,
:func:`equalized_odds_difference`, :func:`bootstrap_intervals` (the stratified bootstrap of every
metric; its room, with the building blocks for callers that hold their own replicates, is
:mod:`fairot.metrics.resampling`).

Every group metric checks how it is called: a positional third argument or a call without
``sensitive_features`` raises a ``TypeError`` naming the form below (``y_true=None`` is accepted
where no labels are needed). Every group metric also takes ``control_features=``: it is then
computed within each stratum of the control features and recombined with the strata's shares of
the rows (conditional parity, fairlearn's ``control_features``).

The group metrics take one calling form (the score-only form is gone), fairlearn's
``metric(y_true, y_pred, *, sensitive_features, sample_weight=None)``. Model selection:
:func:`make_fairness_scorer` and the ready scorers (:data:`neg_wass1_scorer`,
:data:`neg_sdd_scorer`, :data:`neg_spdd_scorer`, :data:`fair_accuracy_scorer`,
:data:`neg_fair_mse_scorer`, :data:`neg_wasserstein_gap_scorer`; by name with
:func:`get_fairness_scorer`) route ``sensitive_features`` to the estimator and the metric;
:func:`within_fairness_budget` is a ``refit`` that keeps the best candidate within a budget
(their room is :mod:`fairot.metrics.model_selection`; they are re-exported here, where
scikit-learn keeps its own scorers).
Degenerate models: :func:`diagnose_collapse` (score spread and AUC against the starting model;
:class:`CollapseDiagnosis`, :func:`degenerate_model_message`), used by every mitigation,
through :func:`diagnose_fit` (training rows, then held-out rows) at the end of every fit;
:data:`CHANCE_AUC` (0.55), the AUC at or below which a held-out model is read as chance;
:func:`chance_ranking` and :data:`degenerate_scorer`, the flag a search records in
``cv_results_`` (``scoring={..., "degenerate": degenerate_scorer}``).
"""

from fairot.metrics._classification import (
    error_rate,
    strong_demographic_disparity,
    strong_pairwise_demographic_disparity,
    wass1,
)
from fairot.metrics._collapse import (
    CHANCE_AUC,
    CollapseDiagnosis,
    chance_ranking,
    degenerate_model_message,
    diagnose_collapse,
    diagnose_fit,
)
from fairot.metrics._distances import PairwiseGap, max_pairwise_wasserstein, wasserstein_distance
from fairot.metrics._groups import group_accuracy_std, skewed_error_ratio
from fairot.metrics._odds import (
    strong_equal_opportunity_disparity,
    strong_equalized_odds_disparity,
    strong_pairwise_equal_opportunity_disparity,
    strong_pairwise_equalized_odds_disparity,
)
from fairot.metrics._rates import (
    demographic_parity_difference,
    equalized_odds_difference,
    group_rates,
)
from fairot.metrics._report import MAX_PAIRWISE_GROUPS, fairness_report, fairness_summary
from fairot.metrics.model_selection import (
    FairnessBudgetRefit,
    FairnessScorer,
    degenerate_scorer,
    fair_accuracy_scorer,
    get_fairness_scorer,
    get_fairness_scorer_names,
    make_fairness_scorer,
    neg_fair_mse_scorer,
    neg_sdd_scorer,
    neg_spdd_scorer,
    neg_wass1_scorer,
    neg_wasserstein_gap_scorer,
    within_fairness_budget,
)
from fairot.metrics.resampling import BootstrapIntervals, bootstrap_intervals

__all__ = [
    "CHANCE_AUC",
    "BootstrapIntervals",
    "CollapseDiagnosis",
    "FairnessBudgetRefit",
    "FairnessScorer",
    "MAX_PAIRWISE_GROUPS",
    "PairwiseGap",
    "bootstrap_intervals",
    "chance_ranking",
    "degenerate_model_message",
    "degenerate_scorer",
    "demographic_parity_difference",
    "diagnose_collapse",
    "diagnose_fit",
    "equalized_odds_difference",
    "error_rate",
    "fair_accuracy_scorer",
    "fairness_report",
    "fairness_summary",
    "get_fairness_scorer",
    "get_fairness_scorer_names",
    "group_accuracy_std",
    "group_rates",
    "make_fairness_scorer",
    "max_pairwise_wasserstein",
    "neg_fair_mse_scorer",
    "neg_sdd_scorer",
    "neg_spdd_scorer",
    "neg_wass1_scorer",
    "neg_wasserstein_gap_scorer",
    "skewed_error_ratio",
    "strong_demographic_disparity",
    "strong_equal_opportunity_disparity",
    "strong_equalized_odds_disparity",
    "strong_pairwise_demographic_disparity",
    "strong_pairwise_equal_opportunity_disparity",
    "strong_pairwise_equalized_odds_disparity",
    "wass1",
    "wasserstein_distance",
    "within_fairness_budget",
]
