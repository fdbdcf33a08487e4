"""Plain softmax cross-entropy over a linear layer with bias (the paper's "Softmax" baseline)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fairot.torch.checks import check_batch, check_count, weighted_mean

__all__ = ["SoftmaxLoss"]


class SoftmaxLoss(nn.Module):
    """Plain softmax cross-entropy over a linear layer with bias (the paper's "Softmax" baseline).

    Same call signature as :class:`~fairot.torch.losses.MarginSoftmaxLoss`, so that a trainer
    treats all heads alike.

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
    >>> from fairot.torch.losses import SoftmaxLoss
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
        self.n_classes = check_count(n_classes, "n_classes")
        self.embedding_size = check_count(embedding_size, "embedding_size")
        self.weight = nn.Parameter(torch.empty(n_classes, embedding_size))
        self.bias = nn.Parameter(torch.zeros(n_classes))
        nn.init.normal_(self.weight, std=0.01)

    def scores(self, embeddings):  # noqa: D102
        dtype = embeddings.dtype
        return F.linear(embeddings, self.weight.to(dtype), self.bias.to(dtype))

    def logits(self, embeddings, labels=None, group_codes=None, *, scores=None):  # noqa: D102
        return self.scores(embeddings) if scores is None else scores

    def per_sample_loss(self, embeddings, labels, group_codes=None, *, scores=None):  # noqa: D102
        size, n_classes = self.embedding_size, self.n_classes
        labels = check_batch(
            embeddings, labels, size, n_classes, name="SoftmaxLoss", validate=self.validate
        )
        logits = self.logits(embeddings, scores=scores)
        return F.cross_entropy(logits, labels, reduction="none")

    def forward(self, embeddings, labels, group_codes=None, *, sample_weight=None, scores=None):  # noqa: D102
        losses = self.per_sample_loss(embeddings, labels, group_codes, scores=scores)
        return weighted_mean(losses, sample_weight, validate=self.validate)
