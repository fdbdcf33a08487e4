"""fairness_report's per-group rows against pandas/scikit-learn, and its summary."""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import mean_squared_error, r2_score

from fairot.metrics import (
    error_rate,
    fairness_report,
    fairness_summary,
    max_pairwise_wasserstein,
    strong_demographic_disparity,
    strong_pairwise_demographic_disparity,
    wass1,
)
from fairot.metrics.checks import MSG_TASK, MSG_THRESHOLD


def _frame(seed=0, n=500):
    rng = np.random.default_rng(seed)
    sf = pd.DataFrame({"race": rng.choice(["A", "B"], n), "sex": rng.choice(["F", "M"], n)})
    s = np.clip(rng.beta(2, 4, n) + 0.1 * (sf.sex == "M"), 0, 1)
    y = (rng.random(n) < s).astype(int)
    return y, s, sf


def test_classification_rows_match_groupby():
    y, s, sf = _frame()
    report = fairness_report(y, s, sensitive_features=sf)
    assert list(report.index) == [
        "race=A, sex=F",
        "race=A, sex=M",
        "race=B, sex=F",
        "race=B, sex=M",
        "overall",
    ]
    df = sf.assign(y=y, s=s, correct=((s > 0.5) == y))
    grouped = df.groupby(["race", "sex"])
    np.testing.assert_array_equal(report["size"].iloc[:-1], grouped.size().to_numpy())
    np.testing.assert_allclose(report["accuracy"].iloc[:-1], grouped.correct.mean().to_numpy())
    np.testing.assert_allclose(report["mean_score"].iloc[:-1], grouped.s.mean().to_numpy())
    assert report.loc["overall", "share"] == 1.0
    summary = report.attrs["summary"]
    assert summary["err"] == pytest.approx(1 - ((s > 0.5) == y).mean())
    assert summary["wass1"] == pytest.approx(wass1(None, s, sensitive_features=sf))
    assert summary["sdd"] == pytest.approx(
        strong_demographic_disparity(None, s, sensitive_features=sf)
    )
    assert summary["spdd"] == pytest.approx(
        strong_pairwise_demographic_disparity(None, s, sensitive_features=sf)
    )
    gap = max_pairwise_wasserstein(None, s, sensitive_features=sf, p=2)
    assert summary["max_pairwise_w2"] == pytest.approx(gap.distance)
    assert summary["max_pairwise_w2_pair"] == " vs ".join(gap.pair)
    assert summary["accuracy_std"] == pytest.approx(np.std(grouped.correct.mean().to_numpy()))
    # SDD is the sum of the rows' W1 to the pooled distribution.
    assert report["w1_to_pooled"].iloc[:-1].sum() == pytest.approx(summary["sdd"])


def test_regression_rows_match_sklearn():
    rng = np.random.default_rng(1)
    g = rng.integers(0, 3, 400)
    y = rng.normal(size=400) + g
    pred = y + rng.normal(0, 0.5, 400)
    report = fairness_report(y, pred, sensitive_features=g, task="regression")
    for name in ("0", "1", "2"):
        m = g == int(name)
        assert report.loc[name, "mse"] == pytest.approx(mean_squared_error(y[m], pred[m]))
        assert report.loc[name, "r2"] == pytest.approx(r2_score(y[m], pred[m]))
    summary = fairness_summary(y, pred, sensitive_features=g, task="regression")
    assert summary["r2"] == pytest.approx(r2_score(y, pred))
    assert summary["max_pairwise_winf"] == pytest.approx(
        max_pairwise_wasserstein(None, pred, sensitive_features=g, p=np.inf).distance
    )


def test_scores_only_report():
    _, s, sf = _frame(2)
    report = fairness_report(None, s, sensitive_features=sf["sex"])
    assert "accuracy" not in report.columns
    assert "err" not in report.attrs["summary"]


def test_marginal_groups_shares_exceed_one():
    _, s, sf = _frame(3)
    report = fairness_report(None, s, sensitive_features=sf, group_mode="marginal")
    assert report["share"].iloc[:-1].sum() == pytest.approx(2.0)


def test_inputs_not_mutated_and_bad_task():
    y, s, sf = _frame(4)
    s0, sf0 = s.copy(), sf.copy()
    fairness_report(y, s, sensitive_features=sf)
    np.testing.assert_array_equal(s, s0)
    pd.testing.assert_frame_equal(sf, sf0)
    with pytest.raises(ValueError, match=MSG_TASK.split("{")[0]):
        fairness_report(y, s, sensitive_features=sf, task="ranking")


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e154, 1e200, 1e300])
def test_regression_report_at_extreme_scales(scale):
    # Oracle: the same problem at unit scale, times the scale factor (R² is scale-free).
    rng = np.random.default_rng(5)
    g = rng.integers(0, 3, 300)
    y = rng.normal(size=300) + g
    pred = y + rng.normal(0, 0.5, 300)
    unit = fairness_report(y, pred, sensitive_features=g, task="regression")
    scaled = fairness_report(y * scale, pred * scale, sensitive_features=g, task="regression")
    for column, power in (("rmse", 1), ("r2", 0), ("mean_score", 1), ("w1_to_pooled", 1)):
        np.testing.assert_allclose(
            scaled[column], unit[column] * scale**power, rtol=1e-12, err_msg=column
        )
    # The MSE itself is the square of a float; it leaves the float range above about 1e154.
    with np.errstate(over="ignore"):
        expected_mse = unit["mse"].to_numpy() * scale * scale
    np.testing.assert_allclose(scaled["mse"], expected_mse, rtol=1e-12)
    for key in ("wass1", "max_pairwise_w1", "max_pairwise_w2", "max_pairwise_winf", "rmse"):
        assert scaled.attrs["summary"][key] == pytest.approx(
            unit.attrs["summary"][key] * scale, rel=1e-12
        )
    assert scaled.attrs["summary"]["r2"] == pytest.approx(unit.attrs["summary"]["r2"], rel=1e-12)


@pytest.mark.parametrize("threshold", [float("nan"), 5, -0.1, "0.5", True, None])
def test_threshold_must_be_a_number_in_unit_interval(threshold):
    y, s, sf = _frame(6)
    with pytest.raises(ValueError, match=re.escape(MSG_THRESHOLD.split("{")[0])):
        fairness_report(y, s, sensitive_features=sf, threshold=threshold)
    with pytest.raises(ValueError, match=re.escape(MSG_THRESHOLD.split("{")[0])):
        error_rate(y, s, threshold=threshold)


@pytest.mark.parametrize("mode", ["intersection", "marginal"])
def test_an_encoding_as_groups_gives_the_same_report(mode):
    """The audit passes its encoding down: every result reads as with the groups' data."""
    from fairot.metrics import bootstrap_intervals, group_rates
    from fairot.utils.sensitive import check_sensitive_features

    rng = np.random.default_rng(3)
    n = 300
    sf = pd.DataFrame({"race": rng.choice(["B", "A", "C"], n), "sex": rng.choice([2, 1], n)})
    y = rng.integers(0, 2, n)
    s = rng.uniform(size=n)
    w = rng.uniform(0.5, 2.0, n)
    enc = check_sensitive_features(sf, group_mode=mode)
    for weight in (None, w):
        kw = {"group_mode": mode, "sample_weight": weight}
        pd.testing.assert_frame_equal(
            fairness_report(y, s, sensitive_features=enc, **kw),
            fairness_report(y, s, sensitive_features=sf, **kw),
        )
        pd.testing.assert_frame_equal(
            group_rates(y, s, sensitive_features=enc, **kw),
            group_rates(y, s, sensitive_features=sf, **kw),
        )
    if mode == "intersection":  # the bootstrap re-encodes marginal groups as cells: data only
        a, b = (
            bootstrap_intervals(y, s, sensitive_features=g, n_bootstrap=20, random_state=0)
            for g in (enc, sf)
        )
        pd.testing.assert_frame_equal(a.summary, b.summary)
        pd.testing.assert_frame_equal(a.replicates, b.replicates)
        assert list(a.groups) == list(b.groups)


def test_an_encoding_with_zero_weights_asks_for_the_data():
    from fairot.metrics import bootstrap_intervals
    from fairot.metrics.resampling._bootstrap import MSG_ENCODING_ROWS
    from fairot.utils.sensitive import check_sensitive_features

    g = np.repeat(["a", "b"], 20)
    s = np.linspace(0, 1, 40)
    w = np.r_[0.0, np.ones(39)]
    enc = check_sensitive_features(g)
    with pytest.raises(ValueError, match=re.escape(MSG_ENCODING_ROWS)):
        bootstrap_intervals(None, s, sensitive_features=enc, sample_weight=w, n_bootstrap=10)
    bootstrap_intervals(None, s, sensitive_features=g, sample_weight=w, n_bootstrap=10)
