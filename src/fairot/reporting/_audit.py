"""An audit: the fairness report of one set of predictions, printed and written to a folder."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fairot.metrics import BootstrapIntervals
from fairot.metrics.checks import Task
from fairot.reporting import _audit_steps as steps
from fairot.reporting._audit_steps import (  # noqa: F401 (read here by tests)
    MSG_MIN_GROUP_SIZE,
    MSG_N_BOOTSTRAP,
    MSG_STANDARD_TASK,
    SMALL_GROUP_NOTE,
)
from fairot.reporting._conditional import add_strata
from fairot.reporting._html import render_fragment, render_page
from fairot.reporting._render import render_json, render_markdown, render_text, slugs
from fairot.reporting._standards import Verdict
from fairot.reporting.artifacts import write_artifacts
from fairot.utils.groups import GroupsMode

FORMATS = ("html", "md", "json")
MSG_FORMAT = "formats must be a subset of {choices}; got {value!r}."


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
        How the audit was run (task, threshold, bootstrap, groups excluded, reference group).
    verdicts : list of Verdict
        The rules of ``standards=``, each with its pass/fail line and its table.
    provenance : dict
        Date (UTC), versions, model, thresholds with their rationale, and what the caller adds
        (the command line, the input file's name, size and SHA-256).
    strata : dict of str to Audit
        With ``control_features``: the audit of every stratum (a section each in every
        rendering), its share of the rows in its ``settings["stratum_share"]``.

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
    verdicts: list[Verdict] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    strata: dict[str, Audit] = field(default_factory=dict)

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
        for name, slug in zip(self.report.index, slugs(self.report.index), strict=True):
            for column, value in self.report.loc[name].items():
                put(f"group/{slug}/{column}", value)
        return out

    # ------------------------------------------------------------------ renderings
    def to_text(self) -> str:
        """A plain-text rendering for the terminal."""
        return render_text(self)

    def to_markdown(self) -> str:
        """The report as markdown, with links to the plots."""
        return render_markdown(self)

    def to_json(self) -> str:
        """Machine-readable output: settings, summary, intervals, per-group rows, verdicts."""
        return render_json(self)

    def to_html(self) -> str:
        """One self-contained HTML page: inline CSS and inline SVG figures, nothing fetched."""
        return render_page(self).replace("\n</body>", f"{self._strata_html()}\n</body>", 1)

    def _repr_html_(self) -> str:
        return render_fragment(self) + self._strata_html()

    def _strata_html(self) -> str:
        """A section per stratum (each escaped by its own rendering)."""
        return "".join(f"\n{render_fragment(a)}" for a in self.strata.values())

    def write(
        self, out_dir: str | Path, *, formats: tuple[str, ...] = FORMATS, figures: bool = True
    ) -> Path:
        """Write ``report.html``, ``report.md``, ``metrics.json``, ``report.json`` and the plots.

        ``metrics.json`` is flat (name to number, for MLflow); ``report.json`` is
        :meth:`to_json`: settings, tables, verdicts and provenance.

        Every file is written atomically (complete or absent, never truncated).

        Parameters
        ----------
        out_dir : str or path-like
            Folder, created when missing.
        formats : tuple of {"html", "md", "json"}, default=all
            Which of ``report.html``, ``report.md`` and ``metrics.json`` + ``report.json`` to
            write.
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
            files["report.json"] = self.to_json() + "\n"
        return write_artifacts(out_dir, files, self.figures if figures else None)


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
    exclude_small_groups: bool | None = None,
    sample_weight: ArrayLike | None = None,
    reference: Any = None,
    standards: tuple[str, ...] | None = None,
    model: str | None = None,
    provenance_extra: dict[str, Any] | None = None,
    control_features: Any = None,
    constraint: str = "demographic_parity",
    favorable_outcome: int = 1,
) -> Audit:
    """Audit predictions for group unfairness: the report, its summary, intervals, rules, plots.

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
        Draw the per-group histograms, quantile functions and the metric chart (beyond 30
        groups the largest only, as the report says; names as text, shortened).
    n_bootstrap : int, default=200
        Bootstrap replicates for the summary intervals (stratified by group); 0 skips them.
        The intervals are bias-corrected (BC), so each contains its estimate or is reported as
        not estimable with the reason
        (:func:`fairot.metrics.resampling.bias_corrected_interval`). Left out, with a warning,
        beyond :data:`fairot.metrics.MAX_PAIRWISE_GROUPS` groups (a replicate couples every pair).
    confidence : float in (0, 1), default=0.95
        Coverage of the intervals (bootstrap, and Clopper-Pearson for the per-group rates).
    random_state : int or None, default=0
        Seed of the bootstrap.
    min_group_size : int, default=30
        Groups with fewer rows are too noisy to compare: a proportion on n rows has a standard
        error up to 0.5/sqrt(n), 0.09 at 30 rows.
    exclude_small_groups : bool or None, default=None
        ``True``: compute the headline (summary, intervals, impact ratios) without the rows of
        those groups; the per-group table still lists them, marked (an error if fewer than two
        groups remain). ``False``: include them. ``None`` (default): exclude them, unless fewer
        than two groups would remain, in which case every group is kept, with a warning.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights (e.g. survey weights): every share, mean, error, rate and
        distribution of the report and its summary is weighted; ``size`` still counts rows and
        the plots show the rows unweighted. The intervals are those of the weighted bootstrap
        (:func:`fairot.metrics.bootstrap_intervals` with ``sample_weight``); the per-group exact
        intervals and significance tests are left out (a weighted rate is not a binomial count).
    reference : group label or name, optional
        The group the ``disparate_impact`` column and the credit rule compare against; by
        default the most-selected group of the headline. The report says which and why.
    standards : tuple of {"four-fifths", "ll144", "credit", "distributional"}, optional
        Rules to apply, each with a verdict; by default ``("four-fifths", "distributional")``
        for classification and ``("distributional",)`` for regression.
    model : str, optional
        What produced the scores, for the provenance section.
    provenance_extra : dict, optional
        More provenance entries (the command line, the input file's name, size and SHA-256).
    control_features : array-like or DataFrame, optional
        Legitimate strata (fairlearn's name): every stratum is audited on its own (a section
        each, :attr:`Audit.strata`) and the summary adds the distributional metrics recombined
        over the strata with their shares of the rows (``sdd_given_control``, ...).
    constraint : {"demographic_parity", "equalized_odds", "equal_opportunity"}
        Default ``"demographic_parity"``.
        The criterion audited besides the rates: ``"equalized_odds"`` adds the strong
        equalized odds disparities (``seod``, ``speod``), ``"equal_opportunity"`` the equal
        opportunity ones (``seopd``, ``speopd``); both need labels.
    favorable_outcome : {1, 0}, default=1
        Which decision is favourable (AIF360's ``favorable_label``, for the decision): 1, the
        positive one (``score > threshold``: an approval); 0, the negative one (a risk score:
        "high risk", "default"). Every rule, the reference, ``disparate_impact`` and the DP
        ratio read the favourable rates; the verdict block states the reading, default too.

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
    >>> result.verdicts[0].status
    'FAIL'
    """
    arguments = dict(locals())  # the call as given: each stratum is audited with it
    options = steps.validate(
        y_true,
        **{k: v for k, v in arguments.items() if k in steps.AuditOptions.__dataclass_fields__},
    )
    data = steps.grouped(y_true, y_pred, sensitive_features, sample_weight, options)
    tabled = steps.table(data, options)
    headline = steps.summary(data, options, tabled)
    table, *reference = steps.counts(data, options, tabled, headline)
    bootstrap, limits = steps.bootstrap_and_limits(options, tabled, headline)
    warnings = headline.warnings + tabled.report.attrs.get("notes", []) + limits
    found = steps.intervals(data, options, headline) if bootstrap else None
    verdicts = steps.verdicts(data, options, table, headline, reference[0])
    figures = steps.figures(data, options, table, tabled, found)
    settings = steps.settings(data, options, tabled, headline, tuple(reference))
    prov = steps.audit_provenance(options)
    result = Audit(
        table, headline.summary, title, figures, found, warnings, settings, verdicts, prov
    )
    if control_features is not None:
        add_strata(result, audit, arguments)
    return result
