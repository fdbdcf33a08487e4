"""The one figure of a fairness-accuracy path, for classifiers and regressors alike.

:func:`fairot.regression.plot_path` and :func:`fairot.classification.plot_path` draw through
:func:`plot_path_table` (they choose the default axes); :func:`new_axes` gives a figure without
pyplot.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from fairot.utils import PLAIN_TEXT, figure_label


def new_axes(ax):
    """``(figure, axes)``: those of ``ax``, or a new figure's (no pyplot, no GUI backend)."""
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure  # no pyplot: figures never touch a GUI backend

    fig = Figure(figsize=(5.5, 4.0), layout="constrained")
    return fig, fig.add_subplot()


def plot_path_table(
    path: Any,
    *,
    x: str,
    y: str,
    label: str | None = None,
    annotate: bool = True,
    unadjusted: dict | None = None,
    ax=None,
):
    """Plot column ``y`` against column ``x`` of a path's table, one point per tolerance.

    Parameters
    ----------
    path : object with ``table`` (and ``unadjusted``) attributes, or pandas.DataFrame
        A fairness-accuracy path, or its table.
    x, y : str
        Columns for the horizontal and vertical axes.
    label : str, optional
        Legend label of the line.
    annotate : bool, default=True
        Write tau beside the first, middle and last points.
    unadjusted : dict, optional
        Values of the raw model (keys ``x`` and ``y``), drawn as a star; taken from the path
        when it has them.
    ax : matplotlib Axes, optional
        Where to draw; a new figure otherwise.

    Returns
    -------
    matplotlib.figure.Figure
    """
    table = path if isinstance(path, pd.DataFrame) else path.table
    if unadjusted is None and not isinstance(path, pd.DataFrame):
        unadjusted = path.unadjusted or None
    for column in (x, y):
        if column not in table.columns:
            raise ValueError(
                f"the path has no column {column!r}; available: {list(table.columns)}."
            )
    fig, ax = new_axes(ax)
    shown = None if label is None else figure_label(label)
    ax.plot(table[x], table[y], marker="o", markersize=3, label=shown)
    if annotate and "tau" in table.columns:
        for i in sorted({0, len(table) // 2, len(table) - 1}):
            ax.annotate(
                f"τ={table['tau'].iloc[i]:.2g}",
                (table[x].iloc[i], table[y].iloc[i]),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=8,
            )
    if unadjusted and x in unadjusted and y in unadjusted:
        ax.plot(
            [unadjusted[x]],
            [unadjusted[y]],
            marker="*",
            color="red",
            markersize=12,
            linestyle="none",
            label="unadjusted",
        )
    # Column names and labels are text, never maths: "$" is a dollar (parse_math=False).
    ax.set_xlabel(figure_label(x.replace("_", " ")), **PLAIN_TEXT)
    ax.set_ylabel(figure_label(y.replace("_", " ")), **PLAIN_TEXT)
    if label is not None or unadjusted:
        for text in ax.legend(fontsize=8).get_texts():
            text.update(PLAIN_TEXT)
    return fig
