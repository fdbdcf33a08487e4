"""Fairness in scikit-learn's model selection: scorers that route the groups, a budget refit.

The room of one idea: choosing a model by its fairness as well as its accuracy, with
scikit-learn's own searches (``GridSearchCV``, ``cross_validate``). A fairness scorer needs the
groups twice, for the metric and for a post-processor's ``predict``; scikit-learn's scorers
give them to neither. :func:`make_fairness_scorer` builds a :class:`FairnessScorer` that
requests ``sensitive_features`` through metadata routing and passes them to both; the ready
scorers are :data:`neg_wass1_scorer`, :data:`neg_sdd_scorer`, :data:`neg_spdd_scorer`,
:data:`neg_wasserstein_gap_scorer`, :data:`fair_accuracy_scorer`, :data:`neg_fair_mse_scorer`
(``neg_*`` where lower is better, as scikit-learn names them) and :data:`degenerate_scorer`,
the flag of a model that ranks the labels at chance; :func:`get_fairness_scorer` returns a
private copy of one by name (:func:`get_fairness_scorer_names`). :func:`within_fairness_budget`
is a ``refit`` (:class:`FairnessBudgetRefit`) that keeps the most accurate candidate whose
mean disparity is within a budget.

Where the names live: here, and re-exported by :mod:`fairot.metrics`, the same objects under
both paths. scikit-learn keeps ``make_scorer``, ``get_scorer`` and ``get_scorer_names`` in
``sklearn.metrics`` and fairlearn users look for everything measured in ``fairlearn.metrics``,
so ``from fairot.metrics import neg_wass1_scorer`` is where a user of either reaches first and
stays; this subpackage is their room in the source and in the API reference, next to the
metrics it scores with.

- ``_scorers.py``: :class:`FairnessScorer`, :func:`make_fairness_scorer`, the ready scorers and
  their by-name registry;
- ``_budget.py``: :class:`FairnessBudgetRefit` and :func:`within_fairness_budget`.

Examples
--------
>>> from fairot.metrics.model_selection import get_fairness_scorer_names, within_fairness_budget
>>> "neg_wass1" in get_fairness_scorer_names()
True
>>> refit = within_fairness_budget(0.05)
>>> refit({"mean_test_accuracy": [0.9, 0.85], "mean_test_neg_wass1": [-0.2, -0.04]})
1
"""

from fairot.metrics.model_selection._budget import FairnessBudgetRefit, within_fairness_budget
from fairot.metrics.model_selection._scorers import (
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
)

__all__ = [
    "FairnessBudgetRefit",
    "FairnessScorer",
    "degenerate_scorer",
    "fair_accuracy_scorer",
    "get_fairness_scorer",
    "get_fairness_scorer_names",
    "make_fairness_scorer",
    "neg_fair_mse_scorer",
    "neg_sdd_scorer",
    "neg_spdd_scorer",
    "neg_wass1_scorer",
    "neg_wasserstein_gap_scorer",
    "within_fairness_budget",
]
