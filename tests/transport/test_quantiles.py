"""Quantile functions, ECDF ranks and quantile curves against direct definitions and NumPy.

The levels at the rounding limit are checked against POT's ``quantile_function`` (cumulative
weights built by the same float cumsum as the levels) and exact rational levels.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from ot.lp.solver_1d import quantile_function as pot_quantile_function

from fairot.transport import ecdf_rank, midpoint_grid, quantile_curves, quantile_function
from fairot.transport._quantiles import MASS_TOLERANCE, MSG_LEVELS


def _brute_quantile(x, w, u):
    """inf{x : F(x) >= u} by scanning the support.

    F is the exact fraction rounded once to float, so a level such as 2/25 given as a float
    compares equal to F at the second of 25 points, as a user means it.
    """
    from fractions import Fraction

    w = [Fraction(1)] * len(x) if w is None else [Fraction(v) for v in w]
    total = sum(w)
    for candidate in sorted(set(x)):
        mass = sum(wi for xi, wi in zip(x, w, strict=False) if xi <= candidate)
        if float(mass / total) >= u:
            return candidate
    return max(x)


def test_midpoint_grid():
    np.testing.assert_allclose(midpoint_grid(4), [0.125, 0.375, 0.625, 0.875])
    with pytest.raises(ValueError, match="n_levels"):
        midpoint_grid(0)
    with pytest.raises(ValueError, match="n_levels"):
        midpoint_grid(2.5)


@pytest.mark.parametrize("weighted", [False, True])
def test_quantile_function_matches_definition(weighted):
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=25), 1)
    w = rng.integers(1, 5, size=25).astype(float) if weighted else None
    levels = np.concatenate([[0.0, 1.0], np.arange(1, 25) / 25, rng.random(50)])
    got = quantile_function(x, levels, w)
    expected = [_brute_quantile(list(x), None if w is None else list(w), u) for u in levels]
    np.testing.assert_array_equal(got, expected)


def test_quantile_function_inverted_cdf_matches_numpy():
    rng = np.random.default_rng(1)
    x = rng.normal(size=101)
    u = rng.random(300)
    np.testing.assert_array_equal(quantile_function(x, u), np.quantile(x, u, method="inverted_cdf"))


def test_ecdf_rank_matches_definition():
    rng = np.random.default_rng(2)
    ref = np.round(rng.normal(size=40), 1)
    w = rng.random(40)
    pts = np.concatenate([ref, rng.normal(size=20), [-10, 10]])
    np.testing.assert_allclose(ecdf_rank(ref, pts), [(ref <= p).mean() for p in pts])
    np.testing.assert_allclose(
        ecdf_rank(ref, pts, w), [w[ref <= p].sum() / w.sum() for p in pts], atol=1e-12
    )


def test_quantile_curves_match_per_group_quantiles():
    rng = np.random.default_rng(3)
    values = rng.normal(size=500)
    codes = rng.integers(0, 3, size=500)
    curves = quantile_curves(values, codes, 3, 64)
    for g in range(3):
        np.testing.assert_array_equal(
            curves[g], quantile_function(values[codes == g], midpoint_grid(64))
        )
    with pytest.raises(ValueError, match="group 3 has no samples"):
        quantile_curves(values, codes, 4, 8)


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, st.integers(1, 40), elements=st.floats(-100, 100)))
def test_quantile_is_inverse_of_ecdf(x):
    # Galois inequality: Q(u) <= t  <=>  u <= F(t), checked at every sample point.
    levels = midpoint_grid(17)
    q = quantile_function(x, levels)
    assert np.all(np.diff(q) >= 0)
    f = ecdf_rank(x, x)
    for t, ft in zip(x, f, strict=False):
        assert np.array_equal(q <= t, levels <= ft + 1e-15)


def test_levels_out_of_range():
    with pytest.raises(ValueError, match="levels must lie in"):
        quantile_function([1.0, 2.0], [1.5])


@pytest.mark.parametrize("weighted", [False, True])
def test_ecdf_rank_many_queries_takes_the_merge_path(weighted):
    # Above SORTED_QUERY_THRESHOLD queries are sorted and merged with the reference: the result
    # must equal a plain binary search, ties and out-of-range points included.
    from fairot.transport._quantiles import SORTED_QUERY_THRESHOLD

    rng = np.random.default_rng(4)
    ref = np.round(rng.normal(size=3000), 2)
    pts = np.concatenate([np.round(rng.normal(size=2 * SORTED_QUERY_THRESHOLD), 2), [-9, 9]])
    w = rng.random(3000) if weighted else None
    expected_counts = np.searchsorted(np.sort(ref), pts, side="right")
    if w is None:
        np.testing.assert_array_equal(ecdf_rank(ref, pts), expected_counts / 3000)
    else:
        cum = np.concatenate([[0.0], np.cumsum(w[np.argsort(ref, kind="stable")])]) / w.sum()
        np.testing.assert_allclose(ecdf_rank(ref, pts, w), cum[expected_counts], atol=1e-12)


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
