"""The bootstrap's draws as counts: the reference stream, and the stratified multinomial law.

Oracles: a pure-Python SplitMix64/Lemire stream (``bootstrap_draws``) for the draws themselves,
and the multinomial law (Pearson's test, the moments of the counts) for their distribution.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from fairot.metrics.resampling._count_draws import (
    CountLayout,
    copy_indices,
    draw_counts,
    replicate_seeds,
)
from tests.metrics.resampling.bootstrap_draws import reference_rows
from tests.metrics.resampling.samples import scored_sample, strata


def test_draws_are_the_reference_stream():
    _, pred, g, _ = scored_sample("classification", n=120)
    cells = strata(g, 120)
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
