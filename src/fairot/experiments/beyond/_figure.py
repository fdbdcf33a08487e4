"""The ``beyond-dp`` figure: accuracy against the EO difference at .5 and the strong EO one."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

#: x-axes of the figure's two rows: (column of the summary, axis label)
AXES = (
    ("EO difference at .5", "EO difference at 0.5 (test)"),
    ("strong EO disparity", "strong EO disparity (test)"),
)


def beyond_figure(summary: pd.DataFrame) -> Figure:
    """One column per data set; each method's mean over seeds, bars one sd either way.

    ``summary`` has the columns ``dataset``, ``method`` and ``<metric> mean`` / ``<metric> sd``
    of ``Err-.5``, ``EO difference at .5`` and ``strong EO disparity``; accuracy is
    ``1 - Err-.5``. A missing sd (one seed) draws no bar.
    """
    datasets = list(dict.fromkeys(summary["dataset"]))
    methods = list(dict.fromkeys(summary["method"]))
    fig = Figure(figsize=(4.2 * len(datasets), 7.6))
    axes = fig.subplots(len(AXES), len(datasets), squeeze=False)
    markers = "osD^v<>Ph*X"
    for col, dataset in enumerate(datasets):
        rows = summary[summary["dataset"] == dataset].set_index("method")
        for row, (metric, label) in enumerate(AXES):
            ax = axes[row, col]
            for i, method in enumerate(methods):
                if method not in rows.index:
                    continue
                r = rows.loc[method]
                ax.errorbar(
                    r[f"{metric} mean"],
                    1.0 - r["Err-.5 mean"],
                    xerr=_bar(r[f"{metric} sd"]),
                    yerr=_bar(r["Err-.5 sd"]),
                    fmt=markers[i % len(markers)],
                    color=f"C{i % 10}",
                    capsize=2,
                    label=method,
                )
            ax.set_xlabel(label)
            ax.set_ylabel("accuracy at 0.5 (test)")
            ax.grid(alpha=0.3)
            if row == 0:
                ax.set_title(dataset)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8)
    fig.suptitle("Equalized odds: accuracy against the EO difference at 0.5 and at every threshold")
    fig.tight_layout(rect=(0, 0.1, 1, 0.97))
    return fig


def _bar(sd) -> float | None:
    return None if pd.isna(sd) else float(sd)
