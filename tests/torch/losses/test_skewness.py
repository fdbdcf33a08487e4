import re
import warnings

import numpy as np
import pytest
import torch

from fairot.torch.losses import MetaBatchWarning, MetaSkewnessLoss


def _meta_batch(n_groups=4, ids_per_group=3, per_id=3, dim=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    labels = torch.arange(n_groups * ids_per_group).repeat_interleave(per_id)
    groups = labels // ids_per_group
    emb = torch.randn(labels.shape[0], dim, generator=g, dtype=torch.float64)
    return emb, labels, groups


def _brute_force(emb, labels, groups, gamma, selection_margin, anchors):
    """Eqs. (5)-(7) of the MBN paper, with plain Python loops over numpy arrays."""
    z = emb.detach().numpy()
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    lab, grp = labels.numpy(), groups.numpy()
    per_group = {}
    for i in range(len(z)):
        d = ((z - z[i]) ** 2).sum(axis=1)
        pos = [j for j in range(len(z)) if j != i and lab[j] == lab[i] and grp[j] == grp[i]]
        neg = [j for j in range(len(z)) if lab[j] != lab[i] and grp[j] == grp[i]]
        if not pos or not neg:
            continue
        d_p = max(d[j] for j in pos)
        d_n = min(d[j] for j in neg)
        if selection_margin is not None and d_n - d_p > selection_margin:
            continue
        per_group.setdefault(int(grp[i]), []).append(d_p - gamma * d_n)
    anchor_terms = [v for a in anchors for v in per_group.get(a, [])]
    anchor_mean = np.mean(anchor_terms)
    return {g: np.mean(v) - anchor_mean for g, v in per_group.items() if g not in anchors}


@pytest.mark.parametrize("selection_margin", [None, 0.2, 1.0])
@pytest.mark.parametrize("anchors", [(0,), (0, 1)])
def test_meta_skewness_matches_brute_force(selection_margin, anchors):
    emb, labels, groups = _meta_batch(seed=3)
    loss = MetaSkewnessLoss(
        gamma=0.5, selection_margin=selection_margin, anchor_groups=anchors, n_groups=4
    )
    result = loss.compute(emb, labels, groups)
    expected = _brute_force(emb, labels, groups, 0.5, selection_margin, anchors)
    assert expected, "the batch should select some triplets"
    for g in range(4):
        if g in expected:
            assert result.group_bias[g].item() == pytest.approx(expected[g], abs=1e-12)
        else:
            assert torch.isnan(result.group_bias[g])
    assert result.loss.item() == pytest.approx(sum(expected.values()), abs=1e-12)
    for reduction, fn in (("abs", abs), ("squared", lambda b: b * b)):
        other = MetaSkewnessLoss(
            selection_margin=selection_margin, anchor_groups=anchors, reduction=reduction
        )
        assert other(emb, labels, groups).item() == pytest.approx(
            sum(fn(b) for b in expected.values()), abs=1e-12
        )


def test_meta_skewness_gradient_matches_finite_differences():
    emb, labels, groups = _meta_batch(seed=4)
    emb.requires_grad_(True)
    loss = MetaSkewnessLoss(selection_margin=None)
    # the mined triplets are fixed while the distances vary (a piecewise-smooth loss)
    idx = loss.miner(emb, labels, groups)
    assert torch.autograd.gradcheck(lambda e: loss(e, labels, groups, idx), (emb,))


def test_group_without_positive_pair_is_skipped_and_warned_once():
    emb, labels, groups = _meta_batch(seed=7)
    # group 2: every sample its own identity
    in_g2 = groups == 2
    labels = labels.clone()
    labels[in_g2] = 100 + torch.arange(int(in_g2.sum()))
    loss = MetaSkewnessLoss(selection_margin=None, n_groups=4)
    with pytest.warns(MetaBatchWarning, match=re.escape("group 2 has no positive pair")):
        result = loss.compute(emb, labels, groups)
    assert torch.isnan(result.group_bias[2])
    assert result.n_triplets[2] == 0
    expected = _brute_force(emb, labels, groups, 0.5, None, (0,))
    assert result.loss.item() == pytest.approx(sum(expected.values()), abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss.compute(emb, labels, groups)  # not warned twice


def test_no_anchor_triplet_gives_a_zero_attached_loss():
    emb, labels, groups = _meta_batch(seed=8)
    emb.requires_grad_(True)
    loss = MetaSkewnessLoss(selection_margin=-10.0)  # nothing selected
    with pytest.warns(MetaBatchWarning, match="anchor groups"):
        value = loss(emb, labels, groups)
    assert value.item() == 0.0
    value.backward()
    assert torch.all(emb.grad == 0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gamma": -1.0}, "gamma must be"),
        ({"reduction": "mean"}, "reduction must be one of"),
        ({"anchor_groups": ()}, "anchor_groups must be"),
        ({"selection_margin": float("nan")}, "selection_margin must be"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MetaSkewnessLoss(**kwargs)
