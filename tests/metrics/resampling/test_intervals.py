"""Bias-corrected bootstrap intervals that contain their estimate or say why not.

Oracle: scipy.stats (bootstrap BCa).
"""

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from fairot.metrics.resampling import (
    NOT_ESTIMABLE_CONSTANT,
    NOT_ESTIMABLE_FEW,
    bias_corrected_interval,
)


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
