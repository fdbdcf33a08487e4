"""The gradients of Algorithm 1 against finite differences of the paper's objective (7)."""

import itertools

import numpy as np
import pytest

from fairot.classification._reference import (
    REG_ENTROPIC,
    REG_L2,
    CotParams,
    cot_objective_and_gradients,
)
from fairot.transport import draw_fourier_features


def _problem(seed=0, n_groups=2, n=6, d=3, n_dual=8):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=d + 1) * 0.5
    duals = rng.normal(size=(n_groups, n_dual)) * 0.05
    target_duals = rng.normal(size=(n_groups, n_dual)) * 0.05
    batches = [rng.normal(size=(n, d)) for _ in range(n_groups)]
    target = rng.uniform(size=n)
    features = draw_fourier_features(n_dual, 0.1, np.random.RandomState(seed))
    return theta, duals, target_duals, batches, target, features


def _fd(f, x, h=1e-6):
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = h
        grad[idx] = (f(x + step) - f(x - step)) / (2 * h)
    return grad


OPTIONS = list(itertools.product([REG_ENTROPIC, REG_L2], [True, False], [False, True]))


@pytest.mark.parametrize(("reg", "constrain", "all_pairs"), OPTIONS)
def test_gradients_match_finite_differences_of_objective(reg, constrain, all_pairs):
    theta, duals, target_duals, batches, target, features = _problem()
    # L2 is only piecewise smooth: a strength that puts most pairs in the active region.
    params = CotParams(reg, 0.05 if reg == REG_L2 else 0.1, 0.0, 0.0, constrain, all_pairs)

    def objective(th=theta, du=duals, td=target_duals):
        return cot_objective_and_gradients(th, du, td, batches, target, features, params).objective

    grad = cot_objective_and_gradients(
        theta, duals, target_duals, batches, target, features, params
    )
    np.testing.assert_allclose(
        grad.theta, _fd(lambda t: objective(th=t), theta), rtol=1e-5, atol=1e-7
    )
    np.testing.assert_allclose(
        grad.duals, _fd(lambda u: objective(du=u), duals), rtol=1e-5, atol=1e-7
    )
    expected_target = (
        np.zeros_like(target_duals) if constrain else _fd(lambda u: objective(td=u), target_duals)
    )
    np.testing.assert_allclose(grad.target_duals, expected_target, rtol=1e-5, atol=1e-7)
