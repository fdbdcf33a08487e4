r"""Margin-softmax losses: one base with hooks, NormSoftmax/ArcFace/CosFace and MBN's group margins.

Every loss here L2-normalises the embeddings :math:`z_j` and the class weights :math:`W_i`, so that
the logit of class :math:`i` is :math:`s \cos\theta_i`, and edits the target logit only:

.. math::

    L_j = -\log \frac{e^{s\,\psi(\theta_{y_j}, m_j)}}
        {e^{s\,\psi(\theta_{y_j}, m_j)} + \sum_{i \ne y_j} e^{s \cos\theta_i}},

with :math:`\psi = \cos\theta` (Norm-Softmax), :math:`\cos(\theta + m)` (ArcFace) or
:math:`\cos\theta - m` (CosFace). MBN (Eqs. (1)-(2) of [1]_) replaces the one margin :math:`m` by
the margin :math:`m_{g_j}` of the sample's group. All margins are in **radians** (for ArcFace) or
cosine units (for CosFace) — never degrees, unlike pytorch-metric-learning's ``ArcFaceLoss``.

References
----------
.. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "ArcFaceLoss",
    "CosFaceLoss",
    "GroupMarginLoss",
    "MarginSoftmaxLoss",
    "NormSoftmaxLoss",
    "SoftmaxLoss",
    "arc_margin_cosine",
]

_ANGLE_EPS = 1e-7

EMBEDDINGS_SHAPE_ERROR = "embeddings must have shape (n_samples, {expected}); got {shape}."
LABELS_SHAPE_ERROR = "labels must be a 1-D integer tensor of length {n}; got shape {shape}."
LABELS_RANGE_ERROR = "labels must lie in [0, n_classes={n_classes}); got values in [{lo}, {hi}]."
GROUPS_REQUIRED_ERROR = "groups is required by {name}: one integer group code per sample."
GROUPS_SHAPE_ERROR = (
    "groups of {name} must be integer group codes of shape ({n},); got dtype {dtype} and shape "
    "{shape}."
)
GROUPS_RANGE_ERROR = (
    "groups must be codes in [0, n_groups={n_groups}) (n_groups=None: any code >= 0); got values "
    "in [{lo}, {hi}]."
)
SAMPLE_WEIGHT_ERROR = (
    "sample_weight must be a finite non-negative 1-D tensor of length {n} with a positive sum."
)
POSITIVE_ERROR = "{name} must be a positive number; got {value!r}."
FINITE_POSITIVE_ERROR = "{name} must be a finite positive number; got {value!r}."
EMBEDDINGS_TYPE_ERROR = (
    "embeddings must be a floating-point torch.Tensor (float16, bfloat16, float32 or float64); "
    "got {value}. Convert with torch.as_tensor(x, dtype=torch.float32)."
)
EMPTY_BATCH_ERROR = "{name}: the batch is empty (0 samples); a mean over no sample is undefined."
NONFINITE_EMBEDDINGS_ERROR = (
    "embeddings contain NaN or inf ({count} values); check the model's output, lower the learning "
    "rate, or pass validate=False to skip this check in a hot loop."
)
NONFINITE_MARGINS_ERROR = (
    "{name}'s margins contain NaN or inf ({values}); they were set or trained outside the loss: "
    "train them through margin_parameters() with a finite learning rate."
)
KIND_ERROR = "{name} must be one of {options}; got {value!r}."
MARGIN_ERROR = "margin must be a finite number >= 0; got {value!r}."
BOUNDS_ERROR = "margin_bounds must be (low, high) with 0 <= low <= high; got {value!r}."
INIT_MARGIN_ERROR = (
    "init_margin must be a float or one value per group (n_groups={n_groups}), each within "
    "margin_bounds={bounds} for the learnable groups; got {value!r}."
)
ANCHOR_ERROR = (
    "anchor_groups must be distinct group codes in [0, n_groups={n_groups}) and leave at least one "
    "group with a learnable margin; got {value!r}."
)


def arc_margin_cosine(cos_theta: torch.Tensor, margin: torch.Tensor | float) -> torch.Tensor:
    r"""ArcFace's target cosine :math:`\cos(\theta + m)`, kept monotone and differentiable in m.

    Where :math:`\theta + m > \pi` the cosine would start to increase again, so it is replaced by
    the usual linear fallback :math:`\cos\theta - m \sin m` (insightface, pytorch-metric-learning).
    Both branches are computed with tensor operations, so the result stays differentiable with
    respect to the margin — insightface edits the logits in place under ``no_grad``, which MBN
    cannot use because it differentiates the loss with respect to :math:`m` (Eq. (10) of [1]_).

    Parameters
    ----------
    cos_theta : Tensor of shape (n,)
        Cosine between each embedding and its target class weight.
    margin : Tensor of shape (n,) or float
        Additive angular margin in radians.

    Returns
    -------
    Tensor of shape (n,)

    References
    ----------
    .. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
       IEEE TPAMI (2021).

    Examples
    --------
    :math:`\cos(0 + \pi/3) = 1/2` and :math:`\cos(\pi/2 + \pi/3) = -\sqrt3/2`; at
    :math:`\theta = \pi` the fallback gives :math:`-1 - (\pi/3)\sin(\pi/3)`:

    >>> import math
    >>> import torch
    >>> from fairot.face.losses import arc_margin_cosine
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


def unit_rows(x: torch.Tensor) -> torch.Tensor:
    """Rows scaled to unit L2 norm, in ``x``'s dtype; a zero row stays zero.

    Half-precision rows are normalised in float32: their norm overflows float16 from 256 per
    coordinate, and ``F.normalize``'s ``eps=1e-12`` is 0 in float16 (a zero row gave 0/0 = NaN).
    """
    wide = torch.promote_types(x.dtype, torch.float32)
    return F.normalize(x.to(wide), dim=1).to(x.dtype)


def _check_positive(value: float, name: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not value > 0
        or not math.isfinite(value)
    ):
        raise ValueError(FINITE_POSITIVE_ERROR.format(name=name, value=value))
    return float(value)


def _check_embeddings(embeddings, name: str, *, validate: bool) -> None:
    """Type and emptiness always (free); finiteness when ``validate`` (one device sync)."""
    if not torch.is_tensor(embeddings) or not embeddings.is_floating_point():
        value = (
            f"a {embeddings.dtype} tensor"
            if torch.is_tensor(embeddings)
            else f"{type(embeddings).__module__}.{type(embeddings).__name__}"
        )
        raise TypeError(EMBEDDINGS_TYPE_ERROR.format(value=value))
    if embeddings.ndim >= 1 and embeddings.shape[0] == 0:
        raise ValueError(EMPTY_BATCH_ERROR.format(name=name))
    if validate and not bool(torch.isfinite(embeddings).all()):
        count = int((~torch.isfinite(embeddings)).sum())
        raise ValueError(NONFINITE_EMBEDDINGS_ERROR.format(count=count))


def _check_batch(
    embeddings: torch.Tensor,
    labels: torch.Tensor,
    embedding_size: int,
    n_classes: int,
    *,
    name: str = "loss",
    validate: bool = True,
) -> None:
    _check_embeddings(embeddings, name, validate=validate)
    if embeddings.ndim != 2 or embeddings.shape[1] != embedding_size:
        raise ValueError(
            EMBEDDINGS_SHAPE_ERROR.format(expected=embedding_size, shape=tuple(embeddings.shape))
        )
    if labels.ndim != 1 or labels.shape[0] != embeddings.shape[0] or labels.is_floating_point():
        raise ValueError(
            LABELS_SHAPE_ERROR.format(n=embeddings.shape[0], shape=tuple(labels.shape))
        )
    if validate and (int(labels.min()) < 0 or int(labels.max()) >= n_classes):
        raise ValueError(
            LABELS_RANGE_ERROR.format(
                n_classes=n_classes, lo=int(labels.min()), hi=int(labels.max())
            )
        )


def _check_groups(
    groups: torch.Tensor | None, n: int, n_groups: int | None, name: str, *, validate: bool = True
) -> torch.Tensor:
    if groups is None:
        raise ValueError(GROUPS_REQUIRED_ERROR.format(name=name))
    groups = torch.as_tensor(groups)
    if (
        groups.ndim != 1
        or groups.shape[0] != n
        or groups.is_floating_point()
        or groups.is_complex()
        or groups.dtype == torch.bool
    ):
        raise ValueError(
            GROUPS_SHAPE_ERROR.format(name=name, n=n, dtype=groups.dtype, shape=tuple(groups.shape))
        )
    if not validate or not groups.numel():
        return groups
    low, high = int(groups.min()), int(groups.max())
    if low < 0 or (n_groups is not None and high >= n_groups):
        raise ValueError(GROUPS_RANGE_ERROR.format(n_groups=n_groups, lo=low, hi=high))
    return groups


def _weighted_mean(
    losses: torch.Tensor, sample_weight: torch.Tensor | None, *, validate: bool = True
) -> torch.Tensor:
    if sample_weight is None:
        return losses.mean()
    # float32 at least: half-precision weights overflow their sum at 65504.
    dtype = torch.promote_types(losses.dtype, torch.float32)
    sample_weight = torch.as_tensor(sample_weight, dtype=dtype, device=losses.device)
    if sample_weight.shape != losses.shape:
        raise ValueError(SAMPLE_WEIGHT_ERROR.format(n=losses.shape[0]))
    if validate:
        total = float(sample_weight.sum())
        # NaN fails every comparison, so ask for what is valid rather than refuse what is not.
        if not (bool((sample_weight >= 0).all()) and math.isfinite(total) and total > 0):
            raise ValueError(SAMPLE_WEIGHT_ERROR.format(n=losses.shape[0]))
    return (sample_weight * losses).sum() / sample_weight.sum()


class MarginSoftmaxLoss(nn.Module):
    r"""Normalised softmax head with a hook that edits the target logit (the margin).

    Subclasses override :meth:`target_cosine` (how the margin enters) and, for per-sample margins,
    :meth:`sample_margins`. With no override the loss is Norm-Softmax: cross-entropy over
    :math:`s \cos\theta_i` with L2-normalised features and class weights.

    Parameters
    ----------
    n_classes : int
        Number of training identities :math:`c`.
    embedding_size : int
        Dimension :math:`d` of the embeddings.
    scale : float, default=64.0
        Scale :math:`s` applied to the cosines (finite).
    validate : bool, default=True
        Check every call's values: finite embeddings, labels and groups in range, finite
        non-negative ``sample_weight``, finite margins. Each check is one reduction and, on a GPU,
        one device synchronisation; ``validate=False`` skips them in a hot loop whose inputs are
        known to be good (types, shapes and empty batches are always checked: they are free).

    Attributes
    ----------
    weight : Parameter of shape (n_classes, embedding_size)
        Class weights :math:`W_i` (rows; normalised on the fly). Part of the model parameters
        :math:`w` that MBN's look-ahead updates. Cast to the embeddings' dtype in the forward
        (float16, bfloat16, float64), as pytorch-metric-learning does.

    Examples
    --------
    With no hook overridden the loss is cross-entropy over the scaled cosines:

    >>> import torch
    >>> import torch.nn.functional as F
    >>> from fairot.face import MarginSoftmaxLoss
    >>> _ = torch.manual_seed(0)
    >>> loss = MarginSoftmaxLoss(3, 2, scale=10.0)
    >>> emb, labels = torch.randn(4, 2), torch.tensor([0, 1, 2, 0])
    >>> cosines = F.normalize(emb) @ F.normalize(loss.weight).T
    >>> torch.allclose(loss(emb, labels), F.cross_entropy(10.0 * cosines, labels))
    True

    A subclass edits the target cosine, here a CosFace-like margin of 0.2:

    >>> class Shifted(MarginSoftmaxLoss):
    ...     def target_cosine(self, cos_target, margins, groups):
    ...         return cos_target - 0.2
    >>> shifted = Shifted(3, 2, scale=10.0)
    >>> _ = shifted.load_state_dict(loss.state_dict())
    >>> bool(shifted(emb, labels) > loss(emb, labels))
    True
    """

    n_groups: int | None = None

    def __init__(
        self, n_classes: int, embedding_size: int, *, scale: float = 64.0, validate: bool = True
    ) -> None:
        super().__init__()
        for name, value in (("n_classes", n_classes), ("embedding_size", embedding_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(POSITIVE_ERROR.format(name=name, value=value))
        self.n_classes = n_classes
        self.embedding_size = embedding_size
        self.scale = _check_positive(scale, "scale")
        self.validate = bool(validate)
        self.weight = nn.Parameter(torch.empty(n_classes, embedding_size))
        nn.init.normal_(self.weight, std=0.01)

    def cosine(self, embeddings: torch.Tensor) -> torch.Tensor:
        """Cosine between every embedding and every class weight, shape (n_samples, n_classes)."""
        weight = self.weight.to(embeddings.dtype)
        return unit_rows(embeddings) @ unit_rows(weight).t()

    def scores(self, embeddings: torch.Tensor) -> torch.Tensor:
        """Class scores before any margin (the cosines); reusable through ``scores=``."""
        return self.cosine(embeddings)

    def sample_margins(
        self, labels: torch.Tensor, groups: torch.Tensor | None
    ) -> torch.Tensor | float:
        """Margin of each sample (hook); the base class has none."""
        return 0.0

    def target_cosine(
        self,
        cos_target: torch.Tensor,
        margins: torch.Tensor | float,
        groups: torch.Tensor | None,
    ) -> torch.Tensor:
        """Edited cosine of each sample's target class (hook); the base class leaves it as is."""
        return cos_target

    def logits(
        self,
        embeddings: torch.Tensor,
        labels: torch.Tensor,
        groups: torch.Tensor | None = None,
        *,
        scores: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Scaled logits with the margin applied to each sample's target class.

        Parameters
        ----------
        embeddings : Tensor of shape (n_samples, embedding_size)
        labels : integer Tensor of shape (n_samples,)
        groups : integer Tensor of shape (n_samples,), optional
            Group code of each sample (required by :class:`GroupMarginLoss`).
        scores : Tensor of shape (n_samples, n_classes), optional
            ``self.scores(embeddings)`` already computed (the trainer reuses it when only the
            margins change).

        Returns
        -------
        Tensor of shape (n_samples, n_classes)
        """
        name = type(self).__name__
        _check_embeddings(embeddings, name, validate=False)
        labels = torch.as_tensor(labels, device=embeddings.device)
        _check_batch(
            embeddings,
            labels,
            self.embedding_size,
            self.n_classes,
            name=name,
            validate=self.validate,
        )
        if self.n_groups is not None:
            groups = _check_groups(
                groups, embeddings.shape[0], self.n_groups, name, validate=self.validate
            )
            groups = groups.to(embeddings.device)
        cosine = self.cosine(embeddings) if scores is None else scores
        cos_target = cosine.gather(1, labels[:, None]).squeeze(1)
        margins = self.sample_margins(labels, groups)
        edited = self.target_cosine(cos_target, margins, groups)
        # An out-of-place scatter of (edited - original) on the target column keeps the graph
        # differentiable in the margins, unlike insightface's in-place edit under no_grad.
        return self.scale * cosine.scatter_add(1, labels[:, None], (edited - cos_target)[:, None])

    def per_sample_loss(
        self,
        embeddings: torch.Tensor,
        labels: torch.Tensor,
        groups: torch.Tensor | None = None,
        *,
        scores: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Cross-entropy of each sample, shape (n_samples,)."""
        _check_embeddings(embeddings, type(self).__name__, validate=False)
        labels = torch.as_tensor(labels, device=embeddings.device)
        logits = self.logits(embeddings, labels, groups, scores=scores)
        return F.cross_entropy(logits, labels, reduction="none")

    def forward(
        self,
        embeddings: torch.Tensor,
        labels: torch.Tensor,
        groups: torch.Tensor | None = None,
        *,
        sample_weight: torch.Tensor | None = None,
        scores: torch.Tensor | None = None,
    ) -> torch.Tensor:
        r"""Mean loss over the batch (weighted by ``sample_weight`` when given).

        Parameters
        ----------
        embeddings : Tensor of shape (n_samples, embedding_size)
        labels : integer Tensor of shape (n_samples,)
            Identity of each sample, in ``[0, n_classes)``.
        groups : integer Tensor of shape (n_samples,), optional
            Group of each sample, in ``[0, n_groups)``; ignored by single-margin losses.
        sample_weight : Tensor of shape (n_samples,), optional
            Non-negative weights; the loss is then :math:`\sum_j v_j L_j / \sum_j v_j`.
        scores : Tensor of shape (n_samples, n_classes), optional
            Precomputed :meth:`scores` of ``embeddings``.

        Returns
        -------
        Tensor
            Scalar loss.
        """
        losses = self.per_sample_loss(embeddings, labels, groups, scores=scores)
        return _weighted_mean(losses, sample_weight, validate=self.validate)


class NormSoftmaxLoss(MarginSoftmaxLoss):
    r"""Norm-Softmax: normalised features and weights, no margin (MBN(soft)'s anchor loss).

    Examples
    --------
    Cross-entropy over :math:`s \cos\theta_i`, the cosines of normalised features and weights:

    >>> import torch
    >>> import torch.nn.functional as F
    >>> from fairot.face import NormSoftmaxLoss
    >>> _ = torch.manual_seed(0)
    >>> loss = NormSoftmaxLoss(3, 2, scale=10.0)
    >>> emb, labels = torch.randn(4, 2), torch.tensor([0, 1, 2, 0])
    >>> cosines = F.normalize(emb) @ F.normalize(loss.weight).T
    >>> torch.allclose(loss(emb, labels), F.cross_entropy(10.0 * cosines, labels))
    True
    """


class _FixedMarginLoss(MarginSoftmaxLoss):
    """A margin-softmax loss with one fixed margin for every sample (ArcFace, CosFace)."""

    def __init__(
        self,
        n_classes: int,
        embedding_size: int,
        *,
        margin: float,
        scale: float,
        validate: bool = True,
    ) -> None:
        super().__init__(n_classes, embedding_size, scale=scale, validate=validate)
        if (
            isinstance(margin, bool)
            or not isinstance(margin, (int, float))
            or not math.isfinite(margin)
            or margin < 0
        ):
            raise ValueError(MARGIN_ERROR.format(value=margin))
        self.margin = float(margin)

    def sample_margins(self, labels, groups):  # noqa: D102
        return self.margin


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
    >>> from fairot.face import ArcFaceLoss
    >>> loss = ArcFaceLoss(2, 2, margin=math.pi / 3, scale=1.0)
    >>> with torch.no_grad():
    ...     _ = loss.weight.copy_(torch.eye(2))
    >>> round(loss(torch.eye(2), torch.tensor([0, 1])).item(), 4)
    0.4741
    """

    def __init__(
        self,
        n_classes: int,
        embedding_size: int,
        *,
        margin: float = 0.5,
        scale: float = 64.0,
        validate: bool = True,
    ) -> None:
        super().__init__(n_classes, embedding_size, margin=margin, scale=scale, validate=validate)

    def target_cosine(self, cos_target, margins, groups):  # noqa: D102
        return arc_margin_cosine(cos_target, margins)


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
    An embedding on its class weight (:math:`\cos\theta_y = 1`) and orthogonal to the other class:
    with :math:`m = 1/2` and :math:`s = 1` the logits are :math:`1 - 1/2` and 0, so the loss is
    :math:`\log(1 + e^{-1/2}) \approx 0.4741`.

    >>> import torch
    >>> from fairot.face import CosFaceLoss
    >>> loss = CosFaceLoss(2, 2, margin=0.5, scale=1.0)
    >>> with torch.no_grad():
    ...     _ = loss.weight.copy_(torch.eye(2))
    >>> round(loss(torch.eye(2), torch.tensor([0, 1])).item(), 4)
    0.4741
    """

    def __init__(
        self,
        n_classes: int,
        embedding_size: int,
        *,
        margin: float = 0.35,
        scale: float = 64.0,
        validate: bool = True,
    ) -> None:
        super().__init__(n_classes, embedding_size, margin=margin, scale=scale, validate=validate)

    def target_cosine(self, cos_target, margins, groups):  # noqa: D102
        return cos_target - margins


class SoftmaxLoss(nn.Module):
    """Plain softmax cross-entropy over a linear layer with bias (the paper's "Softmax" baseline).

    Same call signature as :class:`MarginSoftmaxLoss` so that the trainer treats all heads alike.

    Parameters
    ----------
    n_classes : int
    embedding_size : int
    validate : bool, default=True
        As :class:`MarginSoftmaxLoss`.

    Attributes
    ----------
    weight : Parameter of shape (n_classes, embedding_size)
    bias : Parameter of shape (n_classes,)

    Examples
    --------
    >>> import torch
    >>> import torch.nn.functional as F
    >>> from fairot.face import SoftmaxLoss
    >>> _ = torch.manual_seed(0)
    >>> loss = SoftmaxLoss(3, 2)
    >>> emb, labels = torch.randn(4, 2), torch.tensor([0, 1, 2, 0])
    >>> logits = F.linear(emb, loss.weight, loss.bias)
    >>> torch.allclose(loss(emb, labels), F.cross_entropy(logits, labels))
    True
    """

    n_groups: int | None = None

    def __init__(self, n_classes: int, embedding_size: int, *, validate: bool = True) -> None:
        super().__init__()
        self.validate = bool(validate)
        for name, value in (("n_classes", n_classes), ("embedding_size", embedding_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(POSITIVE_ERROR.format(name=name, value=value))
        self.n_classes = n_classes
        self.embedding_size = embedding_size
        self.weight = nn.Parameter(torch.empty(n_classes, embedding_size))
        self.bias = nn.Parameter(torch.zeros(n_classes))
        nn.init.normal_(self.weight, std=0.01)

    def scores(self, embeddings):  # noqa: D102
        dtype = embeddings.dtype
        return F.linear(embeddings, self.weight.to(dtype), self.bias.to(dtype))

    def logits(self, embeddings, labels=None, groups=None, *, scores=None):  # noqa: D102
        return self.scores(embeddings) if scores is None else scores

    def per_sample_loss(self, embeddings, labels, groups=None, *, scores=None):  # noqa: D102
        _check_embeddings(embeddings, "SoftmaxLoss", validate=False)
        labels = torch.as_tensor(labels, device=embeddings.device)
        _check_batch(
            embeddings,
            labels,
            self.embedding_size,
            self.n_classes,
            name="SoftmaxLoss",
            validate=self.validate,
        )
        logits = self.logits(embeddings, scores=scores)
        return F.cross_entropy(logits, labels, reduction="none")

    def forward(self, embeddings, labels, groups=None, *, sample_weight=None, scores=None):  # noqa: D102
        losses = self.per_sample_loss(embeddings, labels, groups, scores=scores)
        return _weighted_mean(losses, sample_weight, validate=self.validate)


_KIND_CODES = {"softmax": 0, "arc": 1, "cos": 2}


class GroupMarginLoss(MarginSoftmaxLoss):
    r"""MBN's adaptive margin loss: each sample's margin is the margin of its group.

    .. math::

        L_j^{T(arc)} = -\log \frac{e^{s\cos(\theta_{y_j} + m_{g_j})}}
            {e^{s\cos(\theta_{y_j} + m_{g_j})} + \sum_{i\ne y_j} e^{s\cos\theta_i}}
        \quad\text{or}\quad
        L_j^{T(cos)}:\ s(\cos\theta_{y_j} - m_{g_j}),

    Eqs. (1)-(2) of [1]_, where :math:`g_j` is the group (skin tone) of sample :math:`j`. The anchor
    groups (Tone I in the paper) keep a fixed margin — or no margin at all with
    ``anchor_loss="softmax"`` — and the other groups' margins are the differentiable parameter
    :attr:`margins` that :class:`~fairot.face.MetaBalancedTrainer` learns. The paper's variants:

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
        the margins on the training loss, which only ever lowers them (Eq. (10) of [1]_ learns
        them on the meta loss). Hand them to the meta optimiser with :meth:`margin_parameters`.
    weight : Parameter of shape (n_classes, embedding_size)
        Class weights.
    learnable_mask : bool Tensor of shape (n_groups,)
        ``True`` for the groups whose margin is learned.

    References
    ----------
    .. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
       IEEE TPAMI (2021).

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
        if isinstance(n_groups, bool) or not isinstance(n_groups, int) or n_groups < 1:
            raise ValueError(POSITIVE_ERROR.format(name="n_groups", value=n_groups))
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
        # holding margin_parameters() still updates the margins after a move.
        margins = self._buffers["margins"]
        super()._apply(fn, recurse)
        applied = self._buffers["margins"]
        if applied is not margins:
            margins.data = applied.detach()
            self._buffers["margins"] = margins
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

    def sample_margins(self, labels, groups):  # noqa: D102
        return self.group_margins()[groups]

    def target_cosine(self, cos_target, margins, groups):  # noqa: D102
        codes = self.kind_codes[groups]
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
