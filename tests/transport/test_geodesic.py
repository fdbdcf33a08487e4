"""The geodesic to a target: W_p(point at tau, target) = tau * W_p(source, target), against POT."""

import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import wasserstein_distance

from fairot.transport import (
    MSG_TAU,
    check_tau,
    ecdf_rank,
    geodesic_map,
    geodesic_quantiles,
    geodesic_targets,
    quantile_function,
)


def _w1(a, b):
    return float(ot.wasserstein_1d(np.asarray(a), np.asarray(b), p=1))


@pytest.mark.parametrize("tau", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_quantile_interpolation_keeps_a_fraction_tau_of_the_distance(tau):
    rng = np.random.default_rng(0)
    source = np.sort(rng.beta(2, 5, 300))
    target = np.sort(rng.beta(5, 2, 300))
    point = geodesic_quantiles(source, target, tau)
    assert _w1(point, target) == pytest.approx(tau * _w1(source, target), abs=1e-12)
    assert wasserstein_distance(point, target) == pytest.approx(
        tau * wasserstein_distance(source, target), abs=1e-12
    )
    # W2 too (POT returns W_p ** p): the geodesic is McCann's interpolation
    w2_sq = float(ot.wasserstein_1d(point, target, p=2))
    assert w2_sq == pytest.approx(tau**2 * float(ot.wasserstein_1d(source, target, p=2)))


def test_end_points_are_exact():
    source, target = np.array([0.1, 0.37, 0.9]), np.array([0.2, 0.3, 0.4])
    np.testing.assert_array_equal(geodesic_quantiles(source, target, 1.0), source)
    np.testing.assert_array_equal(geodesic_quantiles(source, target, 0.0), target)


@pytest.mark.parametrize("tau", [0.0, 0.25, 0.5, 1.0])
def test_map_on_new_scores_against_pot_and_scipy(tau):
    rng = np.random.default_rng(1)
    reference = np.sort(rng.beta(2, 4, 200))
    target = np.sort(rng.beta(4, 4, 350))
    new = rng.beta(2, 4, 150)  # held-out scores of the same group
    moved = geodesic_map(new, reference, target, tau, assume_sorted=True)
    # The full transport, computed by the rank and the quantile directly.
    full = quantile_function(target, ecdf_rank(reference, new))
    np.testing.assert_array_equal(geodesic_map(new, reference, target, 0.0), full)
    assert _w1(moved, full) == pytest.approx(tau * _w1(new, full), abs=1e-12)
    assert wasserstein_distance(moved, full) == pytest.approx(
        tau * wasserstein_distance(new, full), abs=1e-12
    )
    cost = ot.dist(moved[:, None], full[:, None], metric="cityblock")
    uniform = np.full(new.shape[0], 1.0 / new.shape[0])
    assert float(ot.emd2(uniform, uniform, cost)) == pytest.approx(tau * _w1(new, full), abs=1e-9)


def test_map_at_one_returns_the_scores():
    s = np.array([0.3, 0.01, 0.99])
    np.testing.assert_array_equal(geodesic_map(s, [0.1, 0.2], [0.5, 0.6], 1.0), s)


@given(
    st.lists(st.floats(0, 1), min_size=2, max_size=40),
    st.floats(0, 1),
    st.floats(0, 1),
)
@settings(max_examples=60, deadline=None)
def test_distance_to_the_full_transport_is_monotone_in_tau(scores, t1, t2):
    lo, hi = sorted((t1, t2))
    rng = np.random.default_rng(0)
    reference = np.sort(rng.random(30))
    target = np.sort(rng.beta(3, 3, 25))
    s = np.array(scores)
    full = geodesic_map(s, reference, target, 0.0)
    d_lo = _w1(geodesic_map(s, reference, target, lo), full)
    d_hi = _w1(geodesic_map(s, reference, target, hi), full)
    assert d_lo <= d_hi + 1e-12


@pytest.mark.parametrize("tau", [0.0, 0.3, 1.0])
def test_group_targets_lie_on_the_geodesic(tau):
    rng = np.random.default_rng(2)
    target = np.sort(rng.beta(3, 3, 100))
    groups = [rng.beta(2, 5, 100), rng.beta(5, 2, 100)]
    targets = geodesic_targets(target, groups, tau)
    for g, t in zip(groups, targets, strict=True):
        assert _w1(t, target) == pytest.approx(tau * _w1(g, target), abs=1e-12)
    if tau == 0.0:
        for t in targets:
            np.testing.assert_array_equal(t, target)


@pytest.mark.parametrize("bad", [-0.1, 1.5, np.nan, True, "0.5", None])
def test_tau_outside_the_unit_interval_is_refused(bad):
    with pytest.raises(ValueError, match=r"tau must be a real number in \[0, 1\]"):
        check_tau(bad)
    assert "fraction of the raw disparity kept" in MSG_TAU
