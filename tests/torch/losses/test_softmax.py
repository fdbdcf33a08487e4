"""SoftmaxLoss: the linear-with-bias cross-entropy."""

import torch
import torch.nn.functional as F

from fairot.torch import losses
from tests.torch.losses.test_margin_softmax import C, D, _batch


def test_softmax_loss_matches_linear_cross_entropy():
    emb, labels, _ = _batch()
    loss = losses.SoftmaxLoss(C, D).double()
    logits = emb @ loss.weight.t() + loss.bias
    torch.testing.assert_close(loss(emb, labels), F.cross_entropy(logits, labels))
