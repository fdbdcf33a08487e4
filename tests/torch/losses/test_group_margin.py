"""GroupMarginLoss (MBN's margins per group): oracles, gradients, anchors, checks, clamping."""

import re

import numpy as np
import pytest
import torch
from pytorch_metric_learning import losses as pml_losses

from fairot.torch import losses
from fairot.torch.checks import (
    ANCHOR_ERROR,
    GROUPS_RANGE_ERROR,
    GROUPS_REQUIRED_ERROR,
    GROUPS_SHAPE_ERROR,
    INIT_MARGIN_ERROR,
    LABELS_RANGE_ERROR,
)
from tests.torch.losses.test_margin_softmax import (
    C,
    D,
    K,
    N,
    _batch,
    _naive_arc,
    _naive_loss,
    _pml_copy,
    _prefix,
)


@pytest.mark.parametrize(
    ("kind", "margin", "oracle_cls", "oracle_margin"),
    [
        ("arc", 0.3, pml_losses.ArcFaceLoss, float(np.degrees(0.3))),
        ("cos", 0.15, pml_losses.CosFaceLoss, 0.15),
    ],
)
def test_group_margin_loss_with_equal_margins_matches_pml(kind, margin, oracle_cls, oracle_margin):
    emb, labels, groups = _batch(torch.float32, seed=3)
    ours = losses.GroupMarginLoss(C, D, K, kind=kind, init_margin=margin, scale=64.0)
    oracle = _pml_copy(oracle_cls(C, D, margin=oracle_margin, scale=64.0), ours)
    torch.testing.assert_close(ours(emb, labels, groups), oracle(emb, labels), rtol=1e-5, atol=1e-5)


def test_group_margin_loss_uses_each_samples_group_margin():
    emb, labels, groups = _batch()
    margins = [0.1, 0.25, 0.4, 0.6]
    ours = losses.GroupMarginLoss(
        C, D, K, kind="arc", anchor_groups=(0,), anchor_loss="softmax", init_margin=margins
    ).double()

    def target(j, c):
        g = int(groups[j])
        return c if g == 0 else _naive_arc(c, margins[g])

    torch.testing.assert_close(ours(emb, labels, groups), _naive_loss(ours, emb, labels, target))
    # anchors with a cos loss and learnable arc groups: a mixed batch
    mixed = losses.GroupMarginLoss(
        C, D, K, kind="arc", anchor_groups=(0, 1), anchor_loss="cos", init_margin=margins
    ).double()

    def mixed_target(j, c):
        g = int(groups[j])
        return c - margins[g] if g in (0, 1) else _naive_arc(c, margins[g])

    torch.testing.assert_close(
        mixed(emb, labels, groups), _naive_loss(mixed, emb, labels, mixed_target)
    )


def test_anchor_margins_are_fixed_and_get_no_gradient():
    emb, labels, groups = _batch()
    loss = losses.GroupMarginLoss(C, D, K, anchor_groups=(0,), init_margin=0.3).double()
    loss(emb, labels, groups).backward()
    assert loss.margins.grad[0] == 0
    assert torch.all(loss.margins.grad[1:] != 0)
    with torch.no_grad():
        loss.margins[0] = 0.7  # an anchor's entry is not used
    torch.testing.assert_close(loss.group_margins()[0], torch.tensor(0.3, dtype=torch.float64))


@pytest.mark.parametrize("kind", ["arc", "cos"])
def test_gradcheck_on_margins(kind):
    emb, labels, groups = _batch()
    loss = losses.GroupMarginLoss(C, D, K, kind=kind, anchor_groups=(0,), scale=8.0).double()
    margins = torch.tensor([0.3, 0.2, 0.45, 0.6], dtype=torch.float64, requires_grad=True)

    def f(m):
        return torch.func.functional_call(loss, {"margins": m}, (emb, labels, groups))

    assert torch.autograd.gradcheck(f, (margins,))


def test_bad_labels_and_groups_raise():
    emb, labels, groups = _batch()
    loss = losses.GroupMarginLoss(C, D, K).double()
    bad = labels.clone()
    bad[0] = C
    with pytest.raises(ValueError, match=_prefix(LABELS_RANGE_ERROR)):
        loss(emb, bad, groups)
    bad_groups = groups.clone()
    bad_groups[3] = -1
    with pytest.raises(ValueError, match=_prefix(GROUPS_RANGE_ERROR)):
        loss(emb, labels, bad_groups)
    with pytest.raises(ValueError, match=_prefix(GROUPS_REQUIRED_ERROR)):
        loss(emb, labels)
    with pytest.raises(ValueError, match="embeddings must have shape"):
        loss(emb[:, :3], labels, groups)


@pytest.mark.parametrize(
    ("bad", "dtype", "shape"),
    [
        (lambda g: g.double(), "torch.float64", (N,)),
        (lambda g: g[:-1], "torch.int64", (N - 1,)),
        (lambda g: g[:, None], "torch.int64", (N, 1)),
        (lambda g: g > 0, "torch.bool", (N,)),
    ],
)
def test_group_margin_loss_names_bad_group_codes(bad, dtype, shape):
    # Issue 19: float or wrong-length codes were answered "groups is required".
    emb, labels, groups = _batch()
    loss = losses.GroupMarginLoss(C, D, K).double()
    expected = GROUPS_SHAPE_ERROR.format(name="GroupMarginLoss", n=N, dtype=dtype, shape=shape)
    with pytest.raises(ValueError, match=re.escape(expected)):
        loss(emb, labels, bad(groups))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"init_margin": 0.9}, INIT_MARGIN_ERROR),
        ({"init_margin": [0.3, 0.3]}, INIT_MARGIN_ERROR),
        ({"anchor_groups": (0, 1, 2, 3)}, ANCHOR_ERROR),
        ({"anchor_groups": (7,)}, ANCHOR_ERROR),
        ({"kind": "sphere"}, "kind must be one of"),
        ({"margin_bounds": (0.5, 0.1)}, "margin_bounds must be"),
        ({"scale": 0.0}, "scale must be a finite positive number"),
        ({"scale": float("inf")}, "scale must be a finite positive number"),
    ],
)
def test_bad_constructor_arguments(kwargs, message):
    with pytest.raises(ValueError, match=_prefix(message)):
        losses.GroupMarginLoss(C, D, K, **kwargs)


def test_clamp_reports_margins_at_a_bound():
    loss = losses.GroupMarginLoss(C, D, K, init_margin=0.3, margin_bounds=(0.0, 0.8))
    with torch.no_grad():
        loss.margins.copy_(torch.tensor([5.0, 1.2, 0.4, -0.3]))
    at_bound = loss.clamp_margins_()
    assert at_bound.tolist() == [False, True, False, True]
    torch.testing.assert_close(loss.margins[1:], torch.tensor([0.8, 0.4, 0.0]))
