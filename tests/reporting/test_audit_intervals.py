"""The audit's intervals (issue 24): every interval contains its estimate or says why not, and the
audit and ``bootstrap_intervals`` share them (the interval itself:
``tests/metrics/resampling/test_intervals.py``).

Oracle: the in-memory fairness_report on the drawn rows.
"""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairot.metrics.resampling import bootstrap_intervals
from fairot.reporting import audit


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
