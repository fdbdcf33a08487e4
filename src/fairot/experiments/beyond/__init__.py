"""Beyond demographic parity: strong equalized odds by COT/DOT beside fairlearn's methods.

:func:`run_beyond_dp` (``fairot reproduce beyond-dp``) compares, on Adult, German Credit and
Communities & Crime with the sensitive attributes left out of X, the logistic start, COT, DOT
and the PyTorch penalty (``FairMLPClassifier``) with ``constraint="equalized_odds"``,
fairlearn's ``ExponentiatedGradient(EqualizedOdds())`` and
``ThresholdOptimizer(constraints="equalized_odds")``: Err-.5, the EO difference at 0.5 and
the strong EO disparity (the TPR and FPR gaps integrated over every threshold), 3 seeds, with a
figure; and the issue's check on Adult with the attributes in X (share of the logistic start's
strong EO disparity removed by COT and DOT).
"""

from fairot.experiments.beyond._study import run_beyond_dp

__all__ = ["run_beyond_dp"]
