"""An audit: the fairness report of one set of predictions, printed and written to a folder."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from numpy.typing import ArrayLike

from fairot._validation import GroupsMode
from fairot.experiments._result import _jsonable, _markdown_table
from fairot.metrics import fairness_report
from fairot.metrics._report import Task
from fairot.reporting._plots import plot_group_histograms, plot_group_quantile_functions

SUMMARY_LABELS = {
    "err": "Err-.5 (error at threshold)",
    "mse": "MSE",
    "r2": "R²",
    "wass1": "Wass1 (sum of W1 to the W1 barycenter)",
    "sdd": "SDD (strong demographic disparity)",
    "spdd": "SPDD (strong pairwise demographic disparity)",
    "max_pairwise_w1": "largest pairwise W1",
    "max_pairwise_w2": "largest pairwise W2",
    "max_pairwise_w2_pair": "pair attaining it",
    "max_pairwise_winf": "largest pairwise W∞",
    "accuracy_std": "STD of group accuracies",
    "skewed_error_ratio": "SER (max error / min error)",
    "n_samples": "samples",
    "n_groups": "groups",
}


@dataclass
class Audit:
    """Result of :func:`audit`.

    Attributes
    ----------
    report : pandas.DataFrame
        Per-group table from :func:`fairot.metrics.fairness_report`.
    summary : dict
        Summary metrics (``report.attrs["summary"]``).
    title : str
        What was audited.
    figures : dict of str to matplotlib.figure.Figure
        ``score_histograms`` and ``quantile_functions``.
    """

    report: pd.DataFrame
    summary: dict[str, Any]
    title: str = "fairot audit"
    figures: dict[str, Any] = field(default_factory=dict)

    def to_text(self) -> str:
        """A plain-text rendering for the terminal."""
        lines = [
            self.title,
            "=" * len(self.title),
            "",
            self.report.to_string(float_format=lambda v: f"{v:.4f}"),
            "",
            "Summary:",
        ]
        width = max(len(v) for v in SUMMARY_LABELS.values())
        for key, value in self.summary.items():
            label = SUMMARY_LABELS.get(key, key)
            shown = f"{value:.4f}" if isinstance(value, float) and math.isfinite(value) else value
            lines.append(f"  {label:<{width}}  {shown}")
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The report as markdown, with links to the plots."""
        rows = pd.DataFrame(
            {
                "value": [
                    v if not isinstance(v, float) else round(v, 6) for v in self.summary.values()
                ]
            },
            index=[SUMMARY_LABELS.get(k, k) for k in self.summary],
        )
        rows.index.name = "metric"
        parts = [
            f"# {self.title}",
            "",
            "## Per group",
            "",
            _markdown_table(self.report),
            "",
            "## Summary",
            "",
            _markdown_table(rows),
            "",
        ]
        parts += [f"![{key}]({key}.png)" for key in self.figures]
        return "\n".join(parts) + "\n"

    def to_json(self) -> str:
        """Machine-readable output: the summary and the per-group rows."""
        per_group = self.report.reset_index().to_dict(orient="records")
        return json.dumps(
            {
                "title": self.title,
                "summary": _jsonable(self.summary),
                "groups": _jsonable(per_group),
            },
            indent=2,
        )

    def write(self, out_dir: str | Path) -> Path:
        """Write ``report.md``, ``metrics.json`` and the PNG plots to ``out_dir``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(self.to_markdown(), encoding="utf-8")
        (out / "metrics.json").write_text(self.to_json() + "\n", encoding="utf-8")
        for key, figure in self.figures.items():
            figure.savefig(out / f"{key}.png", dpi=110, bbox_inches="tight")
        return out


def audit(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    sensitive_features: Any,
    *,
    task: Task = "classification",
    groups: GroupsMode = "intersection",
    threshold: float = 0.5,
    title: str = "fairot audit",
    plots: bool = True,
) -> Audit:
    """Audit predictions for group unfairness: the report, its summary and plots.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Labels or responses; ``None`` audits the predictions alone.
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1] (classification) or predictions (regression).
    sensitive_features : array-like or DataFrame
        Group membership.
    task : {"classification", "regression"}, default="classification"
        Which metrics to compute.
    groups : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.
    threshold : float, default=0.5
        Decision threshold for classification accuracy.
    title : str, default="fairot audit"
        Heading of the report.
    plots : bool, default=True
        Draw the per-group histograms and quantile functions.

    Returns
    -------
    Audit
    """
    report = fairness_report(
        y_true, y_pred, sensitive_features, task=task, groups=groups, threshold=threshold
    )
    figures = {}
    if plots:
        value_range = (0.0, 1.0) if task == "classification" else None
        figures["score_histograms"] = plot_group_histograms(
            y_pred, sensitive_features, groups=groups, value_range=value_range
        )
        figures["quantile_functions"] = plot_group_quantile_functions(
            y_pred, sensitive_features, groups=groups
        )
    return Audit(report, dict(report.attrs["summary"]), title, figures)
