"""fairot: measure and remove group unfairness with optimal transport and meta-learning.

Subpackages
-----------
metrics
    Fairness metrics of the three seed papers (Wass1, SDD, SPDD, W_p gaps, STD, SER) and
    :func:`~fairot.metrics.fairness_report`.
transport
    The one-dimensional optimal-transport core shared by every method.
datasets
    Loaders for Adult, German Credit, Communities & Crime (shipped) and ACS income.
classification
    COT, DOT and quantile post-processing (DPP) for strong demographic parity.
regression
    Approximate demographic parity for regression under a Wasserstein tolerance.
face
    Meta-learned group margins (MBN) for face recognition (needs the ``torch`` extra).
experiments
    The papers' studies, run by ``fairot reproduce``.
"""

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]
