"""Margin-softmax training losses and MBN's meta skewness loss (PyTorch ``nn.Module`` s).

All margins are in radians (ArcFace) or cosine units (CosFace), never degrees.
"""

from ._margin_losses import (
    ArcFaceLoss,
    CosFaceLoss,
    GroupMarginLoss,
    MarginSoftmaxLoss,
    NormSoftmaxLoss,
    SoftmaxLoss,
    arc_margin_cosine,
)
from ._skewness import MetaBatchWarning, MetaSkewnessLoss, SkewnessResult

__all__ = [
    "ArcFaceLoss",
    "CosFaceLoss",
    "GroupMarginLoss",
    "MarginSoftmaxLoss",
    "MetaBatchWarning",
    "MetaSkewnessLoss",
    "NormSoftmaxLoss",
    "SkewnessResult",
    "SoftmaxLoss",
    "arc_margin_cosine",
]
