"""``control_features=`` on every group metric: per-stratum metrics recombined by hand.

The oracle splits the rows by stratum in the test, calls the metric on each stratum and
recombines with the strata's shares of the rows (of the total sample weight when given).
"""

import inspect
import re

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import fairot.metrics as fm
from fairot.metrics._calling import MSG_CONTROL_DASK
from fairot.metrics._control import MSG_STRATUM, STRATUM

SCALAR = [
    fm.wass1,
    fm.strong_demographic_disparity,
    fm.strong_pairwise_demographic_disparity,
    fm.demographic_parity_difference,
    fm.equalized_odds_difference,
    fm.strong_equalized_odds_disparity,
    fm.strong_equal_opportunity_disparity,
    fm.strong_pairwise_equalized_odds_disparity,
    fm.strong_pairwise_equal_opportunity_disparity,
]


def _data(seed=0, n=900):
    rng = np.random.default_rng(seed)
    c = rng.choice(["low", "mid", "high"], n, p=[0.5, 0.3, 0.2])
    g = rng.choice(["a", "b"], n)
    y = rng.integers(0, 2, n)
    s = np.clip(rng.beta(2, 3, n) + 0.2 * (g == "b") * (c == "low") + 0.1 * y, 0, 1)
    w = rng.random(n) * 2 + 0.1
    return y, s, g, c, w


def _by_hand(metric, y, s, g, c, w, **kwargs):
    total, mass = 0.0, 0.0
    for stratum in np.unique(c):
        m = c == stratum
        share = m.sum() if w is None else w[m].sum()
        extra = {} if w is None else {"sample_weight": w[m]}
        total += share * metric(y[m], s[m], sensitive_features=g[m], **extra, **kwargs)
        mass += share
    return total / mass


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("metric", SCALAR, ids=lambda m: m.__name__)
def test_scalar_metrics_recombine_the_strata_by_their_share(metric, weighted):
    y, s, g, c, w = _data(1)
    w = w if weighted else None
    extra = {} if w is None else {"sample_weight": w}
    ours = metric(y, s, sensitive_features=g, control_features=c, **extra)
    assert ours == pytest.approx(_by_hand(metric, y, s, g, c, w), rel=1e-12)


def test_conditional_sdd_by_scipy_per_stratum():
    # An independent oracle: each stratum's SDD from scipy's W1, weighted by the stratum share.
    y, s, g, c, _ = _data(2)
    expected = 0.0
    for stratum in np.unique(c):
        m = c == stratum
        expected += m.mean() * sum(
            scipy.stats.wasserstein_distance(s[m & (g == a)], s[m]) for a in np.unique(g)
        )
    ours = fm.strong_demographic_disparity(None, s, sensitive_features=g, control_features=c)
    assert ours == pytest.approx(expected, rel=1e-10)


def test_parity_within_strata_is_zero_though_marginal_parity_fails():
    # Groups differ only through their mix of strata: conditional parity holds exactly.
    c = np.repeat(["x", "y"], 100)
    g = np.array(["a"] * 80 + ["b"] * 20 + ["a"] * 20 + ["b"] * 80)
    s = np.where(c == "x", 0.2, 0.7)
    # by hand: each group moves 30% of its mass by 0.5 to reach the 50/50 pool: 2 * 0.15
    assert fm.strong_demographic_disparity(None, s, sensitive_features=g) == pytest.approx(0.3)
    assert fm.strong_demographic_disparity(None, s, sensitive_features=g, control_features=c) == 0


def test_pairwise_gap_recombines_the_matrices():
    y, s, g, c, _ = _data(3)
    gap = fm.max_pairwise_wasserstein(None, s, sensitive_features=g, control_features=c, p=1)
    expected = _by_hand(
        lambda *a, **k: fm.max_pairwise_wasserstein(*a, p=1, **k).distance, y, s, g, c, None
    )
    assert gap.distance == pytest.approx(expected, rel=1e-12)
    assert gap.pair == ("a", "b")


def test_report_keeps_each_stratum_and_recombines_the_summary():
    y, s, g, c, w = _data(4)
    report = fm.fairness_report(y, s, sensitive_features=g, control_features=c, sample_weight=w)
    assert report.index.names[0] == STRATUM
    assert sorted(report.index.get_level_values(0).unique()) == ["high", "low", "mid"]
    summary = report.attrs["summary"]
    assert summary["n_samples"] == len(s)
    expected = _by_hand(fm.strong_demographic_disparity, y, s, g, c, w)
    assert summary["sdd"] == pytest.approx(expected, rel=1e-12)
    low = fm.fairness_report(
        y[c == "low"], s[c == "low"], sensitive_features=g[c == "low"], sample_weight=w[c == "low"]
    )
    pd.testing.assert_frame_equal(report.loc["low"], low)
    assert report.attrs["strata"]["low"]["sdd"] == low.attrs["summary"]["sdd"]


def test_group_rates_per_stratum():
    y, s, g, c, _ = _data(5)
    rates = fm.group_rates(y, s, sensitive_features=g, control_features=c)
    mid = fm.group_rates(y[c == "mid"], s[c == "mid"], sensitive_features=g[c == "mid"])
    pd.testing.assert_frame_equal(rates.loc["mid"], mid)


def test_every_group_metric_but_the_bootstrap_takes_control_features():
    for name in fm.__all__:
        obj = getattr(fm, name)
        params = getattr(obj, "__signature__", None)
        if params is None or not callable(obj):
            continue
        parameters = inspect.signature(obj).parameters
        if "sensitive_features" in parameters and name != "bootstrap_intervals":
            assert parameters["control_features"].default is None, name
            assert parameters["control_features"].kind is inspect.Parameter.KEYWORD_ONLY


def test_strata_with_one_group_name_the_stratum():
    y, s, g, c, _ = _data(6)
    g = g.copy()
    g[c == "high"] = "a"
    message = MSG_STRATUM.format(stratum="high", n=int((c == "high").sum()), error="")
    with pytest.raises(ValueError, match=re.escape(message)):
        fm.wass1(None, s, sensitive_features=g, control_features=c)


def test_control_features_of_the_wrong_length_is_refused():
    y, s, g, c, _ = _data(7)
    with pytest.raises(ValueError, match="control_features"):
        fm.wass1(None, s, sensitive_features=g, control_features=c[:-1])


def test_dask_collections_with_control_features_are_refused():
    da = pytest.importorskip("dask.array")
    _, s, g, c, _ = _data(8, n=40)
    with pytest.raises(TypeError, match=re.escape(MSG_CONTROL_DASK.format(name="wass1"))):
        fm.wass1(None, da.from_array(s, chunks=20), sensitive_features=g, control_features=c)
