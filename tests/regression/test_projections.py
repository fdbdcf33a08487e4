import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import minimize
from sklearn.isotonic import isotonic_regression

from fairot.regression import project_lp_ball, project_monotone_box
from fairot.regression._projections import grid_norm, project_l1_ball, project_pair


def _slsqp_ball_projection(v, p, eps):
    """Oracle: min ||w - v||^2 s.t. grid-norm ||w||_p <= eps, by a generic solver."""
    m = v.size
    if p == 1:
        # split w = a - b, a, b >= 0: the l1 ball becomes linear
        def obj(z):
            return np.sum((z[:m] - z[m:] - v) ** 2)

        cons = [{"type": "ineq", "fun": lambda z: eps * m - z.sum()}]
        res = minimize(
            obj,
            np.zeros(2 * m),
            bounds=[(0, None)] * (2 * m),
            constraints=cons,
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 1000},
        )
        return res.x[:m] - res.x[m:]
    if p == 2:
        cons = [{"type": "ineq", "fun": lambda w: eps**2 - np.mean(w**2)}]
        res = minimize(
            lambda w: np.sum((w - v) ** 2),
            np.zeros(m),
            constraints=cons,
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 1000},
        )
        return res.x
    res = minimize(
        lambda w: np.sum((w - v) ** 2),
        np.zeros(m),
        bounds=[(-eps, eps)] * m,
        method="L-BFGS-B",
        options={"ftol": 1e-15, "gtol": 1e-12},
    )
    return res.x


@pytest.mark.parametrize("p", [1, 2, np.inf])
@pytest.mark.parametrize("seed", range(4))
def test_ball_projection_matches_generic_solver(p, seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=7) * 2
    eps = 0.4 * grid_norm(v, p)
    got = project_lp_ball(v, p, eps)
    expected = _slsqp_ball_projection(v, p, eps)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert grid_norm(got, p) <= eps * (1 + 1e-12)


@pytest.mark.parametrize("p", [1, 2, np.inf])
def test_ball_projection_inactive_is_exact_copy_and_zero_radius(p):
    v = np.array([0.3, -0.2, 0.1])
    out = project_lp_ball(v, p, 10.0)
    assert np.array_equal(out, v) and out is not v
    assert np.array_equal(project_lp_ball(v, p, 0.0), np.zeros(3))


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(1, 30), elements=st.floats(-50, 50)), st.floats(0.0, 100.0))
def test_l1_projection_properties(v, radius):
    w = project_l1_ball(v, radius)
    assert np.abs(w).sum() <= radius + 1e-9 * max(1.0, radius)
    # soft-thresholding keeps signs and never increases a magnitude
    assert np.all(np.abs(w) <= np.abs(v) + 1e-12)
    assert np.all(w * v >= 0)
    if np.abs(v).sum() > radius:
        assert np.isclose(np.abs(w).sum(), radius, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("p", [1, 2, np.inf])
def test_pair_projection_matches_generic_weighted_solver(p):
    rng = np.random.default_rng(3)
    a_i, a_j = np.sort(rng.normal(size=6)), np.sort(rng.normal(size=6)) + 1.5
    w_i, w_j = 0.3, 0.7
    eps = 0.5
    q_i, q_j = project_pair(a_i, a_j, w_i, w_j, p, eps)

    m = a_i.size

    def obj(z):
        return w_i * np.sum((z[:m] - a_i) ** 2) + w_j * np.sum((z[m:] - a_j) ** 2)

    if p == 2:
        cons = [{"type": "ineq", "fun": lambda z: eps**2 - np.mean((z[:m] - z[m:]) ** 2)}]
    elif p == np.inf:
        cons = [
            {"type": "ineq", "fun": lambda z: eps - (z[:m] - z[m:])},
            {"type": "ineq", "fun": lambda z: eps + (z[:m] - z[m:])},
        ]
    else:
        cons = None
    if cons is not None:
        res = minimize(
            obj,
            np.concatenate([a_i, a_j]),
            constraints=cons,
            method="SLSQP",
            options={"ftol": 1e-15, "maxiter": 2000},
        )
        np.testing.assert_allclose(np.concatenate([q_i, q_j]), res.x, atol=1e-5)
    # the weighted mean is preserved for every p
    np.testing.assert_allclose(w_i * q_i + w_j * q_j, w_i * a_i + w_j * a_j, atol=1e-12)
    assert grid_norm(q_i - q_j, p) <= eps + 1e-12


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.float64, st.tuples(st.integers(1, 4), st.integers(1, 40)), elements=st.floats(-10, 10)
    )
)
def test_monotone_box_matches_sklearn_isotonic(y):
    out = project_monotone_box(y, (-3.0, 4.0))
    for row, got in zip(y, out, strict=True):
        expected = isotonic_regression(row, y_min=-3.0, y_max=4.0)
        np.testing.assert_allclose(got, expected, atol=1e-9)
