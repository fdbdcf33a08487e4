"""Scale equivariance of ``adjust_quantiles`` (issue 19)."""

import numpy as np
import pytest

from fairot.regression import adjust_quantiles

from ._oracle import GRID_LEVELS as U

SCALES = [1e-155, 1e-100, 1e100, 1e155, 1e300]


def _closed_form_w2(q1, q2, r1, r2, epsilon):
    # Table 1 of the seed paper, written out in numpy at scale 1 (no squares overflow there)
    gap = q1 - q2
    norm = np.sqrt(np.mean(gap**2))
    delta = gap * min(1.0, epsilon / norm)
    mean = r1 * q1 + r2 * q2
    return np.stack([mean + r2 * delta, mean - r1 * delta])


@pytest.mark.parametrize("scale", SCALES)
def test_two_groups_w2_at_extreme_scales_match_the_closed_form(scale):
    q1, q2 = U, U**2 + 1.0
    expected = _closed_form_w2(q1, q2, 0.3, 0.7, 0.25) * scale
    out = adjust_quantiles(np.stack([q1, q2]) * scale, [0.3, 0.7], p=2, epsilon=0.25 * scale)
    # before the fix, 1e155 squared overflowed: a gap of 0 instead of epsilon
    np.testing.assert_allclose(out.curves, expected, rtol=1e-13)
    np.testing.assert_allclose(out.grid_gap, 0.25 * scale, rtol=1e-13)
    assert out.feasible and out.active_pairs == ((0, 1),)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("p", [1, 2, np.inf])
def test_three_groups_are_scale_equivariant(scale, p):
    latent = np.stack([U, U + 1.0, 2.0 * U**2 - 0.5])
    weights = [0.2, 0.5, 0.3]
    unit = adjust_quantiles(latent, weights, p=p, epsilon=0.3)
    scaled = adjust_quantiles(latent * scale, weights, p=p, epsilon=0.3 * scale)
    assert not unit.stopped_early and not scaled.stopped_early
    np.testing.assert_allclose(scaled.curves, unit.curves * scale, rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_allclose(scaled.grid_gap, unit.grid_gap * scale, rtol=1e-12)
    assert scaled.feasible and scaled.active_pairs == unit.active_pairs


def _slsqp_flat(values, weights, epsilon):
    # scipy oracle on the K free values of constant curves: |q_i - q_j| <= epsilon
    from scipy.optimize import minimize

    k = values.size
    rows = []
    for i in range(k):
        for j in range(i + 1, k):
            row = np.zeros(k)
            row[i], row[j] = 1.0, -1.0
            rows += [row, -row]
    a = np.array(rows)
    result = minimize(
        lambda q: weights @ (q - values) ** 2,
        values.mean() + np.zeros(k),
        jac=lambda q: 2 * weights * (q - values),
        constraints=[{"type": "ineq", "fun": lambda q: epsilon - a @ q, "jac": lambda q: -a}],
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 500},
    )
    return result.x, result.fun


@pytest.mark.parametrize("seed", range(12))
def test_flat_tiny_problems_solve_fast_and_match_scipy(seed):
    # flat curves with shares 1e-6 and 1 took Dykstra millions of cycles (issue 19)
    rng = np.random.default_rng(seed)
    k, m = int(rng.integers(2, 6)), int(rng.integers(2, 34))
    values = np.round(rng.normal(size=k) * 2) / 2
    values[0] = values[-1] + 1.0  # at least one gap
    weights = rng.choice([1e-6, 1e-3, 0.1, 1.0], size=k)
    p = [1, 2, np.inf][seed % 3]
    epsilon = 0.3 * np.ptp(values)
    latent = np.repeat(values[:, None], m, axis=1)
    out = adjust_quantiles(latent, weights, p=p, epsilon=epsilon, max_work=1e7)
    assert not out.stopped_early and out.feasible
    assert np.all(out.curves == out.curves[:, :1])
    shares = weights / weights.sum()
    _, oracle_value = _slsqp_flat(values, shares, epsilon)
    value = shares @ ((out.curves[:, 0] - values) ** 2)
    assert value <= oracle_value * (1 + 1e-7) + 1e-12
