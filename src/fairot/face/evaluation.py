"""Verification fairness evaluation: LFW/RFW protocol per group, ROC operating points, scatter."""

from ._evaluation import (
    GroupVerification,
    VerificationResult,
    cosine_similarity,
    group_verification,
    roc_by_group,
    threshold_at_far,
    verification_accuracy,
)
from ._pairs import feature_scatter, sample_pairs, select_difficult_pairs

__all__ = [
    "GroupVerification",
    "VerificationResult",
    "cosine_similarity",
    "feature_scatter",
    "group_verification",
    "roc_by_group",
    "sample_pairs",
    "select_difficult_pairs",
    "threshold_at_far",
    "verification_accuracy",
]
