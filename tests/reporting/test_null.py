"""The monitor's alerts are calibrated against a null of no disparity (issue 19).

Evidence: on simulated fair streams (groups independent of the scores) the false-alarm rate is at
most alpha = 5 % at every window size, checked with a one-sided binomial bound so that the test
does not hinge on luck; a stream with a real shift still alerts in most windows (power).
"""

import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from fairot.reporting import FairnessMonitor
from fairot.reporting._monitor import MSG_ALPHA, MSG_N_PERMUTATIONS

N_WINDOWS = 200


def _fair(window, seed):
    rng = np.random.default_rng(seed)
    n = N_WINDOWS * window
    return rng.uniform(size=n), rng.choice(["a", "b"], n)


def _largest_count_at(rate, n, level=1e-3):
    """Largest alert count out of ``n`` that a true rate of ``rate`` produces with prob >= level."""
    return int(binom.isf(level, n, rate))


@pytest.mark.parametrize("metric", ["sdd", "demographic_parity_difference", "reference_w1"])
@pytest.mark.parametrize("window", [20, 50, 200])
def test_false_alarm_rate_on_a_fair_stream_is_at_most_alpha(metric, window):
    ref_s, ref_g = _fair(2, seed=100 + window)  # 400 reference rows
    s, g = _fair(window, seed=window)
    monitor = FairnessMonitor(
        ref_s, ref_g, metric=metric, window=window, threshold=0.02, n_bootstrap=50
    )
    results = monitor.update(s, g)
    assert len(results) == N_WINDOWS
    alerts = sum(r.alert for r in results)
    assert alerts <= _largest_count_at(0.05, N_WINDOWS)


def test_p_values_are_uniform_under_the_null():
    """An exact permutation test: P(p <= alpha) <= alpha for the p-values themselves."""
    s, g = _fair(20, seed=7)
    monitor = FairnessMonitor(s, g, window=20, threshold=1e-9, n_bootstrap=10)
    p = np.array([r.p_value for r in monitor.update(s, g)])
    assert np.all((p > 0) & (p <= 1))
    for alpha in (0.05, 0.1, 0.5):
        assert np.count_nonzero(p <= alpha) <= _largest_count_at(alpha, N_WINDOWS)


@pytest.mark.parametrize(("window", "least"), [(20, 0.6), (50, 0.9), (200, 0.99)])
def test_a_real_shift_still_alerts(window, least):
    s, g = _fair(window, seed=window + 1)
    shifted = np.clip(s + 0.4 * (g == "a"), 0, 1)
    monitor = FairnessMonitor(s[:400], g[:400], window=window, threshold=0.05, n_bootstrap=50)
    results = monitor.update(shifted, g)
    assert np.mean([r.alert for r in results]) >= least
    # Against the exact oracle: two-sample SDD with a 0.4 shift of half the rows is far above 0.05
    # and the permutation p-value of such a window is the smallest attainable or close to it.
    assert np.median([r.p_value for r in results]) <= 0.05


def test_deterministic_with_random_state():
    s, g = _fair(50, seed=3)
    a = FairnessMonitor(s[:400], g[:400], window=50, threshold=0.02, random_state=5)
    b = FairnessMonitor(s[:400], g[:400], window=50, threshold=0.02, random_state=5)
    np.testing.assert_array_equal(a.update(s, g), b.update(s, g))


@pytest.mark.parametrize("alpha", [0, -0.1, 0.6, float("nan"), True, "0.05"])
def test_bad_alpha(alpha):
    s, g = _fair(1, seed=0)
    with pytest.raises(ValueError, match=re.escape(MSG_ALPHA.format(value=alpha))):
        FairnessMonitor(s, g, window=20, alpha=alpha)


def test_too_few_permutations_for_alpha():
    s, g = _fair(1, seed=0)
    message = MSG_N_PERMUTATIONS.format(minimum=19, alpha=0.05, value=5)
    with pytest.raises(ValueError, match=re.escape(message)):
        FairnessMonitor(s, g, window=20, alpha=0.05, n_permutations=5)
    FairnessMonitor(s, g, window=20, alpha=0.05, n_permutations=19)


def test_null_w1_matches_scipy():
    from scipy.stats import wasserstein_distance

    from fairot.reporting._null import _w1_rows

    rng = np.random.default_rng(0)
    a = np.sort(rng.uniform(size=(4, 7)), axis=1)
    b = np.sort(rng.beta(2, 5, size=(4, 12)), axis=1)
    expected = [wasserstein_distance(x, y) for x, y in zip(a, b, strict=True)]
    np.testing.assert_allclose(_w1_rows(a, b), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("metric", ["sdd", "demographic_parity_difference", "reference_w1"])
@pytest.mark.parametrize("mean_rows", [6, 40])
def test_false_alarm_rate_on_calendar_windows_is_at_most_alpha(metric, mean_rows):
    """Daily windows of random sizes (Poisson rows a day; 2 to 65 rows evaluated): <= alpha."""
    rng = np.random.default_rng(1000 + mean_rows)
    per_day = rng.poisson(mean_rows, N_WINDOWS)
    days = pd.Timestamp("2026-01-01") + pd.to_timedelta(
        np.repeat(np.arange(N_WINDOWS), per_day), "D"
    )
    times = days + pd.to_timedelta(rng.uniform(0, 86_399, days.shape[0]).round(), "s")
    times = times.sort_values()
    s, g = rng.uniform(size=times.shape[0]), rng.choice(["a", "b"], times.shape[0])
    ref_s, ref_g = _fair(2, seed=200 + mean_rows)
    monitor = FairnessMonitor(
        ref_s, ref_g, metric=metric, every="1D", threshold=0.02, n_bootstrap=20
    )
    results = monitor.update(s, g, times=times) + monitor.flush()
    evaluated = [r for r in results if not r.note]
    assert len(results) == np.count_nonzero(per_day) and len(evaluated) >= 150
    assert len({r.stop - r.start for r in evaluated}) > 5  # many window sizes
    alerts = sum(r.alert for r in evaluated)
    assert alerts <= _largest_count_at(0.05, len(evaluated))


def test_false_alarm_rate_on_partial_windows_is_at_most_alpha():
    """The last, partial window of a fair stream (2 to 19 rows after windows of 20)."""
    rng = np.random.default_rng(11)
    ref_s, ref_g = _fair(2, seed=12)
    alerts = evaluated = 0
    for _ in range(N_WINDOWS):
        n = 20 + int(rng.integers(2, 20))
        s, g = rng.uniform(size=n), rng.choice(["a", "b"], n)
        monitor = FairnessMonitor(ref_s, ref_g, window=20, threshold=0.02, n_bootstrap=10)
        monitor.update(s, g)
        (last,) = monitor.flush()
        assert last.partial and last.stop - last.start == n - 20
        if not last.note:
            evaluated += 1
            alerts += last.alert
    assert evaluated >= 150
    assert alerts <= _largest_count_at(0.05, evaluated)
