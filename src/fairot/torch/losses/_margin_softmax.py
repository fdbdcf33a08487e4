r"""The margin-softmax base: a normalised softmax head whose hooks edit the target logit.

Every margin loss of :mod:`fairot.torch.losses` L2-normalises the embeddings :math:`z_j` and the
class weights :math:`W_i`, so that the logit of class :math:`i` is :math:`s \cos\theta_i`, and
edits the target logit only:

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

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fairot.torch.checks import (
    FINITE_POSITIVE_ERROR,
    MARGIN_ERROR,
    check_batch,
    check_count,
    check_embeddings,
    check_groups,
    check_number,
    weighted_mean,
)
from fairot.torch.distances import unit_rows

__all__ = ["MarginSoftmaxLoss", "NormSoftmaxLoss"]

# The arguments every loss takes: one group code per sample (None for single-margin losses),
# and the class scores when already computed.
Groups = Tensor | None
Scores = Tensor | None


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
    >>> from fairot.torch.losses import MarginSoftmaxLoss
    >>> _ = torch.manual_seed(0)
    >>> loss = MarginSoftmaxLoss(3, 2, scale=10.0)
    >>> emb, labels = torch.randn(4, 2), torch.tensor([0, 1, 2, 0])
    >>> cosines = F.normalize(emb) @ F.normalize(loss.weight).T
    >>> torch.allclose(loss(emb, labels), F.cross_entropy(10.0 * cosines, labels))
    True

    A subclass edits the target cosine, here a CosFace-like margin of 0.2:

    >>> class Shifted(MarginSoftmaxLoss):
    ...     def target_cosine(self, cos_target, margins, group_codes):
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
        self.n_classes = check_count(n_classes, "n_classes")
        self.embedding_size = check_count(embedding_size, "embedding_size")
        self.scale = check_number(scale, FINITE_POSITIVE_ERROR, low=0.0, strict=True, name="scale")
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
        self, labels: torch.Tensor, group_codes: torch.Tensor | None
    ) -> torch.Tensor | float:
        """Margin of each sample (hook); the base class has none."""
        return 0.0

    def target_cosine(
        self,
        cos_target: torch.Tensor,
        margins: torch.Tensor | float,
        group_codes: torch.Tensor | None,
    ) -> torch.Tensor:
        """Edited cosine of each sample's target class (hook); the base class leaves it as is."""
        return cos_target

    def logits(
        self,
        embeddings: Tensor,
        labels: Tensor,
        group_codes: Groups = None,
        *,
        scores: Scores = None,
    ) -> Tensor:
        """Scaled logits with the margin applied to each sample's target class.

        Parameters
        ----------
        embeddings : Tensor of shape (n_samples, embedding_size)
        labels : integer Tensor of shape (n_samples,)
        group_codes : integer Tensor of shape (n_samples,), optional
            Group code of each sample (required by :class:`GroupMarginLoss`).
        scores : Tensor of shape (n_samples, n_classes), optional
            ``self.scores(embeddings)`` already computed (the trainer reuses it when only the
            margins change).

        Returns
        -------
        Tensor of shape (n_samples, n_classes)
        """
        name = type(self).__name__
        labels = check_batch(
            embeddings,
            labels,
            self.embedding_size,
            self.n_classes,
            name=name,
            validate=self.validate,
        )
        if self.n_groups is not None:
            group_codes = check_groups(
                group_codes, embeddings.shape[0], self.n_groups, name, validate=self.validate
            )
            group_codes = group_codes.to(embeddings.device)
        cosine = self.cosine(embeddings) if scores is None else scores
        cos_target = cosine.gather(1, labels[:, None]).squeeze(1)
        margins = self.sample_margins(labels, group_codes)
        edited = self.target_cosine(cos_target, margins, group_codes)
        # An out-of-place scatter of (edited - original) on the target column keeps the graph
        # differentiable in the margins, unlike insightface's in-place edit under no_grad.
        return self.scale * cosine.scatter_add(1, labels[:, None], (edited - cos_target)[:, None])

    def per_sample_loss(
        self,
        embeddings: Tensor,
        labels: Tensor,
        group_codes: Groups = None,
        *,
        scores: Scores = None,
    ) -> Tensor:
        """Cross-entropy of each sample, shape (n_samples,)."""
        check_embeddings(embeddings, type(self).__name__, validate=False)
        labels = torch.as_tensor(labels, device=embeddings.device)
        logits = self.logits(embeddings, labels, group_codes, scores=scores)
        return F.cross_entropy(logits, labels, reduction="none")

    def forward(
        self,
        embeddings: Tensor,
        labels: Tensor,
        group_codes: Groups = None,
        *,
        sample_weight: Tensor | None = None,
        scores: Scores = None,
    ) -> Tensor:
        r"""Mean loss over the batch (weighted by ``sample_weight`` when given).

        Parameters
        ----------
        embeddings : Tensor of shape (n_samples, embedding_size)
        labels : integer Tensor of shape (n_samples,)
            Identity of each sample, in ``[0, n_classes)``.
        group_codes : integer Tensor of shape (n_samples,), optional
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
        losses = self.per_sample_loss(embeddings, labels, group_codes, scores=scores)
        return weighted_mean(losses, sample_weight, validate=self.validate)


class NormSoftmaxLoss(MarginSoftmaxLoss):
    r"""Norm-Softmax: normalised features and weights, no margin (MBN(soft)'s anchor loss).

    It is :class:`MarginSoftmaxLoss` with no hook overridden, under the name the papers use.

    Examples
    --------
    >>> import torch
    >>> from fairot.torch.losses import MarginSoftmaxLoss, NormSoftmaxLoss
    >>> norm, base = NormSoftmaxLoss(5, 3), MarginSoftmaxLoss(5, 3)
    >>> _ = norm.load_state_dict(base.state_dict())
    >>> x, y = torch.randn(8, 3), torch.randint(0, 5, (8,))
    >>> torch.equal(norm(x, y), base(x, y))
    True
    """


class _FixedMarginLoss(MarginSoftmaxLoss):
    """A margin-softmax loss with one fixed margin for every sample (ArcFace, CosFace).

    Subclasses give ``margin`` its default and override :meth:`target_cosine`.
    """

    def __init__(
        self,
        n_classes: int,
        embedding_size: int,
        *,
        margin: float,
        scale: float = 64.0,
        validate: bool = True,
    ) -> None:
        super().__init__(n_classes, embedding_size, scale=scale, validate=validate)
        self.margin = check_number(margin, MARGIN_ERROR, low=0.0)

    def sample_margins(self, labels, group_codes):  # noqa: D102
        return self.margin
