"""Text, markdown and JSON renderings of an :class:`~fairot.reporting.Audit`.

Internal surface: :func:`render_text`, :func:`render_markdown`, :func:`render_json`,
:func:`slugs` (the HTML page is ``_html.py``). Every user string is escaped for its medium:
:func:`fairot.utils.escape_terminal` in text, :func:`fairot.utils.escape_markdown` in markdown.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from fairot.reporting._conditional import strata_markdown, strata_text
from fairot.reporting._format import (
    SUMMARY_LABELS,
    TEXT_WIDTH,
    counts_as_integers,
    format_value,
    per_group_tables,
    text_table,
    wrap_text,
)
from fairot.reporting._sections import (
    extra_sections,
    interval_notes,
    render_markdown_section,
    render_text_section,
)
from fairot.reporting._verdict_block import verdict_lines, verdict_markdown, verdict_text
from fairot.reporting.artifacts import jsonable
from fairot.utils import (
    escape_markdown,
    escape_terminal,
    markdown_table,
    terminal_frame,
    terminal_text,
)

# MLflow accepts metric names of letters, digits, "_", "-", ".", " ", ":" and "/".
_MLFLOW_UNSAFE = re.compile(r"[^0-9A-Za-z_.\-/]+")


def render_text(self: Any) -> str:
    """A plain-text rendering for the terminal, no line wider than ``TEXT_WIDTH`` (100)."""
    # Every user string (title, group names in warnings and tables, the pair of a distance) is
    # escaped; terminal_text is the net over the whole page.
    title = escape_terminal(self.title)
    lines = [title, "=" * min(len(title), TEXT_WIDTH), ""]
    lines += verdict_text(self)  # the answer first, then the summary, then the detail
    for w in self.warnings:
        lines += wrap_text(f"warning: {escape_terminal(w)}")
    if self.warnings:
        lines.append("")
    # The per-group table in the blocks a terminal can show (it has about 35 columns).
    for caption, frame in per_group_tables(self.report):
        lines += [f"{caption}:"] * bool(caption) + text_table(terminal_frame(frame)) + [""]
    lines.append("Summary:")
    width = max(len(SUMMARY_LABELS.get(k, k)) for k in self.summary)
    bands = None if self.intervals is None else self.intervals.summary
    for key, value in self.summary.items():
        label = SUMMARY_LABELS.get(key, key)
        shown = escape_terminal(format_value(value))
        if bands is not None and key in bands.index:
            low, high = bands.loc[key, "low"], bands.loc[key, "high"]
            if np.isnan(low):
                shown += "  (interval not estimable: see below)"
            else:
                shown += f"  [{format_value(low)}, {format_value(high)}]"
        lines += wrap_text(f"  {label:<{width}}  {shown}", indent=width + 4)
    notes = interval_notes(self)
    if notes:
        lines.append("")
        for note in notes:
            lines += wrap_text(note)
    for section in extra_sections(self):
        lines += render_text_section(section)
    return terminal_text("\n".join(lines + strata_text(self.strata)))


def render_markdown(self: Any) -> str:
    """The report as markdown, with links to the plots."""
    summary = self.summary_table()
    summary.index = [SUMMARY_LABELS.get(k, k) for k in summary.index]
    summary.index.name = "metric"
    summary = summary.map(lambda v: format_value(v) if isinstance(v, (float, np.floating)) else v)
    parts = [f"# {escape_markdown(self.title)}", ""]
    parts += verdict_markdown(self, escape_markdown)
    parts += [f"> **Warning:** {escape_markdown(w)}" for w in self.warnings]
    if self.warnings:
        parts.append("")
    parts += [
        "## Summary",
        "",
        markdown_table(summary),
        "",
    ]
    for note in interval_notes(self):
        parts += [escape_markdown(note), ""]
    parts += ["## Per group", ""]
    for caption, frame in per_group_tables(self.report):
        if caption:
            parts += [f"**{escape_markdown(caption)}**", ""]
        parts += [markdown_table(counts_as_integers(frame).fillna(np.nan)), ""]
    for section in extra_sections(self):
        parts += render_markdown_section(section)
    parts += [f"![{key}]({key}.png)" for key in self.figures]
    return "\n".join(parts + strata_markdown(self.strata)) + "\n"


def render_json(self: Any) -> str:
    """Machine-readable output: settings, summary, intervals, per-group rows, warnings."""
    per_group = self.report.reset_index().to_dict(orient="records")
    payload = {
        "title": self.title,
        "verdict": [{"status": status, "text": text} for status, text in verdict_lines(self)],
        "settings": jsonable(self.settings),
        "summary": jsonable(self.summary),
        "groups": jsonable(per_group),
        "warnings": list(self.warnings),
        "verdicts": [
            {
                "standard": v.key,
                "title": v.title,
                "status": v.status,
                "passed": v.passed,
                "line": v.line,
                "definition": v.definition,
                "source": v.source,
                "table": jsonable(v.table.reset_index().to_dict(orient="records")),
            }
            for v in self.verdicts
        ],
        "provenance": jsonable(self.provenance),
    }
    if self.intervals is not None:
        payload["intervals"] = jsonable(self.intervals.summary.to_dict(orient="index"))
        payload["interval_notes"] = dict(self.intervals.notes)
        payload["interval_method"] = self.intervals.method
    if self.strata:
        payload["strata"] = {k: json.loads(a.to_json()) for k, a in self.strata.items()}
    return json.dumps(payload, indent=2)


def slugs(names: Any) -> list[str]:
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
