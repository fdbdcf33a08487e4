"""Fuzz of fairot.torch's public boundary: the penalty, FairTrainer and FairMLPClassifier.

Any batch of scores in [0, 1] with any group codes gives a finite, non-negative DOT penalty equal
to POT's exact cost and invariant to the order of the batch, with finite gradients for every
method; anything else is a ValueError or TypeError from our validation, never another exception.
``FairMLPClassifier`` with any learning rate, device and tiny data either fits a sound model
(finite probabilities in [0, 1], not saturated to hard 0/1 labels) or raises one clear error: a
ValueError/TypeError naming the argument, or a DivergenceError advising a lower learning_rate.
"""

import re
import warnings

import numpy as np
import ot
import pytest
import torch
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fairot.classification import DivergenceError
from fairot.exceptions import DegenerateModelWarning
from fairot.torch import FairMLPClassifier, FairTrainer, WassersteinParityPenalty
from tests.helpers import IGNORE_SMALL_GROUPS

pytestmark = [pytest.mark.fuzz, pytest.mark.filterwarnings(IGNORE_SMALL_GROUPS)]

unit = st.floats(0.0, 1.0, allow_nan=False, width=64)


@st.composite
def batches(draw):
    n = draw(st.integers(1, 30))
    scores = draw(arrays(np.float64, n, elements=unit))
    groups = draw(arrays(np.int64, n, elements=st.integers(0, 2)))
    target = draw(arrays(np.float64, draw(st.integers(1, 12)), elements=unit))
    return scores, groups, target


@given(batches(), st.randoms(use_true_random=False))
def test_dot_equals_pot_and_ignores_order(batch, random):
    scores, groups, target = batch
    penalty = WassersteinParityPenalty(3, method="dot").double()
    t = torch.tensor(target)
    value = float(penalty(torch.tensor(scores), torch.tensor(groups), target_samples=t))
    expected = 0.0
    for a in np.unique(groups):
        s = scores[groups == a]
        cost = np.abs(s[:, None] - target[None, :])
        expected += ot.emd2(
            np.full(s.shape[0], 1 / s.shape[0]), np.full(t.shape[0], 1 / t.shape[0]), cost
        )
    assert value >= 0.0
    assert value == pytest.approx(expected, abs=1e-10)
    order = list(range(scores.shape[0]))
    random.shuffle(order)
    shuffled = float(
        penalty(torch.tensor(scores[order]), torch.tensor(groups[order]), target_samples=t)
    )
    assert shuffled == pytest.approx(value, abs=1e-12)


@given(batches(), st.sampled_from(["cot", "dot", "sinkhorn"]))
def test_gradients_are_finite(batch, method):
    scores, groups, target = batch
    extra = {"reg_strength": 0.1, "sinkhorn_max_iter": 200} if method == "sinkhorn" else {}
    penalty = WassersteinParityPenalty(
        3, method=method, target=target, random_state=0, **extra
    ).double()
    s = torch.tensor(scores, requires_grad=True)
    with warnings.catch_warnings():
        # Finiteness is the property here, converged or not (convergence is tested against POT
        # in tests/torch); a short iteration cap keeps each example cheap.
        warnings.filterwarnings("ignore", message="Sinkhorn did not converge")
        value = penalty(s, torch.tensor(groups))
    (grad,) = torch.autograd.grad(value, s)
    assert torch.isfinite(value) and torch.isfinite(grad).all()


@given(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=0, max_size=6),
    st.lists(st.integers(-3, 5), min_size=0, max_size=6),
)
def test_bad_inputs_raise_our_errors(scores, groups):
    penalty = WassersteinParityPenalty(3, method="dot")
    try:
        penalty(torch.tensor(scores, dtype=torch.float32), torch.tensor(groups, dtype=torch.long))
    except (ValueError, TypeError) as error:
        assert any(word in str(error) for word in ("scores", "groups"))


@given(st.lists(batches(), min_size=2, max_size=5), st.sampled_from(["cot", "dot"]))
def test_reused_group_matrices_equal_fresh_ones(calls, method):
    # One penalty keeps the last batch's group matrices while the codes repeat; the caller
    # writes each batch's codes into the same tensor when the length allows. Every call must
    # equal a penalty that never saw a batch before (eval mode: the potentials stay put).
    def make():
        penalty = WassersteinParityPenalty(3, method=method, target=calls[0][2], random_state=0)
        penalty = penalty.double().eval()
        with torch.no_grad():
            penalty.duals.normal_(0, 0.1, generator=torch.Generator().manual_seed(0))
            penalty.target_duals.copy_(-penalty.duals)
        return penalty

    reused = make()
    codes = torch.tensor(calls[0][1])
    for scores, groups, _ in calls:
        if codes.shape[0] == groups.shape[0]:
            codes.copy_(torch.tensor(groups))
        else:
            codes = torch.tensor(groups)
        s = torch.tensor(scores)
        assert float(reused(s, codes)) == pytest.approx(float(make()(s, codes.clone())), abs=1e-12)


# --------------------------------------------------------------- FairMLPClassifier and FairTrainer
CUDA = torch.cuda.is_available()
COUNT = torch.cuda.device_count() if CUDA else 0
MPS = torch.backends.mps.is_available()

DEVICES = st.one_of(
    st.sampled_from(
        ["cpu", "cpu:0", "cpu:1", "cuda", "cuda:0", "cuda:1", "cuda:7", "mps", "mps:0", "tpu",
         "CPU", "", " cpu", "meta", "xla", "cuda:-1", "cuda:01"]
    ),
    st.sampled_from([torch.device("cpu"), torch.device("meta"), torch.device("cuda", 3)]),
    st.from_regex(r"(cpu|cuda|mps)(:[0-9]{1,2})?", fullmatch=True),
    st.text(max_size=8),
)  # fmt: skip


def _device_is_valid(device) -> bool:
    """What this machine accepts, from torch's availability queries (not from check_device)."""
    if isinstance(device, torch.device):
        kind, index = device.type, device.index
    else:
        match = re.fullmatch(r"(cpu|cuda|mps)(?::(0|[1-9][0-9]*))?", device)
        if match is None:
            return False
        kind, index = match[1], None if match[2] is None else int(match[2])
    if kind == "cuda":
        return CUDA and (index is None or index < COUNT)
    available = kind == "cpu" or MPS
    return available and index in (None, 0)


LEARNING_RATES = st.one_of(
    st.floats(1e-5, 1e8),
    st.sampled_from([1e-3, 1e6, 1e30, 1e38, 0.0, -1.0, np.nan, np.inf]),
    st.floats(-6, 9).map(lambda e: 10.0**e),
)


@st.composite
def tiny_data(draw):
    n = draw(
        st.integers(0, 9).flatmap(lambda k: st.integers(0, 3) if k == 0 else st.integers(4, 24))
    )
    d = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    X = rng.normal(size=(n, d)) * draw(st.sampled_from([1.0, 1.0, 1e-6, 1e6, 1e-300, 1e300]))
    # Every class and group present whenever n allows (a permuted cycle), so that most examples
    # train; one class or one group now and then.
    y = rng.permutation(np.arange(n) % draw(st.sampled_from([2] * 7 + [1])))
    a = rng.permutation(np.arange(n) % draw(st.sampled_from([2] * 4 + [3] * 3 + [1])))
    return X, y, a


def _check_sound(clf, X):
    p = clf.predict_proba(X)
    assert p.shape == (X.shape[0], 2)
    assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    logits = clf.decision_function(X)
    # Not the silent hard classifier that a diverged run used to return.
    assert np.abs(logits).min() <= 110.0


# Every message a user may see names the argument at fault (or what to change).
CLEAR = (
    "device",
    "learning_rate",
    "sensitive_features",
    "classes",
    "group",
    "minimum of",
    "n_samples",
)


@given(
    tiny_data(),
    LEARNING_RATES,
    # Mostly the CPU, so that most examples train; test_device_* covers the device strings.
    st.integers(0, 9).flatmap(
        lambda k: DEVICES if k == 0 else st.sampled_from(["cpu", "cpu:0", torch.device("cpu")])
    ),
    st.sampled_from(["dot", "cot"]),
    st.integers(1, 3),
    st.integers(1, 16),
    st.sampled_from([0.0, 0.2]),
    st.integers(0, 1),
)
def test_mlp_fits_a_sound_model_or_raises_one_clear_error(
    data, learning_rate, device, method, n_epochs, batch_size, validation_fraction, warmup
):
    X, y, a = data
    clf = FairMLPClassifier(
        hidden_layer_sizes=(4,), method=method, n_epochs=n_epochs, warmup_epochs=warmup,
        batch_size=batch_size, learning_rate=learning_rate, validation_fraction=validation_fraction,
        device=device, random_state=0,
    )  # fmt: skip
    try:
        clf.fit(X, y, sensitive_features=a)
    except DivergenceError as error:
        event("DivergenceError")
        assert "Lower learning_rate" in str(error)
        # No false alarm: Adam moves a weight by at most about learning_rate a step, and these
        # runs take at most 3 epochs of 24 steps.
        assert learning_rate > 1e-2
        return
    except (ValueError, TypeError) as error:
        event(type(error).__name__)
        message = str(error)
        assert any(word in message for word in CLEAR), message
        if "device" in message:
            assert isinstance(device, torch.device | str) and not _device_is_valid(device)
        return
    event("fitted")
    assert _device_is_valid(device)
    _check_sound(clf, X)


@given(DEVICES)
def test_device_accepted_exactly_when_the_machine_has_it(device):
    penalty = WassersteinParityPenalty(2, method="dot")
    try:
        trainer = FairTrainer(torch.nn.Linear(2, 1), penalty, device=device)
    except (ValueError, TypeError) as error:
        assert str(error).startswith("device must be"), str(error)
        assert not _device_is_valid(device)
    else:
        assert _device_is_valid(device)
        assert trainer.device == device


@given(st.floats(-4, 8), st.integers(0, 2**31), st.sampled_from([0.0, 3.0]))
def test_trainer_returns_an_unsaturated_model_or_raises_divergence(log_lr, seed, lam):
    rng = np.random.default_rng(seed)
    n = 64
    a = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(a, 1.0), a]).astype(np.float32)
    y = (X[:, 0] + rng.normal(0, 1, n) > 0.5).astype(np.float32)
    torch.manual_seed(seed % 1000)
    model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    trainer = FairTrainer(
        model, WassersteinParityPenalty(2, method="dot"), lam=lam, warmup_epochs=1, n_epochs=3,
        batch_size=16, learning_rate=10.0**log_lr, random_state=seed,
    )  # fmt: skip
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DegenerateModelWarning)
            trainer.fit(X, y, a)
    except DivergenceError as error:
        event("DivergenceError")
        assert "Lower learning_rate" in str(error)
        return
    event("trained")
    degenerate = [w for w in caught if issubclass(w.category, DegenerateModelWarning)]
    if degenerate:
        # A collapse the trainer reports (a huge step): the model is still a finite one.
        event("DegenerateModelWarning")
        assert "learning_rate" in str(degenerate[0].message)
    # Oracle: the returned model itself, evaluated directly.
    assert all(bool(torch.isfinite(p).all()) for p in model.parameters())
    with torch.no_grad():
        logits = model(torch.as_tensor(X)).reshape(-1)
    assert float(logits.abs().min()) <= 110.0
    assert np.isfinite(trainer.history_[["loss", "bce", "penalty"]].to_numpy()).all()
