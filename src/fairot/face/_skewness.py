"""The meta skewness loss's old private path: it lives in :mod:`fairot.torch.losses` now.

Re-exports only, for the face modules and pickles that name ``fairot.face._skewness``.
"""

from fairot.torch.losses import MetaBatchWarning, MetaSkewnessLoss, SkewnessResult

__all__ = ["MetaBatchWarning", "MetaSkewnessLoss", "SkewnessResult"]
