"""The forward-mode meta gradient's tangent (torch.func.jvp) against torch.autograd.forward_ad.

``embedding_tangent`` replaced the hand-written fx engine of ``face/_tangents.py``; these are
that engine's checks, against the same oracle: any module, any subset of moving parameters,
BatchNorm in both modes, the step's own dropout masks, no side effect on buffers or generators.
"""

import copy
import warnings

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.autograd import forward_ad
from torch.func import functional_call

from fairot.face import MLP, iresnet18
from fairot.face._meta_gradients import embedding_tangent, rng_state


def _oracle(model, x, directions):
    """torch.autograd.forward_ad through the whole model (buffers copied: no side effects)."""
    state = {n: b.clone() for n, b in model.named_buffers()}
    with warnings.catch_warnings(), forward_ad.dual_level():
        warnings.filterwarnings(
            "ignore", message=".*torch.jit.script.*", category=DeprecationWarning
        )
        for n, p in model.named_parameters():
            d = directions.get(n)
            state[n] = p.detach() if d is None else forward_ad.make_dual(p.detach(), d)
        out = functional_call(model, state, (x,))
        tangent = forward_ad.unpack_dual(out).tangent
    return torch.zeros_like(out) if tangent is None else tangent


def _random_directions(model, names=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    params = dict(model.named_parameters())
    names = list(params) if names is None else names
    return {n: torch.randn(params[n].shape, generator=g, dtype=params[n].dtype) for n in names}


def _check(model, x, directions, *, seed=0, rtol=1e-10, atol=1e-12):
    """The step's forward, then its tangent; compared with the oracle on the same masks."""
    buffers = {n: b.clone() for n, b in model.named_buffers()}
    torch.manual_seed(seed)
    rng = rng_state(x.device)
    out = model(x)  # the step's forward (moves the running statistics once)
    after_forward = {n: b.clone() for n, b in model.named_buffers()}
    generator_after = torch.get_rng_state()
    params = dict(model.named_parameters())
    names = list(directions)
    tangent = embedding_tangent(
        model, x, names, [params[n] for n in names], [directions[n] for n in names], rng
    )
    # the tangent pass moves no running statistics and leaves torch's generator where it was
    for n, b in model.named_buffers():
        torch.testing.assert_close(b, after_forward[n], rtol=0, atol=0)
    assert torch.equal(torch.get_rng_state(), generator_after)
    for n, b in model.named_buffers():  # the oracle differentiates the same forward
        b.copy_(buffers[n])
    torch.manual_seed(seed)  # same dropout masks as the step's forward
    expected = _oracle(model, x, directions)
    torch.testing.assert_close(tangent, expected, rtol=rtol, atol=atol)
    return out, buffers


@pytest.mark.parametrize("training", [True, False])
def test_iresnet_tangent_equals_forward_mode_ad(training):
    torch.manual_seed(0)
    model = iresnet18(embedding_size=16, input_size=16).double().train(training)
    x = torch.randn(4, 3, 16, 16, dtype=torch.float64)
    if not training:  # running statistics that differ from the batch's
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    out, _ = _check(model, x, _random_directions(model))
    # the step's forward is the model's forward, bit for bit
    torch.testing.assert_close(out, copy.deepcopy(model)(x), rtol=0, atol=0)


@settings(max_examples=25, deadline=None)
@given(subset=st.lists(st.booleans(), min_size=8, max_size=8), seed=st.integers(0, 2**16))
def test_mlp_tangent_for_any_subset_of_moving_parameters(subset, seed):
    torch.manual_seed(seed)
    model = MLP(5, embedding_size=3, hidden_sizes=(8, 8)).double()
    names = [n for n, keep in zip(dict(model.named_parameters()), subset, strict=False) if keep]
    x = torch.randn(6, 5, dtype=torch.float64)
    _check(model, x, _random_directions(model, names, seed=seed))


class _Mixed(nn.Module):
    """Convolutions, grouped convolution, dropout, LayerNorm, methods and functions."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1, padding_mode="reflect")
        self.grouped = nn.Conv2d(4, 4, 3, padding=1, groups=2)
        self.prelu = nn.PReLU()  # one slope for all channels
        self.bn = nn.BatchNorm2d(4, affine=False)
        self.drop = nn.Dropout(0.5)
        self.norm = nn.LayerNorm(16)
        self.fc = nn.Linear(16, 3)
        self.scale = nn.Parameter(torch.tensor(1.5))

    def forward(self, x):
        h = self.prelu(self.grouped(self.conv(x)))
        h = self.bn(h) * self.scale + torch.tanh(h)
        h = self.drop(h).mean(dim=(2, 3)).view(h.shape[0], -1)
        h = torch.cat([h, F.dropout(h, 0.25, training=self.training) ** 2], dim=1)
        h = self.norm(torch.nn.functional.pad(h, (0, 8)))
        return F.normalize(self.fc(h), dim=1)


def test_generic_nodes_and_dropout_masks():
    torch.manual_seed(0)
    model = _Mixed().double()
    x = torch.randn(5, 2, 6, 6, dtype=torch.float64)
    _check(model, x, _random_directions(model), seed=3)
    _check(model, x, _random_directions(model, ["fc.bias", "scale", "prelu.weight"]), seed=4)


def test_no_moving_parameter_upstream_gives_zeros():
    torch.manual_seed(0)
    model = MLP(5, embedding_size=3, hidden_sizes=(8,)).double()
    x = torch.randn(6, 5, dtype=torch.float64)
    name = next(n for n, _ in model.named_parameters())
    param = dict(model.named_parameters())[name]
    tangent = embedding_tangent(model, x, [name], [param], [torch.zeros_like(param)])
    assert tangent.shape == model(x).shape and not tangent.any()
