"""The compiled statistics of count-weighted sorted groups, against SciPy, POT and by hand.

Each replicate's W1, W2, W_inf of every pair, the W1 to the pooled sample (SDD) and to the
median barycenter (Wass1) are recomputed by SciPy and POT on the explicitly resampled copies
(``np.repeat`` of the rows by their counts); the fused path (draw and measure at once) equals
the counts drawn first, then measured.
"""

from __future__ import annotations

import numpy as np
import ot
import pytest
from scipy.stats import wasserstein_distance

from fairot.metrics._rates import check_rate_inputs
from fairot.metrics.resampling._count_draws import CountLayout, draw_counts, replicate_seeds
from fairot.metrics.resampling._count_statistics import count_statistics, draw_statistics
from fairot.metrics.resampling._replicate_metrics import prepare
from tests.metrics.resampling.samples import scored_sample, strata


def test_count_statistics_against_scipy_and_by_hand():
    # Group a: values [3, 1, 2, 5] drawn 2, 0, 1, 1 times (the sample [2, 3, 3, 5]); group b:
    # [0, 4, 6, 1] drawn 1, 2, 0, 1 times ([0, 1, 4, 4]).
    values = np.array([3.0, 1.0, 2.0, 5.0, 0.0, 4.0, 6.0, 1.0])
    row_counts = np.array([2, 0, 1, 1, 1, 2, 0, 1])
    rows = [np.arange(4), np.arange(4, 8)]
    layout = CountLayout(values, rows, np.repeat([0, 1], 4))
    category = np.zeros(8, dtype=np.int64)
    out = count_statistics(layout, row_counts[layout.order][None, :], category, 1)
    a, b = np.array([2.0, 3.0, 3.0, 5.0]), np.array([0.0, 1.0, 4.0, 4.0])
    scale = layout.scale
    assert out["w1"][0, 0] * scale == pytest.approx(wasserstein_distance(a, b), abs=1e-12)
    # Equal sizes: the sorted samples are matched in order.
    assert out["w2"][0, 0] * scale == pytest.approx(np.sqrt(np.mean((a - b) ** 2)), abs=1e-12)
    assert out["winf"][0, 0] * scale == pytest.approx(np.max(np.abs(a - b)), abs=1e-12)
    pooled = np.r_[a, b]
    sdd = wasserstein_distance(a, pooled) + wasserstein_distance(b, pooled)
    assert out["sdd"][0] * scale == pytest.approx(sdd, abs=1e-12)
    # Two groups: every median is between them, the sum of the W1 to it is W1(a, b).
    assert out["wass1"][0] * scale == pytest.approx(wasserstein_distance(a, b), abs=1e-12)
    np.testing.assert_array_equal(out["atoms"][0, :, 0], [4, 4])
    assert out["scores"][0] * scale == pytest.approx([a.sum(), b.sum()], abs=1e-12)


def test_three_groups_of_unequal_sizes_against_scipy():
    # Many merged cells of unequal widths: every pair's W_p and the barycentric W1 by SciPy.
    rng = np.random.default_rng(4)
    cells = rng.choice(3, 90, p=[0.2, 0.3, 0.5])
    values = np.round(rng.normal(size=90), 1)  # ties within and across groups
    rows = [np.flatnonzero(cells == c) for c in range(3)]
    layout = CountLayout(values, rows, cells)
    counts = draw_counts(layout, replicate_seeds(np.random.default_rng(2), 3))
    out = count_statistics(layout, counts)
    row_counts = np.empty_like(counts)
    row_counts[:, layout.order] = counts
    for b in range(3):
        samples = [np.repeat(values[r], row_counts[b, r]) for r in rows]
        pairs = [(0, 1), (0, 2), (1, 2)]
        for p, (i, j) in enumerate(pairs):
            w1 = wasserstein_distance(samples[i], samples[j])
            assert out["w1"][b, p] * layout.scale == pytest.approx(w1, abs=1e-12)
            # W2 and W_inf on the cells between the two quantile functions' breakpoints k/n.
            cuts = np.unique(np.r_[
                np.arange(samples[i].size + 1) / samples[i].size,
                np.arange(samples[j].size + 1) / samples[j].size,
            ])  # fmt: skip
            middle, width = (cuts[1:] + cuts[:-1]) / 2, np.diff(cuts)
            qi = np.quantile(samples[i], middle, method="inverted_cdf")
            qj = np.quantile(samples[j], middle, method="inverted_cdf")
            w2 = np.sqrt(np.sum((qi - qj) ** 2 * width))
            assert out["w2"][b, p] * layout.scale == pytest.approx(w2, abs=1e-12)
            assert w2 == pytest.approx(ot.wasserstein_1d(samples[i], samples[j], p=2) ** 0.5)
            winf = np.abs(qi - qj)[width > 1e-9].max()
            assert out["winf"][b, p] * layout.scale == pytest.approx(winf, abs=1e-12)
        # wass1: the W1 of each group to the median of the three quantile functions.
        cuts = np.unique(np.concatenate([np.arange(s.size + 1) / s.size for s in samples]))
        middle, width = (cuts[1:] + cuts[:-1]) / 2, np.diff(cuts)
        q = np.stack([np.quantile(s, middle, method="inverted_cdf") for s in samples])
        wass1 = np.sum(np.abs(q - np.median(q, axis=0)).sum(axis=0) * width)
        assert out["wass1"][b] * layout.scale == pytest.approx(wass1, abs=1e-12)


@pytest.mark.parametrize("group_mode", ["intersection", "marginal"])
def test_drawn_statistics_are_those_of_the_drawn_counts(group_mode):
    # The fused path (draw and measure one replicate at a time, no (B, n) counts) against the
    # counts drawn first, then measured: the same replicates, the same numbers.
    y, pred, g, _ = scored_sample("classification", n=150)
    y, pred, enc, threshold = check_rate_inputs(y, pred, g, "classification", group_mode, 0.5)
    data = prepare(
        y, pred, enc.membership.astype(float), enc.indices(), enc.names, strata(g, 150),
        "classification", threshold, None,
    )  # fmt: skip
    seeds = replicate_seeds(np.random.default_rng(8), 5)
    fused = draw_statistics(data.layout, seeds, data.category, 4)
    drawn = count_statistics(data.layout, draw_counts(data.layout, seeds), data.category, 4)
    assert sorted(fused) == sorted(drawn)
    for key, value in drawn.items():
        np.testing.assert_array_equal(fused[key], value, err_msg=key)
