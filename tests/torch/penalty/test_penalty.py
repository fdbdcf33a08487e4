"""WassersteinParityPenalty against independent oracles.

- COT and DOT: on a logistic model, the penalty's theta-gradient (autograd through the model)
  reproduces the numba kernels' updates of fairot.classification (their own oracle is the NumPy
  transcription of Algorithm 1), fed the same batch indices and dual state, over several updates.
- DOT: POT's ``ot.emd2`` on each group's batch and the target sample.
- Sinkhorn: POT's log-domain Sinkhorn plan, and the exact cost as the regularisation vanishes.
- Gradients: ``torch.autograd.gradcheck``.
"""

import numpy as np
import ot
import pytest
import torch

from fairot.classification import DivergenceError
from fairot.classification._kernels import cot_kernel, dot_kernel
from fairot.classification._reference import REG_ENTROPIC, REG_L2
from fairot.classification._rows import padded_rows
from fairot.torch import WassersteinParityPenalty
from fairot.torch.penalty._checks import (
    MSG_DEVICE,
    MSG_DUAL_OVERFLOW,
    MSG_GROUP_RANGE,
    MSG_GROUPS,
    MSG_OPTION,
    MSG_POSITIVE,
    MSG_SCORE_RANGE,
    MSG_SCORES,
    MSG_TARGET,
    MSG_TARGET_BATCH,
)
from fairot.transport import draw_fourier_features, tabulate_features

GRID = 4096


def _logistic_problem(seed, n_groups=3, n=60, d=4, n_batch=8, n_updates=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.3] = 0.0  # sparse rows, as the kernel stores them
    groups = np.arange(n) % n_groups
    members = np.concatenate([np.flatnonzero(groups == a) for a in range(n_groups)])
    counts = np.bincount(groups)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    theta = rng.normal(scale=0.5, size=d + 1)
    target = np.sort(rng.uniform(0.05, 0.95, 200))
    batches = rng.integers(0, counts[None, :, None], size=(n_updates, n_groups, n_batch))
    target_batches = rng.integers(0, target.shape[0], size=(n_updates, n_batch))
    return X, members.astype(np.int64), offsets, theta, target, batches, target_batches


def _torch_updates(
    penalty, X, members, offsets, theta0, target, batches, target_batches, step, scale
):
    """Drive the penalty as the kernel would: same rows, same target batch, SGD on theta."""
    Xt = torch.tensor(X)
    theta = torch.tensor(theta0, requires_grad=True)
    values = []
    n_groups, n_batch = batches.shape[1], batches.shape[2]
    for k in range(batches.shape[0]):
        rows = np.concatenate([members[offsets[a] + batches[k, a]] for a in range(n_groups)])
        groups = torch.arange(n_groups).repeat_interleave(n_batch)
        scores = torch.sigmoid(Xt[rows] @ theta[:-1] + theta[-1])
        tb = torch.tensor(target[target_batches[k]])
        diagonal = penalty.method == "cot" and penalty.pairing == "diagonal"
        value = penalty(scores, groups, target_samples=tb.repeat(n_groups) if diagonal else tb)
        (grad,) = torch.autograd.grad(value, theta)
        with torch.no_grad():
            theta -= step * scale * grad
        values.append(value.item())
    return theta.detach().numpy(), np.array(values)


@pytest.mark.parametrize("reg", ["entropic", "l2"])
@pytest.mark.parametrize("constrain", [True, False])
@pytest.mark.parametrize("pairing", ["diagonal", "all"])
def test_cot_gradient_equals_numba_kernel_update(reg, constrain, pairing):
    X, members, offsets, theta0, target, batches, target_batches = _logistic_problem(0)
    n_groups, n_batch = batches.shape[1], batches.shape[2]
    features = draw_fourier_features(20, 0.1, np.random.RandomState(3))
    table = tabulate_features(features, GRID)
    # Non-zero starting duals, so that the potentials' part of the gradient is exercised.
    duals0 = np.random.default_rng(1).normal(scale=0.05, size=(n_groups, 20))
    target_duals0 = np.random.default_rng(2).normal(scale=0.05, size=(n_groups, 20))
    step, dual_step, lam = 0.5, 0.05, 0.1

    theta, duals, target_duals = theta0.copy(), duals0.copy(), target_duals0.copy()
    indices, values = padded_rows(X)
    objectives, diagnostics = np.empty(batches.shape[0]), np.zeros(1)
    done, status = cot_kernel(
        theta, duals, target_duals, indices, values, members, offsets, target, batches,
        target_batches, table.values, table.derivatives, REG_ENTROPIC if reg == "entropic" else
        REG_L2, lam, dual_step, step, constrain, pairing == "all", objectives, diagnostics,
    )  # fmt: skip
    assert (done, status) == (batches.shape[0], 0)

    penalty = WassersteinParityPenalty(
        n_groups, method="cot", reg=reg, reg_strength=lam, n_fourier_features=20,
        kernel_variance=0.1, dual_step_size=dual_step, constrain_duals=constrain,
        pairing=pairing, feature_grid_size=GRID, random_state=3,
    ).double()  # fmt: skip
    with torch.no_grad():
        penalty.duals.copy_(torch.tensor(duals0))
        penalty.target_duals.copy_(torch.tensor(target_duals0))
    # The kernel's theta step is the paper's sum over the batch (N times the gradient of the
    # mean objective; for all pairs, of the mean over the target).
    scale = n_batch
    theta_t, values_t = _torch_updates(
        penalty, X, members, offsets, theta0, target, batches, target_batches, step, scale
    )
    np.testing.assert_allclose(theta_t, theta, rtol=0, atol=1e-10)
    np.testing.assert_allclose(values_t, objectives, rtol=0, atol=1e-10)
    np.testing.assert_allclose(penalty.duals.numpy(), duals, rtol=0, atol=1e-10)
    if not constrain:
        np.testing.assert_allclose(penalty.target_duals.numpy(), target_duals, rtol=0, atol=1e-10)


def test_dot_gradient_equals_numba_kernel_update():
    X, members, offsets, theta0, target, batches, target_batches = _logistic_problem(5, n_batch=16)
    theta = theta0.copy()
    indices, values = padded_rows(X)
    objectives, diagnostics = np.empty(batches.shape[0]), np.zeros(1)
    step = 0.5
    done, status = dot_kernel(
        theta, indices, values, members, offsets, target, batches, target_batches, step,
        objectives, diagnostics,
    )  # fmt: skip
    assert (done, status) == (batches.shape[0], 0)
    penalty = WassersteinParityPenalty(3, method="dot").double()
    theta_t, values_t = _torch_updates(
        penalty, X, members, offsets, theta0, target, batches, target_batches, step, 1
    )
    np.testing.assert_allclose(theta_t, theta, rtol=0, atol=1e-10)
    np.testing.assert_allclose(values_t, objectives, rtol=0, atol=1e-10)


def _uneven_batch(seed, sizes=(7, 12, 3), m=9):
    rng = np.random.default_rng(seed)
    groups = np.concatenate([np.full(k, a) for a, k in enumerate(sizes)])
    perm = rng.permutation(groups.shape[0])
    scores = rng.beta(2, 3, groups.shape[0])[perm]
    groups = groups[perm]
    target = rng.beta(3, 2, m)
    return scores, groups, target


@pytest.mark.parametrize("seed", range(4))
def test_dot_equals_pot_emd2_per_group(seed):
    scores, groups, target = _uneven_batch(seed)
    penalty = WassersteinParityPenalty(4, method="dot").double()  # group 3 absent
    value = penalty(torch.tensor(scores), torch.tensor(groups), target_samples=torch.tensor(target))
    expected = 0.0
    for a in range(3):
        s = scores[groups == a]
        cost = np.abs(s[:, None] - target[None, :])
        expected += ot.emd2(np.full(s.shape[0], 1 / s.shape[0]), np.full(9, 1 / 9), cost)
    assert float(value) == pytest.approx(expected, abs=1e-12)


def test_dot_ties_and_fixed_target_equal_pot():
    scores = np.array([0.5, 0.5, 0.2, 0.2, 0.9, 0.5])
    groups = np.array([0, 1, 0, 1, 1, 0])
    target = np.array([0.5, 0.1, 0.9, 0.3])
    penalty = WassersteinParityPenalty(2, method="dot", target=target).double()
    value = penalty(torch.tensor(scores), torch.tensor(groups))
    # A fixed target is read at M = 3 midpoint levels (1/6, 1/2, 5/6): quantiles .1, .3, .9 ...
    levels = (np.arange(3) + 0.5) / 3
    t = np.sort(target)[np.ceil(levels * 4).astype(int) - 1]
    expected = sum(
        ot.emd2(np.full(3, 1 / 3), np.full(3, 1 / 3), np.abs(scores[groups == a][:, None] - t))
        for a in range(2)
    )
    assert float(value) == pytest.approx(expected, abs=1e-12)


def test_barycenter_target_matches_fairot_transport():
    from fairot.transport import barycenter_quantiles, midpoint_grid, quantile_function

    scores, groups, _ = _uneven_batch(7, sizes=(7, 12, 3, 5))
    penalty = WassersteinParityPenalty(4, method="dot").double()
    penalty(torch.tensor(scores), torch.tensor(groups))
    u = midpoint_grid(12)
    curves = np.stack([quantile_function(scores[groups == a], u) for a in range(4)])
    np.testing.assert_allclose(
        penalty.last_target.numpy(), barycenter_quantiles(curves, p=1), atol=1e-15
    )


def _entropic_value_from_plan(plan, cost, a, b, reg):
    mask = plan > 0
    kl = np.sum(plan[mask] * np.log(plan[mask] / np.outer(a, b)[mask]))
    return float(np.sum(plan * cost) + reg * kl)


@pytest.mark.parametrize("reg", [0.2, 0.05, 0.01])
def test_sinkhorn_equals_pot_sinkhorn(reg):
    scores, groups, target = _uneven_batch(1)
    penalty = WassersteinParityPenalty(
        3, method="sinkhorn", reg_strength=reg, sinkhorn_tol=1e-13, sinkhorn_max_iter=100_000
    ).double()
    value = penalty(torch.tensor(scores), torch.tensor(groups), target_samples=torch.tensor(target))
    expected = 0.0
    for a in range(3):
        s = scores[groups == a]
        wa, wb = np.full(s.shape[0], 1 / s.shape[0]), np.full(9, 1 / 9)
        cost = np.abs(s[:, None] - target[None, :])
        plan = ot.sinkhorn(
            wa, wb, cost, reg, method="sinkhorn_log", stopThr=1e-14, numItermax=10**6
        )
        expected += _entropic_value_from_plan(plan, cost, wa, wb, reg)
    assert float(value) == pytest.approx(expected, abs=1e-9)


def test_sinkhorn_tends_to_exact_cost():
    scores, groups, target = _uneven_batch(2)
    exact = sum(
        ot.emd2(
            np.full((groups == a).sum(), 1 / (groups == a).sum()),
            np.full(9, 1 / 9),
            np.abs(scores[groups == a][:, None] - target[None, :]),
        )
        for a in range(3)
    )
    gaps = []
    for reg in (0.1, 0.03, 0.01, 0.003, 0.001):
        penalty = WassersteinParityPenalty(
            3, method="sinkhorn", reg_strength=reg, sinkhorn_tol=1e-11, sinkhorn_max_iter=200_000
        ).double()
        t = torch.tensor(target)
        gaps.append(
            float(penalty(torch.tensor(scores), torch.tensor(groups), target_samples=t)) - exact
        )
    assert all(g >= -1e-12 for g in gaps)  # the entropic cost is above the exact one ...
    assert all(b < a for a, b in zip(gaps, gaps[1:], strict=False))  # ... and decreases to it
    assert gaps[-1] < 1e-3 * 3 * np.log(12 * 9)  # within eps log(n m) per group


@pytest.mark.parametrize(
    "kwargs",
    [
        {"method": "dot"},
        {
            "method": "sinkhorn",
            "reg_strength": 0.05,
            "sinkhorn_tol": 1e-14,
            "sinkhorn_max_iter": 10**5,
        },
        {"method": "cot", "reg": "entropic"},
        {"method": "cot", "reg": "l2", "reg_strength": 0.5},
        {"method": "cot", "constrain_duals": False},
    ],
)
def test_gradcheck(kwargs):
    scores, groups, target = _uneven_batch(3, sizes=(4, 5, 3), m=6)
    penalty = WassersteinParityPenalty(3, target=target, random_state=0, **kwargs).double()
    with torch.no_grad():
        penalty.duals.normal_(0, 0.1, generator=torch.Generator().manual_seed(0))
        penalty.target_duals.normal_(0, 0.1, generator=torch.Generator().manual_seed(1))
    penalty.eval()  # COT: the potentials stay put between gradcheck's evaluations
    g = torch.tensor(groups)
    s = torch.tensor(scores, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: penalty(x, g), (s,), eps=1e-7, atol=1e-7)


@pytest.mark.parametrize("method", ["cot", "dot", "sinkhorn"])
def test_batched_call_equals_sum_of_group_calls(method):
    scores, groups, target = _uneven_batch(4)
    kwargs = {"target": target, "random_state": 0}
    full = WassersteinParityPenalty(3, method=method, **kwargs).double().eval()
    value = full(torch.tensor(scores), torch.tensor(groups))
    m = np.bincount(groups).max()
    t = full.last_target
    total = 0.0
    for a in range(3):
        one = WassersteinParityPenalty(1, method=method, **kwargs).double().eval()
        s = torch.tensor(scores[groups == a])
        total += float(one(s, torch.zeros(s.shape[0], dtype=torch.long), target_samples=t))
    assert t.shape[0] == m
    assert float(value) == pytest.approx(total, abs=1e-10)


def test_float32_close_to_float64():
    scores, groups, target = _uneven_batch(5)
    for method in ("cot", "dot", "sinkhorn"):
        p64 = WassersteinParityPenalty(3, method=method, target=target, random_state=0).double()
        p32 = WassersteinParityPenalty(3, method=method, target=target, random_state=0)
        v64 = p64(torch.tensor(scores), torch.tensor(groups))
        v32 = p32(torch.tensor(scores, dtype=torch.float32), torch.tensor(groups))
        assert v32.dtype == torch.float32
        assert float(v32) == pytest.approx(float(v64), abs=1e-5)
        np.testing.assert_allclose(p32.duals.numpy(), p64.duals.numpy(), atol=1e-6)


def test_cot_duals_in_state_dict_and_frozen_in_eval():
    scores, groups, _ = _uneven_batch(6)
    s, g = torch.tensor(scores), torch.tensor(groups)
    penalty = WassersteinParityPenalty(3, random_state=0).double()
    penalty(s, g)
    assert penalty.duals.abs().sum() > 0
    restored = WassersteinParityPenalty(3, random_state=1).double()
    restored.load_state_dict(penalty.state_dict())
    assert float(restored(s, g)) == float(penalty(s, g))
    before = penalty.duals.clone()
    penalty.eval()
    penalty(s, g)
    assert torch.equal(penalty.duals, before)


def test_same_seed_same_features_as_cot_classifier():
    from fairot.classification import COTClassifier

    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 200)
    X = np.column_stack([rng.normal(a, 1.0), a])
    cot = COTClassifier(n_fourier_features=30, n_updates=0, random_state=11)
    cot.fit(X, (X[:, 0] > 0.5).astype(int), sensitive_features=a)
    penalty = WassersteinParityPenalty(2, n_fourier_features=30, random_state=11)
    np.testing.assert_array_equal(penalty.frequencies.numpy(), cot.fourier_features_.frequencies)
    np.testing.assert_array_equal(penalty.phases.numpy(), cot.fourier_features_.phases)


def test_diagonal_pairing_deterministic_with_seed():
    scores, groups, _ = _uneven_batch(8)
    values = []
    for _ in range(2):
        penalty = WassersteinParityPenalty(3, pairing="diagonal", random_state=4).double()
        values.append(
            [float(penalty(torch.tensor(scores), torch.tensor(groups))) for _ in range(3)]
        )
    assert values[0] == values[1]


def test_entropic_overflow_raises_with_advice():
    # Seeded: with unseeded features about 1 run in 20 drew potentials that stay below the bound.
    penalty = WassersteinParityPenalty(1, reg_strength=0.01, random_state=0).double()
    with torch.no_grad():
        penalty.duals.fill_(1.0)
    s = torch.linspace(0.1, 0.9, 8, dtype=torch.float64)
    with pytest.raises(DivergenceError, match="Lower dual_step_size"):
        penalty(s, torch.zeros(8, dtype=torch.long))
    assert "reg_strength" in MSG_DUAL_OVERFLOW


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_groups": 0}, MSG_POSITIVE.format(name="n_groups", kind="integer", value=0)),
        (
            {"method": "emd"},
            MSG_OPTION.format(name="method", options=("cot", "dot", "sinkhorn"), value="emd"),
        ),
        (
            {"pairing": "diag"},
            MSG_OPTION.format(name="pairing", options=("all", "diagonal"), value="diag"),
        ),
        (
            {"reg_strength": -1.0},
            MSG_POSITIVE.format(name="reg_strength", kind="number", value=-1.0),
        ),
        ({"dual_step_size": 0}, MSG_POSITIVE.format(name="dual_step_size", kind="number", value=0)),
        ({"target": "median"}, MSG_TARGET.format(value="'median'")),
        ({"target": [0.5, 1.5]}, MSG_TARGET.format(value="[0.5, 1.5]")),
    ],
)
def test_constructor_validation(kwargs, message):
    args = {"n_groups": 2, **kwargs}
    with pytest.raises(ValueError, match=__import__("re").escape(message)):
        WassersteinParityPenalty(args.pop("n_groups"), **args)


def test_forward_validation():
    import re

    penalty = WassersteinParityPenalty(2)
    s = torch.tensor([0.2, 0.4, 0.6])
    g = torch.tensor([0, 1, 1])
    with pytest.raises(TypeError, match=re.escape(MSG_SCORES.format(value="[0.2, 0.4]"))):
        penalty([0.2, 0.4], g)
    with pytest.raises(
        TypeError,
        match=re.escape(MSG_GROUPS.format(n=3, value="tensor of shape (2,) and dtype torch.int64")),
    ):
        penalty(s, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=re.escape(MSG_SCORE_RANGE.format(low=0.2, high=1.5))):
        penalty(torch.tensor([0.2, 1.5, 0.6], dtype=torch.float64), g)
    with pytest.raises(ValueError, match=re.escape(MSG_SCORE_RANGE.split("(")[0])):
        penalty(torch.tensor([0.2, float("nan"), 0.6]), g)
    with pytest.raises(
        ValueError, match=re.escape(MSG_GROUP_RANGE.format(n_groups=2, low=0, high=2))
    ):
        penalty(s, torch.tensor([0, 1, 2]))
    with pytest.raises(
        ValueError,
        match=re.escape(
            MSG_TARGET_BATCH.format(extra="", value="tensor of shape (0,) and dtype torch.float32")
        ),
    ):
        penalty(s, g, target_samples=torch.tensor([]))
    diagonal = WassersteinParityPenalty(2, pairing="diagonal")
    with pytest.raises(ValueError, match="one entry per score"):
        diagonal(s, g, target_samples=torch.tensor([0.5, 0.5]))
    assert "penalty.to(scores.device)" in MSG_DEVICE


@pytest.mark.parametrize("bad", [float("nan"), 1.5, -0.5, float("inf"), float("-inf")])
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"feature_grid_size": 64},
        {"pairing": "diagonal"},
        {"target": "barycenter"},
        {"constrain_duals": False, "reg": "l2"},
    ],
)
def test_cot_refuses_bad_scores_after_its_pass_without_writing(kwargs, bad):
    # COT reads the scores' range with its exponent check after the pass (one transfer from a
    # GPU): the pass must not fail first on such scores, and nothing may change before the error.
    import re

    scores, groups, target = _uneven_batch(15)
    kwargs = {"target": target, "random_state": 0, **kwargs}
    penalty = WassersteinParityPenalty(3, **kwargs).double()
    penalty(torch.tensor(scores), torch.tensor(groups))  # fills the caches, moves the duals
    before = {name: b.clone() for name, b in penalty.named_buffers()}
    s = torch.tensor(scores)
    s[3] = bad
    with pytest.raises(ValueError, match=re.escape(MSG_SCORE_RANGE.split("(")[0])):
        penalty(s, torch.tensor(groups))
    for name, b in penalty.named_buffers():
        assert torch.equal(b, before[name]), name


def test_inputs_not_mutated():
    s = torch.tensor([0.3, 0.1, 0.8, 0.5], dtype=torch.float64)
    g = torch.tensor([1, 0, 1, 0])
    s0, g0 = s.clone(), g.clone()
    for method in ("cot", "dot", "sinkhorn"):
        WassersteinParityPenalty(2, method=method).double()(s, g)
    assert torch.equal(s, s0) and torch.equal(g, g0)


def _set_duals(*penalties, value=0.3):
    """Non-zero potentials (the constrained pair), so that the features reach the value."""
    with torch.no_grad():
        for penalty in penalties:
            penalty.duals.fill_(value)
            penalty.target_duals.fill_(-value)


def _write_buffer(penalty, buffer, how):
    """Multiply one buffer by 1.5 through one of the paths the penalty's caches follow."""
    if how == "in place":
        with torch.no_grad():
            getattr(penalty, buffer).mul_(1.5)
        penalty.clear_caches()
        return
    holder = torch.nn.ModuleDict({"penalty": penalty}) if how == "parent" else penalty
    state = holder.state_dict()
    key = f"penalty.{buffer}" if how == "parent" else buffer
    state[key] = state[key] * 1.5
    holder.load_state_dict(state)


@pytest.mark.parametrize("how", ["load_state_dict", "parent", "in place"])
@pytest.mark.parametrize("buffer", ["frequencies", "phases", "feature_derivatives"])
def test_buffers_written_in_place_are_read_again(buffer, how):
    # The penalty keeps its feature map and the target's features between calls; a buffer
    # changed by load_state_dict (the penalty's own, or a parent module's, which copies in
    # place), or in place followed by clear_caches(), must reach the next call.
    scores, groups, target = _uneven_batch(13)
    s, g = torch.tensor(scores), torch.tensor(groups)
    grid = 64 if buffer == "feature_derivatives" else None
    kwargs = {"target": target, "random_state": 0, "feature_grid_size": grid}
    reused = WassersteinParityPenalty(3, **kwargs).double().eval()
    fresh = WassersteinParityPenalty(3, **kwargs).double().eval()
    _set_duals(reused, fresh)
    reused(s, g)
    _write_buffer(reused, buffer, how)
    with torch.no_grad():
        getattr(fresh, buffer).mul_(1.5)  # before its first call: nothing kept yet
    results = []
    for penalty in (reused, fresh):
        x = s.clone().requires_grad_()
        value = penalty(x, g)
        value.backward()  # psi' reaches the gradient only
        results.append((value.detach(), x.grad))
    (v_reused, g_reused), (v_fresh, g_fresh) = results
    assert float(v_reused) == pytest.approx(float(v_fresh), abs=1e-12)
    np.testing.assert_allclose(g_reused.numpy(), g_fresh.numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["cot", "dot", "sinkhorn"])
def test_a_dtype_move_of_the_buffers_is_read_again(method):
    # .float() replaces every buffer (nn.Module._apply): the feature map and the fixed target's
    # quantiles kept from a float64 call must be rebuilt from the float32 buffers.
    scores, groups, target = _uneven_batch(16)
    s, g = torch.tensor(scores), torch.tensor(groups)
    kwargs = {"method": method, "target": target, "random_state": 0}
    moved = WassersteinParityPenalty(3, **kwargs).double().eval()
    fresh = WassersteinParityPenalty(3, **kwargs).float().eval()
    _set_duals(moved, fresh)
    moved(s, g)
    moved.float()
    assert float(moved(s, g)) == float(fresh(s, g))
    assert torch.equal(moved.last_target, fresh.last_target)


@pytest.mark.parametrize("method", ["cot", "sinkhorn"])
def test_a_whole_data_set_is_refused_before_its_pairs_are_allocated(method):
    # 2 x 12,000 scores with the batch barycenter as target: M = 12,000 target samples, so
    # 288 million (score, sample) pairs, several gigabytes per temporary in float32.
    n = 24_000
    s = torch.rand(n, generator=torch.Generator().manual_seed(0))
    g = torch.arange(n) % 2
    penalty = WassersteinParityPenalty(2, method=method)
    with pytest.raises(ValueError, match=r"12000 samples: 288,000,000 pairs .* mini-batches"):
        penalty(s, g)
    # The same call in the forms that hold no such matrix goes through.
    assert torch.isfinite(WassersteinParityPenalty(2, method="dot")(s, g))
    if method == "cot":
        diagonal = WassersteinParityPenalty(2, pairing="diagonal", random_state=0)
        assert torch.isfinite(diagonal(s, g))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("method", ["cot", "dot", "sinkhorn"])
def test_half_precision_scores_are_computed_in_float32(dtype, method):
    # Half-precision scores (autocast) would overflow COT's exp() past z = 11: the penalty
    # computes in float32, so it equals the float32 penalty of the same (rounded) scores.
    scores, groups, target = _uneven_batch(12)
    g = torch.tensor(groups)
    half = torch.tensor(scores).to(dtype).requires_grad_()
    single = half.detach().float().requires_grad_()
    values = []
    extra = {"reg_strength": 0.05, "sinkhorn_max_iter": 10**4} if method == "sinkhorn" else {}
    for s in (half, single):
        penalty = WassersteinParityPenalty(3, method=method, target=target, random_state=0, **extra)
        with torch.no_grad():
            # COT's exponents reach 11.2 here, past where exp overflows in float16 (11.09),
            # while the gradient (up to about 5e3) is representable in it.
            penalty.duals.fill_(1.0)
        value = penalty(s, g)
        value.backward()
        values.append(value.detach())
    assert values[0].dtype == torch.float32
    assert float(values[0]) == pytest.approx(float(values[1]), abs=1e-6)
    assert half.grad.dtype == dtype and torch.isfinite(half.grad).all()
    np.testing.assert_allclose(half.grad.float(), single.grad.to(dtype).float(), rtol=0, atol=0)


@pytest.mark.parametrize("method", ["cot", "dot", "sinkhorn"])
def test_barycenter_target_with_the_last_groups_absent(method):
    # Found by the fuzz profile: the absent groups after the last present one had their
    # quantile positions one past the end of the batch.
    penalty = WassersteinParityPenalty(3, method=method, random_state=0).double()
    value = penalty(torch.tensor([0.0, 0.25]), torch.tensor([0, 0]))
    # One present group is its own barycenter: its exact W1 to it (DOT) is 0.
    assert torch.isfinite(value)
    if method == "dot":
        assert float(value) == 0.0


@pytest.mark.parametrize("method", ["cot", "dot", "sinkhorn"])
def test_group_codes_rewritten_in_place_are_read_again(method):
    # The penalty reuses a batch's group matrices while the codes repeat; a caller that writes
    # new codes into the same tensor must get the new groups (and their validation).
    scores, groups, target = _uneven_batch(10)
    s = torch.tensor(scores)
    g = torch.tensor(groups)
    reused = WassersteinParityPenalty(3, method=method, target=target, random_state=0).double()
    reused(s, g)
    g.copy_(torch.tensor(np.random.default_rng(1).permutation(groups)))
    fresh = WassersteinParityPenalty(3, method=method, target=target, random_state=0).double()
    with torch.no_grad():
        fresh.duals.copy_(reused.duals)
        fresh.target_duals.copy_(reused.target_duals)
    assert float(reused(s, g)) == pytest.approx(float(fresh(s, g.clone())), abs=1e-12)
    g[0] = 3
    with pytest.raises(ValueError, match=r"codes in \[0, n_groups=3\); got values in \[0, 3\]"):
        reused(s, g)


def test_repeated_group_codes_give_the_same_steps_as_fresh_ones():
    # Balanced batches in group order repeat their codes: the reused group matrices must give
    # the same values and dual steps as codes seen for the first time.
    scores, groups, target = _uneven_batch(11)
    g = torch.tensor(groups)
    repeated = WassersteinParityPenalty(3, target=target, random_state=0).double()
    fresh = WassersteinParityPenalty(3, target=target, random_state=0).double()
    rng = np.random.default_rng(2)
    for _ in range(3):
        s = torch.tensor(rng.permutation(scores))
        assert float(repeated(s, g)) == float(fresh(s, g.clone()))
        fresh._groups_cache = None
    assert torch.equal(repeated.duals, fresh.duals)


@pytest.mark.parametrize("method", ["cot", "dot", "sinkhorn"])
def test_training_after_a_call_under_inference_mode(method):
    # A validation pass under torch.inference_mode() before training: what the penalty keeps
    # between calls (COT writes its scaled duals into a kept tensor at every call) must not be
    # an inference tensor when training resumes, and the numbers must not depend on the pass.
    scores, groups, target = _uneven_batch(14)
    s, g = torch.tensor(scores), torch.tensor(groups)
    validated = WassersteinParityPenalty(3, method=method, target=target, random_state=0).double()
    fresh = WassersteinParityPenalty(3, method=method, target=target, random_state=0).double()
    with torch.inference_mode():
        validated.eval()(s, g)
    validated.train()
    results = []
    for penalty in (validated, fresh):
        x = s.clone().requires_grad_()
        value = penalty(x, g)
        value.backward()
        results.append((float(value.detach()), x.grad))
    assert results[0][0] == results[1][0]
    assert torch.equal(results[0][1], results[1][1])
    with torch.inference_mode():  # and back again
        assert float(validated.eval()(s, g)) == float(fresh.eval()(s, g))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("method", ["cot", "dot", "sinkhorn"])
def test_cuda_matches_cpu(method):
    scores, groups, target = _uneven_batch(9)
    cpu = WassersteinParityPenalty(3, method=method, target=target, random_state=0).double()
    gpu = WassersteinParityPenalty(3, method=method, target=target, random_state=0).double().cuda()
    v_cpu = cpu(torch.tensor(scores), torch.tensor(groups))
    v_gpu = gpu(torch.tensor(scores).cuda(), torch.tensor(groups).cuda())
    assert float(v_gpu) == pytest.approx(float(v_cpu), abs=1e-10)
