"""The accuracy/fairness frontier without the attribute as an input.

``fairot reproduce frontier``: every fairot classifier over its knob beside scikit-learn's
unaware logistic model and fairlearn's reductions and post-processing, on Adult, German Credit
and Communities & Crime with the sensitive attributes removed from ``X``; the rate-constrained
classifier (logistic, and boosted: the limit curve) beside ``ExponentiatedGradient`` under
demographic parity, equal opportunity, equalized odds and the four-fifths ratio.

``_data`` builds the unaware splits, ``_methods`` traces each method into points, ``_study``
runs the study and draws one figure per data set.
"""

from fairot.experiments.frontier._data import ATTRIBUTE_COLUMNS, FRONTIER_DATASETS, unaware_split
from fairot.experiments.frontier._methods import (
    CRITERIA,
    fairlearn_points,
    logistic,
    point_metrics,
)
from fairot.experiments.frontier._study import (
    BUDGETS,
    FAMILIES,
    LIMIT,
    distance_to_limit,
    four_fifths,
    frontier_at,
    run_frontier,
)

__all__ = [
    "ATTRIBUTE_COLUMNS",
    "BUDGETS",
    "CRITERIA",
    "FAMILIES",
    "FRONTIER_DATASETS",
    "LIMIT",
    "distance_to_limit",
    "fairlearn_points",
    "four_fifths",
    "frontier_at",
    "logistic",
    "point_metrics",
    "run_frontier",
    "unaware_split",
]
