"""Figures of the regression paper: fairness-accuracy paths and group quantile curves."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairot.metrics.plotting import new_axes, plot_path_table
from fairot.utils import PLAIN_TEXT, figure_label

__all__ = ["plot_path", "plot_quantile_curves"]


def plot_path(
    path: Any,
    *,
    x: str = "test_gap",
    y: str = "mse",
    label: str | None = None,
    annotate: bool = True,
    unadjusted: dict | None = None,
    ax=None,
):
    """Plot a fairness-accuracy path: accuracy against the fairness gap along the tolerances.

    The paper's Figures 1, 5, 7 and 8 (held-out MSE or R² against the test or grid gap).

    Parameters
    ----------
    path : FairnessAccuracyPath or pandas.DataFrame
        A path from :func:`~fairot.regression.fairness_accuracy_path`, or its ``table``.
    x, y : str, default="test_gap", "mse"
        Columns for the horizontal and vertical axes (e.g. ``"grid_gap"``, ``"r2"``).
    label : str, optional
        Legend label of the line.
    annotate : bool, default=True
        Write tau beside the first, middle and last points.
    unadjusted : dict, optional
        Values of the raw model (keys ``x`` and ``y``), drawn as a star; taken from the path
        when it is a :class:`FairnessAccuracyPath`.
    ax : matplotlib Axes, optional
        Where to draw; a new figure otherwise.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    A path's table (or the path itself) gives one line of accuracy against the gap:

    >>> import pandas as pd
    >>> from fairot.regression import plot_path
    >>> table = pd.DataFrame(
    ...     {"tau": [0.0, 0.5, 1.0], "test_gap": [0.05, 0.4, 0.9], "mse": [1.6, 1.2, 1.0]}
    ... )
    >>> fig = plot_path(table, label="ridge")
    >>> fig.axes[0].get_xlabel(), fig.axes[0].lines[0].get_ydata().tolist()
    ('test gap', [1.6, 1.2, 1.0])
    """
    return plot_path_table(
        path, x=x, y=y, label=label, annotate=annotate, unadjusted=unadjusted, ax=ax
    )


def plot_quantile_curves(
    latent_curves,
    adjusted_curves=None,
    *,
    grid=None,
    group_names=None,
    ax=None,
):
    """Plot each group's latent (dashed) and adjusted (solid) quantile curves.

    The paper's Figures 2-4 (where along the distribution each rule acts).

    Parameters
    ----------
    latent_curves : array-like of shape (n_groups, n_grid) or fitted WassersteinFairRegressor
        Latent curves; a fitted regressor gives its latent and adjusted curves, grid and group
        names.
    adjusted_curves : array-like of shape (n_groups, n_grid), optional
    grid : array-like of shape (n_grid,), optional
        Ranks; the midpoint grid by default.
    group_names : list of str, optional
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    Two groups' latent curves and their common adjusted curve (full fairness):

    >>> import numpy as np
    >>> from fairot.regression import plot_quantile_curves
    >>> latent = np.array([[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]])
    >>> adjusted = np.tile(latent.mean(axis=0), (2, 1))
    >>> fig = plot_quantile_curves(latent, adjusted, group_names=["a", "b"])
    >>> len(fig.axes[0].lines)  # a dashed and a solid curve per group
    4
    """
    if hasattr(latent_curves, "adjusted_curves_"):
        model = latent_curves
        latent_curves = model.latent_curves_
        adjusted_curves = model.adjusted_curves_ if adjusted_curves is None else adjusted_curves
        grid = model.grid_ if grid is None else grid
        group_names = list(model.group_names_) if group_names is None else group_names
    latent = np.asarray(latent_curves, dtype=float)
    if latent.ndim != 2:
        raise ValueError("latent_curves must have shape (n_groups, n_grid).")
    n_groups, n_grid = latent.shape
    grid = (np.arange(n_grid) + 0.5) / n_grid if grid is None else np.asarray(grid)
    # Group names are user strings: visible, short, drawn as text (no maths).
    names = [figure_label(n) for n in (group_names or [f"group {g}" for g in range(n_groups)])]
    fig, ax = new_axes(ax)
    for g in range(n_groups):
        (line,) = ax.plot(grid, latent[g], linestyle="--", linewidth=1, label=f"{names[g]} latent")
        if adjusted_curves is not None:
            ax.plot(
                grid,
                np.asarray(adjusted_curves)[g],
                color=line.get_color(),
                linewidth=1.5,
                label=f"{names[g]} adjusted",
            )
    ax.set_xlabel("rank u")
    ax.set_ylabel("quantile Q(u)")
    for text in ax.legend(fontsize=7).get_texts():
        text.update(PLAIN_TEXT)
    return fig
