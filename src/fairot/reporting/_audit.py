"""An audit: the fairness report of one set of predictions, printed and written to a folder."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fairot.metrics import BootstrapIntervals, bootstrap_intervals, fairness_report
from fairot.metrics.checks import Task, check_threshold
from fairot.metrics.resampling import rate_summary
from fairot.reporting._format import SUMMARY_LABELS, format_value
from fairot.reporting._html import render_fragment, render_page
from fairot.reporting._plots import (
    plot_group_histograms,
    plot_group_metrics,
    plot_group_quantile_functions,
)
from fairot.reporting._subsets import rates as _rates
from fairot.reporting._subsets import summary_without as _summary_without
from fairot.reporting._subsets import take as _take
from fairot.reporting.artifacts import jsonable, write_artifacts
from fairot.utils import escape_markdown, markdown_table
from fairot.utils.groups import GroupsMode

FORMATS = ("html", "md", "json")
MSG_MIN_GROUP_SIZE = "min_group_size must be an integer >= 1; got {value!r}."
MSG_N_BOOTSTRAP = "n_bootstrap must be 0 (no intervals) or an integer >= 10; got {value!r}."
MSG_FORMAT = "formats must be a subset of {choices}; got {value!r}."
SMALL_GROUP_NOTE = "n < {size}"
UNDEFINED_REASONS = {
    "tpr": "no positive labels; left out of the equalized-odds difference",
    "fpr": "no negative labels; left out of the equalized-odds difference",
    "precision": "no positive decisions at the threshold",
    "auc": "only one class among the labels",
}
# MLflow accepts metric names of letters, digits, "_", "-", ".", " ", ":" and "/".
_MLFLOW_UNSAFE = re.compile(r"[^0-9A-Za-z_.\-/]+")


@dataclass
class Audit:
    """Result of :func:`audit`.

    Attributes
    ----------
    report : pandas.DataFrame
        Per-group table: :func:`fairot.metrics.fairness_report`'s columns, the rates of
        :func:`fairot.metrics.group_rates`, and ``note`` (e.g. a group under ``min_group_size``).
    summary : dict
        Summary metrics, including the demographic-parity and equalized-odds differences.
    title : str
        What was audited.
    figures : dict of str to matplotlib.figure.Figure
        ``score_histograms``, ``quantile_functions`` and ``group_metrics``.
    intervals : BootstrapIntervals or None
        Bootstrap intervals of the summary metrics and per-group rates.
    warnings : list of str
        Caveats a reader must see: small groups, undefined rates.
    settings : dict
        How the audit was run (task, threshold, bootstrap, groups excluded).

    Examples
    --------
    >>> from fairot.reporting import audit
    >>> result = audit(None, [0.2, 0.9, 0.6, 0.4], ["a", "a", "b", "b"], plots=False,
    ...                n_bootstrap=0, min_group_size=1)
    >>> result.summary["demographic_parity_difference"]
    0.0
    >>> "<table" in result._repr_html_()
    True
    """

    report: pd.DataFrame
    summary: dict[str, Any]
    title: str = "fairot audit"
    figures: dict[str, Any] = field(default_factory=dict)
    intervals: BootstrapIntervals | None = None
    warnings: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ tables
    def summary_table(self) -> pd.DataFrame:
        """The summary as a frame: ``value`` and, with a bootstrap, ``ci_low`` and ``ci_high``."""
        table = pd.DataFrame({"value": pd.Series(self.summary, dtype=object)})
        if self.intervals is not None:
            bands = self.intervals.summary.reindex(table.index)
            table["ci_low"] = bands["low"]
            table["ci_high"] = bands["high"]
        table.index.name = "metric"
        return table

    def metrics(self) -> dict[str, float]:
        """Flat metric name to number, ready for MLflow's ``log_metrics``.

        Summary metrics keep their names (``sdd``), their intervals add ``sdd_ci_low`` /
        ``sdd_ci_high``, and per-group values are ``group/<group>/<column>``. Undefined or
        infinite values are left out (MLflow and JSON have no NaN); strings too.
        """
        out: dict[str, float] = {}

        def put(key: str, value: Any) -> None:
            if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)
            ):
                return
            if math.isfinite(float(value)):
                out[key] = float(value)

        for key, value in self.summary.items():
            put(key, value)
        if self.intervals is not None:
            for key, (low, high) in self.intervals.summary.iterrows():
                put(f"{key}_ci_low", low)
                put(f"{key}_ci_high", high)
        for name, slug in zip(self.report.index, _slugs(self.report.index), strict=True):
            for column, value in self.report.loc[name].items():
                put(f"group/{slug}/{column}", value)
        return out

    # ------------------------------------------------------------------ renderings
    def to_text(self) -> str:
        """A plain-text rendering for the terminal."""
        lines = [self.title, "=" * len(self.title), ""]
        lines += [f"warning: {w}" for w in self.warnings]
        if self.warnings:
            lines.append("")
        table = self.report.copy()
        lines += [table.to_string(float_format=format_value, na_rep="—"), "", "Summary:"]
        width = max(len(SUMMARY_LABELS.get(k, k)) for k in self.summary)
        bands = None if self.intervals is None else self.intervals.summary
        for key, value in self.summary.items():
            label = SUMMARY_LABELS.get(key, key)
            shown = format_value(value)
            if bands is not None and key in bands.index:
                low, high = bands.loc[key, "low"], bands.loc[key, "high"]
                shown += f"  [{format_value(low)}, {format_value(high)}]"
            lines.append(f"  {label:<{width}}  {shown}")
        if self.intervals is not None:
            lines += ["", self._interval_note()]
        return "\n".join(lines)

    def _interval_note(self) -> str:
        n = self.settings.get("n_bootstrap")
        return (
            f"[low, high]: {self.intervals.confidence:.0%} percentile-bootstrap interval over "
            f"{n} replicates resampled within each group."
        )

    def to_markdown(self) -> str:
        """The report as markdown, with links to the plots."""
        summary = self.summary_table()
        summary.index = [SUMMARY_LABELS.get(k, k) for k in summary.index]
        summary.index.name = "metric"
        summary = summary.map(
            lambda v: format_value(v) if isinstance(v, (float, np.floating)) else v
        )
        parts = [f"# {escape_markdown(self.title)}", ""]
        parts += [f"> **Warning:** {escape_markdown(w)}" for w in self.warnings]
        if self.warnings:
            parts.append("")
        parts += [
            "## Summary",
            "",
            markdown_table(summary),
            "",
        ]
        if self.intervals is not None:
            parts += [self._interval_note(), ""]
        parts += ["## Per group", "", markdown_table(self.report.fillna(np.nan)), ""]
        parts += [f"![{key}]({key}.png)" for key in self.figures]
        return "\n".join(parts) + "\n"

    def to_json(self) -> str:
        """Machine-readable output: settings, summary, intervals, per-group rows, warnings."""
        per_group = self.report.reset_index().to_dict(orient="records")
        payload = {
            "title": self.title,
            "settings": jsonable(self.settings),
            "summary": jsonable(self.summary),
            "groups": jsonable(per_group),
            "warnings": list(self.warnings),
        }
        if self.intervals is not None:
            payload["intervals"] = jsonable(self.intervals.summary.to_dict(orient="index"))
        return json.dumps(payload, indent=2)

    def to_html(self) -> str:
        """One self-contained HTML page: inline CSS and inline SVG figures, nothing fetched."""
        return render_page(self)

    def _repr_html_(self) -> str:
        return render_fragment(self)

    def write(
        self, out_dir: str | Path, *, formats: tuple[str, ...] = FORMATS, figures: bool = True
    ) -> Path:
        """Write ``report.html``, ``report.md``, ``metrics.json`` and the PNG plots.

        Every file is written atomically (complete or absent, never truncated).

        Parameters
        ----------
        out_dir : str or path-like
            Folder, created when missing.
        formats : tuple of {"html", "md", "json"}, default=all
            Which of ``report.html``, ``report.md`` and ``metrics.json`` to write.
        figures : bool, default=True
            Also write each figure as ``<key>.png`` (linked from ``report.md``).

        Returns
        -------
        pathlib.Path
            The folder.
        """
        bad = [f for f in formats if f not in FORMATS]
        if bad:
            raise ValueError(MSG_FORMAT.format(choices=FORMATS, value=bad))
        # Render everything before the first write, so a failure leaves no half report behind.
        files: dict[str, str] = {}
        if "html" in formats:
            files["report.html"] = self.to_html()
        if "md" in formats:
            files["report.md"] = self.to_markdown()
        if "json" in formats:
            files["metrics.json"] = json.dumps(self.metrics(), indent=2, sort_keys=True) + "\n"
        return write_artifacts(out_dir, files, self.figures if figures else None)


def _slugs(names: Any) -> list[str]:
    """MLflow-safe, unique group names: ``race=White, sex=Male`` → ``race_White_sex_Male``."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        slug = _MLFLOW_UNSAFE.sub("_", str(name)).strip("_") or "group"
        if slug in seen:
            seen[slug] += 1
            slug = f"{slug}_{seen[slug]}"
        else:
            seen[slug] = 0
        out.append(slug)
    return out


def _check_bootstrap(n_bootstrap: Any) -> int:
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)):
        raise ValueError(MSG_N_BOOTSTRAP.format(value=n_bootstrap))
    if n_bootstrap != 0 and n_bootstrap < 10:
        raise ValueError(MSG_N_BOOTSTRAP.format(value=n_bootstrap))
    return int(n_bootstrap)


def audit(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    sensitive_features: Any,
    *,
    task: Task = "classification",
    group_mode: GroupsMode = "intersection",
    threshold: float = 0.5,
    title: str = "fairot audit",
    plots: bool = True,
    n_bootstrap: int = 200,
    confidence: float = 0.95,
    random_state: int | None = 0,
    min_group_size: int = 30,
    exclude_small_groups: bool = False,
    sample_weight: ArrayLike | None = None,
) -> Audit:
    """Audit predictions for group unfairness: the report, its summary, intervals and plots.

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
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.
    threshold : float in [0, 1], default=0.5
        Decision threshold of the rates (``score > threshold`` is a positive decision).
    title : str, default="fairot audit"
        Heading of the report.
    plots : bool, default=True
        Draw the per-group histograms, quantile functions and the metric chart.
    n_bootstrap : int, default=200
        Bootstrap replicates for the intervals (stratified by group); 0 skips them.
    confidence : float in (0, 1), default=0.95
        Coverage of the intervals.
    random_state : int or None, default=0
        Seed of the bootstrap.
    min_group_size : int, default=30
        Groups with fewer samples get a warning: their rates are too noisy to compare.
    exclude_small_groups : bool, default=False
        Compute the summary and intervals without the rows of those groups (the per-group table
        still lists them, marked).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights (e.g. survey weights): every share, mean, error, rate and
        distribution of the report and its summary is weighted; ``size`` still counts rows and
        the plots show the rows unweighted. The intervals are those of the weighted bootstrap
        (:func:`fairot.metrics.bootstrap_intervals` with ``sample_weight``).

    Returns
    -------
    Audit

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.reporting import audit
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(["a", "b"], 100)
    >>> s = np.clip(rng.normal(0.4 + 0.2 * (g == "b"), 0.1), 0, 1)
    >>> result = audit(None, s, g, plots=False, n_bootstrap=20)
    >>> sorted(result.intervals.summary.index)[:3]
    ['demographic_parity_difference', 'demographic_parity_ratio', 'max_pairwise_w2']
    """
    if task == "classification":
        threshold = check_threshold(threshold)
    n_bootstrap = _check_bootstrap(n_bootstrap)
    if (
        isinstance(min_group_size, bool)
        or not isinstance(min_group_size, (int, np.integer))
        or min_group_size < 1
    ):
        raise ValueError(MSG_MIN_GROUP_SIZE.format(value=min_group_size))
    report = fairness_report(
        y_true,
        y_pred,
        sensitive_features=sensitive_features,
        task=task,
        group_mode=group_mode,
        threshold=threshold,
        sample_weight=sample_weight,
    )
    rates = _rates(y_true, y_pred, sensitive_features, sample_weight, task, group_mode, threshold)
    groups_only = report.index[:-1]
    # A rate the report already has (``rmse`` of a regression with responses) is the same number;
    # the report's column is kept, since it also holds the pooled ("overall") value.
    table = report.join(rates.drop(columns=report.columns.intersection(rates.columns)), how="left")
    small = [g for g in groups_only if table.loc[g, "size"] < min_group_size]
    table["note"] = ["" for _ in table.index]
    for g in small:
        table.loc[g, "note"] = SMALL_GROUP_NOTE.format(size=min_group_size)
    summary: dict[str, Any] = dict(report.attrs["summary"])

    warnings = []
    if small:
        what = "excluded from the summary" if exclude_small_groups else "kept in the summary"
        listed = ", ".join(f"{g} (n={int(table.loc[g, 'size'])})" for g in small)
        warnings.append(
            f"{len(small)} group(s) under min_group_size={min_group_size} samples ({listed}): "
            f"their metrics are noisy; {what}."
        )
    summary_rows = None
    if small and exclude_small_groups:
        summary_rows, summary = _summary_without(
            y_true,
            y_pred,
            sensitive_features,
            sample_weight,
            small,
            min_group_size,
            task,
            group_mode,
            threshold,
        )
    y_s, p_s, sf_s, w_s = _take(y_true, y_pred, sensitive_features, sample_weight, summary_rows)
    rates_s = (
        rates if summary_rows is None else _rates(y_s, p_s, sf_s, w_s, task, group_mode, threshold)
    )
    summary.update(
        {
            k: float(v[0])
            for k, v in rate_summary(
                {c: rates_s[c].to_numpy()[None, :] for c in rates_s.columns}, task
            ).items()
        }
    )
    summary = _ordered(summary)
    for column, reason in UNDEFINED_REASONS.items():
        if column in rates.columns and rates[column].isna().any():
            names = ", ".join(map(str, rates.index[rates[column].isna()]))
            warnings.append(f"{column} is undefined for {names} ({reason}).")
    intervals = None
    if n_bootstrap:
        intervals = bootstrap_intervals(
            y_s,
            p_s,
            sensitive_features=sf_s,
            task=task,
            group_mode=group_mode,
            threshold=threshold,
            n_bootstrap=n_bootstrap,
            confidence=confidence,
            random_state=random_state,
            sample_weight=w_s,
        )
    figures = {}
    if plots:
        value_range = (0.0, 1.0) if task == "classification" else None
        figures["score_histograms"] = plot_group_histograms(
            y_pred, sensitive_features, group_mode=group_mode, value_range=value_range
        )
        figures["quantile_functions"] = plot_group_quantile_functions(
            y_pred, sensitive_features, group_mode=group_mode
        )
        chart = _chart_metrics(rates)
        figures["group_metrics"] = plot_group_metrics(
            rates[chart] if chart else table.loc[groups_only, ["mean_score"]],
            None if intervals is None else intervals.groups,
            title=(
                f"Group metrics with {confidence:.0%} bootstrap intervals"
                if intervals is not None
                else "Group metrics"
            ),
        )
    settings = {
        "task": task,
        "group_mode": group_mode,
        "threshold": threshold,
        "n_bootstrap": n_bootstrap,
        "confidence": confidence,
        "random_state": random_state,
        "min_group_size": min_group_size,
        "excluded_groups": [str(g) for g in small] if exclude_small_groups else [],
        "weighted": sample_weight is not None,
    }
    return Audit(table, summary, title, figures, intervals, warnings, settings)


def _chart_metrics(rates: pd.DataFrame) -> list[str]:
    preferred = ("selection_rate", "tpr", "fpr", "mae", "mean_residual")
    return [c for c in preferred if c in rates.columns]


def _ordered(summary: dict[str, Any]) -> dict[str, Any]:
    """Summary in reading order: sizes, accuracy, the papers' metrics, then the rate gaps."""
    order = list(SUMMARY_LABELS)
    return dict(
        sorted(summary.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
    )
