"""The audit's sections beyond the summary and the per-group table, in a format-neutral form.

Internal surface: :func:`extra_sections`, :func:`interval_notes`, :func:`render_markdown_section`,
:func:`render_text_section`. A section is ``(heading, paragraphs, tables)`` with ``tables`` a
list of ``(caption, DataFrame)``; the text, markdown and HTML renderings each draw it, escaping
every user string (group names, column names, file names) their own way.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairot.reporting._format import (
    SUMMARY_LABELS,
    TEXT_WIDTH,
    counts_as_integers,
    format_value,
    text_table,
    wrap_text,
)
from fairot.reporting._provenance import GLOSSARY
from fairot.utils import escape_markdown, escape_terminal, markdown_table, terminal_frame

Section = tuple[str, list[str], list[tuple[str, pd.DataFrame]]]


def interval_notes(result: Any) -> list[str]:
    """How the summary intervals were estimated, and which could not be, with the reason."""
    if result.intervals is None:
        return []
    ci = result.intervals
    how = (
        "bias-corrected (BC) percentile-bootstrap interval: the central range of the "
        "replicates shifted by their bias, so that it surrounds the estimate (Efron 1987)"
        if ci.method == "bc"
        else "percentile-bootstrap interval"
    )
    notes = [
        f"ci_low, ci_high: {ci.confidence:.0%} {how}, over "
        f"{result.settings.get('n_bootstrap')} replicates resampled within each group."
    ]
    for key, note in ci.notes.items():
        if key in result.summary:
            label = SUMMARY_LABELS.get(key, key)
            if note.startswith("one-sided"):
                notes.append(f"{label}: {note}.")
            else:
                notes.append(f"{label}: interval not estimable — {note}.")
    return notes


def _frame(mapping: dict[str, Any], name: str) -> pd.DataFrame:
    frame = pd.DataFrame({"value": pd.Series({k: str(v) for k, v in mapping.items()})})
    frame.index.name = name
    return frame


def extra_sections(result: Any) -> list[Section]:
    """Groups and reference, rules and verdicts, provenance, glossary."""
    settings = result.settings
    sections: list[Section] = []
    groups = []
    size = settings.get("min_group_size")
    excluded = settings.get("excluded_groups", [])
    rule = (
        f"Rule: a group with fewer than {size} rows is left out of the headline (summary, "
        f"intervals, impact ratios) and listed here; its own row stays in the per-group table. "
        f"Why {size}: {settings.get('min_group_size_rationale', '')}."
    )
    groups.append(rule)
    if excluded:
        groups.append("Excluded from the headline: " + ", ".join(map(str, excluded)) + ".")
    elif settings.get("small_groups"):
        groups.append(
            "Small groups kept in the headline (include_small_groups): "
            + ", ".join(map(str, settings["small_groups"]))
            + "."
        )
    else:
        groups.append("No group is under the minimum.")
    if settings.get("reference") is not None:
        groups.append(
            f"Reference group: {settings['reference']} ({settings.get('reference_reason')}); "
            "the disparate_impact column and the credit rule compare against it."
        )
    if settings.get("task") == "classification" and result.intervals is not None:
        groups.append(
            f"Per-group intervals (*_low, *_high): {result.intervals.confidence:.0%} "
            "Clopper-Pearson (exact binomial) intervals of each rate."
        )
    sections.append(("Groups and reference", groups, []))
    for verdict in result.verdicts:
        paragraphs = [
            f"{verdict.status}: {verdict.line}",
            f"Definition: {verdict.definition}",
            f"Source: {verdict.source}",
        ]
        sections.append((f"Rule: {verdict.title}", paragraphs, [("", verdict.table)]))
    prov = {k: v for k, v in result.provenance.items() if k != "thresholds"}
    tables = [("", _frame(prov, "item"))]
    thresholds = result.provenance.get("thresholds", {})
    if thresholds:
        frame = pd.DataFrame(
            {
                "value": [str(v[0]) for v in thresholds.values()],
                "rationale": [v[1] for v in thresholds.values()],
            },
            index=pd.Index(list(thresholds), name="threshold"),
        )
        tables.append(("Thresholds", frame))
    sections.append(("Provenance", [], tables))
    glossary = pd.DataFrame(
        {"meaning": list(GLOSSARY.values())}, index=pd.Index(list(GLOSSARY), name="term")
    )
    sections.append(("Glossary", [], [("", glossary)]))
    return sections


def _shown(frame: pd.DataFrame) -> pd.DataFrame:
    return counts_as_integers(frame).map(
        lambda v: format_value(v) if isinstance(v, (float, np.floating)) else v
    )


def render_markdown_section(section: Section) -> list[str]:
    """Markdown lines of a section; every string escaped."""
    heading, paragraphs, tables = section
    parts = [f"## {escape_markdown(heading)}", ""]
    for text in paragraphs:
        parts += [escape_markdown(text), ""]
    for caption, frame in tables:
        if caption:
            parts += [f"**{escape_markdown(caption)}**", ""]
        parts += [markdown_table(_shown(frame)), ""]
    return parts


def render_text_section(section: Section) -> list[str]:
    """Plain-text lines of a section, none wider than the terminal; every string escaped."""
    heading, paragraphs, tables = section
    heading = escape_terminal(heading)
    parts = ["", *wrap_text(heading), "-" * min(len(heading), TEXT_WIDTH)]
    # A newline or an escape sequence inside a group name is shown, never obeyed (it could
    # print a verdict of its own).
    for text in paragraphs:
        parts += wrap_text(escape_terminal(text))
    for caption, frame in tables:
        frame = terminal_frame(frame)
        if caption:
            parts += wrap_text(escape_terminal(caption) + ":")
        parts += text_table(frame)
    return parts
