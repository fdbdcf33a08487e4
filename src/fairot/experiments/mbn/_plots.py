"""The MBN study's figures: margin and skewness trajectories, the margin sweep, paired differences.

Each returns a :class:`matplotlib.figure.Figure` (no pyplot state). Internal surface:
:func:`plot_trajectories`, :func:`plot_sweep`, :func:`plot_differences`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from fairot.experiments._seeds import CONFIDENCE
from fairot.experiments.mbn._constants import DIFFERENCE_LABELS, METHOD_LABELS


def plot_trajectories(curves: pd.DataFrame, prefix: str, ylabel: str, title: str) -> Figure:
    scenarios = list(dict.fromkeys(curves["scenario"]))
    methods = list(dict.fromkeys(curves["method"]))
    fig = Figure(figsize=(4 * len(scenarios), 3 * len(methods)), layout="constrained")
    axes = fig.subplots(len(methods), len(scenarios), squeeze=False, sharex=True)
    cols = sorted(c for c in curves.columns if c.startswith(prefix))
    for i, method in enumerate(methods):
        for j, scenario in enumerate(scenarios):
            ax = axes[i, j]
            part = curves[(curves["method"] == method) & (curves["scenario"] == scenario)]
            for col in cols:
                values = part[col]
                if values.notna().any():
                    smooth = values.rolling(25, min_periods=1).mean()
                    group = int(col.rsplit("_", 1)[1])
                    ax.plot(part["step"], smooth, color=f"C{group}", label=f"group {group}")
            ax.set_title(f"{METHOD_LABELS[method]} — {scenario}", fontsize=9)
            if j == 0:
                ax.set_ylabel(ylabel)
            if i == len(methods) - 1:
                ax.set_xlabel("training step")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(title)
    return fig


def plot_sweep(sweep: pd.DataFrame) -> Figure:
    scenarios = list(dict.fromkeys(sweep["scenario"]))
    fig = Figure(figsize=(4 * len(scenarios), 3.2), layout="constrained")
    axes = fig.subplots(1, len(scenarios), squeeze=False, sharey=True)[0]
    for ax, scenario in zip(axes, scenarios, strict=True):
        part = sweep[sweep["scenario"] == scenario]
        for col in sorted(c for c in part.columns if c.startswith("acc_g") and c[5:].isdigit()):
            group = int(col[5:])
            ax.errorbar(
                part["minority_margin"],
                part[col],
                yerr=[part[col] - part[f"{col}_lo"], part[f"{col}_hi"] - part[col]],
                marker="o",
                capsize=3,
                color=f"C{group}",
                label=f"group {group}",
            )
        ax.set_title(scenario)
        ax.set_xlabel("ArcFace margin of groups 1-3 (rad); group 0 at 0.3")
    axes[0].set_ylabel("verification accuracy (%)")
    axes[0].legend(fontsize=8)
    return fig


def plot_differences(paired: pd.DataFrame) -> Figure:
    scenarios = list(dict.fromkeys(paired["scenario"]))
    metrics = [m for m in ("ser", "std", "mean") if m in set(paired["metric"])]
    fig = Figure(figsize=(4 * len(metrics), 0.8 + 0.5 * len(paired) / len(metrics)))
    axes = fig.subplots(1, len(metrics), squeeze=False, sharey=True)[0]
    for ax, metric in zip(axes, metrics, strict=True):
        part = paired[paired["metric"] == metric].reset_index(drop=True)
        y = np.arange(len(part))[::-1]
        for yi, row in zip(y, part.itertuples(), strict=True):
            ax.errorbar(
                row.difference,
                yi,
                xerr=[[row.difference - row.ci_lo], [row.ci_hi - row.difference]],
                fmt="o",
                capsize=3,
                color=f"C{scenarios.index(row.scenario)}",
            )
        ax.axvline(0.0, color="0.5", lw=0.8)
        ax.set_title(f"{DIFFERENCE_LABELS[metric]}: MBN - baseline", fontsize=9)
        ax.set_yticks(
            y,
            [
                f"{s}: {METHOD_LABELS[t]} - {METHOD_LABELS[c]}"
                for s, t, c in zip(
                    part["scenario"], part["treatment"], part["control"], strict=True
                )
            ],
            fontsize=8,
        )
    fig.suptitle(f"Paired differences over seeds, mean and {100 * CONFIDENCE:.0f}% t interval")
    fig.set_layout_engine("constrained")
    return fig
