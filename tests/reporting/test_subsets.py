"""The rows an audit summarises: small groups left out of the headline, or kept on request.

Oracles: fairlearn's demographic_parity_difference and fairness_report on the rows kept.
"""

import math
import re

import numpy as np
import pytest
from fairlearn.metrics import demographic_parity_difference
from fairlearn.metrics import demographic_parity_difference as fl_dpd

from fairot.metrics import fairness_report
from fairot.reporting import audit
from fairot.reporting._subsets import MSG_ALL_SMALL


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


def test_small_groups_excluded_match_fairness_report():
    rng = np.random.default_rng(1)
    g = np.array(["a"] * 80 + ["b"] * 90 + ["c"] * 12)
    y = rng.integers(0, 2, g.shape[0])
    s = rng.uniform(size=g.shape[0])
    kept = audit(y, s, g, plots=False, n_bootstrap=0, exclude_small_groups=True)
    keep = g != "c"
    oracle = fairness_report(y[keep], s[keep], sensitive_features=g[keep]).attrs["summary"]
    for key in ("sdd", "wass1", "err", "spdd"):
        assert kept.summary[key] == pytest.approx(oracle[key], abs=1e-12)
    assert kept.summary["demographic_parity_difference"] == pytest.approx(
        fl_dpd(y[keep], (s[keep] > 0.5).astype(int), sensitive_features=g[keep]), abs=1e-12
    )
    assert kept.report.loc["c", "note"] == "n < 30"
    assert "excluded from the summary" in kept.warnings[0]
    with pytest.raises(ValueError, match=re.escape(MSG_ALL_SMALL.split("{")[0])):
        audit(y, s, g, plots=False, n_bootstrap=0, exclude_small_groups=True, min_group_size=85)
