import copy
import logging

import numpy as np
import pytest
import torch
from torch import nn
from torch.func import functional_call

from fairot.face import (
    MLP,
    GroupMarginLoss,
    History,
    MetaBalancedTrainer,
    MetaSkewnessLoss,
    make_method,
)
from fairot.torch.checks import LABELS_RANGE_ERROR

N_IDS, PER_ID, DIM, EMB, K = 16, 6, 10, 6, 4


def _data(seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    labels = torch.arange(N_IDS).repeat_interleave(PER_ID)
    groups = labels % K
    protos = torch.randn(N_IDS, DIM, generator=g)
    x = protos[labels] + 0.5 * torch.randn(len(labels), DIM, generator=g)
    return x.to(dtype), labels, groups


def _trainer(meta=True, seed=0, dtype=torch.float32, **kwargs):
    torch.manual_seed(seed)
    model = MLP(DIM, embedding_size=EMB, hidden_sizes=(16,)).to(dtype)
    loss = GroupMarginLoss(N_IDS, EMB, K, anchor_loss="softmax", scale=16.0).to(dtype)
    meta_loss = MetaSkewnessLoss(selection_margin=None, n_groups=K) if meta else None
    return MetaBalancedTrainer(model, loss, meta_loss=meta_loss, random_state=seed, **kwargs)


def test_meta_gradient_matches_finite_differences():
    x, y, g = _data(dtype=torch.float64)
    trainer = _trainer(dtype=torch.float64, learning_rate=0.5)
    model0 = copy.deepcopy(trainer.model)
    loss0 = copy.deepcopy(trainer.loss)
    meta_idx = torch.arange(len(y))
    meta = (x[meta_idx], y[meta_idx], g[meta_idx])
    batch = (x, y, g)
    margins0 = loss0.margins.detach().clone()
    trainer.train_step(batch, meta)
    analytic = trainer.loss.margins.grad.clone()

    def meta_objective(m):
        """L^M(w - a grad_w L^T(w; m)) with first-order autograd only; m is a plain tensor."""
        model = copy.deepcopy(model0)
        head = copy.deepcopy(loss0)
        with torch.no_grad():
            head.margins.copy_(m)
        model.train()
        params = dict(model.named_parameters())
        train_loss = head(model(x), y, g)
        grads = torch.autograd.grad(train_loss, list(params.values()))
        w_hat = {
            n: (p - 0.5 * gr).detach() for (n, p), gr in zip(params.items(), grads, strict=True)
        }
        buffers = {n: b.clone() for n, b in model.named_buffers()}
        with torch.no_grad():
            emb = functional_call(model, {**w_hat, **buffers}, (meta[0],))
            return trainer.meta_loss(emb, meta[1], meta[2]).item()

    h = 1e-5
    numeric = torch.zeros(K, dtype=torch.float64)
    for k in range(1, K):  # group 0 is the anchor: zero gradient
        up, down = margins0.clone(), margins0.clone()
        up[k] += h
        down[k] -= h
        numeric[k] = (meta_objective(up) - meta_objective(down)) / (2 * h)
    assert analytic[0] == 0
    assert torch.any(numeric.abs() > 1e-6)
    torch.testing.assert_close(analytic, numeric, rtol=1e-4, atol=1e-8)


def test_margins_move_and_history_is_recorded():
    x, y, g = _data()
    history = History()
    trainer = _trainer(callbacks=[history], margin_learning_rate=0.05)
    before = trainer.loss.group_margins().detach().clone()
    trainer.fit((x, y, g), (x, y, g), n_steps=5, batch_size=32, meta_batch_size=32)
    after = trainer.loss.group_margins().detach()
    assert after[0] == before[0] == 0.0 or after[0] == before[0]
    assert not torch.equal(after[1:], before[1:])
    frame = history.to_frame()
    assert list(frame["step"]) == [0, 1, 2, 3, 4]
    assert {"margin_1", "bias_1", "train_acc_3", "meta_loss"} <= set(frame.columns)
    assert frame["bias_0"].isna().all()  # anchors have no skewness
    np.testing.assert_allclose(frame["margin_1"].iloc[-1], after[1].item(), rtol=1e-6)


def test_checkpoint_resumes_to_the_identical_next_step(tmp_path):
    x, y, g = _data()
    data = (x, y, g)
    straight = _trainer(meta_every=2, margin_learning_rate=0.05)
    straight.fit(data, data, n_steps=6, batch_size=24, meta_batch_size=16)

    first = _trainer(meta_every=2, margin_learning_rate=0.05)
    first.fit(
        data, data, n_steps=3, batch_size=24, meta_batch_size=16, checkpoint_path=tmp_path / "c.pt"
    )
    torch.manual_seed(12345)  # the global RNG is restored from the checkpoint
    resumed = _trainer(meta_every=2, margin_learning_rate=0.05).load_checkpoint(tmp_path / "c.pt")
    assert resumed.step_ == 3
    resumed.fit(data, data, n_steps=6, batch_size=24, meta_batch_size=16)
    for a, b in zip(
        straight.model.state_dict().values(), resumed.model.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b)
    assert torch.equal(straight.loss.margins, resumed.loss.margins)
    assert torch.equal(straight.loss.weight, resumed.loss.weight)


def test_restricted_lookahead_and_meta_every_run():
    x, y, g = _data()
    trainer = _trainer(lookahead=2, meta_every=3, margin_learning_rate=0.05)
    trainer.fit((x, y, g), (x, y, g), n_steps=4, batch_size=32, meta_batch_size=16)
    assert trainer.step_ == 4
    assert not torch.allclose(trainer.loss.margins[1:], torch.tensor(0.3))


def test_nan_loss_stops_with_the_step_and_cause():
    x, y, g = _data()
    x = x.clone()
    x[:] = float("nan")
    trainer = _trainer(meta=False)
    with pytest.raises(FloatingPointError, match="at step 0.*Likely cause"):
        trainer.fit((x, y, g), n_steps=2, batch_size=16)


def test_margin_pinned_at_a_bound_is_logged(caplog):
    x, y, g = _data()
    trainer = _trainer(margin_learning_rate=1e4)
    with caplog.at_level(logging.WARNING, logger="fairot.face"):
        trainer.fit((x, y, g), (x, y, g), n_steps=3, batch_size=32, meta_batch_size=16)
    assert "reached its bound" in caplog.text
    lo, hi = trainer.loss.margin_bounds
    m = trainer.loss.margins[1:]
    assert torch.all((m == lo) | (m == hi) | ((m > lo) & (m < hi)))


def test_bad_labels_are_rejected():
    x, y, g = _data()
    y = y.clone()
    y[0] = N_IDS + 3
    trainer = _trainer(meta=False)
    with pytest.raises(ValueError, match=LABELS_RANGE_ERROR.split("[")[0]):
        trainer.fit((x, y, g), n_steps=1, batch_size=len(y))


@pytest.mark.parametrize(
    "method",
    [
        "softmax",
        "norm-softmax",
        "cosface",
        "arcface",
        "m-rbn",
        "reweight",
        "mbn-soft",
        "mbn-arc",
        "mbn-cos",
    ],
)
def test_every_method_trains_and_lowers_the_loss(method):
    x, y, g = _data()
    counts = torch.bincount(g).numpy()
    spec = make_method(
        method,
        n_classes=N_IDS,
        embedding_size=EMB,
        n_groups=K,
        group_counts=counts,
        scale=16.0,
        selection_margin=None,
    )
    torch.manual_seed(0)
    history = History()
    trainer = MetaBalancedTrainer(
        MLP(DIM, embedding_size=EMB, hidden_sizes=(32,)),
        spec.loss,
        meta_loss=spec.meta_loss,
        group_weights=spec.group_weights,
        learning_rate=0.05,
        callbacks=[history],
        random_state=0,
    )
    trainer.fit((x, y, g), (x, y, g), n_steps=30, batch_size=48, meta_batch_size=16)
    losses = history.to_frame()["loss"].to_numpy()
    assert losses[-5:].mean() < losses[:5].mean()


def _pinned_trainer(reuse):
    torch.manual_seed(0)
    model = MLP(DIM, embedding_size=EMB, hidden_sizes=(16,))
    loss = GroupMarginLoss(N_IDS, EMB, K, init_margin=0.3, margin_bounds=(0.3, 0.3), scale=16.0)
    return MetaBalancedTrainer(
        model,
        loss,
        meta_loss=MetaSkewnessLoss(selection_margin=None, n_groups=K),
        reuse_lookahead_gradient=reuse,
        random_state=0,
    )


def test_reused_lookahead_gradient_equals_the_exact_step_when_margins_do_not_move():
    x, y, g = _data()
    exact, reused = _pinned_trainer(False), _pinned_trainer(True)
    for trainer in (exact, reused):
        trainer.fit((x, y, g), (x, y, g), n_steps=3, batch_size=32, meta_batch_size=16)
    for a, b in zip(exact.model.parameters(), reused.model.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(exact.loss.weight, reused.loss.weight, rtol=1e-5, atol=1e-6)
    assert torch.all(reused.loss.margins == 0.3)


@pytest.mark.parametrize(("fd_scale", "rtol"), [(0.01, 2e-2), (1e-4, 1e-5)])
def test_finite_difference_meta_gradient_converges_to_the_exact_one(monkeypatch, fd_scale, rtol):
    import fairot.face._meta_gradients as trainer_module

    monkeypatch.setattr(trainer_module, "FD_SCALE", fd_scale)
    x, y, g = _data(dtype=torch.float64)
    grads = {}
    for mode in ("exact", "finite-difference"):
        trainer = _trainer(dtype=torch.float64, learning_rate=0.5, meta_gradient=mode)
        trainer.train_step((x, y, g), (x, y, g))
        grads[mode] = trainer.loss.margins.grad.clone()
    assert torch.any(grads["exact"].abs() > 1e-6)
    torch.testing.assert_close(grads["finite-difference"], grads["exact"], rtol=rtol, atol=1e-9)


def test_finite_difference_with_reuse_trains():
    x, y, g = _data()
    trainer = _trainer(
        meta_gradient="finite-difference", reuse_lookahead_gradient=True, margin_learning_rate=0.05
    )
    trainer.fit((x, y, g), (x, y, g), n_steps=3, batch_size=32, meta_batch_size=16)
    assert not torch.allclose(trainer.loss.margins[1:], torch.tensor(0.3))
    with pytest.raises(ValueError, match="meta_gradient must be"):
        _trainer(meta_gradient="implicit")


@pytest.mark.parametrize("reuse", [False, True])
def test_forward_mode_meta_gradient_equals_the_exact_one(reuse):
    # Same quantity as Eq. (10), computed with a Jacobian-vector product: equal to rounding.
    x, y, g = _data(dtype=torch.float64)
    grads = {}
    for mode in ("exact", "forward-mode"):
        trainer = _trainer(
            dtype=torch.float64,
            learning_rate=0.5,
            meta_gradient=mode,
            reuse_lookahead_gradient=reuse,
        )
        trainer.train_step((x, y, g), (x, y, g))
        grads[mode] = trainer.loss.margins.grad.clone()
    assert torch.any(grads["exact"].abs() > 1e-6)
    torch.testing.assert_close(grads["forward-mode"], grads["exact"], rtol=1e-9, atol=1e-12)


def _margin_gradients(model, head, batch, n_groups, learning_rate):
    """The first meta step's margin gradient, exact and forward-mode, from the same start."""
    grads, trainers = {}, {}
    for mode in ("exact", "forward-mode"):
        trainer = MetaBalancedTrainer(
            copy.deepcopy(model),
            copy.deepcopy(head),
            meta_loss=MetaSkewnessLoss(selection_margin=None, n_groups=n_groups),
            meta_gradient=mode,
            learning_rate=learning_rate,
            random_state=0,
        )
        trainer.train_step(batch, batch)
        grads[mode], trainers[mode] = trainer.loss.margins.grad.clone(), trainer
    return grads, trainers


def test_forward_mode_through_iresnet_batchnorm_and_prelu():
    # Forward-mode AD must pass through convolutions, BatchNorm in training mode and PReLU.
    from fairot.face import iresnet18

    torch.manual_seed(0)
    model = iresnet18(embedding_size=32, input_size=32).double()
    loss = GroupMarginLoss(8, 32, 2, kind="arc", init_margin=0.3).double()
    x = torch.randn(8, 3, 32, 32, dtype=torch.float64)
    y = torch.arange(8) // 2
    g = torch.arange(8) // 4
    grads, _ = _margin_gradients(model, loss, (x, y, g), 2, 0.1)
    torch.testing.assert_close(grads["forward-mode"], grads["exact"], rtol=1e-7, atol=1e-12)


class _Embedder(nn.Module):
    """A small embedding net; ``variant`` makes it untraceable or overwrite values in place."""

    def __init__(self, variant: str) -> None:
        super().__init__()
        self.variant = variant
        self.fc = nn.Linear(10, 16)
        self.bn = nn.BatchNorm1d(16)
        self.act = nn.ReLU(inplace=variant == "in-place")
        self.out = nn.Linear(16, 6)
        self.heads = nn.ModuleDict({"max": nn.Identity()})

    def forward(self, x):
        h = self.act(self.bn(self.fc(x)))
        if self.variant == "branching" and bool(h.sum() > 0):
            h = h * 1.0
        values, _ = torch.max(torch.stack([h, 0.5 * h]), dim=0)  # a named-tuple output
        return self.out(self.heads["max"](values))


@pytest.mark.parametrize("variant", ["traceable", "branching", "in-place"])
def test_trainer_meta_gradient_is_exact_with_and_without_a_recording(variant):
    g = torch.Generator().manual_seed(0)
    y = torch.arange(16).repeat_interleave(4)
    groups = y % 4
    x = (torch.randn(16, 10, generator=g)[y] + 0.5 * torch.randn(64, 10, generator=g)).double()
    torch.manual_seed(0)
    model = _Embedder(variant).double()
    head = GroupMarginLoss(16, 6, 4, anchor_loss="softmax", scale=16.0).double()
    grads, trainers = _margin_gradients(model, head, (x, y, groups), 4, 0.5)
    assert torch.any(grads["exact"].abs() > 1e-6)
    torch.testing.assert_close(grads["forward-mode"], grads["exact"], rtol=1e-9, atol=1e-12)
