"""The MBN study's fixed choices: methods, labels, comparisons, bounds, the paper's numbers.

Internal surface (for the other modules of :mod:`fairot.experiments.mbn`): every constant here.
"""

from __future__ import annotations

import pandas as pd

SCENARIO_ORDER = ("representation", "noise", "mixed")

METHOD_LABELS = {
    "softmax": "Softmax",
    "norm-softmax": "Norm-Softmax",
    "cosface": "CosFace (m=.2)",
    "arcface": "ArcFace (m=.3)",
    "m-rbn": "M-RBN",
    "reweight": "Re-weighting",
    "mbn-soft": "MBN(soft)",
    "mbn-arc": "MBN(arc)",
    "mbn-cos": "MBN(cos)",
}

#: MBN variant -> the baseline with the same loss; each claim is about this paired difference.
COMPARISONS = (("mbn-soft", "norm-softmax"), ("mbn-arc", "arcface"), ("mbn-cos", "cosface"))

DIFFERENCE_LABELS = {"ser": "SER", "std": "STD", "mean": "mean accuracy", "minority": "minority"}

#: What the full study trains by default: each MBN variant and its baseline.
PAIRED_METHODS = tuple(m for pair in COMPARISONS for m in reversed(pair))

#: The two ends of a fixed-margin sweep; ArcFace (0.3 for every group) is the middle point.
SWEEP_MARGINS = (0.1, 0.7)

#: The clamp of the learned margins (``GroupMarginLoss``'s default ``margin_bounds``).
MARGIN_BOUNDS = (0.0, 0.8)

COUNT_ERROR = "{name} must be an int >= 1 or None; got {value!r}."

METHODS_ERROR = "methods must be a non-empty sequence of {names}; got {value!r}."

QUICK_NOTICE = (
    "SMOKE TEST (--quick): {n_seeds} seed(s) of a miniature benchmark, {n_steps} training "
    "steps. It checks that the study runs end to end; its numbers support no conclusion about "
    "MBN. Run without --quick (10 seeds) for results."
)

#: The only numbers of the paper that survive in the seed's text (its tables were lost): SER and
#: STD of a margin baseline and of MBN on the real benchmarks (Section V-B).
PAPER = pd.DataFrame(
    [
        ("Globalface-4 -> IDS-4", "SER", "ArcFace", 2.33, "MBN(arc)", 1.59),
        ("Globalface-8 -> IDS-8", "SER", "CosFace", 2.28, "MBN(cos)", 1.55),
        ("Balancedface-4 -> IDS-4", "SER", "ArcFace", 1.65, "MBN(arc)", 1.37),
        ("Balancedface-4 -> IDS-4", "STD change", "ArcFace", 1.0, "MBN(arc)", 0.53),
    ],
    columns=["setting", "metric", "baseline", "baseline_value", "mbn", "mbn_value"],
)
