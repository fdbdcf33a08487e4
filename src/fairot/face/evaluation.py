"""Verification fairness evaluation: LFW/RFW protocol per group, ROC operating points, scatter.

:func:`pair_scores` turns embeddings into the pair-score table that
:func:`fairot.verification.verification_rates` and ``fairot audit --task verification`` read;
the 10-fold protocol itself lives in :mod:`fairot.verification`
(:func:`~fairot.verification.kfold_verification_accuracy`), which :func:`verification_accuracy`
and :func:`group_verification` call on cosine similarities.
"""

from ._evaluation import (
    GroupVerification,
    VerificationResult,
    cosine_similarity,
    group_verification,
    roc_by_group,
    threshold_at_far,
    verification_accuracy,
)
from ._pairs import feature_scatter, pair_scores, sample_pairs, select_difficult_pairs

__all__ = [
    "GroupVerification",
    "VerificationResult",
    "cosine_similarity",
    "feature_scatter",
    "group_verification",
    "pair_scores",
    "roc_by_group",
    "sample_pairs",
    "select_difficult_pairs",
    "threshold_at_far",
    "verification_accuracy",
]
