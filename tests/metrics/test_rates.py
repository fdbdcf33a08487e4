"""Per-group rates, DP/EO differences and bootstrap intervals against fairlearn, scikit-learn and
the per-replicate recomputation of :func:`fairness_report` on the resampled rows."""

import re

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_ratio,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)
from fairlearn.metrics import demographic_parity_difference as fl_dpd
from fairlearn.metrics import equalized_odds_difference as fl_eod
from sklearn.metrics import mean_absolute_error, precision_score, roc_auc_score

from fairot.exceptions import UndefinedRateWarning
from fairot.metrics import (
    bootstrap_intervals,
    demographic_parity_difference,
    equalized_odds_difference,
    fairness_report,
    group_rates,
)
from fairot.metrics.checks import MSG_THRESHOLD
from fairot.metrics.resampling import MSG_N_BOOTSTRAP, rate_summary
from fairot.utils.sensitive import check_sensitive_features
from tests.metrics.bootstrap_draws import reference_rows


def _data(n=900, seed=0, k=3):
    rng = np.random.default_rng(seed)
    groups = rng.choice(list("abcde"[:k]), n)
    sex = rng.choice(["F", "M"], n)
    y = rng.integers(0, 2, n)
    scores = np.clip(rng.beta(2, 3, n) + 0.15 * (groups == "a") + 0.1 * y, 0, 1)
    return y, scores, groups, sex


@pytest.mark.parametrize("threshold", [0.5, 0.3, 0.62])
@pytest.mark.parametrize("container", [list, np.asarray, pd.Series])
def test_differences_match_fairlearn(threshold, container):
    y, s, g, _ = _data()
    decisions = (s > threshold).astype(int)
    dpd = demographic_parity_difference(
        None, container(s), sensitive_features=container(g), threshold=threshold
    )
    eod = equalized_odds_difference(
        container(y), container(s), sensitive_features=container(g), threshold=threshold
    )
    assert dpd == pytest.approx(fl_dpd(y, decisions, sensitive_features=g), abs=1e-12)
    assert eod == pytest.approx(fl_eod(y, decisions, sensitive_features=g), abs=1e-12)


def test_intersectional_groups_match_fairlearn():
    y, s, g, sex = _data()
    sf = pd.DataFrame({"g": g, "sex": sex})
    decisions = (s > 0.5).astype(int)
    assert demographic_parity_difference(None, s, sensitive_features=sf) == pytest.approx(
        fl_dpd(y, decisions, sensitive_features=sf), abs=1e-12
    )
    assert equalized_odds_difference(y, s, sensitive_features=sf) == pytest.approx(
        fl_eod(y, decisions, sensitive_features=sf), abs=1e-12
    )


def test_group_rates_match_fairlearn_and_sklearn():
    y, s, g, _ = _data()
    decisions = (s > 0.5).astype(int)
    frame = MetricFrame(
        metrics={
            "selection_rate": selection_rate,
            "tpr": true_positive_rate,
            "fpr": false_positive_rate,
            "precision": precision_score,
        },
        y_true=y,
        y_pred=decisions,
        sensitive_features=pd.Series(g, name="group"),
    ).by_group
    rates = group_rates(y, s, sensitive_features=g)
    for column in frame.columns:
        np.testing.assert_allclose(rates[column], frame[column], rtol=0, atol=1e-12)
    for name in rates.index:
        member = g == name
        assert rates.loc[name, "auc"] == pytest.approx(
            roc_auc_score(y[member], s[member]), abs=1e-12
        )
        assert rates.loc[name, "calibration_gap"] == pytest.approx(
            s[member].mean() - y[member].mean(), abs=1e-12
        )
    ratio = rates["disparate_impact"]
    assert ratio.max() == 1.0
    assert ratio.min() == pytest.approx(
        demographic_parity_ratio(y, decisions, sensitive_features=g), abs=1e-12
    )


def test_auc_with_ties_matches_sklearn():
    rng = np.random.default_rng(3)
    s = rng.choice([0.1, 0.4, 0.7], 300)
    y = rng.integers(0, 2, 300)
    g = np.repeat(["a", "b"], 150)
    rates = group_rates(y, s, sensitive_features=g)
    assert rates.loc["a", "auc"] == pytest.approx(roc_auc_score(y[:150], s[:150]), abs=1e-12)


def test_regression_rates_match_sklearn():
    rng = np.random.default_rng(1)
    g = rng.choice(["u", "v"], 400)
    y = rng.normal(size=400)
    pred = y + rng.normal(0.3, 1.0, 400)
    rates = group_rates(y, pred, sensitive_features=g, task="regression")
    for name in ("u", "v"):
        m = g == name
        assert rates.loc[name, "mae"] == pytest.approx(mean_absolute_error(y[m], pred[m]))
        assert rates.loc[name, "rmse"] == pytest.approx(np.sqrt(np.mean((y[m] - pred[m]) ** 2)))
        assert rates.loc[name, "mean_residual"] == pytest.approx(np.mean(y[m] - pred[m]))


def test_undefined_tpr_is_nan_left_out_of_eo_and_named():
    # Group a has no positive label: its TPR does not exist. The TPR gap compares b and c only,
    # and the warning says so (fairlearn would count a's TPR as 0).
    y = np.array([0, 0, 0, 1, 0, 1, 1, 0])
    s = np.array([0.1, 0.7, 0.2, 0.9, 0.3, 0.8, 0.4, 0.6])
    g = np.array(["a", "a", "a", "b", "b", "b", "c", "c"])
    rates = group_rates(y, s, sensitive_features=g)
    assert np.isnan(rates.loc["a", "tpr"]) and np.isnan(rates.loc["a", "auc"])
    assert rates.loc["a", "undefined"] == "tpr (no positive labels); auc (one class only)"
    assert rates.loc["b", "undefined"] == ""
    # By hand: TPR b = 2/2, c = 0/1; FPR a = 1/3, b = 0/1, c = 1/1.
    with pytest.warns(UndefinedRateWarning, match=r"TPR is undefined for a .* 2 of 3 groups"):
        value = equalized_odds_difference(y, s, sensitive_features=g)
    assert value == pytest.approx(max(1.0 - 0.0, 1.0 - 0.0))


def test_undefined_rates_never_read_as_parity():
    # The case: a has no positives (no TPR), b no negatives (no FPR). Each gap compares
    # one group, so each is undefined: NaN with a warning, never the 0.0 of "perfect parity".
    # fairlearn reads both missing rates as 0 and answers 1.0 (checked here, so that a change of
    # fairlearn's convention shows).
    y, pred, g = [0, 0, 1, 1], [1, 0, 1, 1], ["a", "a", "b", "b"]
    assert fl_eod(y, pred, sensitive_features=g) == 1.0
    with pytest.warns(UndefinedRateWarning) as caught:
        value = equalized_odds_difference(y, pred, sensitive_features=g)
    assert np.isnan(value)
    text = " ".join(str(w.message) for w in caught)
    assert "TPR is undefined for a (no positive labels)" in text
    assert "FPR is undefined for b (no negative labels)" in text
    assert "compares 1 of 2 groups, so that gap is undefined" in text
    rates = group_rates(y, pred, sensitive_features=g)
    assert rates.loc["b", "undefined"] == "fpr (no negative labels); auc (one class only)"


@pytest.mark.parametrize("label", [0, 1])
def test_eo_difference_is_the_defined_gap_when_a_label_is_absent(label):
    # Every row has the same label: one gap does not exist, the other does, and it is the answer
    # (fairlearn's too, since its missing rates are 0 for every group alike).
    rng = np.random.default_rng(5)
    g = np.repeat(["a", "b", "c"], 40)
    s = np.clip(rng.beta(2, 3, 120) + 0.2 * (g == "a"), 0, 1)
    y = np.full(120, label)
    decisions = (s > 0.5).astype(int)
    by_hand = [decisions[g == name].mean() for name in "abc"]  # the defined rate of each group
    with pytest.warns(UndefinedRateWarning, match="compares 0 of 3 groups"):
        value = equalized_odds_difference(y, s, sensitive_features=g)
    assert value == pytest.approx(max(by_hand) - min(by_hand), abs=1e-12)
    assert value == pytest.approx(fl_eod(y, decisions, sensitive_features=g), abs=1e-12)


def test_rate_summary_gap_of_one_defined_group_is_undefined():
    tpr = np.array([[np.nan, 0.4, np.nan], [0.2, 0.7, np.nan]])
    fpr = np.array([[0.1, 0.3, 0.6], [np.nan, np.nan, np.nan]])
    out = rate_summary(
        {"selection_rate": np.full((2, 3), 0.5), "tpr": tpr, "fpr": fpr}, "classification"
    )
    np.testing.assert_allclose(out["equalized_odds_difference"], [0.5, 0.5])
    tpr_only = rate_summary(
        {"selection_rate": np.full((1, 3), 0.5), "tpr": tpr[:1], "fpr": fpr[1:]}, "classification"
    )
    assert np.isnan(tpr_only["equalized_odds_difference"][0])


@pytest.mark.parametrize("threshold", [float("nan"), 5, -0.1, "x", None])
def test_bad_threshold(threshold):
    y, s, g, _ = _data(100)
    with pytest.raises(ValueError, match=re.escape(MSG_THRESHOLD.split("{")[0])):
        group_rates(y, s, sensitive_features=g, threshold=threshold)


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
    import fairot.metrics.resampling as resampling

    y, s, g, _ = _data(200)
    # Chunks of 4 x 1 replicates (no (B, n) counts in classification without weights): 12
    # replicates are drawn as 4 + 4 + 4, each from its own seed.
    monkeypatch.setattr(resampling, "_CHUNK_CELLS", 200)
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


@pytest.mark.parametrize("scale", [1e-300, 1e-310, 1.0, 1e300])
def test_weighted_auc_is_invariant_to_the_weights_scale(scale):
    # Issue 37: weights of 1e-300 made the product of the class totals underflow to 0, and
    # every group's AUC was NaN. The oracle is scikit-learn's weighted roc_auc_score.
    rng = np.random.default_rng(11)
    n = 300
    y = rng.integers(0, 2, n)
    scores = np.round(rng.uniform(0, 1, n), 2)  # ties too
    groups = rng.choice(["a", "b", "c"], n)
    weights = rng.uniform(0.1, 3.0, n)
    table = group_rates(y, scores, sensitive_features=groups, sample_weight=weights * scale)
    for g in ("a", "b", "c"):
        member = groups == g
        expected = roc_auc_score(y[member], scores[member], sample_weight=weights[member])
        assert table.loc[g, "auc"] == pytest.approx(expected, rel=1e-12)
