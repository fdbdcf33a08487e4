"""CosFaceLoss against pytorch-metric-learning's."""

import torch
from pytorch_metric_learning import losses as pml_losses

from fairot.torch import losses
from tests.torch.losses.test_margin_softmax import C, D, _batch, _pml_copy


def test_cosface_matches_pytorch_metric_learning():
    emb, labels, _ = _batch(torch.float32, seed=2)
    ours = losses.CosFaceLoss(C, D, margin=0.2, scale=60.0)
    oracle = _pml_copy(pml_losses.CosFaceLoss(C, D, margin=0.2, scale=60.0), ours)
    torch.testing.assert_close(ours(emb, labels), oracle(emb, labels), rtol=1e-5, atol=1e-5)
