r"""MBN's adaptive margins: each sample's ArcFace or CosFace margin is the margin of its group.

MBN: Wang, Zhang and Deng, "Meta Balanced Network for Fair Face Recognition", IEEE TPAMI (2021).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import torch

from fairot.torch.checks import (
    ANCHOR_ERROR,
    BOUNDS_ERROR,
    INIT_MARGIN_ERROR,
    KIND_ERROR,
    NONFINITE_MARGINS_ERROR,
    check_count,
)

from ._arcface import arc_margin_cosine
from ._margin_softmax import MarginSoftmaxLoss

__all__ = ["GroupMarginLoss"]

_KIND_CODES = {"softmax": 0, "arc": 1, "cos": 2}


class GroupMarginLoss(MarginSoftmaxLoss):
    r"""MBN's adaptive margin loss: each sample's margin is the margin of its group.

    .. math::

        L_j^{T(arc)} = -\log \frac{e^{s\cos(\theta_{y_j} + m_{g_j})}}
            {e^{s\cos(\theta_{y_j} + m_{g_j})} + \sum_{i\ne y_j} e^{s\cos\theta_i}}
        \quad\text{or}\quad
        L_j^{T(cos)}:\ s(\cos\theta_{y_j} - m_{g_j}),

    Eqs. (1)-(2) of MBN, where :math:`g_j` is the group (skin tone) of sample :math:`j`. The anchor
    groups (Tone I in the paper) keep a fixed margin — or no margin at all with
    ``anchor_loss="softmax"`` — and the other groups' margins are the differentiable parameter
    :attr:`margins` that a meta step learns (:class:`fairot.face.MetaBalancedTrainer`'s). The
    paper's variants:

    - MBN(soft): ``kind="arc", anchor_loss="softmax", init_margin=0.3``;
    - MBN(arc): ``kind="arc", anchor_loss="arc", init_margin=0.3``;
    - MBN(cos): ``kind="cos", anchor_loss="cos", init_margin=0.15``.

    With ``anchor_groups=()`` and per-group ``init_margin`` it is also a fixed group-margin loss
    (M-RBN) when the margins are not optimised.

    Parameters
    ----------
    n_classes : int
        Number of training identities.
    embedding_size : int
        Dimension of the embeddings.
    n_groups : int
        Number of groups :math:`k`; group codes are ``0 .. n_groups - 1``.
    kind : {"arc", "cos"}, default="arc"
        How the learnable margins enter: additive angle (radians) or additive cosine.
    anchor_groups : sequence of int, default=(0,)
        Groups whose margin is fixed (the paper's lighter-skinned anchors).
    anchor_loss : {"arc", "cos", "softmax"}, optional
        Loss of the anchor groups; defaults to ``kind``. ``"softmax"`` means Norm-Softmax
        (no margin).
    init_margin : float or sequence of float, default=0.3
        Initial margin of every group (or one per group); the fixed margin of arc/cos anchors.
    scale : float, default=64.0
        Scale :math:`s`.
    margin_bounds : (float, float), default=(0.0, 0.8)
        The learnable margins are clamped into this interval in the forward (so a margin moved
        outside by any optimiser acts as the bound) and, in place, after every meta step.
    validate : bool, default=True
        As :class:`MarginSoftmaxLoss`; also checks that the margins are finite.

    Attributes
    ----------
    margins : Tensor of shape (n_groups,)
        The learnable margins :math:`m_g` (the anchors' entries are ignored; see
        :meth:`group_margins`): a leaf tensor that requires a gradient, saved in the
        ``state_dict``, but **not** in :meth:`parameters` — ``SGD(loss.parameters())`` would train
        the margins on the training loss, which only ever lowers them (Eq. (10) of MBN learns
        them on the meta loss). Hand them to the meta optimiser with :meth:`margin_parameters`.
    weight : Parameter of shape (n_classes, embedding_size)
        Class weights.
    learnable_mask : bool Tensor of shape (n_groups,)
        ``True`` for the groups whose margin is learned.

    Examples
    --------
    >>> import torch
    >>> loss = GroupMarginLoss(10, 4, 3, kind="cos", init_margin=0.15)
    >>> [name for name, _ in loss.named_parameters()]
    ['weight']
    >>> [tuple(m.shape) for m in loss.margin_parameters()]
    [(3,)]
    >>> _ = torch.manual_seed(0)
    >>> value = loss(torch.randn(6, 4), torch.arange(6), torch.tensor([0, 1, 2, 0, 1, 2]))
    >>> bool(torch.isfinite(value))
    True
    """

    def __init__(
        self,
        n_classes: int,
        embedding_size: int,
        n_groups: int,
        *,
        kind: Literal["arc", "cos"] = "arc",
        anchor_groups: Sequence[int] = (0,),
        anchor_loss: Literal["arc", "cos", "softmax"] | None = None,
        init_margin: float | Sequence[float] = 0.3,
        scale: float = 64.0,
        margin_bounds: tuple[float, float] = (0.0, 0.8),
        validate: bool = True,
    ) -> None:
        super().__init__(n_classes, embedding_size, scale=scale, validate=validate)
        check_count(n_groups, "n_groups")
        if kind not in ("arc", "cos"):
            raise ValueError(KIND_ERROR.format(name="kind", options=("arc", "cos"), value=kind))
        anchor_loss = kind if anchor_loss is None else anchor_loss
        if anchor_loss not in _KIND_CODES:
            raise ValueError(
                KIND_ERROR.format(name="anchor_loss", options=tuple(_KIND_CODES), value=anchor_loss)
            )
        anchors = tuple(int(g) for g in anchor_groups)
        if (
            len(set(anchors)) != len(anchors)
            or any(g < 0 or g >= n_groups for g in anchors)
            or len(anchors) >= n_groups
        ):
            raise ValueError(ANCHOR_ERROR.format(n_groups=n_groups, value=anchor_groups))
        try:
            low, high = (float(b) for b in margin_bounds)
        except (TypeError, ValueError):
            raise ValueError(BOUNDS_ERROR.format(value=margin_bounds)) from None
        if not 0.0 <= low <= high:
            raise ValueError(BOUNDS_ERROR.format(value=margin_bounds))
        init = torch.as_tensor(init_margin, dtype=torch.get_default_dtype())
        if init.ndim == 0:
            init = init.repeat(n_groups)
        learnable = torch.ones(n_groups, dtype=torch.bool)
        learnable[list(anchors)] = False
        if (
            init.shape != (n_groups,)
            or not bool(torch.isfinite(init).all())
            or bool((init[learnable] < low).any() or (init[learnable] > high).any())
            or bool((init < 0).any())
        ):
            raise ValueError(
                INIT_MARGIN_ERROR.format(n_groups=n_groups, bounds=(low, high), value=init_margin)
            )
        self.n_groups = n_groups
        self.kind = kind
        self.anchor_groups = anchors
        self.anchor_loss = anchor_loss
        self.margin_bounds = (low, high)
        # A buffer that requires grad: in the state_dict, moved by .to(), not in parameters().
        self.register_buffer("margins", init.clone().requires_grad_(True))
        self.register_buffer("learnable_mask", learnable)
        fixed = init.clone() if anchor_loss != "softmax" else torch.zeros(n_groups)
        self.register_buffer("fixed_margins", fixed)
        codes = torch.full((n_groups,), _KIND_CODES[kind], dtype=torch.long)
        codes[list(anchors)] = _KIND_CODES[anchor_loss]
        self.register_buffer("kind_codes", codes)
        self._uses = {kind, anchor_loss} if anchors else {kind}

    def margin_parameters(self) -> list[torch.Tensor]:
        """The learnable margins, for the meta optimiser (they are not in :meth:`parameters`).

        Returns
        -------
        list of Tensor
            ``[self.margins]``.
        """
        return [self.margins]

    def _apply(self, fn, recurse=True):
        # .to()/.cuda()/.double() replace a buffer by a new (non-leaf) tensor; keep the same leaf
        # object with new data instead, as nn.Module does for Parameters, so that an optimiser
        # holding margin_parameters() still updates the margins after a move. Overriding
        # nn.Module._apply is for that correctness (torch has no public hook), not for speed.
        margins = self.margins
        super()._apply(fn, recurse)
        if self.margins is not margins:
            margins.data = self.margins.detach()
            self.margins = margins  # nn.Module.__setattr__ stores it back as the buffer
        return self

    def group_margins(self) -> torch.Tensor:
        """Effective margin of each group, shape (n_groups,): learned, or fixed for the anchors.

        The learned ones are clamped into ``margin_bounds`` (differentiably: the gradient passes
        inside the bounds), so a margin an optimiser moved outside acts as its bound.
        """
        if self.validate and not bool(torch.isfinite(self.margins).all()):
            raise ValueError(
                NONFINITE_MARGINS_ERROR.format(
                    name=type(self).__name__, values=self.margins.detach().cpu().tolist()
                )
            )
        low, high = self.margin_bounds
        learned = self.margins.clamp(low, high)
        return torch.where(self.learnable_mask, learned, self.fixed_margins.to(learned))

    def sample_margins(self, labels, group_codes):  # noqa: D102
        return self.group_margins()[group_codes]

    def target_cosine(self, cos_target, margins, group_codes):  # noqa: D102
        codes = self.kind_codes[group_codes]
        margins = margins.to(cos_target.dtype)
        edited = cos_target
        if "cos" in self._uses:
            edited = torch.where(codes == _KIND_CODES["cos"], cos_target - margins, edited)
        if "arc" in self._uses:
            is_arc = codes == _KIND_CODES["arc"]
            # Evaluate ArcFace on arc rows only: other rows get a harmless cosine of 0, so that
            # acos' steep derivative near +-1 never meets the zero gradient of an unselected row
            # (0 * inf = NaN in the backward).
            safe = torch.where(is_arc, cos_target, torch.zeros_like(cos_target))
            edited = torch.where(is_arc, arc_margin_cosine(safe, margins), edited)
        return edited

    @torch.no_grad()
    def clamp_margins_(self) -> torch.Tensor:
        """Clamp the learnable margins into ``margin_bounds`` in place.

        Returns
        -------
        bool Tensor of shape (n_groups,)
            ``True`` for the learnable groups whose margin sits on a bound after clamping.
        """
        low, high = self.margin_bounds
        self.margins.clamp_(low, high)
        at_bound = (self.margins <= low) | (self.margins >= high)
        return at_bound & self.learnable_mask

    def extra_repr(self) -> str:  # noqa: D102
        return (
            f"n_classes={self.n_classes}, embedding_size={self.embedding_size}, "
            f"n_groups={self.n_groups}, kind={self.kind!r}, anchor_groups={self.anchor_groups}, "
            f"anchor_loss={self.anchor_loss!r}, scale={self.scale}, "
            f"margin_bounds={self.margin_bounds}"
        )
