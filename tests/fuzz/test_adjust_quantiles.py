"""Fuzz of :func:`fairot.regression.adjust_quantiles` over small random problems (issue 14).

Every problem runs under a *work* budget (``max_work``, ``max_iter``), never a time budget, so
the search is deterministic and a hang shows up as a budget overrun, not a flaky timeout. The
strategy reaches the cases that used to hang or crash: tiny group weights (1e-6), logistic
costs on flat tails, a single grid point, tolerances down to 1e-308, ties.
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
    m = draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = 10.0 ** draw(st.floats(-1.0, 1.5))
    latent = np.sort(rng.normal(size=(k, m)) * scale, axis=1) + rng.normal(size=(k, 1)) * scale
    if draw(st.booleans()):
        latent = np.round(latent)
    weights = rng.choice([1e-6, 1e-3, 0.1, 1.0], size=k)
    p = draw(st.sampled_from([1, 2, np.inf]))
    tau = draw(st.sampled_from([0.0, 1e-308, 1e-300, 1e-12, 1e-6, 0.01, 0.3, 0.7, 1.0]))
    cost = draw(st.sampled_from(sorted(COSTS)))
    return latent, weights, p, tau, cost


@given(problems())
def test_adjust_quantiles_is_feasible_within_a_work_budget(problem):
    latent, weights, p, tau, cost_name = problem
    d_max = pairwise_grid_distances(latent, p).max()
    eps = tau if tau < 1e-200 else tau * d_max
    bounds = (latent.min() - 5.0, latent.max() + 5.0)
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
    # feasible whether or not it stopped early
    scale = max(1.0, np.abs(latent).max())
    assert pairwise_grid_distances(curves, p).max() <= eps + 1e-12 * scale
    assert np.all(np.diff(curves, axis=1) >= -1e-12 * scale)
    assert curves.min() >= bounds[0] and curves.max() <= bounds[1]
