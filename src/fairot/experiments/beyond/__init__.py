"""Beyond demographic parity: strong equalized odds by COT/DOT beside fairlearn's methods.

:func:`run_beyond_dp` (``fairot reproduce beyond-dp``) compares, on Adult, German Credit and
Communities & Crime with the sensitive attributes left out of X, the logistic start, COT and
DOT with ``constraint="equalized_odds"``, fairlearn's ``ExponentiatedGradient(EqualizedOdds())``
and ``ThresholdOptimizer(constraints="equalized_odds")``: Err-.5, the EO difference at 0.5 and
the strong EO disparity (the TPR and FPR gaps integrated over every threshold).
"""

from fairot.experiments.beyond._study import run_beyond_dp

__all__ = ["run_beyond_dp"]
