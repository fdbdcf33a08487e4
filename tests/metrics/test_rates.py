"""Per-group rates and DP/EO differences against fairlearn and scikit-learn.

The bootstrap intervals of the rates are tested in ``tests/metrics/resampling/``."""

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
    demographic_parity_difference,
    equalized_odds_difference,
    group_rates,
)
from fairot.metrics.checks import MSG_THRESHOLD
from fairot.metrics.resampling import rate_summary


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
