"""The MBN paper's study on the synthetic identity benchmark: ``fairot reproduce mbn-synthetic``.

Every baseline of the paper (Softmax, Norm-Softmax, CosFace, ArcFace, M-RBN, re-weighting) and
MBN(soft/arc/cos) are trained with :class:`~fairot.face.MetaBalancedTrainer` on the three scenarios
of :func:`~fairot.face.make_synthetic_faces` — minority groups hard because they are
under-represented, because they are intrinsically noisier, or both — and evaluated with the
LFW/RFW protocol per group (accuracy, mean, STD, SER). By default the full study trains each MBN
variant and its baseline; an optional fixed-margin sweep (ArcFace with the minority margins at,
e.g., 0.1 and 0.7 rad) tells whether *any* larger margin helps a hard group in each scenario,
which is the premise of MBN ("Meta Balanced Network for Fair Face Recognition",
``seeds/002``).

One seed decides nothing here: SER moves by more between seeds than between methods. The study
therefore runs 10 independent seeds per scenario and reports every number as a mean with its 95%
Student t interval, and every MBN claim as the interval of the *paired* difference MBN minus the
baseline with the same loss on the same seed; the notes call a difference only when that interval
excludes 0.
"""

from fairot.experiments._seeds import CONFIDENCE
from fairot.experiments.mbn._constants import (
    COMPARISONS,
    METHOD_LABELS,
    PAIRED_METHODS,
    PAPER,
    QUICK_NOTICE,
    SCENARIO_ORDER,
    SWEEP_MARGINS,
)
from fairot.experiments.mbn._study import run_mbn_synthetic

__all__ = [
    "COMPARISONS",
    "CONFIDENCE",
    "METHOD_LABELS",
    "PAIRED_METHODS",
    "PAPER",
    "QUICK_NOTICE",
    "SCENARIO_ORDER",
    "SWEEP_MARGINS",
    "run_mbn_synthetic",
]
