"""Fuzz of fairot.torch's public boundary: WassersteinParityPenalty.forward.

Any batch of scores in [0, 1] with any group codes gives a finite, non-negative DOT penalty equal
to POT's exact cost and invariant to the order of the batch, with finite gradients for every
method; anything else is a ValueError or TypeError from our validation, never another exception.
"""

import warnings

import numpy as np
import ot
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fairot.torch import WassersteinParityPenalty

pytestmark = pytest.mark.fuzz

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
