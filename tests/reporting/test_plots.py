"""Figures of per-group scores: readable axes, sorted by size, a palette that never repeats (4, 12
and 20 groups; small multiples beyond six)."""

import numpy as np
import pytest
from matplotlib.colors import to_hex

from fairot.reporting import plot_group_histograms, plot_group_quantile_functions
from fairot.reporting._plots import MAX_OVERLAID, PALETTE
from tests.helpers import sized_groups as _groups


def test_histogram_axis_not_dominated_by_a_spike():
    rng = np.random.default_rng(2)
    g = np.repeat(["a", "b"], 500)
    s = np.where(g == "a", 0.0, rng.uniform(size=1000))  # group a: one huge bar at 0
    fig = plot_group_histograms(s, g, value_range=(0, 1))
    ax = fig.axes[0]
    heights, _ = np.histogram(s[g == "a"], bins=40, range=(0, 1), density=True)
    typical, _ = np.histogram(s[g == "b"], bins=40, range=(0, 1), density=True)
    top = ax.get_ylim()[1]
    assert top < heights.max() / 5  # the spike (40) is cut...
    assert top > typical.max()  # ...but the uniform group's bars (about 1) are whole
    assert any("tallest bar 40" in t.get_text() for t in ax.texts)
    legend = ax.get_legend()
    # The legend sits right of the axes, outside the data.
    assert legend.get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1


@pytest.mark.parametrize("k", [4, 12, 20])
@pytest.mark.parametrize("plot", [plot_group_histograms, plot_group_quantile_functions])
def test_plots_sorted_by_size_and_colours_never_repeat(k, plot):
    s, g, order = _groups(k)
    fig = plot(s, g)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    if k <= MAX_OVERLAID:
        assert len(axes) == 1
        labels = [t.get_text().split(" (n=")[0] for t in axes[0].get_legend().get_texts()]
        assert labels == order
        if plot is plot_group_histograms:
            colours = [to_hex(a.get_edgecolor()) for a in axes[0].patches]
        else:
            colours = [to_hex(a.get_color()) for a in axes[0].lines]
        assert len(set(colours)) == k and set(colours) <= {c.lower() for c in PALETTE}
    else:
        assert len(axes) == k
        assert [ax.get_title().split(" (n=")[0] for ax in axes] == order
        for ax in axes:
            artists = ax.patches if plot is plot_group_histograms else ax.lines
            assert len(artists) == 2  # everyone in grey, the group in one colour
