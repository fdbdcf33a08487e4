"""Fair binary classification under strong demographic parity by optimal transport.

Three ways to make a classifier's scores independent of the sensitive groups, from the COT paper
(Chiappa and Pacchiano, 2021) and its baselines (Jiang et al., 2019):

- :class:`COTClassifier` — continuous OT: stochastic dual potentials in random Fourier features
  (Algorithm 1), with continual re-adjustment by ``partial_fit``;
- :class:`DOTClassifier` — discrete OT: exact 1-D couplings of mini-batches;
- :class:`QuantileParityPostProcessor` — DPP: each group's scores mapped to the target quantiles,
  or a fraction ``1 - tau`` of the way there (``tau``: the fraction of the raw disparity kept);
- :func:`fairness_accuracy_path` and :func:`plot_path` — accuracy against fairness along ``tau``.

and, for decisions at one threshold when the attribute is not an input,
:class:`RateConstrainedClassifier` — the attribute-blind Bayes-optimal rule within a budget on
the groups' selection, true- or false-positive rates (difference or ratio), its multipliers from
the linear program of :func:`solve_rate_program`.
"""

from fairot.classification._cot import COTClassifier, DualPotentials
from fairot.classification._dot import DOTClassifier
from fairot.classification._duals import DualFit, fit_dual_potentials
from fairot.classification._path import ClassificationPath, fairness_accuracy_path, plot_path
from fairot.classification._postprocessing import QuantileParityPostProcessor
from fairot.classification._rate_constrained import RateConstrainedClassifier
from fairot.classification._rate_program import RateProgram, solve_rate_program
from fairot.exceptions import DivergenceError
from fairot.transport import (
    FourierFeatures,
    draw_fourier_features,
    fourier_features,
    tabulate_features,
)

__all__ = [
    "COTClassifier",
    "ClassificationPath",
    "DOTClassifier",
    "DivergenceError",
    "DualFit",
    "DualPotentials",
    "FourierFeatures",
    "QuantileParityPostProcessor",
    "RateConstrainedClassifier",
    "RateProgram",
    "draw_fourier_features",
    "fairness_accuracy_path",
    "fit_dual_potentials",
    "fourier_features",
    "plot_path",
    "solve_rate_program",
    "tabulate_features",
]
