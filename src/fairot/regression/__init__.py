r"""Fair regression under approximate demographic parity (the regression seed paper, [1]_).

Every pair of groups' prediction distributions is kept within a Wasserstein tolerance
:math:`\epsilon` (:math:`W_1`, :math:`W_2` or :math:`W_\infty`), for any number of groups, by
adjusting the groups' quantile curves of a fitted score at the smallest cost in accuracy.

* :func:`adjust_quantiles` — the functional solver on the midpoint grid (closed forms for two
  groups, group-weighted Dykstra projection, projected gradient, the :math:`W_\infty` rank-wise
  construction), returning a :class:`QuantileAdjustment`.
* :class:`WassersteinFairRegressor` — the paper's four stages as a scikit-learn regressor;
  :func:`fairness_accuracy_path` fits a whole tolerance path; :class:`WassersteinFairRegressorCV`
  chooses :math:`\tau` by cross-validation (the most accurate within a fairness budget).
* Induced costs: :class:`SquaredCost`, :class:`AbsoluteGaussianCost`, :class:`PinballGaussianCost`,
  :class:`LogisticCost`, and the observed-loss proxy :class:`ObservedLossCost`.
* Plots: :func:`plot_path`, :func:`plot_quantile_curves`.

A backend (the Dask one) fits the regressor through its documented seam
:meth:`WassersteinFairRegressor.fit_from_group_statistics`, with the public modules
:mod:`fairot.regression.checks` (messages, option checks) and :mod:`fairot.regression.scores`
(the score models' scores); this package never imports the backend.

References
----------
.. [1] "Fair Regression under Approximate Demographic Parity" (the regression seed paper).
"""

from fairot.regression._adjust import QuantileAdjustment, adjust_quantiles
from fairot.regression._costs import (
    AbsoluteGaussianCost,
    InducedCost,
    LogisticCost,
    ObservedLossCost,
    PinballGaussianCost,
    SquaredCost,
)
from fairot.regression._cv import WassersteinFairRegressorCV
from fairot.regression._estimator import WassersteinFairRegressor
from fairot.regression._path import FairnessAccuracyPath, fairness_accuracy_path
from fairot.regression._plotting import plot_path, plot_quantile_curves
from fairot.regression._projections import project_lp_ball, project_monotone_box

__all__ = [
    "AbsoluteGaussianCost",
    "FairnessAccuracyPath",
    "InducedCost",
    "LogisticCost",
    "ObservedLossCost",
    "PinballGaussianCost",
    "QuantileAdjustment",
    "SquaredCost",
    "WassersteinFairRegressor",
    "WassersteinFairRegressorCV",
    "adjust_quantiles",
    "fairness_accuracy_path",
    "plot_path",
    "plot_quantile_curves",
    "project_lp_ball",
    "project_monotone_box",
]
