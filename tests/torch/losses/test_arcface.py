"""ArcFaceLoss: the hand-written cross-entropy, pytorch-metric-learning's loss (degrees),
and the differentiable fallback of ``cos(theta + m)``."""

import math

import numpy as np
import pytest
import torch
from pytorch_metric_learning import losses as pml_losses

from fairot.torch import losses
from tests.torch.losses.test_margin_softmax import C, D, _batch, _naive_arc, _naive_loss, _pml_copy


@pytest.mark.parametrize("margin", [0.0, 0.3, 0.5])
def test_arcface_equals_naive_cross_entropy(margin):
    emb, labels, _ = _batch()
    loss = losses.ArcFaceLoss(C, D, margin=margin, scale=30.0).double()
    expected = _naive_loss(loss, emb, labels, lambda j, c: _naive_arc(c, margin))
    torch.testing.assert_close(loss(emb, labels), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("margin", [0.2, 0.3, 0.5])
def test_arcface_matches_pytorch_metric_learning_in_degrees(margin):
    emb, labels, _ = _batch(torch.float32, seed=1)
    ours = losses.ArcFaceLoss(C, D, margin=margin, scale=64.0)
    # pytorch-metric-learning takes the ArcFace margin in degrees.
    oracle = _pml_copy(
        pml_losses.ArcFaceLoss(C, D, margin=float(np.degrees(margin)), scale=64.0), ours
    )
    torch.testing.assert_close(ours(emb, labels), oracle(emb, labels), rtol=1e-5, atol=1e-5)


def test_arc_fallback_branch_stays_differentiable_in_the_margin():
    # theta close to pi: theta + m > pi takes the linear fallback cos(theta) - m sin(m)
    cos = torch.tensor([-0.99, 0.2], dtype=torch.float64)
    m = torch.tensor([0.5, 0.5], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda mm: losses.arc_margin_cosine(cos, mm), (m,))
    out = losses.arc_margin_cosine(cos, m)
    torch.testing.assert_close(out[0], cos[0] - 0.5 * math.sin(0.5), check_dtype=False)
