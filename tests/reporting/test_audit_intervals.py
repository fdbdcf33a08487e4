"""The audit's intervals (issue 24): bias-corrected bootstrap intervals that contain their estimate
or say why not, shared by the audit and ``bootstrap_intervals``.

Oracles: scipy.stats (bootstrap BCa) and the in-memory fairness_report on the drawn rows.
"""

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from fairot.metrics.resampling import (
    NOT_ESTIMABLE_CONSTANT,
    NOT_ESTIMABLE_FEW,
    bias_corrected_interval,
    bootstrap_intervals,
)
from fairot.reporting import audit


def test_bc_interval_equals_scipy_bca_when_the_acceleration_is_zero():
    # For the mean of data symmetric about its mean, the jackknife skewness (BCa's acceleration)
    # is 0, so scipy's BCa interval is the BC interval of its own bootstrap distribution.
    v = np.random.default_rng(0).exponential(size=40)
    x = np.r_[v, -v]
    res = scipy.stats.bootstrap(
        (x,), np.mean, method="BCa", n_resamples=999, confidence_level=0.9, random_state=1
    )
    low, high, note = bias_corrected_interval(x.mean(), res.bootstrap_distribution, 0.9)
    assert note == ""
    assert low == pytest.approx(res.confidence_interval.low, rel=1e-9)
    assert high == pytest.approx(res.confidence_interval.high, rel=1e-9)


def test_percentile_interval_is_the_central_range():
    reps = np.random.default_rng(2).normal(size=200)
    low, high, note = bias_corrected_interval(0.0, reps, 0.9, method="percentile")
    assert note == ""
    assert low == pytest.approx(np.quantile(reps, 0.05), rel=1e-12)
    assert high == pytest.approx(np.quantile(reps, 0.95), rel=1e-12)


def test_not_estimable_reasons():
    low, high, note = bias_corrected_interval(1.0, np.ones(50))
    assert math.isnan(low) and math.isnan(high)
    assert note.startswith(NOT_ESTIMABLE_CONSTANT.split("{")[0])
    assert bias_corrected_interval(0.5, np.linspace(0, 1, 12))[2].startswith(
        NOT_ESTIMABLE_FEW.split("{")[0][:3]
    )
    assert "tail" in bias_corrected_interval(-1.0, np.linspace(0, 1, 100))[2]
    # A non-negative statistic below all its replicates: a one-sided interval from its floor.
    low, high, note = bias_corrected_interval(0.01, np.linspace(0.1, 1, 100), floor=0.0)
    assert low == 0.0 and high == pytest.approx(np.quantile(np.linspace(0.1, 1, 100), 0.975))
    assert note.startswith("one-sided")


@settings(max_examples=200, deadline=None)
@given(
    estimate=st.floats(-2, 2, allow_nan=False),
    reps=st.lists(st.sampled_from([-1.0, 0.0, 0.25, 0.5, 1.0]) | st.floats(-2, 2), min_size=1,
                  max_size=120),
    confidence=st.sampled_from([0.8, 0.9, 0.95]),
    floor=st.sampled_from([None, -2.0]),
)  # fmt: skip
def test_an_interval_contains_its_estimate_or_says_why_not(estimate, reps, confidence, floor):
    low, high, note = bias_corrected_interval(estimate, reps, confidence, floor=floor)
    if math.isnan(low):
        assert math.isnan(high) and note
    else:
        assert low < high  # never [x, x]
        assert low <= estimate <= high
        assert note == "" or note.startswith("one-sided")


@settings(max_examples=15, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 40), min_size=2, max_size=4),
    seed=st.integers(0, 10_000),
    levels=st.sampled_from([None, 3]),
)
def test_every_audit_interval_contains_its_estimate_or_is_not_estimable(sizes, seed, levels):
    rng = np.random.default_rng(seed)
    g = np.repeat([f"g{i}" for i in range(len(sizes))], sizes)
    s = rng.uniform(size=g.size) if levels is None else rng.integers(0, levels, g.size) / 2
    y = rng.integers(0, 2, g.size)
    result = audit(y, s, g, plots=False, n_bootstrap=40, min_group_size=1)
    bands = result.intervals.summary
    for key, value in result.summary.items():
        if key not in bands.index:
            continue
        low, high = bands.loc[key]
        if math.isnan(low):
            assert key in result.intervals.notes
        else:
            assert low < high and low <= value + 1e-12 and value - 1e-12 <= high, key
    assert "[1.0000, 1.0000]" not in result.to_text()


def test_bootstrap_sdd_of_scores_below_one_half_equals_fairness_report():
    # SDD replicates used to compare scaled groups with unscaled pooled scores: wrong whenever
    # the largest score was not in [1, 2) (found by the containment property above).
    from fairot.metrics import fairness_report
    from fairot.utils.sensitive import check_sensitive_features
    from tests.metrics.resampling.bootstrap_draws import reference_rows

    rng = np.random.default_rng(11)
    g = np.repeat(["a", "b"], [30, 40])
    s = 0.4 * rng.uniform(size=70)
    ci = bootstrap_intervals(None, s, sensitive_features=g, n_bootstrap=10, random_state=2)
    rows = reference_rows(s, check_sensitive_features(g, 70).codes, 10, 2)
    for b in (0, 7):
        idx = rows[b]
        want = fairness_report(None, s[idx], sensitive_features=g[idx]).attrs["summary"]["sdd"]
        assert ci.replicates.iloc[b]["sdd"] == pytest.approx(want, rel=1e-12)


def test_audit_and_bootstrap_intervals_share_the_bc_point_estimates():
    rng = np.random.default_rng(5)
    g = np.repeat(["a", "b"], [60, 50])
    s, y = rng.uniform(size=110), rng.integers(0, 2, 110)
    result = audit(y, s, g, plots=False, n_bootstrap=50)
    direct = bootstrap_intervals(
        y, s, sensitive_features=g, n_bootstrap=50, random_state=0, method="bc"
    )
    pd.testing.assert_frame_equal(result.intervals.summary, direct.summary)
