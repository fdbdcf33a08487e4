"""The exact coupling and W_p against POT and SciPy, on random inputs with ties and weights.

At extreme scales and orders (rounding, overflow, underflow) the oracles are mpmath at 60 digits
and the same problem at unit scale times the scale factor (W_p is homogeneous).
"""

import math
import re

import numpy as np
import ot
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from mpmath import mp, mpf

from fairot.metrics import wasserstein_distance
from fairot.transport import (
    SortedCoupling,
    check_p,
    optimal_coupling_1d,
    wasserstein_1d,
    wasserstein_sorted_orders,
)
from fairot.transport._coupling import MSG_COUPLING_SIZES, MSG_P

SIZES = [(1, 1), (5, 5), (5, 7), (37, 100), (200, 200), (13, 1000)]


def _sample(rng, n, ties):
    x = rng.normal(size=n)
    if ties:
        x = np.round(x, 1)  # many exact ties
    return x


def _pot_wp(u, v, p, uw=None, vw=None):
    """W_p by POT's exact LP (ot.emd2) on the full cost matrix."""
    a = np.full(len(u), 1 / len(u)) if uw is None else uw / uw.sum()
    b = np.full(len(v), 1 / len(v)) if vw is None else vw / vw.sum()
    cost = np.abs(u[:, None] - v[None, :]) ** p
    return ot.emd2(a, b, cost) ** (1 / p)


@pytest.mark.parametrize("n,m", SIZES)
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_w1_matches_scipy(n, m, ties, weighted):
    rng = np.random.default_rng(n * 1000 + m)
    u, v = _sample(rng, n, ties), _sample(rng, m, ties) + 0.3
    uw = rng.random(n) + 0.01 if weighted else None
    vw = rng.random(m) + 0.01 if weighted else None
    expected = scipy.stats.wasserstein_distance(u, v, uw, vw)
    assert wasserstein_1d(u, v, 1, uw, vw) == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("n,m", SIZES)
@pytest.mark.parametrize("p", [1.5, 2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_wp_matches_pot(n, m, p, weighted):
    rng = np.random.default_rng(7 + n + m)
    u, v = _sample(rng, n, True), _sample(rng, m, False) * 2
    uw = rng.random(n) + 0.01 if weighted else None
    vw = rng.random(m) + 0.01 if weighted else None
    expected = ot.wasserstein_1d(
        u, v, None if uw is None else uw / uw.sum(), None if vw is None else vw / vw.sum(), p=p
    ) ** (1 / p)
    assert wasserstein_1d(u, v, p, uw, vw) == pytest.approx(expected, rel=1e-9)
    if n * m <= 40_000:
        assert wasserstein_1d(u, v, p, uw, vw) == pytest.approx(_pot_wp(u, v, p, uw, vw), rel=1e-7)


@pytest.mark.parametrize("n,m", [(5, 7), (30, 30), (37, 100), (1, 9)])
def test_winf_is_largest_quantile_gap(n, m):
    # Oracle: W_p -> W_inf as p grows (monotone in p, bounded by W_inf) and the brute-force sup of
    # |Q_u - Q_v| over a fine grid of ranks, avoiding the breakpoints themselves.
    rng = np.random.default_rng(n + 3 * m)
    u, v = rng.normal(size=n), rng.exponential(size=m)
    levels = (np.arange(1, 200_000) + 0.5) / 200_000
    q_u = np.sort(u)[np.minimum(np.ceil(levels * n).astype(int) - 1, n - 1)]
    q_v = np.sort(v)[np.minimum(np.ceil(levels * m).astype(int) - 1, m - 1)]
    brute = np.abs(q_u - q_v).max()
    assert wasserstein_1d(u, v, np.inf) == pytest.approx(brute, rel=1e-12)
    assert wasserstein_1d(u, v, "inf") == wasserstein_1d(u, v, math.inf)
    assert wasserstein_1d(u, v, 64) <= wasserstein_1d(u, v, np.inf) + 1e-12


def test_winf_ignores_rounding_slivers_with_weights():
    # Equal weights given explicitly create breakpoints that differ from k/n only by rounding:
    # no spurious gap may appear.
    u = np.array([0.0, 1.0, 2.0])
    v = np.array([0.0, 1.0, 2.0])
    w = np.array([0.1, 0.1, 0.1])
    assert wasserstein_1d(u, v, np.inf, w, w * 7) == 0.0


@pytest.mark.parametrize("n,m", SIZES)
@pytest.mark.parametrize("weighted", [False, True])
def test_coupling_is_optimal_and_feasible(n, m, weighted):
    rng = np.random.default_rng(n + m)
    u, v = _sample(rng, n, True), _sample(rng, m, True)
    uw = rng.random(n) + 0.1 if weighted else np.ones(n)
    vw = rng.random(m) + 0.1 if weighted else np.ones(m)
    rows, cols, mass = optimal_coupling_1d(u, v, uw if weighted else None, vw if weighted else None)
    assert np.all(mass > 0)
    assert len(mass) <= n + m - 1
    np.testing.assert_allclose(np.bincount(rows, mass, n), uw / uw.sum(), atol=1e-12)
    np.testing.assert_allclose(np.bincount(cols, mass, m), vw / vw.sum(), atol=1e-12)
    plan = ot.lp.emd_1d(u, v, uw / uw.sum(), vw / vw.sum(), metric="cityblock")
    ours = mass @ np.abs(u[rows] - v[cols])
    assert ours == pytest.approx(np.sum(plan * np.abs(u[:, None] - v[None, :])), rel=1e-10)


def test_coupling_equal_sizes_is_sorted_matching():
    u = np.array([3.0, 1.0, 2.0])
    v = np.array([10.0, 30.0, 20.0])
    rows, cols, mass = optimal_coupling_1d(u, v)
    assert sorted(zip(rows.tolist(), cols.tolist(), strict=False)) == [(0, 1), (1, 0), (2, 2)]
    np.testing.assert_allclose(mass, 1 / 3)


def test_inputs_are_not_mutated():
    u = np.array([3.0, 1.0, 2.0])
    w = np.array([1.0, 2.0, 3.0])
    u0, w0 = u.copy(), w.copy()
    wasserstein_1d(u, u[::-1], 2, w, w)
    optimal_coupling_1d(u, u, w, w)
    np.testing.assert_array_equal(u, u0)
    np.testing.assert_array_equal(w, w0)


@pytest.mark.parametrize("bad", [0.5, 0, -1, "two", None])
def test_bad_p(bad):
    with pytest.raises(ValueError, match=MSG_P.split("{")[0]):
        check_p(bad)


def test_bad_inputs():
    with pytest.raises(ValueError, match="NaN"):
        wasserstein_1d([0.0, np.nan], [1.0])
    with pytest.raises(ValueError, match="empty"):
        wasserstein_1d([], [1.0])
    with pytest.raises(ValueError, match="u_weights=1, samples=2"):
        wasserstein_1d([0.0, 1.0], [1.0], u_weights=[1.0])
    with pytest.raises(ValueError, match="non-negative"):
        wasserstein_1d([0.0, 1.0], [1.0], u_weights=[1.0, -1.0])


finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
samples = arrays(np.float64, st.integers(1, 30), elements=finite)


@settings(max_examples=60, deadline=None)
@given(samples, samples, samples, st.sampled_from([1, 2, np.inf]))
def test_metric_axioms(a, b, c, p):
    ab, ba = wasserstein_1d(a, b, p), wasserstein_1d(b, a, p)
    assert ab == pytest.approx(ba, rel=1e-9, abs=1e-9)
    assert wasserstein_1d(a, a, p) == 0.0
    assert ab <= wasserstein_1d(a, c, p) + wasserstein_1d(c, b, p) + 1e-7


@settings(max_examples=60, deadline=None)
@given(samples, samples)
def test_w1_is_integral_of_cdf_gap(a, b):
    # W1 = integral over x of |F_a(x) - F_b(x)|, computed independently on the merged support.
    support = np.unique(np.concatenate([a, b]))
    fa = np.searchsorted(np.sort(a), support, side="right") / a.size
    fb = np.searchsorted(np.sort(b), support, side="right") / b.size
    integral = np.sum(np.abs(fa - fb)[:-1] * np.diff(support))
    assert wasserstein_1d(a, b, 1) == pytest.approx(integral, rel=1e-9, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(samples, samples, finite)
def test_translation_and_order_invariance(a, b, shift):
    w = wasserstein_1d(a, b, 2)
    assert wasserstein_1d(a[::-1], b, 2) == pytest.approx(w, rel=1e-12, abs=1e-12)
    shifted = wasserstein_1d(a + shift, b + shift, 2)
    assert shifted == pytest.approx(w, rel=1e-6, abs=1e-6)


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


@pytest.mark.parametrize("n,m", SIZES)
def test_sorted_coupling_reused_on_new_samples(n, m):
    # One coupling of the sizes (n, m), cut once, serves every new pair of unweighted samples of
    # those sizes: W1 as SciPy's, W2 as POT's, W-inf as the largest quantile gap.
    rng = np.random.default_rng(n + 17 * m)
    coupling = SortedCoupling.unweighted(n, m)
    reference = np.sort(_sample(rng, m, True))
    for _ in range(3):
        x = np.sort(_sample(rng, n, True) + 0.2)
        w1, w2, winf = coupling.distances(x, reference, (1.0, 2.0, math.inf))
        assert w1 == pytest.approx(scipy.stats.wasserstein_distance(x, reference), rel=1e-12)
        assert w2 == pytest.approx(ot.wasserstein_1d(x, reference, p=2) ** 0.5, rel=1e-9)
        assert winf == pytest.approx(wasserstein_1d(x, reference, "inf"), rel=1e-12)
        # The distance functions go through the same cells: the same floats.
        assert [w1, w2, winf] == wasserstein_sorted_orders(x, reference, (1.0, 2.0, math.inf))


def test_sorted_coupling_weighted_matches_scipy():
    rng = np.random.default_rng(3)
    x, y = np.sort(rng.normal(size=6)), np.sort(rng.normal(size=9))
    xw, yw = rng.random(6) + 0.1, rng.random(9) + 0.1
    coupling = SortedCoupling.of(x, y, xw, yw)
    expected = scipy.stats.wasserstein_distance(x, y, xw, yw)
    assert coupling.distances(x, y, (1.0,))[0] == pytest.approx(expected, rel=1e-12)


def test_sorted_coupling_refuses_other_sizes():
    coupling = SortedCoupling.unweighted(3, 4)
    message = MSG_COUPLING_SIZES.format(expected=(3, 4), got=(4, 4))
    with pytest.raises(ValueError, match=re.escape(message)):
        coupling.distances(np.arange(4.0), np.arange(4.0), (1.0,))
