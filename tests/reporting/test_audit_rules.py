"""The audit a regulator reads (issue 24): small groups, intervals, per-group table, rules.

Oracles: scipy.stats (bootstrap BCa, binomtest, fisher_exact, wasserstein_distance), sklearn's
confusion_matrix, fairlearn's MetricFrame, and small tables computed by hand in the tests.
"""

import math
import re

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    false_negative_rate,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import confusion_matrix, precision_score

from fairot.metrics.resampling import (
    NOT_ESTIMABLE_CONSTANT,
    NOT_ESTIMABLE_FEW,
    bias_corrected_interval,
    bootstrap_intervals,
)
from fairot.reporting import AUDIT_STANDARDS, audit
from fairot.reporting._audit import MSG_STANDARD_TASK
from fairot.reporting._group_table import MSG_REFERENCE
from fairot.reporting._standards import MSG_STANDARD


def _prefix(message):
    return re.escape(message.split("{")[0])


# ------------------------------------------------------------------------------- intervals
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


# ---------------------------------------------------------------------------- small groups
def _tiny_groups():
    rng = np.random.default_rng(3)
    g = np.array(["a"] * 100 + ["b"] * 100 + ["c"] + ["d"] * 2)
    y = rng.integers(0, 2, g.size)
    s = rng.uniform(size=g.size)
    s[g == "c"], s[g == "d"] = 0.9, 0.1  # c selected, d not: a DP difference of 1 from 3 rows
    return y, s, g


def test_small_groups_do_not_own_the_headline_by_default():
    y, s, g = _tiny_groups()
    result = audit(y, s, g, plots=False, n_bootstrap=40)
    keep = np.isin(g, ["a", "b"])
    d = (s > 0.5).astype(int)
    assert result.summary["demographic_parity_difference"] == pytest.approx(
        demographic_parity_difference(y[keep], d[keep], sensitive_features=g[keep]), abs=1e-12
    )
    assert result.settings["excluded_groups"] == ["c", "d"]
    # Group c (one row, selected) has the highest rate but is not the reference.
    rates = {k: d[g == k].mean() for k in "ab"}
    reference = max(rates, key=rates.get)
    assert result.settings["reference"] == reference
    assert result.report.loc["c", "disparate_impact"] == pytest.approx(1.0 / rates[reference])
    assert list(result.report.loc[["c", "d"], "note"]) == ["n < 30", "n < 30"]
    text = result.to_text()
    assert "a group with fewer than 30 rows is left out of the headline" in text
    assert "Excluded from the headline: c, d." in text
    # The four-fifths table lists them, excluded.
    table = result.verdicts[0].table
    assert table.loc["c", "flag"] == "excluded: n < 30" and math.isnan(
        table.loc["c", "impact_ratio"]
    )


def test_small_groups_included_on_request_and_their_interval_is_not_a_point():
    y, s, g = _tiny_groups()
    result = audit(y, s, g, plots=False, n_bootstrap=40, exclude_small_groups=False)
    d = (s > 0.5).astype(int)
    assert result.summary["demographic_parity_difference"] == pytest.approx(
        demographic_parity_difference(y, d, sensitive_features=g), abs=1e-12
    )
    assert result.summary["demographic_parity_difference"] == 1.0
    assert math.isnan(result.intervals.summary.loc["demographic_parity_difference", "low"])
    text = result.to_text()
    assert "[1.0000, 1.0000]" not in text
    assert "DP difference (selection-rate gap at threshold): interval not estimable" in text


# -------------------------------------------------------------------------- per-group table
@pytest.mark.parametrize("mode", ["intersection", "marginal"])
def test_group_table_equals_sklearn_fairlearn_and_scipy(mode):
    rng = np.random.default_rng(4)
    n = 400
    sf = pd.DataFrame({"race": rng.choice(["x", "y"], n), "sex": rng.choice(["f", "m"], n)})
    y = rng.integers(0, 2, n)
    s = np.clip(rng.beta(2, 3, n) + 0.2 * (sf["race"] == "x"), 0, 1)
    d = (s > 0.5).astype(int)
    result = audit(y, s, sf, group_mode=mode, plots=False, n_bootstrap=0, min_group_size=1)
    table = result.report
    if mode == "intersection":
        masks = {
            f"race={r}, sex={x}": ((sf["race"] == r) & (sf["sex"] == x)).to_numpy()
            for r in "xy"
            for x in "fm"
        }
    else:
        masks = {f"{c}={v}": (sf[c] == v).to_numpy() for c in sf for v in sorted(set(sf[c]))}
    for name, mask in masks.items():
        tn, fp, fn, tp = confusion_matrix(y[mask], d[mask], labels=[0, 1]).ravel()
        row = table.loc[name]
        assert (row["tp"], row["fp"], row["tn"], row["fn"]) == (tp, fp, tn, fn)
        assert row["size"] == mask.sum() and row["base_rate"] == pytest.approx(y[mask].mean())
        assert row["precision"] == pytest.approx(precision_score(y[mask], d[mask]))
        for column, k, m in [
            ("base_rate", tp + fn, mask.sum()),
            ("selection_rate", tp + fp, mask.sum()),
            ("tpr", tp, tp + fn),
            ("fpr", fp, fp + tn),
            ("fnr", fn, tp + fn),
            ("precision", tp, tp + fp),
        ]:
            ci = scipy.stats.binomtest(int(k), int(m)).proportion_ci(0.95, method="exact")
            assert row[f"{column}_low"] == pytest.approx(ci.low, rel=1e-9, abs=1e-15), column
            assert row[f"{column}_high"] == pytest.approx(ci.high, rel=1e-9, abs=1e-15), column
    if mode == "intersection":
        frame = MetricFrame(
            metrics={
                "selection_rate": selection_rate,
                "tpr": true_positive_rate,
                "fpr": false_positive_rate,
                "fnr": false_negative_rate,
            },
            y_true=y,
            y_pred=d,
            sensitive_features=sf,
        ).by_group
        for (race, sex), want in frame.iterrows():
            for column, value in want.items():
                assert table.loc[f"race={race}, sex={sex}", column] == pytest.approx(value)
        overall = table.loc["overall"]
        assert (overall["tp"], overall["fn"]) == (
            ((y == 1) & (d == 1)).sum(),
            ((y == 1) & (d == 0)).sum(),
        )


@pytest.mark.parametrize("n", [1, 2, 7, 30, 5000])
def test_clopper_pearson_equals_binomtest_at_every_count(n):
    from fairot.reporting._group_table import clopper_pearson

    k = np.arange(n + 1) if n <= 30 else np.array([0, 1, 2, n // 2, n - 2, n - 1, n])
    low, high = clopper_pearson(k, np.full(k.shape, n), 0.9)
    for j, i in enumerate(k):
        i = int(i)
        ci = scipy.stats.binomtest(i, n).proportion_ci(0.9, method="exact")
        assert low[j] == pytest.approx(ci.low, rel=1e-9, abs=1e-15)
        assert high[j] == pytest.approx(ci.high, rel=1e-9, abs=1e-15)
        assert low[j] < high[j]


def test_reference_group_is_chosen_and_stated():
    rng = np.random.default_rng(6)
    g = np.repeat(["a", "b", "c"], 60)
    s = np.clip(rng.uniform(size=180) + 0.2 * (g == "a") - 0.2 * (g == "c"), 0, 1)
    default = audit(None, s, g, plots=False, n_bootstrap=0)
    rates = {k: (s[g == k] > 0.5).mean() for k in "abc"}
    assert default.settings["reference"] == max(rates, key=rates.get)
    assert "highest selection rate" in default.settings["reference_reason"]
    chosen = audit(None, s, g, plots=False, n_bootstrap=0, reference="b", standards=("credit",))
    assert chosen.settings["reference"] == "b"
    for k in "abc":
        assert chosen.report.loc[k, "disparate_impact"] == pytest.approx(rates[k] / rates["b"])
    assert "Reference group: b (chosen by the user)" in chosen.to_markdown()
    with pytest.raises(ValueError, match=_prefix(MSG_REFERENCE)):
        audit(None, s, g, plots=False, n_bootstrap=0, reference="zz")


# ----------------------------------------------------------------------------------- rules
def _decisions(table):
    """Scores 0.9 (selected) / 0.1 (not) and groups reproducing ``{group: (n, selected)}``."""
    s, g = [], []
    for name, (n, k) in table.items():
        s += [0.9] * k + [0.1] * (n - k)
        g += [name] * n
    return np.array(s), np.array(g)


def test_four_fifths_by_hand():
    s, g = _decisions({"a": (50, 30), "b": (40, 16)})
    result = audit(None, s, g, plots=False, n_bootstrap=0, standards=("four-fifths",))
    verdict = result.verdicts[0]
    row = verdict.table.loc["b"]
    assert row["impact_ratio"] == pytest.approx((16 / 40) / (30 / 50))  # 0.6667
    z = (16 / 40 - 30 / 50) / math.sqrt((46 / 90) * (44 / 90) * (1 / 40 + 1 / 50))
    assert z == pytest.approx(-1.886084, abs=1e-6)
    assert row["z"] == pytest.approx(z, rel=1e-12)
    assert row["p_z"] == pytest.approx(2 * scipy.stats.norm.sf(abs(z)), rel=1e-12)
    assert row["p_z"] == pytest.approx(0.059284, abs=1e-6)
    assert row["p_fisher"] == scipy.stats.fisher_exact([[16, 24], [30, 20]]).pvalue
    assert verdict.passed is False and verdict.status == "FAIL"
    assert "b: 0.667" in verdict.line
    fair = audit(None, *_decisions({"a": (50, 30), "b": (40, 20)}), plots=False, n_bootstrap=0)
    assert fair.verdicts[0].passed is True  # 0.5 / 0.6 = 0.833


def test_ll144_worked_example():
    # Selection: sex x race, 150 applicants. M-Z (2 rows, 1.3%) and race Z are under 2%.
    cells = {
        ("F", "X"): (40, 20),
        ("F", "Y"): (30, 9),
        ("M", "X"): (50, 30),
        ("M", "Y"): (28, 14),
        ("M", "Z"): (2, 1),
    }
    s, sex, race = [], [], []
    for (a, b), (n, k) in cells.items():
        s += [0.9] * k + [0.1] * (n - k)
        sex += [a] * n
        race += [b] * n
    sf = pd.DataFrame({"sex": sex, "race": race})
    result = audit(None, np.array(s), sf, plots=False, n_bootstrap=0, standards=("ll144",),
                   min_group_size=1)  # fmt: skip
    table = result.verdicts[0].table
    expected = {  # category: (n, selected, selection rate, impact ratio or NaN)
        "sex=F": (70, 29, 29 / 70, (29 / 70) / (45 / 80)),  # 0.7365
        "sex=M": (80, 45, 45 / 80, 1.0),
        "race=X": (90, 50, 50 / 90, 1.0),
        "race=Y": (58, 23, 23 / 58, (23 / 58) / (50 / 90)),  # 0.7138
        "race=Z": (2, 1, 0.5, math.nan),
        "sex=F, race=X": (40, 20, 0.5, 0.5 / 0.6),
        "sex=F, race=Y": (30, 9, 0.3, 0.5),
        "sex=M, race=X": (50, 30, 0.6, 1.0),
        "sex=M, race=Y": (28, 14, 0.5, 0.5 / 0.6),
        "sex=M, race=Z": (2, 1, 0.5, math.nan),
    }
    assert set(table.index) == set(expected)
    for name, (n, k, rate, ratio) in expected.items():
        row = table.loc[name]
        assert (row["n"], row["selected"]) == (n, k)
        assert row["selection_rate"] == pytest.approx(rate)
        if math.isnan(ratio):
            assert math.isnan(row["impact_ratio"]) and "under 2%" in row["note"]
        else:
            assert row["impact_ratio"] == pytest.approx(ratio) and row["note"] == ""
    assert table.loc["sex=F", "impact_ratio"] == pytest.approx(0.736508, abs=1e-6)
    assert result.verdicts[0].passed is None


def test_ll144_scoring_rate_worked_example():
    # Median of the 10 scores: (0.35 + 0.4) / 2 = 0.375. Above it: F 3 of 4, M 2 of 6.
    f = [0.2, 0.4, 0.6, 0.9]
    m = [0.3, 0.35, 0.7, 0.8, 0.1, 0.15]
    result = audit(None, np.array(f + m), np.array(["F"] * 4 + ["M"] * 6), plots=False,
                   n_bootstrap=0, standards=("ll144",), min_group_size=1)  # fmt: skip
    table = result.verdicts[0].table
    assert table.loc["group=F", "scoring_rate"] == 0.75
    row_m = table.loc["group=M"]
    assert row_m["above_median"] == 2 and row_m["scoring_rate"] == pytest.approx(1 / 3)
    assert row_m["scoring_impact_ratio"] == pytest.approx((1 / 3) / 0.75)  # 0.4444


def test_credit_practice_by_hand():
    s = np.array([0.6, 0.7, 0.8, 0.9, 0.2, 0.4, 0.6, 0.8])
    g = np.array(["a"] * 4 + ["b"] * 4)
    result = audit(None, s, g, plots=False, n_bootstrap=0, min_group_size=1, reference="a",
                   standards=("credit",))  # fmt: skip
    row = result.verdicts[0].table.loc["b"]
    # Rates 1.0 and 0.5; means 0.75 and 0.5; variances 0.05/3 and 0.2/3; pooled 0.25/6.
    assert row["air"] == pytest.approx(0.5)
    assert row["smd"] == pytest.approx((0.5 - 0.75) / math.sqrt(0.25 / 6))
    assert row["smd"] == pytest.approx(-1.224745, abs=1e-6)
    assert result.verdicts[0].passed is False


def test_distributional_view_in_plain_words():
    rng = np.random.default_rng(8)
    g = np.repeat(["a", "b"], [80, 70])
    y = rng.integers(0, 2, 150)
    s = np.clip(rng.beta(2, 3, 150) + 0.15 * (g == "b"), 0, 1)
    verdict = audit(y, s, g, plots=False, n_bootstrap=0).verdicts[-1]
    assert verdict.key == "distributional"
    for k in "ab":
        mask = g == k
        assert verdict.table.loc[k, "w1_to_pooled"] == pytest.approx(
            scipy.stats.wasserstein_distance(s[mask], s)
        )
        for label, v in (("y=1", 1), ("y=0", 0)):
            assert verdict.table.loc[k, f"w1_to_pooled_{label}"] == pytest.approx(
                scipy.stats.wasserstein_distance(s[mask & (y == v)], s[y == v])
            )
    worst = max("ab", key=lambda k: scipy.stats.wasserstein_distance(s[g == k], s))
    assert f"The typical score of group {worst} would have to move by" in verdict.line


def test_standards_are_checked():
    s, g = _decisions({"a": (50, 30), "b": (40, 16)})
    with pytest.raises(ValueError, match=_prefix(MSG_STANDARD)):
        audit(None, s, g, plots=False, n_bootstrap=0, standards=("eighty-percent",))
    with pytest.raises(ValueError, match=_prefix(MSG_STANDARD_TASK)):
        audit(None, s, g, task="regression", plots=False, n_bootstrap=0, standards=("ll144",))
    from fairot.cli._cmd_audit import AUDIT_STANDARDS as CLI_STANDARDS

    assert CLI_STANDARDS == AUDIT_STANDARDS


# ------------------------------------------------------------------ provenance and escaping
def test_provenance_and_glossary_in_every_format():
    from importlib.metadata import version

    rng = np.random.default_rng(9)
    g = np.repeat(["a", "b"], 50)
    result = audit(None, rng.uniform(size=100), g, plots=False, n_bootstrap=0, model="my model")
    prov = result.provenance
    created = pd.Timestamp(prov["created_utc"])
    assert created.tzinfo is not None and created.utcoffset().total_seconds() == 0
    for name in ("numpy", "scipy", "scikit-learn", "pandas"):
        assert prov[name] == version(name)
    assert prov["model"] == "my model"
    assert prov["thresholds"]["decision threshold"][0] == 0.5
    for text in (result.to_markdown(), result.to_html(), result.to_text()):
        assert "my model" in text and "Glossary" in text and "SPDD" in text
    payload = __import__("json").loads(result.to_json())
    assert payload["provenance"]["model"] == "my model"
    assert payload["verdicts"][0]["standard"] == "four-fifths"


def test_user_strings_are_escaped():
    rng = np.random.default_rng(10)
    bad = "<script>alert(1)</script>|*x*"
    g = np.repeat([bad, "b"], 40)
    frame = pd.DataFrame({"col<b>|": g, "sex": np.tile(["f", "m"], 40)})
    result = audit(None, rng.uniform(size=80), frame, plots=False, n_bootstrap=0,
                   standards=("four-fifths", "ll144", "credit"))  # fmt: skip
    page = result.to_html()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>" not in page
    markdown = result.to_markdown()
    assert "<script>" not in markdown and "<b>" not in markdown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\|\\*x\\*" in markdown
    # Every table row keeps its column count: no pipe of a user string splits a cell.
    for block in markdown.split("\n\n"):
        rows = [r for r in block.splitlines() if r.startswith("|")]
        widths = {len(re.split(r"(?<!\\)\|", r)) for r in rows}
        assert len(widths) <= 1, block
