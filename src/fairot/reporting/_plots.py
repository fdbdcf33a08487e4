"""Figures of per-group score distributions and per-group metrics.

Internal surface: :func:`audit_metrics_figure` (the audit's rate chart), :func:`new_figure`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fairot.transport import midpoint_grid, quantile_function
from fairot.utils import PLAIN_TEXT, figure_label
from fairot.utils.arrays import check_array_1d
from fairot.utils.groups import GroupsMode
from fairot.utils.sensitive import check_sensitive_features

# A bar taller than this multiple of the typical (80th-percentile) bar height is a spike: the
# axis stops above the typical bars and the spike's height is written on it, so that one clipped
# score (e.g. many 0s) does not flatten every other group's histogram.
SPIKE_FACTOR = 3.0
#: Okabe & Ito's colour-blind-safe palette (2008), the yellow last (faint on white). With more
#: groups than colours, the score plots turn into small multiples: one panel per group against
#: everyone in grey, so no colour ever repeats and no curve hides another.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#F0E442")
MAX_OVERLAID = 6
POOLED_COLOR = "0.6"
#: Most groups a figure draws: beyond it, the largest groups only (every table lists them all),
#: so that a figure stays readable and its cost does not grow with thousands of groups.
MAX_PLOTTED_GROUPS = 30
PLOTTED_NOTE = "the {shown} largest of {total} groups"


def new_figure(width: float = 7.5, height: float = 4.0):
    """A matplotlib Figure not registered with pyplot.

    Audits keep their figures; pyplot would keep them alive too and warn past 20 open figures.
    A bare :class:`~matplotlib.figure.Figure` draws headless (Agg) and is freed with the audit.
    """
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _grouped_axes(scores: ArrayLike, sensitive_features: Any, group_mode: GroupsMode, ax: Any):
    """Validated values, the groups sorted by size (largest first), and the axes to draw on.

    A new figure when ``ax`` is None: one axes for up to :data:`MAX_OVERLAID` groups, else a
    grid of small multiples (then ``ax`` is an array with one panel per group).
    """
    values = check_array_1d(scores, "scores")
    enc = check_sensitive_features(sensitive_features, values.shape[0], group_mode=group_mode)
    groups = sorted(zip(enc.names, enc.indices(), strict=True), key=lambda item: -item[1].shape[0])
    # Names drawn are visible (no control character) and short; beyond MAX_PLOTTED_GROUPS
    # only the largest groups are drawn, and the title says so.
    groups = [(figure_label(name), idx) for name, idx in groups[:MAX_PLOTTED_GROUPS]]
    if ax is None:
        if len(groups) <= MAX_OVERLAID:
            ax = new_figure().subplots()
        else:
            cols = min(5, len(groups))
            rows = -(-len(groups) // cols)
            figure = new_figure(width=2.4 * cols + 0.6, height=1.9 * rows + 0.8)
            ax = figure.subplots(rows, cols, sharex=True, squeeze=False).ravel()
            for extra in ax[len(groups) :]:
                extra.set_visible(False)
    return values, groups, ax, enc.n_groups


def plotted_title(title: str, shown: int, total: int) -> str:
    """``title``, saying which groups are drawn when they are not all drawn."""
    return title if shown == total else f"{title} ({PLOTTED_NOTE.format(shown=shown, total=total)})"


def _small_multiples(axes: Any, values: np.ndarray, groups: list, draw: Any, title: str):
    """One panel per group (sorted by size): the group in colour, everyone in grey."""
    for panel, (name, idx) in zip(axes, groups, strict=False):
        draw(panel, values, POOLED_COLOR, "everyone", 1.0)
        draw(panel, values[idx], PALETTE[0], name, 1.6)
        panel.set_title(f"{name} (n={idx.shape[0]})", fontsize="small", **PLAIN_TEXT)
        panel.tick_params(labelsize="x-small")
        panel.grid(alpha=0.25)
    figure = axes[0].figure
    figure.suptitle(f"{title}: each group (blue) against everyone (grey)", fontsize="medium",
                    **PLAIN_TEXT)  # fmt: skip
    return figure


def _own_figure(ax: Any) -> bool:
    """Whether ``ax`` is the only axes of its figure (not a panel of the caller's layout)."""
    return len(ax.figure.axes) == 1


def _label_axes(ax: Any, xlabel: str, ylabel: str, title: str):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, **PLAIN_TEXT)
    if _own_figure(ax):
        # Outside the data: with many groups an inside legend hides the curves it explains.
        legend = ax.legend(
            fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False
        )
    else:
        # A panel among others: a legend outside would cover the next panel.
        legend = ax.legend(fontsize="small")
    # Group names are text: "$10K-$50K" is two dollar amounts, not maths.
    for text in legend.get_texts():
        text.update(PLAIN_TEXT)
    ax.grid(alpha=0.25)
    return ax.figure


def plot_group_histograms(
    scores: ArrayLike,
    sensitive_features: Any,
    *,
    group_mode: GroupsMode = "intersection",
    bins: int = 40,
    value_range: tuple[float, float] | None = None,
    title: str = "Score distribution per group",
    ax: Any = None,
):
    """Overlaid density histograms of each group's scores.

    At most :data:`MAX_PLOTTED_GROUPS` groups are drawn, the largest (the title says so);
    names are drawn as text (``$`` is no maths), shortened by :func:`fairot.utils.figure_label`.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Scores or predictions.
    sensitive_features : array-like, DataFrame or GroupEncoding
        Group membership.
        An encoding from :func:`fairot.utils.sensitive.check_sensitive_features` is used as it is.
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.
    bins : int, default=40
        Number of histogram bins.
    value_range : tuple of float, optional
        Range of the bins (defaults to the data's range).
    title : str
        Axes title.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made when omitted.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from fairot.reporting import plot_group_histograms
    >>> fig = plot_group_histograms([0.1, 0.2, 0.7, 0.9], ["a", "a", "b", "b"], bins=4)
    >>> fig.axes[0].get_title()
    'Score distribution per group'
    """
    values, groups, ax, total = _grouped_axes(scores, sensitive_features, group_mode, ax)
    title = plotted_title(title, len(groups), total)
    edges = np.histogram_bin_edges(values, bins=bins, range=value_range)
    if isinstance(ax, np.ndarray):

        def draw(panel, data, color, label, width):
            panel.hist(data, bins=edges, density=True, histtype="step", color=color,
                       linewidth=width, label=label)  # fmt: skip

        return _small_multiples(ax, values, groups, draw, title)
    heights = []
    for k, (name, idx) in enumerate(groups):
        density, _, _ = ax.hist(
            values[idx],
            bins=edges,
            density=True,
            histtype="step",
            linewidth=1.5,
            color=PALETTE[k % len(PALETTE)],
            label=f"{name} (n={idx.shape[0]})",
        )
        heights.append(density)
    _clip_spikes(ax, np.concatenate(heights))
    return _label_axes(ax, "score", "density", title)


def _clip_spikes(ax: Any, heights: np.ndarray) -> None:
    """Cap the density axis above the typical bars and say where and how tall the cut bars are."""
    positive = heights[heights > 0]
    # Panels sharing a y axis (the caller's layout) must keep one scale: leave them alone.
    if positive.size == 0 or len(ax.get_shared_y_axes().get_siblings(ax)) > 1:
        return
    cap = SPIKE_FACTOR * float(np.quantile(positive, 0.8))
    if heights.max() <= cap:
        return
    ax.set_ylim(0, cap)
    ax.text(
        0.99,
        0.98,
        f"axis cut at {cap:.3g}; tallest bar {heights.max():.3g}",
        transform=ax.transAxes,
        ha="right",
        va="top",
        fontsize="small",
        bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.85, "edgecolor": "0.7"},
    )


def plot_group_quantile_functions(
    scores: ArrayLike,
    sensitive_features: Any,
    *,
    group_mode: GroupsMode = "intersection",
    n_levels: int = 200,
    title: str = "Quantile function per group",
    ax: Any = None,
):
    """Each group's empirical quantile function :math:`Q_a(u)` on a common rank grid.

    Vertical distances between the curves are the pointwise transport costs; the area between two
    curves is their :math:`W_1` distance.
    At most :data:`MAX_PLOTTED_GROUPS` groups are drawn, the largest (the title says so).

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Scores or predictions.
    sensitive_features : array-like, DataFrame or GroupEncoding
        Group membership.
        An encoding from :func:`fairot.utils.sensitive.check_sensitive_features` is used as it is.
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.
    n_levels : int, default=200
        Number of ranks on the midpoint grid.
    title : str
        Axes title.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from fairot.reporting import plot_group_quantile_functions
    >>> fig = plot_group_quantile_functions([0.1, 0.2, 0.7, 0.9], ["a", "a", "b", "b"], n_levels=4)
    >>> [line.get_ydata().tolist() for line in fig.axes[0].lines]
    [[0.1, 0.1, 0.2, 0.2], [0.7, 0.7, 0.9, 0.9]]
    """
    values, groups, ax, total = _grouped_axes(scores, sensitive_features, group_mode, ax)
    title = plotted_title(title, len(groups), total)
    u = midpoint_grid(n_levels)
    if isinstance(ax, np.ndarray):

        def draw(panel, data, color, label, width):
            panel.plot(u, quantile_function(data, u), color=color, linewidth=width, label=label)

        return _small_multiples(ax, values, groups, draw, title)
    for k, (name, idx) in enumerate(groups):
        color = PALETTE[k % len(PALETTE)]
        ax.plot(u, quantile_function(values[idx], u), label=name, linewidth=1.5, color=color)
    return _label_axes(ax, "rank u", "quantile Q(u)", title)


def plot_group_metrics(
    estimates: Any,
    intervals: dict[str, Any] | None = None,
    *,
    metrics: list[str] | None = None,
    title: str = "Group metrics with 95% bootstrap intervals",
):
    """Dot-and-whisker chart of per-group metrics with their bootstrap intervals.

    The first :data:`MAX_PLOTTED_GROUPS` rows are drawn (the title says when there are more).

    Parameters
    ----------
    estimates : pandas.DataFrame
        One row per group, one column per metric (e.g. :func:`fairot.metrics.group_rates`).
    intervals : dict of str to pandas.DataFrame, optional
        For each metric, a frame indexed by group with columns ``low`` and ``high``
        (:attr:`fairot.metrics.BootstrapIntervals.groups`).
    metrics : list of str, optional
        Columns to draw, one panel each (default: every column).
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import pandas as pd
    >>> from fairot.reporting import plot_group_metrics
    >>> table = pd.DataFrame({"tpr": [0.7, 0.8]}, index=["a", "b"])
    >>> fig = plot_group_metrics(table)
    >>> len(fig.axes)
    1
    """
    metrics = list(estimates.columns) if metrics is None else metrics
    total = len(estimates.index)
    # The first MAX_PLOTTED_GROUPS rows (the audit passes the largest groups first), each name
    # drawn visible and short.
    estimates = estimates.iloc[:MAX_PLOTTED_GROUPS]
    title = plotted_title(title, len(estimates.index), total)
    names = [figure_label(n) for n in estimates.index]
    fig = new_figure(width=3.2 * max(len(metrics), 1) + 1.5, height=0.45 * len(names) + 1.6)
    axes = np.atleast_1d(fig.subplots(1, max(len(metrics), 1), sharey=True, squeeze=False)[0])
    rows = np.arange(len(names))
    for ax, metric in zip(axes, metrics, strict=False):
        values = estimates[metric].to_numpy(dtype=float)
        ax.plot(values, rows, "o", color="C0")
        if intervals and metric in intervals:
            band = intervals[metric].reindex(estimates.index)
            low, high = band["low"].to_numpy(float), band["high"].to_numpy(float)
            ax.hlines(rows, low, high, color="C0", linewidth=2, alpha=0.6)
        ax.set_title(figure_label(metric), fontsize="medium", **PLAIN_TEXT)
        ax.grid(axis="x", alpha=0.3)
        ax.set_yticks(rows, names, **PLAIN_TEXT)
    # Shared y: inverting once puts the first group at the top of every panel.
    axes[0].invert_yaxis()
    fig.suptitle(title, fontsize="medium", **PLAIN_TEXT)
    return fig


def audit_metrics_figure(table, rates, groups_only, intervals, confidence, direction=""):
    """Per-group rates, largest group first, with their exact intervals (bootstrap otherwise).

    ``direction`` (the audit's favourable-outcome line) is added to the title, so that a
    selection rate is never read without knowing which decision is favourable.
    """
    order = table.loc[groups_only, "size"].sort_values(ascending=False, kind="stable").index
    chart = _chart_metrics(rates)
    exact = {
        m: pd.DataFrame({"low": table[f"{m}_low"], "high": table[f"{m}_high"]})
        for m in chart
        if f"{m}_low" in table and table.loc[groups_only, f"{m}_low"].notna().any()
    }
    if exact:
        bands, how = exact, f"{confidence:.0%} Clopper-Pearson intervals"
    elif intervals is not None:
        bands, how = intervals.groups, f"{confidence:.0%} bootstrap intervals"
    else:
        bands, how = None, ""
    frame = rates.loc[order, chart] if chart else table.loc[order, ["mean_score"]]
    title = "Group metrics" + (f" with {how}" if how else "")
    title += f"\n{direction}" if direction else ""
    return plot_group_metrics(frame, bands, title=title)


def _chart_metrics(rates: pd.DataFrame) -> list[str]:
    preferred = ("selection_rate", "tpr", "fpr", "mae", "mean_residual")
    return [c for c in preferred if c in rates.columns]
