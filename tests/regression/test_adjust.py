import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from fairot.regression import (
    AbsoluteGaussianCost,
    LogisticCost,
    PinballGaussianCost,
    SquaredCost,
    adjust_quantiles,
)
from fairot.regression._adjust import (
    MSG_BOUNDS_EXCLUDE,
    MSG_CURVES,
    MSG_EPSILON,
    MSG_MAX_WORK,
    MSG_NOT_MONOTONE,
    MSG_P,
    MSG_STOPPED_EARLY,
    MSG_WEIGHTS,
)
from fairot.regression._projections import pairwise_grid_distances

from ._oracle import group_curves as _groups
from ._oracle import latent_curves as _latent
from ._oracle import solve_generic
from ._oracle import squared_objective as _squared_objective

P_VALUES = [1, 2, np.inf]
BOUNDS = (-20.0, 20.0)


@pytest.mark.parametrize("p", P_VALUES)
@pytest.mark.parametrize("seed", range(3))
def test_closed_form_matches_generic_solver_and_dykstra(p, seed):
    latent = _latent(seed, k=2)
    w = np.array([0.35, 0.65])
    d_max = pairwise_grid_distances(latent, p).max()
    eps = 0.4 * d_max
    closed = adjust_quantiles(latent, w, p=p, epsilon=eps, bounds=BOUNDS, method="closed_form")
    dykstra = adjust_quantiles(latent, w, p=p, epsilon=eps, bounds=BOUNDS, method="projection")
    cost = SquaredCost()
    oracle, oracle_value = solve_generic(latent, w, p, eps, BOUNDS, cost.value, cost.gradient)
    assert closed.method == "closed_form" and dykstra.method == "projection"
    np.testing.assert_allclose(closed.curves, dykstra.curves, atol=1e-8)
    # the generic solver is only accurate to ~1e-6; the objective comparison is the sharp one
    np.testing.assert_allclose(closed.curves, oracle, atol=1e-4)
    assert _squared_objective(closed.curves, latent, w) <= oracle_value + 1e-9
    assert closed.violation <= 1e-12 and closed.active_pairs == ((0, 1),)


@pytest.mark.parametrize(
    "cost",
    [AbsoluteGaussianCost(0.7), PinballGaussianCost(0.8, 1.3), LogisticCost()],
    ids=["absolute", "pinball", "logistic"],
)
@pytest.mark.parametrize("p", P_VALUES)
def test_projected_gradient_matches_generic_solver(cost, p):
    latent = _latent(7, k=3, m=5, spread=1.0)
    w = np.array([0.3, 0.3, 0.4])
    eps = 0.3 * pairwise_grid_distances(latent, p).max()
    result = adjust_quantiles(
        latent,
        w,
        p=p,
        epsilon=eps,
        bounds=BOUNDS,
        cost=cost,
        method="projected_gradient",
        step_size=0.5,
    )
    oracle, oracle_value = solve_generic(latent, w, p, eps, BOUNDS, cost.value, cost.gradient)
    value = cost.objective(latent, result.curves, w)
    assert value <= oracle_value + 1e-8
    assert value >= oracle_value - 1e-6  # the oracle is a true minimum up to its accuracy
    assert result.violation <= 1e-10
    if np.isinf(p):
        pointwise = adjust_quantiles(latent, w, p=p, epsilon=eps, bounds=BOUNDS, cost=cost)
        assert pointwise.method == "pointwise"
        assert cost.objective(latent, pointwise.curves, w) <= oracle_value + 1e-8
        np.testing.assert_allclose(pointwise.curves, result.curves, atol=1e-5)


def test_epsilon_zero_gives_weighted_barycenter_for_every_p():
    latent = _latent(1, k=3)
    w = np.array([1.0, 2.0, 3.0])
    bary = (w / w.sum()) @ latent
    for p in P_VALUES:
        out = adjust_quantiles(latent, w, p=p, epsilon=0.0, bounds=BOUNDS)
        np.testing.assert_allclose(out.curves, np.repeat(bary[None], 3, axis=0), atol=1e-12)
        assert out.grid_gap <= 1e-12


def test_barycenter_ball_rule_is_feasible_but_not_better_than_projection():
    latent = _latent(2, k=4)
    w = np.array([0.1, 0.2, 0.3, 0.4])
    for p in P_VALUES:
        eps = 0.5 * pairwise_grid_distances(latent, p).max()
        ball = adjust_quantiles(
            latent, w, p=p, epsilon=eps, bounds=BOUNDS, method="barycenter_ball"
        )
        best = adjust_quantiles(latent, w, p=p, epsilon=eps, bounds=BOUNDS)
        assert ball.violation <= 1e-12
        assert np.all(np.diff(ball.curves, axis=1) >= -1e-12)
        assert (
            _squared_objective(best.curves, latent, w)
            <= _squared_objective(ball.curves, latent, w) + 1e-12
        )


@st.composite
def problems(draw):
    k = draw(st.integers(2, 4))
    m = draw(st.integers(2, 25))
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    scale = draw(st.floats(0.1, 5.0))
    latent = np.sort(rng.normal(size=(k, m)) * scale, axis=1) + rng.normal(size=(k, 1)) * 3
    if draw(st.booleans()):  # ties and flat stretches, as real quantile curves have
        latent = np.round(latent)
    w = rng.uniform(0.05, 1.0, size=k)
    p = draw(st.sampled_from(P_VALUES))
    tau = draw(st.sampled_from([0.0, 0.01, 0.3, 0.7, 0.999, 1.0, 1.5]))
    return latent, w, p, tau


@settings(max_examples=120, deadline=None)
@given(problems())
def test_properties_of_squared_adjustment(problem):
    latent, w, p, tau = problem
    d_max = pairwise_grid_distances(latent, p).max()
    eps = tau * d_max
    bounds = (latent.min() - 1.0, latent.max() + 1.0)
    out = adjust_quantiles(latent, w, p=p, epsilon=eps, bounds=bounds)
    curves = out.curves
    assert np.all(np.isfinite(curves))
    # constraint met on the grid to 1e-10, for every K, p, eps
    assert pairwise_grid_distances(curves, p).max() <= eps + 1e-10
    assert out.violation <= 1e-10
    # nondecreasing and inside the bounds
    assert np.all(np.diff(curves, axis=1) >= -1e-10)
    assert curves.min() >= bounds[0] - 1e-12 and curves.max() <= bounds[1] + 1e-12
    # squared cost keeps the weighted barycenter (Proposition 1), except W-infinity with K > 2
    # whose rank-wise construction sorts the curves afterwards
    wn = w / w.sum()
    if not (np.isinf(p) and latent.shape[0] > 2):
        np.testing.assert_allclose(wn @ curves, wn @ latent, atol=1e-7 * (1 + np.abs(latent).max()))
    # eps >= D_max leaves the curves unchanged
    if eps >= d_max:
        assert np.array_equal(curves, latent)
        assert out.n_iter == 0


def test_relabelling_groups_permutes_the_answer():
    latent = _latent(4, k=3)
    w = np.array([0.2, 0.3, 0.5])
    perm = [2, 0, 1]
    for p in P_VALUES:
        eps = 0.4 * pairwise_grid_distances(latent, p).max()
        a = adjust_quantiles(latent, w, p=p, epsilon=eps, bounds=BOUNDS).curves
        b = adjust_quantiles(latent[perm], w[perm], p=p, epsilon=eps, bounds=BOUNDS).curves
        np.testing.assert_allclose(a[perm], b, atol=1e-8)


def test_shift_equivariance():
    latent = _latent(5, k=3)
    w = np.array([0.2, 0.3, 0.5])
    for p in P_VALUES:
        eps = 0.4 * pairwise_grid_distances(latent, p).max()
        a = adjust_quantiles(latent, w, p=p, epsilon=eps).curves
        b = adjust_quantiles(latent + 3.25, w, p=p, epsilon=eps).curves
        np.testing.assert_allclose(a + 3.25, b, atol=1e-8)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": -0.1}, MSG_EPSILON.split("{")[0]),
        ({"epsilon": float("nan")}, MSG_EPSILON.split("{")[0]),
        ({"epsilon": 0.1, "p": 3}, MSG_P.split("{")[0]),
        ({"epsilon": 0.1, "p": "two"}, MSG_P.split("{")[0]),
        ({"epsilon": 0.1, "bounds": (0.0, 1.0)}, MSG_BOUNDS_EXCLUDE.split("{")[0]),
        ({"epsilon": 0.1, "weights": [1.0, -1.0]}, MSG_WEIGHTS.split("{")[0]),
        ({"epsilon": 0.1, "method": "magic"}, "method must be one of"),
        ({"epsilon": 0.1, "cost": "hinge"}, "cost must be one of"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs, match):
    latent = np.array([[0.0, 1.0, 2.0], [1.0, 2.0, 5.0]])
    weights = kwargs.pop("weights", [0.5, 0.5])
    with pytest.raises(ValueError, match=match):
        adjust_quantiles(latent, weights, **kwargs)


def test_bad_curves_are_a_clear_error():
    with pytest.raises(ValueError, match=MSG_NOT_MONOTONE[:30]):
        adjust_quantiles([[0.0, 1.0], [2.0, 1.0]], epsilon=0.1)
    with pytest.raises(ValueError, match=MSG_CURVES.split("{")[0][:30]):
        adjust_quantiles([[0.0, np.nan], [1.0, 2.0]], epsilon=0.1)
    with pytest.raises(ValueError, match="at least two groups"):
        adjust_quantiles([[0.0, 1.0]], epsilon=0.1)


def test_p_inf_string_and_input_not_mutated():
    latent = _latent(0, k=2)
    before = latent.copy()
    a = adjust_quantiles(latent, [0.4, 0.6], p="inf", epsilon=0.5)
    b = adjust_quantiles(latent, [0.4, 0.6], p=np.inf, epsilon=0.5)
    np.testing.assert_array_equal(a.curves, b.curves)
    np.testing.assert_array_equal(latent, before)


def test_active_pairs_k3_middle_group_inactive():
    # far-apart outer groups, middle one in between: only the (0, 2) pair binds at a loose eps
    u = (np.arange(1, 11) - 0.5) / 10
    latent = np.stack([u, u + 2.0, u + 4.0])
    out = adjust_quantiles(latent, [0.2, 0.3, 0.5], p=2, epsilon=3.0)
    assert out.active_pairs == ((0, 2),)
    assert pairwise_grid_distances(out.curves, 2)[0, 1] < 3.0
    assert all(isinstance(i, int) for pair in out.active_pairs for i in pair)
    assert list(itertools.chain(*out.active_pairs)) == [0, 2]


@settings(max_examples=25, deadline=None)
@given(problems(), st.sampled_from(["absolute", "pinball", "logistic"]))
def test_properties_of_general_cost_adjustment(problem, cost_name):
    latent, w, p, tau = problem
    cost = {
        "absolute": AbsoluteGaussianCost(1.0),
        "pinball": PinballGaussianCost(0.7, 0.5),
        "logistic": LogisticCost(),
    }[cost_name]
    eps = tau * pairwise_grid_distances(latent, p).max()
    bounds = (latent.min() - 3.0, latent.max() + 3.0)
    out = adjust_quantiles(latent, w, p=p, epsilon=eps, bounds=bounds, cost=cost, step_size=0.5)
    assert pairwise_grid_distances(out.curves, p).max() <= eps + 1e-10
    assert np.all(np.diff(out.curves, axis=1) >= -1e-10)
    assert out.curves.min() >= bounds[0] - 1e-12 and out.curves.max() <= bounds[1] + 1e-12
    # no feasible point the solver started from is better: the latent curves shrunk to eps
    start = adjust_quantiles(latent, w, p=p, epsilon=eps, bounds=bounds, method="projection")
    assert cost.objective(latent, out.curves, w) <= cost.objective(latent, start.curves, w) + 1e-9


# ------------------------------------------------------------------ tiny tolerances, many groups


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("k", [3, 5])
@pytest.mark.parametrize("tiny", [1e-300, 1e-308, 5e-324])
@pytest.mark.parametrize("cost", ["squared", "logistic"])
def test_tiny_epsilon_behaves_like_zero(p, k, tiny, cost):
    # issue 14: p = 1, K = 3 and 5, epsilon = 1e-300 raised ZeroDivisionError in the kernel
    latent = _latent(11, k=k, m=8)
    w = np.linspace(1.0, 2.0, k)
    zero = adjust_quantiles(latent, w, p=p, epsilon=0.0, bounds=BOUNDS, cost=cost)
    out = adjust_quantiles(latent, w, p=p, epsilon=tiny, bounds=BOUNDS, cost=cost)
    np.testing.assert_allclose(out.curves, zero.curves, rtol=0, atol=1e-12)
    assert out.grid_gap <= tiny and out.violation == 0.0
    assert out.epsilon == tiny and not out.stopped_early


@pytest.mark.parametrize("p", [1, 2])
def test_three_hundred_groups_solve_without_stopping_early(p):
    latent, w = _groups(300, 20, seed=4)
    eps = 0.5 * pairwise_grid_distances(latent, p).max()
    out = adjust_quantiles(latent, w, p=p, epsilon=eps)
    assert not out.stopped_early
    assert pairwise_grid_distances(out.curves, p).max() <= eps + 1e-12
    assert np.all(np.diff(out.curves, axis=1) >= 0)
    assert len(out.active_pairs) > 0
    # only the groups of binding pairs move (the last shrink step moves the rest by rounding)
    moved = np.abs(out.curves - latent).max(axis=1) > 1e-8
    assert moved.sum() < latent.shape[0]
    assert set(np.flatnonzero(moved)) <= set(itertools.chain(*out.active_pairs))


@pytest.mark.slow
@pytest.mark.parametrize("p", [1, 2])
def test_a_thousand_groups_solve_without_stopping_early(p):
    latent, w = _groups(1000, 50, seed=0)
    eps = 0.5 * pairwise_grid_distances(latent, p).max()
    out = adjust_quantiles(latent, w, p=p, epsilon=eps)
    assert not out.stopped_early
    assert pairwise_grid_distances(out.curves, p).max() <= eps + 1e-12
    assert np.all(np.diff(out.curves, axis=1) >= 0)


# ------------------------------------------------------------------ bounded work, warned once


def test_work_bound_warns_once_and_returns_a_feasible_answer():
    latent, w = _groups(40, 10, seed=5)
    eps = 0.05 * pairwise_grid_distances(latent, 1).max()
    bounds = (latent.min() - 1.0, latent.max() + 1.0)
    with pytest.warns(
        ConvergenceWarning, match=re.escape(MSG_STOPPED_EARLY.split("{")[0])
    ) as record:
        out = adjust_quantiles(latent, w, p=1, epsilon=eps, bounds=bounds, max_work=1e5)
    assert len(record) == 1
    assert record[0].filename == __file__  # stacklevel points at the caller
    assert out.stopped_early
    assert pairwise_grid_distances(out.curves, 1).max() <= eps + 1e-12
    assert np.all(np.diff(out.curves, axis=1) >= 0)
    assert out.curves.min() >= bounds[0] and out.curves.max() <= bounds[1]


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), True, "many"])
def test_max_work_must_be_positive(value):
    with pytest.raises(ValueError, match=MSG_MAX_WORK.split("{")[0]):
        adjust_quantiles(_latent(0, k=2), epsilon=0.1, max_work=value)
