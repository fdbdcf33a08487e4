"""Several audits of the same rows side by side: the raw and the mitigated model on one page.

:func:`compare_audits` takes audits already computed (by :func:`fairot.reporting.audit`, one per
model, on the same held-out rows) and lays their summaries and per-group tables next to each
other, with the change of every summary metric. It computes no metric itself, so every number on
the page is the number of the single audit it comes from. ``fairot mitigate`` and ``fairot demo``
write it as ``report.html``, ``report.md`` and ``report.json``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairot.reporting._audit import Audit
from fairot.reporting._format import (
    SUMMARY_LABELS,
    TEXT_WIDTH,
    counts_as_integers,
    format_value,
    text_table,
    wrap_text,
)
from fairot.reporting._html import STYLE, _table, figure_svg
from fairot.reporting._verdict_block import (
    VERDICT_HEADING,
    VERDICT_STYLE,
    verdict_lines,
    wrap_lines,
)
from fairot.reporting.artifacts import jsonable, write_artifacts
from fairot.utils import (
    escape_html,
    escape_markdown,
    escape_terminal,
    markdown_table,
    terminal_text,
)

FORMATS = ("html", "md", "json")
#: Per-group columns shown side by side (those an audit has).
GROUP_COLUMNS = ("size", "mean_score", "w1_to_pooled", "accuracy", "selection_rate", "tpr", "fpr")
MSG_AUDITS = "audits must map at least two names to Audit objects; got {value!r}."
MSG_ROWS = (
    "the audits must cover the same rows: {first!r} has {n} samples and groups {groups}, "
    "{other!r} has {m} and {other_groups}."
)
MSG_FORMAT = "formats must be a subset of {choices}; got {value!r}."


@dataclass
class AuditComparison:
    """Result of :func:`compare_audits`.

    Attributes
    ----------
    audits : dict of str to Audit
        The audits compared, in column order (e.g. ``{"raw": ..., "mitigated": ...}``).
    title : str
        What was compared.
    notes : list of str
        Lines shown under the title (how the rows were chosen, what was fitted where).
    alerts : list of str
        Lines the verdict block opens with (e.g. why ``fairot mitigate`` refused to write a
        degenerate model).

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.reporting import audit, compare_audits
    >>> g = np.repeat(["a", "b"], 40)
    >>> raw = np.r_[np.linspace(0.1, 0.5, 40), np.linspace(0.4, 0.9, 40)]
    >>> fair = np.r_[np.linspace(0.2, 0.7, 40), np.linspace(0.2, 0.7, 40)]
    >>> page = compare_audits(
    ...     {
    ...         "raw": audit(None, raw, g, plots=False, n_bootstrap=0),
    ...         "fair": audit(None, fair, g, plots=False, n_bootstrap=0),
    ...     }
    ... )
    >>> list(page.summary_table().columns)
    ['raw', 'fair', 'change']
    """

    audits: dict[str, Audit]
    title: str = "fairot comparison"
    notes: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)

    def verdict_lines(self) -> list[tuple[str, str]]:
        """The verdict block: the alerts, the direction once, each audit's verdicts by name."""
        lines = [("ALERT", a) for a in self.alerts]
        seen = set()
        for name, result in self.audits.items():
            for status, text in verdict_lines(result):
                if status == "NOTE" and text.startswith("Favourable outcome"):
                    if text not in seen:
                        seen.add(text)
                        lines.append((status, text))
                    continue
                lines.append((status, f"{name}: {text}"))
        return lines

    def summary_table(self) -> pd.DataFrame:
        """One row per summary metric, one column per audit, and the change last minus first."""
        names = list(self.audits)
        keys: list[str] = []
        for result in self.audits.values():
            keys += [k for k in result.summary if k not in keys]
        table = pd.DataFrame(
            {name: [self.audits[name].summary.get(k, np.nan) for k in keys] for name in names},
            index=pd.Index(keys, name="metric"),
            dtype=object,
        )
        first, last = table[names[0]], table[names[-1]]
        numeric = [
            isinstance(a, (int, float, np.number)) and isinstance(b, (int, float, np.number))
            and not isinstance(a, bool)
            for a, b in zip(first, last, strict=True)
        ]  # fmt: skip
        table["change"] = [
            float(b) - float(a) if ok and k not in ("n_samples", "n_groups") else np.nan
            for k, a, b, ok in zip(keys, first, last, numeric, strict=True)
        ]
        return table

    def group_table(self) -> pd.DataFrame:
        """Per-group columns of every audit side by side (``<column> (<audit>)``).

        The group sizes, the same in every audit, appear once.
        """
        first = next(iter(self.audits.values()))
        parts = {"size": first.report["size"]} if "size" in first.report.columns else {}
        for column in GROUP_COLUMNS[1:]:
            for name, result in self.audits.items():
                if column in result.report.columns:
                    parts[f"{column} ({name})"] = result.report[column]
        table = pd.DataFrame(parts)
        table.index.name = "group"
        return table

    def _labelled_summary(self) -> pd.DataFrame:
        table = self.summary_table()
        table.index = [SUMMARY_LABELS.get(k, k) for k in table.index]
        table.index.name = "metric"
        return table

    def warnings(self) -> list[str]:
        """Every audit's warnings, prefixed with its name."""
        return [f"{name}: {w}" for name, result in self.audits.items() for w in result.warnings]

    def to_text(self) -> str:
        """A plain-text rendering for the terminal."""
        title = escape_terminal(self.title)
        lines = [title, "=" * min(len(title), TEXT_WIDTH), "", VERDICT_HEADING]
        lines += wrap_lines(self.verdict_lines())
        lines.append("")
        for text in [*self.notes, *(f"warning: {w}" for w in self.warnings())]:
            lines += wrap_text(escape_terminal(text))
        table = self._labelled_summary()
        # Text rows (the pair attaining a distance) make the terminal table too wide.
        table = table[[not isinstance(v, str) for v in table.iloc[:, 0]]]
        lines += ["", *text_table(table)]
        # The last filter of the page: no control character of a user string reaches the terminal.
        return terminal_text("\n".join(lines))

    def to_markdown(self) -> str:
        """The comparison as markdown: the summaries side by side, then per group (no plots)."""
        fmt = lambda v: format_value(v) if isinstance(v, (float, np.floating)) else v  # noqa: E731
        parts = [f"# {escape_markdown(self.title)}", "", f"## {VERDICT_HEADING}", ""]
        parts += [f"- **{st}** {escape_markdown(text)}" for st, text in self.verdict_lines()]
        parts += [""] + [escape_markdown(n) + "  " for n in self.notes]
        parts += [f"> **Warning:** {escape_markdown(w)}" for w in self.warnings()]
        parts += ["", "## Summary", "", markdown_table(self._labelled_summary().map(fmt)), ""]
        groups = counts_as_integers(self.group_table()).map(fmt)
        parts += ["## Per group", "", markdown_table(groups), ""]
        return "\n".join(parts) + "\n"

    def to_json(self) -> str:
        """Summary per audit, the change, the per-group rows of each audit and the warnings."""
        payload = {
            "title": self.title,
            "verdict": [{"status": st, "text": text} for st, text in self.verdict_lines()],
            "notes": list(self.notes),
            "audits": {
                name: {
                    "title": result.title,
                    "settings": jsonable(result.settings),
                    "summary": jsonable(result.summary),
                    "groups": jsonable(result.report.reset_index().to_dict(orient="records")),
                }
                for name, result in self.audits.items()
            },
            "change": jsonable(self.summary_table()["change"].to_dict()),
            "warnings": self.warnings(),
        }
        return json.dumps(payload, indent=2)

    def to_html(self) -> str:
        """One self-contained page: the summaries side by side, per group, each audit's plots."""
        parts = [
            f"<style>{STYLE}{VERDICT_STYLE}</style>",
            '<div class="fairot-audit">',
            f"<h1>{escape_html(self.title)}</h1>",
            f'<section class="verdict" id="verdict"><h2>{VERDICT_HEADING}</h2>'
            + "".join(
                f'<p><span class="{st}">{st}</span> {escape_html(text)}</p>'
                for st, text in self.verdict_lines()
            )
            + "</section>",
        ]
        parts += [f'<p class="meta">{escape_html(n)}</p>' for n in self.notes]
        parts += [f'<div class="warning">⚠ {escape_html(w)}</div>' for w in self.warnings()]
        parts += ["<h2>Summary</h2>", _table(self._labelled_summary())]
        parts += ["<h2>Per group</h2>", _table(self.group_table())]
        for name, result in self.audits.items():
            if result.figures:
                parts.append(f"<h2>Figures: {escape_html(name)}</h2>")
            for key, figure in result.figures.items():
                caption = escape_html(f"{name}: {key}")
                parts.append(f"<figure>{figure_svg(figure)}<figcaption>{caption}</figcaption>")
                parts.append("</figure>")
        parts.append("</div>")
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{escape_html(self.title)}</title>\n</head>\n<body>\n"
            + "\n".join(parts)
            + "\n</body>\n</html>\n"
        )

    def write(
        self, out_dir: str | Path, *, formats: tuple[str, ...] = FORMATS, figures: bool = True
    ) -> Path:
        """Write ``report.html``, ``report.md``, ``report.json`` and the PNG plots, atomically.

        Parameters
        ----------
        out_dir : str or path-like
            Folder, created when missing.
        formats : tuple of {"html", "md", "json"}, default=all
        figures : bool, default=True
            Also write each audit's figures as ``<audit>_<key>.png``.

        Returns
        -------
        pathlib.Path
        """
        bad = [f for f in formats if f not in FORMATS]
        if bad:
            raise ValueError(MSG_FORMAT.format(choices=FORMATS, value=bad))
        render = {"html": self.to_html, "md": self.to_markdown, "json": self.to_json}
        files = {f"report.{f}": render[f]() for f in formats}
        plots = {
            f"{_slug(name)}_{key}": figure
            for name, result in self.audits.items()
            for key, figure in result.figures.items()
        }
        return write_artifacts(out_dir, files, plots if figures else None)


def _slug(name: str) -> str:
    text = "".join(c if c.isalnum() or c in "-_" else "-" for c in str(name)).strip("-")
    return text or "audit"


def compare_audits(
    audits: Mapping[str, Audit],
    *,
    title: str = "fairot comparison",
    notes: Any = (),
    alerts: Any = (),
) -> AuditComparison:
    """Lay audits of the same rows side by side (e.g. the raw and the mitigated model).

    Parameters
    ----------
    audits : mapping of str to Audit
        At least two audits from :func:`fairot.reporting.audit`, of the same rows and groups,
        in the order of the columns; the change is last minus first.
    title : str, default="fairot comparison"
    notes : sequence of str, default=()
        Lines shown under the title (escaped in every format).
    alerts : sequence of str, default=()
        Lines that open the verdict block (escaped in every format), before each audit's
        verdicts and the direction (the favourable outcome) they read.

    Returns
    -------
    AuditComparison

    Examples
    --------
    >>> from fairot.reporting import audit, compare_audits
    >>> groups = ["a", "a", "b", "b"]
    >>> kwargs = dict(plots=False, n_bootstrap=0, min_group_size=1)
    >>> raw = audit(None, [0.2, 0.9, 0.6, 0.7], groups, **kwargs)
    >>> fair = audit(None, [0.2, 0.9, 0.2, 0.9], groups, **kwargs)
    >>> table = compare_audits({"raw": raw, "fair": fair}).summary_table()
    >>> float(table.loc["wass1", "raw"]) > 0, float(table.loc["wass1", "fair"])
    (True, 0.0)
    """
    if not isinstance(audits, Mapping) or len(audits) < 2:
        raise ValueError(MSG_AUDITS.format(value=type(audits).__name__))
    if not all(isinstance(a, Audit) for a in audits.values()):
        raise ValueError(MSG_AUDITS.format(value=[type(a).__name__ for a in audits.values()]))
    items = list(audits.items())
    first_name, first = items[0]
    for name, other in items[1:]:
        same = other.summary.get("n_samples") == first.summary.get("n_samples") and list(
            other.report.index
        ) == list(first.report.index)
        if not same:
            raise ValueError(
                MSG_ROWS.format(
                    first=first_name,
                    n=first.summary.get("n_samples"),
                    groups=list(first.report.index),
                    other=name,
                    m=other.summary.get("n_samples"),
                    other_groups=list(other.report.index),
                )
            )
    return AuditComparison(
        dict(audits),
        title=str(title),
        notes=[str(n) for n in notes],
        alerts=[str(a) for a in alerts],
    )
