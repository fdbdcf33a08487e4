"""The normalised softmax head (NormSoftmaxLoss, CosFace, sample weights) against a
hand-written cross-entropy; the batch and oracles the loss tests share."""

import math
import re

import pytest
import torch
import torch.nn.functional as F

from fairot.torch import losses
from fairot.torch.checks import SAMPLE_WEIGHT_ERROR

N, D, C, K = 24, 8, 5, 4


def _prefix(message):
    return re.escape(message.split("{")[0])


def _batch(dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    emb = torch.randn(N, D, generator=g, dtype=dtype)
    labels = torch.randint(0, C, (N,), generator=g)
    groups = torch.randint(0, K, (N,), generator=g)
    return emb, labels, groups


def _naive_loss(loss, emb, labels, target_fn):
    """Cross-entropy over hand-margined logits, one sample at a time."""
    w = F.normalize(loss.weight.detach(), dim=1)
    total = []
    for j in range(emb.shape[0]):
        cos = F.normalize(emb[j], dim=0) @ w.t()
        logits = cos.clone()
        logits[labels[j]] = target_fn(j, cos[labels[j]])
        total.append(F.cross_entropy((loss.scale * logits)[None], labels[j : j + 1]))
    return torch.stack(total).mean()


def _naive_arc(cos, m):
    theta = math.acos(float(cos))
    if theta <= math.pi - m:
        return torch.cos(torch.acos(cos) + m)
    return cos - m * math.sin(m)


def test_cosface_and_normsoftmax_equal_naive_cross_entropy():
    emb, labels, _ = _batch()
    cos_loss = losses.CosFaceLoss(C, D, margin=0.2, scale=60.0).double()
    expected = _naive_loss(cos_loss, emb, labels, lambda j, c: c - 0.2)
    torch.testing.assert_close(cos_loss(emb, labels), expected)
    norm = losses.NormSoftmaxLoss(C, D, scale=16.0).double()
    torch.testing.assert_close(norm(emb, labels), _naive_loss(norm, emb, labels, lambda j, c: c))


def _pml_copy(pml_loss, ours):
    with torch.no_grad():
        pml_loss.W.copy_(ours.weight.detach().t().to(pml_loss.W.dtype))
    return pml_loss


def test_sample_weight_is_a_weighted_mean():
    emb, labels, groups = _batch()
    loss = losses.ArcFaceLoss(C, D, margin=0.3).double()
    w = torch.rand(N, dtype=torch.float64) + 0.1
    per_sample = loss.per_sample_loss(emb, labels)
    torch.testing.assert_close(loss(emb, labels, sample_weight=w), (w * per_sample).sum() / w.sum())
    with pytest.raises(ValueError, match=_prefix(SAMPLE_WEIGHT_ERROR)):
        loss(emb, labels, sample_weight=-w)
