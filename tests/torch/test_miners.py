"""HardestTripletMiner: batch-hard as pytorch-metric-learning's in one group, and within groups."""

import torch
from pytorch_metric_learning import miners as pml_miners

from fairot.torch.miners import HardestTripletMiner
from tests.torch.losses.test_skewness import _meta_batch


def test_miner_matches_pytorch_metric_learning_batch_hard_in_one_group():
    emb, labels, _ = _meta_batch(n_groups=1, ids_per_group=6, per_id=4, seed=5)
    ours = HardestTripletMiner(within_groups=False)(emb, labels)
    a, p, n = pml_miners.BatchHardMiner()(emb.float(), labels)
    assert torch.equal(ours.anchors, a)
    assert torch.equal(ours.positives, p)
    assert torch.equal(ours.negatives, n)


def test_miner_stays_within_groups():
    emb, labels, groups = _meta_batch(seed=6)
    anchors, positives, negatives = HardestTripletMiner()(emb, labels, groups)
    assert len(anchors) == len(labels)
    assert torch.equal(groups[anchors], groups[positives])
    assert torch.equal(groups[anchors], groups[negatives])
    assert torch.equal(labels[anchors], labels[positives])
    assert torch.all(labels[anchors] != labels[negatives])
