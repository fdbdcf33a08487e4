"""Plots that stay readable at 4, 12 and 20 groups (issue 24): sorted by size, a colour-blind-safe
palette that never repeats (small multiples beyond six groups), rendered by headless Chromium."""

import numpy as np
import pytest
from matplotlib.colors import to_hex

from fairot.reporting import audit, plot_group_histograms, plot_group_quantile_functions
from fairot.reporting._plots import MAX_OVERLAID, PALETTE
from tests.reporting.test_report_html import _render


def _groups(k, seed=0):
    rng = np.random.default_rng(seed)
    sizes = 20 + 7 * rng.permutation(k)  # distinct sizes, not in name order
    g = np.repeat([f"group {i:02d}" for i in range(k)], sizes)
    s = rng.beta(2, 3, g.size)
    order = [f"group {i:02d}" for i in np.argsort(-sizes, kind="stable")]
    return s, g, order


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


@pytest.mark.parametrize("k", [4, 12, 20])
def test_report_with_many_groups_renders_in_chromium(k, tmp_path):
    s, g, _ = _groups(k, seed=1)
    y = np.random.default_rng(2).integers(0, 2, g.size)
    result = audit(y, s, g, n_bootstrap=0, title="<b>many</b> groups")
    result.write(tmp_path, formats=("html",), figures=False)
    image, console = _render(tmp_path / "report.html", tmp_path, f"groups{k}")
    assert console == []
    rgb = image[..., :3]
    assert (rgb.min(axis=2) < 0.8).mean() > 0.02, "blank screenshot"
    assert "<b>many" not in (tmp_path / "report.html").read_text()
