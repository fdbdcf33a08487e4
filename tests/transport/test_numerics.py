"""Rounding, overflow and underflow: quantile levels and W_p at extreme scales and orders.

Oracles: POT's ``quantile_function`` (cumulative weights built by the same float cumsum as the
levels), exact rational levels, mpmath at 60 digits, and the same problem at unit scale times
the scale factor (W_p is homogeneous).
"""

import numpy as np
import pytest
from mpmath import mp, mpf
from ot.lp.solver_1d import quantile_function as pot_quantile_function

from fairot.metrics import wasserstein_distance
from fairot.transport import quantile_curves, quantile_function, wasserstein_1d
from fairot.transport._quantiles import MASS_TOLERANCE, MSG_LEVELS


@pytest.mark.parametrize("n", [10, 20, 100, 10_000])
def test_cumsum_levels_select_the_order_statistic_they_mean(n):
    x = np.random.default_rng(n).normal(size=n)
    levels = np.cumsum(np.full(n, 1 / n))
    # Level i/n means the i-th order statistic: F(x_(i)) = i/n >= i/n.
    np.testing.assert_array_equal(quantile_function(x, levels), np.sort(x))
    # POT's quantile function, given cumulative weights built the same way, agrees.
    xs = np.sort(x)
    np.testing.assert_array_equal(
        quantile_function(x, levels), pot_quantile_function(levels, levels, xs)
    )


def test_pot_index_cases_with_weights():
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 50):
        x = np.sort(rng.normal(size=n))
        w = rng.random(n) + 0.01
        cws = np.cumsum(w) / w.sum()
        qs = np.concatenate([[0.0], cws, rng.random(30), [1.0]])
        _, pot_index = pot_quantile_function(qs, cws, x, return_index=True)
        np.testing.assert_array_equal(quantile_function(x, qs, w, assume_sorted=True), x[pot_index])


def test_levels_within_tolerance_are_clamped_and_beyond_refused():
    x = np.arange(5.0)
    got = quantile_function(x, [-MASS_TOLERANCE / 2, 1 + MASS_TOLERANCE / 2, 0.4 + 1e-15])
    np.testing.assert_array_equal(got, [0.0, 4.0, 1.0])
    for bad in (-1e-9, 1 + 1e-9):
        with pytest.raises(ValueError, match=MSG_LEVELS.split("[")[0]):
            quantile_function(x, [bad])


def test_quantile_curves_share_the_tolerance():
    values = np.arange(20.0)
    codes = np.zeros(20, dtype=int)
    curves = quantile_curves(values, codes, 1, 4)
    np.testing.assert_array_equal(
        curves[0], quantile_function(values, [0.125, 0.375, 0.625, 0.875])
    )


@pytest.mark.parametrize("p", [1, 2, 3, 7.5])
@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e154, 1e200, 1e300])
def test_wasserstein_is_homogeneous_at_extreme_scales(p, scale):
    rng = np.random.default_rng(1)
    u, v = rng.random(40), rng.random(55) + 0.2
    unit = wasserstein_distance(u, v, p=p)
    assert wasserstein_distance(u * scale, v * scale, p=p) == pytest.approx(unit * scale, rel=1e-13)
    w = rng.random(40)
    unit_w = wasserstein_1d(u, v, p, u_weights=w)
    assert wasserstein_1d(u * scale, v * scale, p, u_weights=w) == pytest.approx(
        unit_w * scale, rel=1e-13
    )


def _mp_wasserstein(gaps, mass, p):
    mp.dps = 60
    total = sum(mpf(m) * mpf(abs(g)) ** p for g, m in zip(gaps, mass, strict=True))
    return float(total ** (mpf(1) / p))


@pytest.mark.parametrize("distance", [0.1, 3.0])
@pytest.mark.parametrize("p", [100, 1000, 5000])
def test_large_orders_against_mpmath(distance, p):
    rng = np.random.default_rng(2)
    u = rng.random(30)
    # Quantile gaps up to `distance`: the largest term dominates, the others fall far below the
    # float range once raised to the power p, and the distance tends to the largest gap.
    v = np.sort(u) + distance * np.r_[1.0, rng.random(29)]
    gaps = np.sort(v) - np.sort(u)
    expected = _mp_wasserstein(gaps, np.full(30, 1 / 30), p)
    got = wasserstein_distance(u, v, p=p)
    assert got == pytest.approx(expected, rel=1e-12)
    assert 0 < got <= distance


def test_difference_beyond_float_range():
    # Sorted, the first quantiles differ by 2e308 (beyond the float range), the second by 0.
    u, v = np.array([-1e308, 1e308]), np.array([1e308, 1e308])
    assert wasserstein_distance(u, v, p=1) == pytest.approx(1e308, rel=1e-15)
    assert wasserstein_distance(u, v, p=2) == pytest.approx(np.sqrt(2.0) * 1e308, rel=1e-15)
    assert wasserstein_distance(u, v, p=np.inf) == np.inf  # the true value exceeds the range
