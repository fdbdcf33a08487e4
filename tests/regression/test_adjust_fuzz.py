"""Fuzz of :func:`fairot.regression.adjust_quantiles` over small random problems (issue 14).

Every problem runs under a *work* budget (``max_work``, ``max_iter``), never a time budget, so
the search is deterministic and a hang shows up as a budget overrun, not a flaky timeout. The
strategy reaches the cases that used to hang or crash: tiny group weights (1e-6), logistic
costs on flat tails, a single grid point, tolerances down to 1e-308, ties, flat (constant)
curves, and magnitudes from 1e-150 to 1e150 for the squared cost (issue 19), whose answer must
meet the documented guarantee ``grid_gap <= epsilon * (1 + rtol) + atol * magnitude`` exactly.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from fairot.regression import (
    AbsoluteGaussianCost,
    LogisticCost,
    PinballGaussianCost,
    adjust_quantiles,
)
from fairot.regression._feasibility import FEASIBILITY_ATOL, FEASIBILITY_RTOL
from fairot.regression._projections import pairwise_grid_distances

pytestmark = pytest.mark.fuzz

MAX_WORK = 2e7
MAX_ITER = 500
COSTS = {
    "squared": "squared",
    "absolute": AbsoluteGaussianCost(0.5),
    "pinball": PinballGaussianCost(0.3, 2.0),
    "logistic": LogisticCost(),
}


@st.composite
def problems(draw):
    k = draw(st.integers(2, 5))
    m = draw(st.integers(1, 33))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    cost = draw(st.sampled_from(sorted(COSTS)))
    # the squared cost is homogeneous, so it is fuzzed over every magnitude; the other costs
    # have a unit (noise scale 1) and stay near it
    exponent = st.floats(-150.0, 150.0) if cost == "squared" else st.floats(-1.0, 1.5)
    scale = 10.0 ** draw(exponent)
    shape = draw(st.sampled_from(["random", "ties", "flat"]))
    latent = np.sort(rng.normal(size=(k, m)), axis=1) + rng.normal(size=(k, 1))
    if shape == "ties":
        latent = np.round(latent)
    elif shape == "flat":
        latent = np.repeat(np.round(rng.normal(size=(k, 1))), m, axis=1)
    latent = latent * scale
    weights = rng.choice([1e-6, 1e-3, 0.1, 1.0], size=k)
    p = draw(st.sampled_from([1, 2, np.inf]))
    tau = draw(st.sampled_from([0.0, 1e-308, 1e-300, 1e-12, 1e-6, 0.01, 0.3, 0.7, 1.0]))
    return latent, weights, p, tau, cost, scale


@given(problems())
def test_adjust_quantiles_is_feasible_within_a_work_budget(problem):
    latent, weights, p, tau, cost_name, scale = problem
    d_max = pairwise_grid_distances(latent / scale, p).max() * scale
    eps = tau if tau < 1e-200 else tau * d_max
    bounds = (latent.min() - 5.0 * scale, latent.max() + 5.0 * scale)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = adjust_quantiles(
            latent,
            weights,
            p=p,
            epsilon=eps,
            bounds=bounds,
            cost=COSTS[cost_name],
            max_iter=MAX_ITER,
            max_work=MAX_WORK,
        )
    # at most one warning, and only the documented one when the budget ran out
    assert len(record) <= 1
    assert all(issubclass(r.category, ConvergenceWarning) for r in record)
    assert out.stopped_early == bool(record)
    curves = out.curves
    assert np.all(np.isfinite(curves))
    # the work is bounded: projected gradient by its steps, a projection's cycles by max_work
    # (a cycle costs at least M units per pair checked)
    if out.method == "projected_gradient":
        assert out.n_iter <= MAX_ITER
    elif out.method == "projection":
        assert out.n_iter * latent.shape[1] <= MAX_WORK
    # feasible whether or not it stopped early, to the documented guarantee exactly
    magnitude = np.abs(latent).max()
    gap = pairwise_grid_distances(curves / scale, p).max() * scale
    assert out.magnitude == magnitude
    assert gap <= eps * (1 + FEASIBILITY_RTOL) + FEASIBILITY_ATOL * magnitude
    assert out.feasible
    assert np.all(np.diff(curves, axis=1) >= -FEASIBILITY_ATOL * magnitude)
    assert curves.min() >= bounds[0] and curves.max() <= bounds[1]
