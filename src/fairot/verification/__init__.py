r"""Face verification per group: pairs decided by a threshold on a similarity score.

A verification system compares two images and declares them the same identity when their
similarity score :math:`s` (higher = more alike) passes a threshold :math:`T`. Its errors are
false matches (impostor pairs with :math:`s \ge T`, the FMR) and false non-matches (genuine
pairs below it, the FNMR). This package reads them per group, on pair scores alone (no torch,
no images), in the two ways the field reads them:

- **at one operating point, as NIST FRVT reads it** [1]_: :func:`fmr_threshold` sets one global
  threshold on every impostor pair for a target overall FMR, :func:`verification_rates` reads
  each group's FMR and FNMR there and their max/min ratios (:class:`VerificationRates`), and
  :func:`det_curves` gives each group's whole FMR-FNMR trade-off (``_operating_point.py``);
- **as accuracy under the LFW/RFW 10-fold protocol** [2]_, [3]_:
  :func:`kfold_verification_accuracy` picks on nine contiguous folds the threshold that
  maximises accuracy (:func:`best_accuracy_threshold`, exact over every cut) and measures the
  tenth (:class:`VerificationResult`); :func:`verification_accuracy_by_group` runs it within each
  group and summarises the groups by MBN's Avg, STD and SER (:class:`GroupVerification`)
  (``_protocol.py``).

The checks of pair labels and scores, and their messages, are :mod:`fairot.verification.checks`.
The package sits on the floor of the mitigations, over :mod:`fairot.metrics` (the calling form
of its group functions, STD and SER); :mod:`fairot.reporting` renders its results as a
verification audit (``fairot audit --task verification``), and :mod:`fairot.face` turns
embeddings into pair scores and calls it.

References
----------
.. [1] Grother, P., Ngan, M. and Hanaoka, K. "Face Recognition Vendor Test (FRVT) Part 3:
   Demographic Effects", NISTIR 8280 (2019).
.. [2] Huang, G. B. et al. "Labeled Faces in the Wild", UMass Amherst TR 07-49 (2007).
.. [3] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).

Examples
--------
>>> from fairot.verification import verification_rates
>>> same = [True, False, False, True, False, False]
>>> scores = [0.9, 0.8, 0.1, 0.25, 0.2, 0.3]
>>> rates = verification_rates(same, scores, sensitive_features=list("aaabbb"), target_fmr=0.25)
>>> rates.by_group["fmr"].to_dict()
{'a': 0.5, 'b': 0.0}
"""

from fairot.verification._operating_point import (
    VerificationRates,
    det_curves,
    fmr_threshold,
    verification_rates,
)
from fairot.verification._protocol import (
    GroupVerification,
    VerificationResult,
    best_accuracy_threshold,
    kfold_verification_accuracy,
    verification_accuracy_by_group,
)

__all__ = [
    "GroupVerification",
    "VerificationRates",
    "VerificationResult",
    "best_accuracy_threshold",
    "det_curves",
    "fmr_threshold",
    "kfold_verification_accuracy",
    "verification_accuracy_by_group",
    "verification_rates",
]
