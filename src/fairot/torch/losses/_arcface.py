r"""ArcFace: an additive angular margin on the target class, :math:`s\cos(\theta_y + m)`.

The margin is in radians and the loss is differentiable in it, as MBN (Wang, Zhang and Deng, "Meta
Balanced Network for Fair Face Recognition", IEEE TPAMI 2021) needs to learn it.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ._margin_softmax import _FixedMarginLoss

__all__ = ["ArcFaceLoss", "arc_margin_cosine"]

# acos is clamped this far inside [-1, 1] (at least one machine epsilon of the dtype).
_ANGLE_EPS = 1e-7


def arc_margin_cosine(cos_theta: torch.Tensor, margin: torch.Tensor | float) -> torch.Tensor:
    r"""ArcFace's target cosine :math:`\cos(\theta + m)`, kept monotone and differentiable in m.

    Where :math:`\theta + m > \pi` the cosine would start to increase again, so it is replaced by
    the usual linear fallback :math:`\cos\theta - m \sin m` (insightface, pytorch-metric-learning).
    Both branches are computed with tensor operations, so the result stays differentiable with
    respect to the margin — insightface edits the logits in place under ``no_grad``, which MBN
    cannot use because it differentiates the loss with respect to :math:`m` (Eq. (10) of MBN).

    Parameters
    ----------
    cos_theta : Tensor of shape (n,)
        Cosine between each embedding and its target class weight.
    margin : Tensor of shape (n,) or float
        Additive angular margin in radians.

    Returns
    -------
    Tensor of shape (n,)

    Examples
    --------
    :math:`\cos(0 + \pi/3) = 1/2` and :math:`\cos(\pi/2 + \pi/3) = -\sqrt3/2`; at
    :math:`\theta = \pi` the fallback gives :math:`-1 - (\pi/3)\sin(\pi/3)`:

    >>> import math
    >>> import torch
    >>> from fairot.torch.losses import arc_margin_cosine
    >>> out = arc_margin_cosine(torch.tensor([1.0, 0.0, -1.0]), math.pi / 3)
    >>> [round(v, 4) for v in out.tolist()]
    [0.5, -0.866, -1.9069]
    """
    margin = torch.as_tensor(margin, dtype=cos_theta.dtype, device=cos_theta.device)
    # 1 - 1e-7 rounds to 1.0 in float16/bfloat16, where acos' derivative is infinite: keep the
    # clamp one machine epsilon of the dtype inside [-1, 1] at least.
    eps = max(_ANGLE_EPS, torch.finfo(cos_theta.dtype).eps)
    theta = torch.acos(cos_theta.clamp(-1.0 + eps, 1.0 - eps))
    return torch.where(
        theta <= math.pi - margin,
        torch.cos(theta + margin),
        cos_theta - margin * torch.sin(margin),
    )


class ArcFaceLoss(_FixedMarginLoss):
    r"""ArcFace: target logit :math:`s \cos(\theta_y + m)`.

    Parameters
    ----------
    n_classes, embedding_size, scale, validate
        As :class:`MarginSoftmaxLoss`.
    margin : float, default=0.5
        Additive angular margin :math:`m` in **radians** (0.5 rad ≈ 28.6°, pytorch-metric-learning's
        default in degrees). The paper's ArcFace baseline uses 0.3 with ``scale=60``.

    Examples
    --------
    An embedding on its class weight (:math:`\theta_y = 0`) and orthogonal to the other class:
    with :math:`m = \pi/3` and :math:`s = 1` the logits are :math:`\cos(\pi/3) = 1/2` and 0, so
    the loss is :math:`\log(1 + e^{-1/2}) \approx 0.4741`.

    >>> import math
    >>> import torch
    >>> from fairot.torch.losses import ArcFaceLoss
    >>> loss = ArcFaceLoss(2, 2, margin=math.pi / 3, scale=1.0)
    >>> with torch.no_grad():
    ...     _ = loss.weight.copy_(torch.eye(2))
    >>> round(loss(torch.eye(2), torch.tensor([0, 1])).item(), 4)
    0.4741
    """

    def __init__(
        self, n_classes: int, embedding_size: int, *, margin: float = 0.5, **options: Any
    ) -> None:
        # ``options``: ``scale`` and ``validate``, passed on as keywords to the base.
        super().__init__(n_classes, embedding_size, margin=margin, **options)

    def target_cosine(self, cos_target, margins, group_codes):  # noqa: D102
        return arc_margin_cosine(cos_target, margins)
