"""Face losses at their boundary: clear errors instead of NaN, half precision, margins kept apart.

Oracles: pytorch-metric-learning's CosFaceLoss/ArcFaceLoss (finite gradients and values in
float16, bfloat16 and under CPU autocast), the float64 loss (``loss.double()``) for float64 inputs.
"""

import re

import numpy as np
import pytest
import torch
from pytorch_metric_learning import losses as pml_losses

from fairot.face import MLP
from fairot.torch import losses
from fairot.torch.checks import (
    EMBEDDINGS_TYPE_ERROR,
    EMPTY_BATCH_ERROR,
    FINITE_POSITIVE_ERROR,
    GROUPS_RANGE_ERROR,
    MARGIN_ERROR,
    META_EMBEDDINGS_ERROR,
    NONFINITE_EMBEDDINGS_ERROR,
    NONFINITE_MARGINS_ERROR,
    SAMPLE_WEIGHT_ERROR,
)

N, D, C, K = 12, 8, 5, 3


def _prefix(message):
    """The message as a pattern, each ``{placeholder}`` matching anything."""
    return ".*".join(re.escape(part) for part in re.split(r"\{[^}]*\}", message))


def _batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    emb = torch.randn(N, D, generator=g)
    labels = torch.arange(N) % C
    groups = torch.arange(N) % K
    return emb, labels, groups


LOSSES = {
    "group-arc": lambda **kw: losses.GroupMarginLoss(C, D, K, anchor_loss="softmax", **kw),
    "group-cos": lambda **kw: losses.GroupMarginLoss(C, D, K, kind="cos", init_margin=0.15, **kw),
    "arcface": lambda **kw: losses.ArcFaceLoss(C, D, **kw),
    "cosface": lambda **kw: losses.CosFaceLoss(C, D, **kw),
    "norm-softmax": lambda **kw: losses.NormSoftmaxLoss(C, D, **kw),
    "softmax": lambda **kw: losses.SoftmaxLoss(C, D, **kw),
}


@pytest.fixture(params=sorted(LOSSES))
def make_loss(request):
    return LOSSES[request.param]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_nonfinite_embeddings_raise(make_loss, bad):
    emb, labels, groups = _batch()
    emb[3, 2] = bad
    with pytest.raises(ValueError, match=_prefix(NONFINITE_EMBEDDINGS_ERROR)):
        make_loss()(emb, labels, groups)
    # the documented opt-out: no check, the NaN propagates (and the trainer's own check stops it)
    assert not torch.isfinite(make_loss(validate=False)(emb, labels, groups))


def test_empty_batch_raises(make_loss):
    emb, labels, groups = _batch()
    with pytest.raises(ValueError, match=_prefix(EMPTY_BATCH_ERROR)):
        make_loss()(emb[:0], labels[:0], groups[:0])
    with pytest.raises(ValueError, match=_prefix(EMPTY_BATCH_ERROR)):
        losses.MetaSkewnessLoss()(emb[:0], labels[:0], groups[:0])


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), -1.0])
def test_bad_sample_weight_raises(make_loss, bad):
    emb, labels, groups = _batch()
    weight = torch.ones(N)
    weight[2] = bad
    with pytest.raises(ValueError, match=_prefix(SAMPLE_WEIGHT_ERROR)):
        make_loss()(emb, labels, groups, sample_weight=weight)


def test_half_precision_weights_do_not_overflow_their_sum():
    emb, labels, groups = _batch()
    loss = losses.CosFaceLoss(C, D)
    weight = torch.full((N,), 3.0e4)  # sums to 3.6e5 > float16's 65504
    half = loss(emb.half(), labels, sample_weight=weight)
    assert torch.isfinite(half)
    torch.testing.assert_close(half.float(), loss(emb, labels), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("scale", [float("inf"), float("nan"), 0.0, -2.0])
def test_nonfinite_scale_is_refused(make_loss, scale):
    if make_loss is LOSSES["softmax"]:
        pytest.skip("SoftmaxLoss has no scale")
    with pytest.raises(ValueError, match=_prefix(FINITE_POSITIVE_ERROR)):
        make_loss(scale=scale)


@pytest.mark.parametrize("margin", [float("nan"), float("inf"), -0.1])
def test_bad_fixed_margin_is_refused(margin):
    with pytest.raises(ValueError, match=_prefix(MARGIN_ERROR)):
        losses.ArcFaceLoss(C, D, margin=margin)


def test_nan_margins_raise():
    emb, labels, groups = _batch()
    loss = LOSSES["group-arc"]()
    with torch.no_grad():
        loss.margins[1] = float("nan")
    with pytest.raises(ValueError, match=_prefix(NONFINITE_MARGINS_ERROR)):
        loss(emb, labels, groups)


@pytest.mark.parametrize(
    "emb", [np.zeros((N, D)), torch.zeros(N, D, dtype=torch.long), [[0.0] * D] * N]
)
def test_non_float_tensor_embeddings_raise_a_type_error(make_loss, emb):
    _, labels, groups = _batch()
    with pytest.raises(TypeError, match=_prefix(EMBEDDINGS_TYPE_ERROR)):
        make_loss()(emb, labels, groups)
    with pytest.raises(TypeError, match=_prefix(EMBEDDINGS_TYPE_ERROR)):
        losses.MetaSkewnessLoss()(emb, labels, groups)


def test_meta_skewness_checks_its_inputs():
    emb, labels, groups = _batch()
    with pytest.raises(ValueError, match=_prefix(GROUPS_RANGE_ERROR)):
        losses.MetaSkewnessLoss(n_groups=2)(emb, labels, groups)
    bad = groups.clone()
    bad[0] = -1
    with pytest.raises(ValueError, match=_prefix(GROUPS_RANGE_ERROR)):
        losses.MetaSkewnessLoss()(emb, labels, bad)
    with pytest.raises(ValueError, match=_prefix(META_EMBEDDINGS_ERROR)):
        losses.MetaSkewnessLoss()(emb[:, 0], labels, groups)
    with pytest.raises(ValueError, match="labels must be a 1-D integer tensor"):
        losses.MetaSkewnessLoss()(emb, labels.double(), groups)
    emb[0, 0] = float("nan")
    with pytest.raises(ValueError, match=_prefix(NONFINITE_EMBEDDINGS_ERROR)):
        losses.MetaSkewnessLoss()(emb, labels, groups)


# ------------------------------------------------------------------ dtypes and half precision
def _on_the_weights(loss, labels, n_exact=5):
    """A batch whose first rows lie exactly on their class weight (cos = 1, acos' pole)."""
    emb, _, _ = _batch()
    emb[:n_exact] = 3 * loss.weight.detach()[labels[:n_exact]]
    return emb


def _pml_copy(oracle, ours):
    with torch.no_grad():
        oracle.W.copy_(ours.weight.detach().t())
    return oracle


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(
    ("kind", "margin", "oracle"),
    [("cos", 0.15, pml_losses.CosFaceLoss), ("arc", 0.3, pml_losses.ArcFaceLoss)],
)
def test_half_precision_gradients_finite_where_pml_is(dtype, kind, margin, oracle):
    _, labels, groups = _batch()
    ours = losses.GroupMarginLoss(C, D, K, kind=kind, init_margin=margin, anchor_groups=(0,))
    pml_margin = margin if kind == "cos" else float(np.degrees(margin))
    pml = _pml_copy(oracle(C, D, margin=pml_margin, scale=64.0), ours)
    emb = _on_the_weights(ours, labels)
    e_ours = emb.to(dtype).requires_grad_(True)
    e_pml = emb.to(dtype).requires_grad_(True)
    value = ours(e_ours, labels, groups)
    expected = pml(e_pml, labels)
    value.backward()
    expected.backward()
    finite_pml = torch.isfinite(e_pml.grad).all(dim=1)
    # PML's CosFace is finite on every row; its ArcFace is not on the rows at cos = 1 (acos'
    # pole): ours must be finite wherever PML's is, and is finite everywhere.
    assert bool(finite_pml.all()) or kind == "arc"
    assert bool(torch.isfinite(e_ours.grad).all())
    assert value.dtype == dtype
    tol = 2e-2 if dtype == torch.bfloat16 else 2e-3
    torch.testing.assert_close(value.float(), expected.float(), rtol=tol, atol=tol)


def test_softmax_anchor_rows_stay_finite_in_float16():
    # MBN(soft): Norm-Softmax anchors beside ArcFace groups; an anchor on its class weight used to
    # get a NaN gradient from the unselected ArcFace branch.
    _, labels, groups = _batch()
    loss = LOSSES["group-arc"]()
    emb = _on_the_weights(loss, labels).half().requires_grad_(True)
    loss(emb, labels, groups).backward()
    assert bool(torch.isfinite(emb.grad).all())


@pytest.mark.parametrize(("kind", "oracle"), [("cos", pml_losses.CosFaceLoss)])
def test_cpu_autocast_bfloat16_matches_pml(kind, oracle):
    emb, labels, groups = _batch()
    ours = losses.GroupMarginLoss(C, D, K, kind=kind, init_margin=0.15, anchor_groups=(0,))
    pml = _pml_copy(oracle(C, D, margin=0.15, scale=64.0), ours)
    model = MLP(D, embedding_size=D, hidden_sizes=(16,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        value = ours(model(emb), labels, groups)
        expected = pml(model(emb), labels)
    value.backward()
    assert torch.isfinite(value) and all(torch.isfinite(p.grad).all() for p in model.parameters())
    torch.testing.assert_close(value.float(), expected.float(), rtol=2e-2, atol=2e-2)
    full = ours(model(emb), labels, groups)
    torch.testing.assert_close(value.float(), full, rtol=5e-2, atol=5e-2)


def test_float64_embeddings_equal_the_double_loss():
    emb, labels, groups = _batch()
    loss = LOSSES["group-arc"]()
    mixed = loss(emb.double(), labels, groups)
    assert mixed.dtype == torch.float64
    assert torch.equal(mixed, loss.double()(emb.double(), labels, groups))


# ------------------------------------------------------------------ margins are not parameters
def test_margins_are_not_parameters_but_are_saved():
    loss = LOSSES["group-arc"]()
    assert [n for n, _ in loss.named_parameters()] == ["weight"]
    assert loss.margin_parameters()[0] is loss.margins
    assert loss.margins.requires_grad and loss.margins.is_leaf
    assert "margins" in loss.state_dict()


def test_a_users_sgd_over_all_parameters_leaves_the_margins_alone():
    emb, labels, groups = _batch()
    model = MLP(D, embedding_size=D, hidden_sizes=(16,))
    loss = LOSSES["group-arc"]()
    before = loss.margins.detach().clone()
    opt = torch.optim.SGD([*model.parameters(), *loss.parameters()], lr=10.0)
    for _ in range(3):
        opt.zero_grad()
        loss(model(emb), labels, groups).backward()
        opt.step()
    assert torch.equal(loss.margins.detach(), before)


def test_margins_moved_outside_the_bounds_act_as_the_bounds():
    emb, labels, groups = _batch()
    loss = losses.GroupMarginLoss(C, D, K, anchor_groups=(0,), margin_bounds=(0.1, 0.5))
    reference = losses.GroupMarginLoss(C, D, K, anchor_groups=(0,), init_margin=[0.3, 0.5, 0.1])
    reference.load_state_dict({**loss.state_dict(), "margins": torch.tensor([0.3, 0.5, 0.1])})
    with torch.no_grad():
        loss.margins.copy_(torch.tensor([0.3, 1.6, -1.6]))  # what a user's optimiser did
    assert loss.group_margins().tolist() == pytest.approx([0.3, 0.5, 0.1])
    assert torch.equal(loss(emb, labels, groups), reference(emb, labels, groups))


def test_an_optimiser_of_margin_parameters_survives_to_dtype():
    loss = LOSSES["group-arc"]()
    opt = torch.optim.SGD(loss.margin_parameters(), lr=0.1)
    loss.double()
    assert loss.margins.dtype == torch.float64 and loss.margins is opt.param_groups[0]["params"][0]
    emb, labels, groups = _batch()
    loss(emb.double(), labels, groups).backward()
    before = loss.margins.detach().clone()
    opt.step()
    assert not torch.equal(loss.margins.detach(), before)
