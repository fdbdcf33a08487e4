"""The paper's methods as (training loss, meta loss, sample weights) recipes for the trainer.

=================  ==========================================================================
``method``         recipe (Section V of MBN [1]_)
=================  ==========================================================================
``softmax``        linear softmax cross-entropy, no normalisation
``norm-softmax``   Norm-Softmax (normalised features and weights, scale s)
``cosface``        CosFace, m = 0.2
``arcface``        ArcFace, m = 0.3 rad
``m-rbn``          fixed ArcFace group margins inversely proportional to the group's training
                   share, scaled to mean 0.3 (M-RBN of Wang & Deng, CVPR 2020)
``reweight``       ArcFace m = 0.3 with inverse-frequency group sample weights
``mbn-soft``       MBN(soft): Norm-Softmax anchors, ArcFace margins learned from 0.3
``mbn-arc``        MBN(arc): ArcFace anchors at 0.3, ArcFace margins learned from 0.3
``mbn-cos``        MBN(cos): CosFace anchors at 0.15, CosFace margins learned from 0.15
=================  ==========================================================================

References
----------
.. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from torch import nn

from fairot.torch.losses import (
    ArcFaceLoss,
    CosFaceLoss,
    GroupMarginLoss,
    MetaSkewnessLoss,
    NormSoftmaxLoss,
    SoftmaxLoss,
)

__all__ = ["METHODS", "MethodSpec", "make_method"]

METHODS = (
    "softmax",
    "norm-softmax",
    "cosface",
    "arcface",
    "m-rbn",
    "reweight",
    "mbn-soft",
    "mbn-arc",
    "mbn-cos",
)
METHOD_ERROR = "method must be one of {methods}; got {value!r}."
COUNTS_ERROR = "group_counts must be n_groups={n_groups} positive training counts; got {value!r}."


@dataclass
class MethodSpec:
    """What :class:`~fairot.face.MetaBalancedTrainer` needs for one method.

    Attributes
    ----------
    name : str
    loss : nn.Module
        Training loss head.
    meta_loss : MetaSkewnessLoss or None
        Set for the MBN variants only.
    group_weights : ndarray of shape (n_groups,) or None
        Sample weights of the re-weighting baseline.

    Examples
    --------
    See :func:`make_method`.
    """

    name: str
    loss: nn.Module
    meta_loss: MetaSkewnessLoss | None = None
    group_weights: np.ndarray | None = None


def make_method(
    method: str,
    *,
    n_classes: int,
    embedding_size: int,
    n_groups: int,
    group_counts: Sequence[float] | None = None,
    scale: float = 60.0,
    anchor_groups: Sequence[int] = (0,),
    gamma: float = 0.5,
    selection_margin: float | None = 0.2,
    margin_bounds: tuple[float, float] = (0.0, 0.8),
) -> MethodSpec:
    """Build the loss (and meta loss) of one of :data:`METHODS`.

    Parameters
    ----------
    method : str
        One of :data:`METHODS`.
    n_classes, embedding_size, n_groups : int
    group_counts : sequence of float, optional
        Training samples per group; required by ``m-rbn`` and ``reweight``.
    scale : float, default=60.0
        Scale s of the normalised losses (60 for the paper's baselines).
    anchor_groups : sequence of int, default=(0,)
    gamma, selection_margin : float
        Of the meta skewness loss.
    margin_bounds : (float, float), default=(0.0, 0.8)

    Returns
    -------
    MethodSpec

    Examples
    --------
    >>> from fairot.face import make_method
    >>> spec = make_method("reweight", n_classes=10, embedding_size=8, n_groups=2,
    ...                    group_counts=[300, 100])
    >>> type(spec.loss).__name__, spec.group_weights.tolist()
    ('ArcFaceLoss', [0.6666666666666666, 2.0])
    """
    if method not in METHODS:
        raise ValueError(METHOD_ERROR.format(methods=METHODS, value=method))
    counts = None
    if method in ("m-rbn", "reweight"):
        counts = np.asarray(group_counts if group_counts is not None else [], dtype=float)
        if counts.shape != (n_groups,) or not np.all(counts > 0):
            raise ValueError(COUNTS_ERROR.format(n_groups=n_groups, value=group_counts))
    args = (n_classes, embedding_size)
    if method == "softmax":
        return MethodSpec(method, SoftmaxLoss(*args))
    if method == "norm-softmax":
        return MethodSpec(method, NormSoftmaxLoss(*args, scale=scale))
    if method == "cosface":
        return MethodSpec(method, CosFaceLoss(*args, margin=0.2, scale=scale))
    if method == "arcface":
        return MethodSpec(method, ArcFaceLoss(*args, margin=0.3, scale=scale))
    if method == "reweight":
        weights = counts.sum() / (n_groups * counts)
        return MethodSpec(method, ArcFaceLoss(*args, margin=0.3, scale=scale), None, weights)
    if method == "m-rbn":
        inverse = 1.0 / (counts / counts.sum())
        margins = 0.3 * inverse / inverse.mean()
        loss = GroupMarginLoss(
            *args,
            n_groups,
            kind="arc",
            anchor_groups=(),
            init_margin=margins.tolist(),
            scale=scale,
            margin_bounds=(0.0, max(float(margins.max()), margin_bounds[1])),
        )
        loss.margins.requires_grad_(False)
        return MethodSpec(method, loss)
    kind, anchor_loss, init = {
        "mbn-soft": ("arc", "softmax", 0.3),
        "mbn-arc": ("arc", "arc", 0.3),
        "mbn-cos": ("cos", "cos", 0.15),
    }[method]
    loss = GroupMarginLoss(
        *args,
        n_groups,
        kind=kind,
        anchor_groups=anchor_groups,
        anchor_loss=anchor_loss,
        init_margin=init,
        scale=scale,
        margin_bounds=margin_bounds,
    )
    meta = MetaSkewnessLoss(
        gamma=gamma,
        selection_margin=selection_margin,
        anchor_groups=anchor_groups,
        n_groups=n_groups,
    )
    return MethodSpec(method, loss, meta)
