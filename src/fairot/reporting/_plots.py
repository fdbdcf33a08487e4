"""Figures of per-group score distributions."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from fairot._validation import GroupsMode, check_array_1d, check_sensitive_features
from fairot.transport import midpoint_grid, quantile_function


def _pyplot():
    # Imported lazily so that `import fairot` stays light; Agg because the CLI runs headless.
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _grouped_axes(scores: ArrayLike, sensitive_features: Any, groups: GroupsMode, ax: Any):
    """Validated values and groups, and the axes to draw on (a new figure when ``ax`` is None)."""
    values = check_array_1d(scores, "scores")
    enc = check_sensitive_features(sensitive_features, values.shape[0], groups=groups)
    if ax is None:
        _, ax = _pyplot().subplots(figsize=(7, 4))
    return values, enc, ax


def _label_axes(ax: Any, xlabel: str, ylabel: str, title: str):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small")
    return ax.figure


def plot_group_histograms(
    scores: ArrayLike,
    sensitive_features: Any,
    *,
    groups: GroupsMode = "intersection",
    bins: int = 40,
    value_range: tuple[float, float] | None = None,
    title: str = "Score distribution per group",
    ax: Any = None,
):
    """Overlaid density histograms of each group's scores.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Scores or predictions.
    sensitive_features : array-like or DataFrame
        Group membership.
    groups : {"intersection", "marginal"}, default="intersection"
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
    """
    values, enc, ax = _grouped_axes(scores, sensitive_features, groups, ax)
    edges = np.histogram_bin_edges(values, bins=bins, range=value_range)
    for name, idx in zip(enc.names, enc.indices(), strict=True):
        ax.hist(
            values[idx],
            bins=edges,
            density=True,
            histtype="step",
            linewidth=1.5,
            label=f"{name} (n={idx.shape[0]})",
        )
    return _label_axes(ax, "score", "density", title)


def plot_group_quantile_functions(
    scores: ArrayLike,
    sensitive_features: Any,
    *,
    groups: GroupsMode = "intersection",
    n_levels: int = 200,
    title: str = "Quantile function per group",
    ax: Any = None,
):
    """Each group's empirical quantile function :math:`Q_a(u)` on a common rank grid.

    Vertical distances between the curves are the pointwise transport costs; the area between two
    curves is their :math:`W_1` distance.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Scores or predictions.
    sensitive_features : array-like or DataFrame
        Group membership.
    groups : {"intersection", "marginal"}, default="intersection"
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
    """
    values, enc, ax = _grouped_axes(scores, sensitive_features, groups, ax)
    u = midpoint_grid(n_levels)
    for name, idx in zip(enc.names, enc.indices(), strict=True):
        ax.plot(u, quantile_function(values[idx], u), label=name, linewidth=1.5)
    return _label_axes(ax, "rank u", "quantile Q(u)", title)
