r"""CosFace: an additive cosine margin on the target class, :math:`s(\cos\theta_y - m)`."""

from __future__ import annotations

from typing import Any

from ._margin_softmax import _FixedMarginLoss

__all__ = ["CosFaceLoss"]


class CosFaceLoss(_FixedMarginLoss):
    r"""CosFace: target logit :math:`s (\cos\theta_y - m)`.

    Parameters
    ----------
    n_classes, embedding_size, scale, validate
        As :class:`MarginSoftmaxLoss`.
    margin : float, default=0.35
        Additive cosine margin :math:`m`. The paper's CosFace baseline uses 0.2 with ``scale=60``.

    Examples
    --------
    Against Norm-Softmax with the same class weights, only the target logit moves, by :math:`s m`:

    >>> import torch
    >>> import torch.nn.functional as F
    >>> from fairot.torch.losses import CosFaceLoss, NormSoftmaxLoss
    >>> cosface = CosFaceLoss(4, 3, margin=0.35, scale=30.0)
    >>> norm = NormSoftmaxLoss(4, 3, scale=30.0)
    >>> _ = norm.load_state_dict(cosface.state_dict())
    >>> x, y = torch.randn(6, 3), torch.arange(6) % 4
    >>> gap = norm.logits(x, y) - cosface.logits(x, y)
    >>> torch.allclose(gap, 30.0 * 0.35 * F.one_hot(y, 4), atol=1e-5)
    True
    """

    def __init__(
        self, n_classes: int, embedding_size: int, *, margin: float = 0.35, **options: Any
    ) -> None:
        # ``options``: ``scale`` and ``validate``, passed on as keywords to the base.
        super().__init__(n_classes, embedding_size, margin=margin, **options)

    def target_cosine(self, cos_target, margins, group_codes):  # noqa: D102
        return cos_target - margins
