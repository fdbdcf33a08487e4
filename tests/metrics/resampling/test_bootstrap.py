"""bootstrap_intervals: every replicate is the report of the rows it draws, in any chunking.

Oracles: the pure-Python reference of the draws (``bootstrap_draws``), then
:func:`fairot.metrics.fairness_report` and fairlearn's DP/EO differences recomputed on the
explicitly resampled rows of each replicate.
"""

import re

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import demographic_parity_difference as fl_dpd
from fairlearn.metrics import equalized_odds_difference as fl_eod

import fairot.metrics.resampling._bootstrap as bootstrap
from fairot.metrics import bootstrap_intervals, fairness_report
from fairot.metrics.resampling._bootstrap import MSG_N_BOOTSTRAP
from fairot.utils.sensitive import check_sensitive_features
from tests.metrics.resampling.bootstrap_draws import reference_rows


def _data(n=900, seed=0, k=3):
    rng = np.random.default_rng(seed)
    groups = rng.choice(list("abcde"[:k]), n)
    sex = rng.choice(["F", "M"], n)
    y = rng.integers(0, 2, n)
    scores = np.clip(rng.beta(2, 3, n) + 0.15 * (groups == "a") + 0.1 * y, 0, 1)
    return y, scores, groups, sex


def test_bootstrap_replicates_are_fairness_report_on_resampled_rows():
    y, s, g, _ = _data(300)
    n_boot, seed = 12, 7
    ci = bootstrap_intervals(y, s, sensitive_features=g, n_bootstrap=n_boot, random_state=seed)
    rows = reference_rows(s, check_sensitive_features(g, len(s)).codes, n_boot, seed)
    for b in (0, 5, 11):
        idx = rows[b]
        # A stratified replicate keeps every group's size.
        assert (pd.Series(g[idx]).value_counts() == pd.Series(g).value_counts()).all()
        oracle = fairness_report(y[idx], s[idx], sensitive_features=g[idx]).attrs["summary"]
        got = ci.replicates.iloc[b]
        for key in ("err", "wass1", "sdd", "spdd", "max_pairwise_w2", "accuracy_std"):
            assert got[key] == pytest.approx(oracle[key], rel=1e-12, abs=1e-12), key
        decisions = (s[idx] > 0.5).astype(int)
        assert got["demographic_parity_difference"] == pytest.approx(
            fl_dpd(y[idx], decisions, sensitive_features=g[idx]), abs=1e-12
        )
        assert got["equalized_odds_difference"] == pytest.approx(
            fl_eod(y[idx], decisions, sensitive_features=g[idx]), abs=1e-12
        )


def test_bootstrap_regression_replicates():
    rng = np.random.default_rng(2)
    g = rng.choice(["u", "v", "w"], 240)
    y = rng.normal(size=240)
    pred = y + rng.normal(0.2 * (g == "u"), 1.0)
    ci = bootstrap_intervals(
        y, pred, sensitive_features=g, task="regression", n_bootstrap=10, random_state=0
    )
    rows = reference_rows(pred, check_sensitive_features(g, 240).codes, 10, 0)
    oracle = fairness_report(
        y[rows[3]], pred[rows[3]], sensitive_features=g[rows[3]], task="regression"
    )
    for key in ("mse", "r2", "wass1", "max_pairwise_w1", "max_pairwise_w2", "max_pairwise_winf"):
        assert ci.replicates.iloc[3][key] == pytest.approx(oracle.attrs["summary"][key], rel=1e-12)


def test_bootstrap_marginal_groups_replicate():
    y, s, g, sex = _data(300)
    sf = pd.DataFrame({"g": g, "sex": sex})
    ci = bootstrap_intervals(
        y, s, sensitive_features=sf, group_mode="marginal", n_bootstrap=10, random_state=1
    )
    cells = check_sensitive_features(sf, 300).codes
    idx = reference_rows(s, cells, 10, 1)[4]
    oracle = fairness_report(
        y[idx], s[idx], sensitive_features=sf.iloc[idx], group_mode="marginal"
    ).attrs["summary"]
    for key in ("sdd", "spdd", "wass1"):
        assert ci.replicates.iloc[4][key] == pytest.approx(oracle[key], rel=1e-12)


def test_bootstrap_deterministic_and_does_not_mutate():
    y, s, g, _ = _data(200)
    s_copy, g_copy = s.copy(), g.copy()
    a = bootstrap_intervals(y, s, sensitive_features=g, n_bootstrap=20, random_state=3)
    b = bootstrap_intervals(y, s, sensitive_features=g, n_bootstrap=20, random_state=3)
    pd.testing.assert_frame_equal(a.summary, b.summary)
    np.testing.assert_array_equal(s, s_copy)
    np.testing.assert_array_equal(g, g_copy)
    assert (a.summary["low"] <= a.summary["high"]).all()
    assert set(a.groups) >= {"selection_rate", "tpr", "fpr"}


def test_bootstrap_in_chunks(monkeypatch):
    y, s, g, _ = _data(200)
    # Chunks of 4 x 1 replicates (no (B, n) counts in classification without weights): 12
    # replicates are drawn as 4 + 4 + 4, each from its own seed.
    monkeypatch.setattr(bootstrap, "_CHUNK_CELLS", 200)
    ci = bootstrap_intervals(y, s, sensitive_features=g, n_bootstrap=12, random_state=4)
    rows = reference_rows(s, check_sensitive_features(g, 200).codes, 12, 4)
    for b in (4, 7, 11):
        oracle = fairness_report(y[rows[b]], s[rows[b]], sensitive_features=g[rows[b]]).attrs[
            "summary"
        ]
        assert ci.replicates.iloc[b]["sdd"] == pytest.approx(oracle["sdd"], rel=1e-12)


@pytest.mark.parametrize("n_bootstrap", [0, 5, 2.5, True])
def test_bad_n_bootstrap(n_bootstrap):
    y, s, g, _ = _data(100)
    with pytest.raises(ValueError, match=re.escape(MSG_N_BOOTSTRAP.split("{")[0])):
        bootstrap_intervals(y, s, sensitive_features=g, n_bootstrap=n_bootstrap)
