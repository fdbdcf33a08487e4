r"""Metric-learning losses for PyTorch, one module per family (pytorch-metric-learning's layout).

- :class:`MarginSoftmaxLoss` — the normalised softmax head whose hooks (``sample_margins``,
  ``target_cosine``) edit the target logit; :class:`NormSoftmaxLoss` is it with no margin;
- :class:`ArcFaceLoss` (:math:`s\cos(\theta_y + m)`, margin in **radians**, with
  :func:`arc_margin_cosine`) and :class:`CosFaceLoss` (:math:`s(\cos\theta_y - m)`);
- :class:`SoftmaxLoss` — plain cross-entropy over a linear layer with bias;
- :class:`GroupMarginLoss` — MBN's per-group margins, learnable, kept out of ``parameters()``;
- :class:`MetaSkewnessLoss` — MBN's meta loss: each group's triplet scatter against the anchors'
  (with :class:`SkewnessResult` and :class:`MetaBatchWarning`).

Every loss takes ``(embeddings, labels, group_codes=None, *, sample_weight=None)``; their checks
and messages are in :mod:`fairot.torch.checks`. ``fairot.face`` re-exports
them for face users.
"""

from ._arcface import ArcFaceLoss, arc_margin_cosine
from ._cosface import CosFaceLoss
from ._group_margin import GroupMarginLoss
from ._margin_softmax import MarginSoftmaxLoss, NormSoftmaxLoss
from ._skewness import MetaBatchWarning, MetaSkewnessLoss, SkewnessResult
from ._softmax import SoftmaxLoss

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
