"""An audit of thousands of groups (issue 37): linear formulas, stated limits, bounded figures.

No time is asserted; the numbers are checked against direct computations.
"""

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from fairot.metrics import MAX_PAIRWISE_GROUPS
from fairot.reporting import audit
from fairot.reporting._plots import MAX_PLOTTED_GROUPS
from fairot.reporting._scale import MSG_LARGEST_PLOTTED, MSG_NO_SUMMARY_INTERVALS

K, N_PER_GROUP = 3000, 20


@pytest.fixture(scope="module")
def many():
    rng = np.random.default_rng(0)
    names = np.array([f"g{i:04d}" for i in range(K)])
    groups = np.repeat(names, N_PER_GROUP)
    scores = np.clip(rng.beta(2, 3, groups.size) + 0.1 * (np.arange(groups.size) % 7 == 0), 0, 1)
    labels = rng.integers(0, 2, groups.size)
    result = audit(labels, scores, groups, plots=True, n_bootstrap=200, min_group_size=10)
    return result, labels, scores, groups, names


def test_rates_and_gaps_equal_a_direct_computation(many):
    result, labels, scores, groups, names = many
    codes = np.searchsorted(names, groups)
    selected = np.bincount(codes, weights=scores > 0.5, minlength=K) / N_PER_GROUP
    table = result.report.loc[list(names)]
    np.testing.assert_allclose(table["selection_rate"].to_numpy(), selected, rtol=1e-12)
    gap = result.summary["demographic_parity_difference"]
    assert gap == pytest.approx(selected.max() - selected.min(), rel=1e-12)
    tpr = np.bincount(codes, weights=(scores > 0.5) & (labels == 1), minlength=K) / np.bincount(
        codes, weights=labels == 1, minlength=K
    )
    np.testing.assert_allclose(table["tpr"].to_numpy(), tpr, rtol=1e-12)


def test_distances_equal_scipy_and_brute_force_pairs(many):
    result, _, scores, groups, names = many
    # W1 of each group to the pooled scores: SciPy on a sample of groups, and SDD their sum.
    rng = np.random.default_rng(1)
    for name in rng.choice(names, 25, replace=False):
        want = wasserstein_distance(scores[groups == name], scores)
        assert result.report.loc[name, "w1_to_pooled"] == pytest.approx(want, rel=1e-10)
    # SPDD: every pair coupled by brute force. Equal sizes: W1(a, b) is the mean gap of the
    # sorted samples, so all 4.5 million pairs are 20 (K x K) matrices of gaps.
    order = np.argsort(groups, kind="stable")
    quantiles = np.sort(scores[order].reshape(K, N_PER_GROUP), axis=1)
    spdd = 0.0
    for i in range(N_PER_GROUP):
        q = quantiles[:, i]
        spdd += np.abs(q[:, None] - q[None, :]).sum() / 2 / N_PER_GROUP
    assert result.summary["spdd"] == pytest.approx(spdd, rel=1e-9)
    sdd = sum(result.report.loc[list(names), "w1_to_pooled"])
    assert result.summary["sdd"] == pytest.approx(sdd, rel=1e-12)


def test_limits_are_stated(many):
    result = many[0]
    assert "max_pairwise_w2" not in result.summary
    assert result.intervals is None
    assert MSG_NO_SUMMARY_INTERVALS.format(k=K, limit=MAX_PAIRWISE_GROUPS) in result.warnings
    assert MSG_LARGEST_PLOTTED.format(limit=MAX_PLOTTED_GROUPS, k=K) in result.warnings
    assert any("max_pairwise_w2 (and its pair) not computed" in w for w in result.warnings)
    text = result.to_text()
    assert f"the figures draw the {MAX_PLOTTED_GROUPS} largest of the {K} groups" in text
    for figure in result.figures.values():
        titles = " ".join([figure.get_suptitle(), *(ax.get_title() for ax in figure.axes)])
        assert f"the {MAX_PLOTTED_GROUPS} largest of {K} groups" in titles
    chart = result.figures["group_metrics"]
    assert len(chart.axes[0].get_yticklabels()) == MAX_PLOTTED_GROUPS
    panels = [ax for ax in result.figures["score_histograms"].axes if ax.get_visible()]
    assert len(panels) == MAX_PLOTTED_GROUPS
