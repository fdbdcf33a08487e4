r"""The face-verification audit: per-group FMR and FNMR at one threshold, DET curves, MBN's summary.

:func:`audit_verification` reads a table of pair scores (score, same person or not, group) as
NIST's FRVT demographic reports do [1]_ — one threshold for everyone, set on all impostor pairs
for a target overall FMR, each group's FMR and FNMR there and their max/min ratios — beside the
MBN paper's 10-fold accuracy per group, its STD and its skewed error ratio [2]_. The numbers come
from :mod:`fairot.verification` (:func:`~fairot.verification.verification_rates`,
:func:`~fairot.verification.det_curves`,
:func:`~fairot.verification.verification_accuracy_by_group`); this module renders them as
text, Markdown, HTML and JSON with every user string escaped, and writes them through
:func:`fairot.reporting.artifacts.write_artifacts`.

References
----------
.. [1] Grother, P., Ngan, M. and Hanaoka, K. "Face Recognition Vendor Test (FRVT) Part 3:
   Demographic Effects", NISTIR 8280 (2019).
.. [2] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.validation import _num_samples

from fairot.reporting._format import format_value
from fairot.reporting._html import STYLE, _table, figure_svg
from fairot.reporting._plots import new_figure
from fairot.reporting.artifacts import jsonable, write_artifacts
from fairot.utils import (
    PLAIN_TEXT,
    escape_html,
    escape_markdown,
    escape_terminal,
    figure_label,
    markdown_table,
    terminal_table,
    terminal_text,
)
from fairot.utils.sensitive import check_sensitive_features
from fairot.verification import (
    GroupVerification,
    VerificationRates,
    det_curves,
    verification_accuracy_by_group,
    verification_rates,
)

#: What each headline number is, in the order the reports list them.
LABELS = {
    "threshold": "threshold (a pair matches when score ≥ it)",
    "target_fmr": "target overall FMR",
    "overall_fmr": "overall FMR at the threshold",
    "overall_fnmr": "overall FNMR at the threshold",
    "fmr_ratio": "FMR ratio (highest / lowest group)",
    "fmr_highest_group": "group with the highest FMR",
    "fmr_lowest_group": "group with the lowest FMR",
    "fnmr_ratio": "FNMR ratio (highest / lowest group)",
    "fnmr_highest_group": "group with the highest FNMR",
    "fnmr_lowest_group": "group with the lowest FNMR",
    "mean_accuracy": "mean 10-fold accuracy of the groups (MBN's Avg)",
    "accuracy_std": "STD of the group accuracies (MBN)",
    "skewed_error_ratio": "SER (max error / min error, MBN)",
}
GROUP_COLUMNS = (
    "n_genuine",
    "n_impostor",
    "false_matches",
    "fmr",
    "false_non_matches",
    "fnmr",
    "accuracy",
)
CAPTION = (
    "DET curve of each group: false non-match rate against false match rate over all "
    "thresholds (log axes; rates of 0 are off the axes). Dots: each group at the one global "
    "threshold."
)
#: Rule of the threshold, as the reports state it.
RULE = (
    "NIST FRVT reading: one threshold for every group, set on all impostor pairs so that the "
    "overall FMR is at most the target. With the N = {n} impostor scores sorted from the highest, "
    "at most k = {k} (the largest k with k/N ≤ target) may match; a pair matches when its score is "
    "strictly above the (k+1)-th highest impostor score, {cut!r} (impostor scores tied with it "
    "do not match, so ties only lower the FMR)."
)


def plot_det_curves(curves: dict[str, pd.DataFrame], rates: VerificationRates | None = None):
    """Per-group DET curves (FNMR against FMR, log axes) as a matplotlib Figure.

    Parameters
    ----------
    curves : dict of str to pandas.DataFrame
        :func:`fairot.verification.det_curves`'s result.
    rates : VerificationRates, optional
        Marks each group's operating point at the global threshold.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from fairot.verification import det_curves
    >>> from fairot.reporting import plot_det_curves
    >>> curves = det_curves([True, False] * 4, [0.9, 0.2, 0.6, 0.7, 0.8, 0.3, 0.5, 0.4],
    ...                     sensitive_features=list("aaaabbbb"))
    >>> plot_det_curves(curves).axes[0].get_xscale()
    'log'
    """
    ax = new_figure(7.5, 4.5).subplots()
    colors = [f"C{i}" for i in range(10)]
    styles = ("-", "--", ":", "-.")
    for g, (name, curve) in enumerate(curves.items()):
        keep = (curve["fmr"] > 0) & (curve["fnmr"] > 0)
        color, style = colors[g % 10], styles[(g // 10) % len(styles)]
        ax.plot(
            curve["fmr"][keep],
            curve["fnmr"][keep],
            color=color,
            linestyle=style,
            label=figure_label(name),
        )
        if rates is not None:
            row = rates.by_group.loc[name]
            if row["fmr"] > 0 and row["fnmr"] > 0:
                ax.plot([row["fmr"]], [row["fnmr"]], "o", color=color)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("false match rate (FMR)")
    ax.set_ylabel("false non-match rate (FNMR)")
    ax.set_title("DET curves by group")
    ax.grid(alpha=0.25, which="both")
    if curves:
        legend = ax.legend(
            fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False
        )
        # Group names are text: "$10K-$50K" is not maths (labels shortened to
        # FIGURE_LABEL_LENGTH characters; the tables keep the names whole).
        for text in legend.get_texts():
            text.update(PLAIN_TEXT)
    return ax.figure


@dataclass
class VerificationAudit:
    """A face-verification audit (:func:`audit_verification`).

    Attributes
    ----------
    title : str
    rates : VerificationRates
        FMR and FNMR per group at the global threshold, and their ratios.
    accuracy : GroupVerification
        MBN's 10-fold accuracy per group, its mean, STD and SER.
    curves : dict of str to pandas.DataFrame
        Each group's DET curve (:func:`fairot.verification.det_curves`).
    settings : dict
        ``target_fmr``, ``n_folds``, ``n_pairs``, ``n_groups``.
    notes : list of str
        What a reader must know to read the numbers (undefined or infinite ratios, coarse
        group rates).
    figures : dict of str to matplotlib.figure.Figure
        ``det_curves`` (unless made with ``plots=False``).

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.reporting import audit_verification
    >>> same = np.tile([True, False], 100)
    >>> score = np.where(same, 0.8, 0.2) + np.linspace(-0.5, 0.5, 200)
    >>> result = audit_verification(same, score, sensitive_features=np.repeat(["a", "b"], 100),
    ...                             target_fmr=0.05, plots=False)
    >>> result.summary()["fmr_highest_group"], result.by_group()["false_matches"].tolist()
    ('b', [0, 5])
    """

    title: str
    rates: VerificationRates
    accuracy: GroupVerification
    curves: dict[str, pd.DataFrame]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The headline numbers, keyed as :data:`LABELS`."""
        out = {k: v for k, v in self.rates.summary().items() if k != "allowed_false_matches"}
        out["mean_accuracy"] = self.accuracy.mean_accuracy
        out["accuracy_std"] = self.accuracy.std
        out["skewed_error_ratio"] = self.accuracy.ser
        return out

    def by_group(self) -> pd.DataFrame:
        """Per group: pair counts, false matches and non-matches, FMR, FNMR, 10-fold accuracy."""
        table = self.rates.by_group.copy()
        # Both come from one encoding of the groups, in its order.
        table["accuracy"] = self.accuracy.by_group["accuracy"].to_numpy()
        return table[list(GROUP_COLUMNS)]

    def rule(self) -> str:
        """The threshold rule with this audit's numbers."""
        cut = float(np.nextafter(self.rates.threshold, -np.inf))
        n = int(self.rates.by_group["n_impostor"].sum())
        return RULE.format(n=n, k=self.rates.allowed_false_matches, cut=cut)

    def to_text(self) -> str:
        """A plain-text rendering for the terminal."""
        title = escape_terminal(self.title)
        lines = [title, "=" * len(title), ""]
        lines += [terminal_table(self.by_group(), float_format=format_value), "", "Summary:"]
        width = max(len(v) for v in LABELS.values())
        for key, value in self.summary().items():
            # The highest and lowest groups are user strings: one escaped line each.
            lines.append(f"  {LABELS[key]:<{width}}  {escape_terminal(format_value(value))}")
        lines += ["", self.rule()]
        lines += [f"note: {escape_terminal(n)}" for n in self.notes]
        return terminal_text("\n".join(lines))

    def _summary_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(
            {"value": [format_value(v) for v in self.summary().values()]},
            index=[LABELS[k] for k in self.summary()],
        )
        frame.index.name = "metric"
        return frame

    def to_markdown(self) -> str:
        """A Markdown report; every group name and the title escaped."""
        parts = [f"# {escape_markdown(self.title)}", "", "## Summary", ""]
        parts += [markdown_table(self._summary_frame()), "", escape_markdown(self.rule()), ""]
        parts += [f"- {escape_markdown(n)}" for n in self.notes]
        if self.notes:
            parts.append("")
        parts += ["## Per group", "", markdown_table(self.by_group()), ""]
        parts += [f"![{key}]({key}.png)" for key in self.figures]
        return "\n".join(parts) + "\n"

    def to_json(self) -> str:
        """Settings, the headline numbers, the per-group rows and the notes, as JSON."""
        payload = {
            "title": self.title,
            "settings": self.settings,
            "rule": self.rule(),
            "summary": self.summary(),
            "groups": self.by_group().reset_index().to_dict(orient="records"),
            "notes": list(self.notes),
        }
        return json.dumps(jsonable(payload), indent=2)

    def to_html(self) -> str:
        """One self-contained page (inline CSS and SVG); every user string escaped."""
        settings = self.settings
        meta = (
            f"pairs: {settings['n_pairs']} · groups: {settings['n_groups']} · target FMR: "
            f"{settings['target_fmr']:g} · folds: {settings['n_folds']}"
        )
        title = escape_html(self.title)
        parts = [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">',
            f"<title>{title}</title>\n</head>\n<body>",
            f"<style>{STYLE}</style>",
            '<div class="fairot-audit">',
            f"<h1>{title}</h1>",
            f'<p class="meta">{escape_html(meta)}</p>',
            "<h2>Summary</h2>",
            _table(self._summary_frame()),
            f'<p class="meta">{escape_html(self.rule())}</p>',
        ]
        parts += [f'<div class="warning">{escape_html(n)}</div>' for n in self.notes]
        # object dtype: counts stay integers (a mixed row would turn them into floats)
        parts += ["<h2>Per group</h2>", _table(self.by_group().astype(object))]
        for key, figure in self.figures.items():
            caption = escape_html(CAPTION if key == "det_curves" else key)
            parts.append(f"<figure>{figure_svg(figure)}<figcaption>{caption}</figcaption></figure>")
        parts.append("</div>\n</body>\n</html>\n")
        return "\n".join(parts)

    def write(self, out_dir: str | Path) -> Path:
        """Write ``report.html``, ``report.md``, ``report.json`` and ``det_curves.png``.

        Everything is rendered before the first write, and each file is written atomically.
        """
        files = {
            "report.html": self.to_html(),
            "report.md": self.to_markdown(),
            "report.json": self.to_json() + "\n",
        }
        return write_artifacts(out_dir, files, self.figures)


def _notes(rates: VerificationRates, accuracy: GroupVerification) -> list[str]:
    notes = []
    for kind, error, ratio, (high, low) in (
        ("FMR", "false match", rates.fmr_ratio, rates.fmr_groups),
        ("FNMR", "false non-match", rates.fnmr_ratio, rates.fnmr_groups),
    ):
        if math.isnan(ratio):
            notes.append(f"No group has a {error} at the threshold: the {kind} ratio is undefined.")
        elif math.isinf(ratio):
            notes.append(
                f"Group {low!r} has {kind} 0 at the threshold while {high!r} does not: the {kind} "
                "ratio is infinite. Read the per-group counts."
            )
    for name, n_impostor in rates.by_group["n_impostor"].items():
        if n_impostor * rates.target_fmr < 1:
            notes.append(
                f"Group {name!r} has {int(n_impostor)} impostor pairs: its FMR moves in steps "
                f"of {1 / n_impostor:.2g}, coarser than the target {rates.target_fmr:g}."
            )
    if math.isinf(accuracy.ser):
        notes.append("A group's 10-fold accuracy is 1 (no error): SER is infinite.")
    return notes


def audit_verification(
    y_true,
    y_pred,
    *,
    sensitive_features,
    target_fmr: float = 1e-3,
    n_folds: int = 10,
    title: str | None = None,
    plots: bool = True,
) -> VerificationAudit:
    """Audit face-verification pair scores for demographic differentials.

    Parameters
    ----------
    y_true : array-like of bool, shape (n_pairs,)
        Whether each pair is the same person (genuine) or not (impostor).
    y_pred : array-like of shape (n_pairs,)
        Pair scores, e.g. cosine similarities (higher = more alike);
        :func:`fairot.face.evaluation.pair_scores` makes them from embeddings.
    sensitive_features : array-like of shape (n_pairs,) or (n_pairs, n_columns)
        Group of each pair; at least two groups, each with genuine and impostor pairs.
    target_fmr : float in (0, 1), default=1e-3
        Overall FMR at which the groups are read (:func:`fairot.verification.fmr_threshold`).
    n_folds : int, default=10
        Folds of MBN's per-group accuracy protocol (contiguous, in the given pair order).
    title : str, optional
    plots : bool, default=True
        Draw the DET curves.

    Returns
    -------
    VerificationAudit

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.reporting import audit_verification
    >>> rng = np.random.default_rng(0)
    >>> same = np.tile([True, False], 200)
    >>> score = np.where(same, 0.6, 0.1) + rng.normal(0, 0.15, 400)
    >>> group = np.repeat(["a", "b"], 200)
    >>> result = audit_verification(same, score, sensitive_features=group, target_fmr=0.01)
    >>> result.rates.allowed_false_matches
    2
    """
    # The groups are encoded once here; the three measures take the encoding as it is.
    groups = check_sensitive_features(sensitive_features, _num_samples(y_pred))
    rates = verification_rates(y_true, y_pred, sensitive_features=groups, target_fmr=target_fmr)
    accuracy = verification_accuracy_by_group(
        y_true, y_pred, sensitive_features=groups, n_folds=n_folds
    )
    curves = det_curves(y_true, y_pred, sensitive_features=groups)
    settings = {
        "target_fmr": rates.target_fmr,
        "n_folds": n_folds,
        "n_pairs": int(rates.by_group[["n_genuine", "n_impostor"]].to_numpy().sum()),
        "n_groups": len(rates.by_group),
    }
    figures = {"det_curves": plot_det_curves(curves, rates)} if plots else {}
    return VerificationAudit(
        title=title or "Face verification audit",
        rates=rates,
        accuracy=accuracy,
        curves=curves,
        settings=settings,
        notes=_notes(rates, accuracy),
        figures=figures,
    )
