"""The rules of ``standards=`` by hand: four-fifths, credit practice, the distributional view.

Oracles: scipy.stats (norm, fisher_exact, wasserstein_distance) and small tables computed by hand.
"""

import math

import numpy as np
import pytest
import scipy.stats

from fairot.reporting import AUDIT_STANDARDS, audit
from fairot.reporting._audit import MSG_STANDARD_TASK
from fairot.reporting._standards import MSG_STANDARD
from tests.helpers import message_prefix as _prefix


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
