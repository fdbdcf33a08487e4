"""Bootstrap replicates as counts: the draws, and the statistics read off the counts.

Oracles: a pure-Python SplitMix64/Lemire stream for the draws (``bootstrap_draws``), the
multinomial law for their distribution, and the public metrics (``fairness_report``,
``group_rates``) and SciPy on the explicitly resampled copies (``np.repeat``) for the statistics.
"""

from __future__ import annotations

import numpy as np
import ot
import pandas as pd
import pytest
from scipy import stats
from scipy.stats import wasserstein_distance

import fairot.metrics._count_bootstrap as count_bootstrap
from fairot.metrics import fairness_report, group_rates
from fairot.metrics._count_bootstrap import count_summary, draw_replicates, prepare
from fairot.metrics._count_kernels import count_statistics, draw_statistics
from fairot.metrics._count_replicates import (
    CountLayout,
    copy_indices,
    draw_counts,
    replicate_seeds,
)
from fairot.metrics._rates import check_rate_inputs
from fairot.utils.sensitive import check_sensitive_features
from tests.metrics.bootstrap_draws import reference_rows


def _data(task, seed=0, n=300):
    rng = np.random.default_rng(seed)
    groups = np.column_stack(
        [rng.choice(["f", "m"], n, p=[0.4, 0.6]), rng.choice(["x", "y", "z"], n)]
    )
    if task == "classification":
        y = rng.integers(0, 2, n)
        pred = np.clip(rng.beta(2, 3, n) + 0.2 * y, 0, 1)
        pred[:10] = pred[10]  # ties
    else:
        y = rng.normal(3.0, 2.0, n)
        pred = y + rng.normal(0.5 * (groups[:, 0] == "f"), 1.0)
    weight = rng.uniform(0.2, 3.0, n)
    return y, pred, groups, weight


def _cells(groups, n):
    return check_sensitive_features(groups, n, group_mode="intersection", min_groups=1).codes


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("group_mode", ["intersection", "marginal"])
@pytest.mark.parametrize("labels", [True, False])
def test_counts_equal_copies(task, weighted, group_mode, labels):
    y_raw, p_raw, g, w_raw = _data(task)
    sf = pd.DataFrame(g, columns=["sex", "site"])
    y, pred, enc, threshold = check_rate_inputs(
        y_raw if labels else None, p_raw, sf, task, group_mode, 0.5
    )
    weight = w_raw if weighted else None
    n = pred.shape[0]
    data = prepare(
        y, pred, enc.membership.astype(float), enc.indices(), enc.names, _cells(g, n), task,
        threshold, weight,
    )  # fmt: skip
    counts = draw_counts(data.layout, replicate_seeds(np.random.default_rng(3), 4))
    rates, summary = count_summary(data, counts)
    row_counts = np.empty_like(counts)
    row_counts[:, data.layout.order] = counts
    for b in range(counts.shape[0]):
        copy = np.repeat(np.arange(n), row_counts[b])  # the replicate as resampled rows
        options = dict(
            sensitive_features=sf.iloc[copy],
            task=task,
            group_mode=group_mode,
            sample_weight=None if weight is None else weight[copy],
        )
        y_copy = None if y is None else y[copy]
        oracle = fairness_report(y_copy, pred[copy], **options).attrs["summary"]
        expected_keys = {"wass1", "max_pairwise_w2"}
        expected_keys |= {"sdd", "spdd"} if task == "classification" else {"max_pairwise_w1"}
        if task == "regression":
            expected_keys.add("max_pairwise_winf")
        if labels:
            expected_keys |= (
                {"err", "accuracy_std", "skewed_error_ratio"}
                if task == "classification"
                else {"mse", "r2"}
            )
        assert expected_keys <= set(summary)
        for key in expected_keys:
            assert summary[key][b] == pytest.approx(oracle[key], rel=1e-12, abs=1e-12), key
        if task == "regression" and not labels:
            continue  # no rates without labels in regression
        table = group_rates(y_copy, pred[copy], **options)
        for key in set(rates) & set(table.columns):
            expected = table[key].reindex(enc.names).to_numpy()
            np.testing.assert_allclose(rates[key][b], expected, rtol=1e-12, atol=1e-12)


def test_draws_are_the_reference_stream():
    _, pred, g, _ = _data("classification", n=120)
    cells = _cells(g, 120)
    layout = CountLayout(pred, [np.arange(120)], cells)
    counts = draw_counts(layout, replicate_seeds(np.random.default_rng(5), 6))
    take = reference_rows(pred, cells, 6, 5)
    expected = np.stack([np.bincount(t, minlength=120) for t in take])[:, layout.order]
    np.testing.assert_array_equal(counts, expected)
    # The copies of the counts resample within the cells, as the drawn rows do.
    copies = copy_indices(layout, counts)
    assert (cells[copies] == cells).all()
    np.testing.assert_array_equal(
        np.sort(copies, axis=1), np.sort(take, axis=1), err_msg="the same rows"
    )


def test_draws_are_a_stratified_multinomial():
    # Cells of 3, 40 and 957 rows; 400 replicates. Under the multinomial law every row's count
    # has mean 1 and variance 1 - 1/n_c, and the draws of a cell spread uniformly over its rows.
    rng = np.random.default_rng(0)
    cells = np.repeat([0, 1, 2], [3, 40, 957])
    rng.shuffle(cells)
    values = rng.normal(size=cells.shape[0])
    layout = CountLayout(values, [np.flatnonzero(cells == c) for c in range(3)], cells)
    counts = draw_counts(layout, replicate_seeds(np.random.default_rng(1), 400))
    sizes = np.bincount(cells)
    per_cell = np.stack([np.bincount(layout.cell_of, weights=row) for row in counts])
    np.testing.assert_array_equal(per_cell, np.broadcast_to(sizes, per_cell.shape))
    for c, size in enumerate(sizes):
        block = counts[:, layout.cell_of == c].astype(float)
        # Pearson's test of uniform picks over the cell's rows, from all replicates' draws.
        assert stats.chisquare(block.sum(axis=0)).pvalue > 1e-4
        variance = block.var(axis=0, ddof=1).mean()
        se = np.sqrt(2 / (block.shape[0] - 1)) / np.sqrt(block.shape[1])  # rough, ample
        assert abs(variance - (1 - 1 / size)) < 6 * se + 0.05 * (size < 10)
    # Two rows of one cell are negatively correlated, -1/(n_c - 1) for a multinomial.
    big = counts[:, layout.cell_of == 2].astype(float)
    corr = np.corrcoef(big[:, :200], rowvar=False)[np.triu_indices(200, 1)].mean()
    assert corr == pytest.approx(-1 / 956, abs=0.01)


def test_replicates_do_not_depend_on_threads_or_chunks(monkeypatch):
    y, pred, g, _ = _data("classification", n=200)
    y, pred, enc, threshold = check_rate_inputs(y, pred, g, "classification", "marginal", 0.5)
    data = prepare(
        y, pred, enc.membership.astype(float), enc.indices(), enc.names, _cells(g, 200),
        "classification", threshold, None,
    )  # fmt: skip
    seeds = replicate_seeds(np.random.default_rng(9), 7)
    outputs = []
    for workers in (1, 2, 3):
        monkeypatch.setattr(count_bootstrap, "threads", lambda workers=workers: workers)
        with count_bootstrap.replicate_pool() as pool:
            outputs.append(draw_replicates(data, seeds, pool))
    split = [draw_replicates(data, seeds[:3]), draw_replicates(data, seeds[3:])]
    for rates, summary in outputs[1:] + [
        ({k: np.concatenate([s[0][k] for s in split]) for k in split[0][0]},
         {k: np.concatenate([s[1][k] for s in split]) for k in split[0][1]})
    ]:  # fmt: skip
        for key, value in outputs[0][1].items():
            np.testing.assert_array_equal(summary[key], value, err_msg=key)
        for key, value in outputs[0][0].items():
            np.testing.assert_array_equal(rates[key], value, err_msg=key)


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
    y, pred, g, _ = _data("classification", n=150)
    y, pred, enc, threshold = check_rate_inputs(y, pred, g, "classification", group_mode, 0.5)
    data = prepare(
        y, pred, enc.membership.astype(float), enc.indices(), enc.names, _cells(g, 150),
        "classification", threshold, None,
    )  # fmt: skip
    seeds = replicate_seeds(np.random.default_rng(8), 5)
    fused = draw_statistics(data.layout, seeds, data.category, 4)
    drawn = count_statistics(data.layout, draw_counts(data.layout, seeds), data.category, 4)
    assert sorted(fused) == sorted(drawn)
    for key, value in drawn.items():
        np.testing.assert_array_equal(fused[key], value, err_msg=key)


@pytest.mark.parametrize("threshold", [0.0, 0.3, 1.0])
def test_atom_rates_at_the_ends_of_the_threshold_range(threshold):
    # Scores of exactly 0, the threshold and 1: a decision is score > threshold, as
    # group_rates decides on the resampled copy.
    rng = np.random.default_rng(6)
    n = 120
    g = rng.choice(["a", "b", "c"], n)
    y = rng.integers(0, 2, n)
    pred = rng.choice([0.0, 0.3, 0.7, 1.0], n)
    y, pred, enc, threshold = check_rate_inputs(
        y, pred, g, "classification", "intersection", threshold
    )
    data = prepare(
        y, pred, enc.membership.astype(float), enc.indices(), enc.names, enc.codes,
        "classification", threshold, None,
    )  # fmt: skip
    counts = draw_counts(data.layout, replicate_seeds(np.random.default_rng(1), 3))
    rates, summary = count_summary(data, counts)
    row_counts = np.empty_like(counts)
    row_counts[:, data.layout.order] = counts
    for b in range(3):
        copy = np.repeat(np.arange(n), row_counts[b])
        table = group_rates(y[copy], pred[copy], sensitive_features=g[copy], threshold=threshold)
        for key in ("selection_rate", "tpr", "fpr", "calibration_gap"):
            np.testing.assert_allclose(
                rates[key][b], table[key].to_numpy(), rtol=1e-12, atol=1e-12, err_msg=key
            )
        oracle = fairness_report(
            y[copy], pred[copy], sensitive_features=g[copy], threshold=threshold
        )
        assert summary["err"][b] == pytest.approx(oracle.attrs["summary"]["err"], abs=1e-12)
