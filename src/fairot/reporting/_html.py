"""A self-contained HTML rendering of an :class:`~fairot.reporting.Audit`.

One file that opens anywhere, offline: inline CSS, figures as inline SVG (text drawn as paths, so
no font is fetched), no script. The same fragment is the notebook rendering (``_repr_html_``).
"""

from __future__ import annotations

import io
import re
from typing import Any

import numpy as np
import pandas as pd

from fairot.reporting._format import (
    SUMMARY_LABELS,
    column_chunks,
    counts_as_integers,
    format_value,
    per_group_tables,
)
from fairot.reporting._sections import extra_sections, interval_notes
from fairot.reporting._verdict_block import VERDICT_STYLE, verdict_html
from fairot.utils import escape_html

STYLE = """
.fairot-audit { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial,
  sans-serif; color: #1f2328; max-width: 1100px; margin: 0 auto; line-height: 1.45; }
.fairot-audit h1 { font-size: 1.5rem; margin: 0.6rem 0 0.2rem; }
.fairot-audit h2 { font-size: 1.15rem; margin: 1.6rem 0 0.5rem; border-bottom: 1px solid #d0d7de;
  padding-bottom: 0.2rem; }
.fairot-audit h3 { font-size: 1rem; margin: 1rem 0 0.4rem; }
.fairot-audit .meta { color: #57606a; font-size: 0.9rem; }
.fairot-audit .warning { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px;
  padding: 0.5rem 0.8rem; margin: 0.5rem 0; }
.fairot-audit table { border-collapse: collapse; font-size: 0.88rem; margin: 0.4rem 0; }
.fairot-audit th, .fairot-audit td { border: 1px solid #d0d7de; padding: 0.25rem 0.55rem; }
.fairot-audit th { background: #f6f8fa; text-align: left; }
.fairot-audit td.num { text-align: right; font-variant-numeric: tabular-nums; }
.fairot-audit tr.small td { background: #fff8c5; }
/* A table wider than the page scrolls, and says so: a shadow on the side with more columns
   (the covers scroll with the table, the shadows stay; no script). */
.fairot-audit .scroll { overflow-x: auto; max-width: 100%;
  background: linear-gradient(to right, #fff 30%, rgba(255, 255, 255, 0)),
    linear-gradient(to left, #fff 30%, rgba(255, 255, 255, 0)) 100% 0,
    radial-gradient(farthest-side at 0 50%, rgba(0, 0, 0, 0.25), rgba(0, 0, 0, 0)),
    radial-gradient(farthest-side at 100% 50%, rgba(0, 0, 0, 0.25), rgba(0, 0, 0, 0)) 100% 0;
  background-repeat: no-repeat; background-size: 40px 100%, 40px 100%, 14px 100%, 14px 100%;
  background-attachment: local, local, scroll, scroll; }
.fairot-audit figure { margin: 1rem 0; }
.fairot-audit figure svg { max-width: 100%; height: auto; }
.fairot-audit figcaption { color: #57606a; font-size: 0.85rem; }
"""

#: The min-content width a table may take: the page's 1,100 px column less borders and rounding.
TABLE_WIDTH_PX = 1040
# At the table's 0.88rem (14 px) system sans-serif, a character is 7.7 to 9.1 px wide (bold
# headers, measured in headless Chromium: 1,463 px for 158 characters in 13 columns, 1,124 px
# for 103 in 10); the upper end keeps every estimate above the page's own; a cell adds padding.
CHAR_PX, CELL_PX = 9.2, 19
CAPTIONS = {
    "score_histograms": (
        "Density of each group's scores, largest group first. When a few bars tower over the "
        "rest (e.g. many scores at 0), the axis is cut above the typical bars and the box gives "
        "the tallest one. Beyond six groups, one panel per group against everyone (grey)."
    ),
    "quantile_functions": (
        "Quantile function of each group: the vertical gap between two curves is the score "
        "change that transports one group onto the other; the area between them is their W1."
    ),
    "group_metrics": (
        "Per-group rates at the threshold, largest group first; bars are exact (Clopper-Pearson) "
        "intervals of the rates, bootstrap intervals of the regression errors."
    ),
}


def _cell(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f'<td class="num">{format_value(value)}</td>'
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return f'<td class="num">{int(value)}</td>'
    return f"<td>{escape_html(str(value))}</td>"


def _min_width(frame: pd.DataFrame) -> float:
    """Pixels a table needs at least: each column as wide as its longest word or number."""

    def widest(texts: Any) -> int:
        return max((len(word) for t in texts for word in str(t).split()), default=0)

    def shown(v: Any) -> str:
        return format_value(v) if isinstance(v, (float, np.floating)) else str(v)

    columns = [widest([frame.index.name or "", *frame.index])]
    columns += [widest([c, *map(shown, frame[c])]) for c in frame.columns]
    return sum(CHAR_PX * n + CELL_PX for n in columns)


def _table(frame: pd.DataFrame, row_class: dict[Any, str] | None = None) -> str:
    """``frame`` as HTML tables that fit the page: a wide one is cut into blocks of columns."""
    frame = counts_as_integers(frame)
    parts = column_chunks(frame, lambda part: _min_width(part) <= TABLE_WIDTH_PX)
    return "".join(_one_table(part, row_class) for part in parts)


def _one_table(frame: pd.DataFrame, row_class: dict[Any, str] | None) -> str:
    head = "".join(f"<th>{escape_html(str(c))}</th>" for c in [frame.index.name or "", *frame])
    rows = []
    # itertuples keeps each column's type (iterrows would turn a row of counts and rates into
    # floats, and a count of 63 into 63.0000).
    for index, row in zip(frame.index, frame.itertuples(index=False), strict=True):
        css = (row_class or {}).get(index, "")
        attr = f' class="{css}"' if css else ""
        cells = "".join(_cell(v) for v in row)
        rows.append(f"<tr{attr}><th>{escape_html(str(index))}</th>{cells}</tr>")
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def figure_svg(figure: Any) -> str:
    """A matplotlib figure as an inline ``<svg>`` element (no XML prolog, no date)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    # The RDF metadata block only names the tool and licences; it adds bytes and URIs, no picture.
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.S)


def render_fragment(result: Any) -> str:
    """The audit as an HTML ``<div>`` with its own ``<style>`` (notebooks, and the page body)."""
    settings = result.settings
    meta = []
    if "task" in settings:
        meta.append(f"task: {settings['task']}")
    if settings.get("task") == "classification":
        meta.append(f"decision: score &gt; {settings['threshold']:g}")
    meta.append(f"samples: {result.summary.get('n_samples')}")
    meta.append(f"groups: {result.summary.get('n_groups')}")
    parts = [
        f"<style>{STYLE}{VERDICT_STYLE}</style>",
        '<div class="fairot-audit">',
        f"<h1>{escape_html(result.title)}</h1>",
        f'<p class="meta">{" · ".join(meta)}</p>',
        verdict_html(result),  # the answer first, then the summary, then the detail
    ]
    parts += [f'<div class="warning">⚠ {escape_html(w)}</div>' for w in result.warnings]

    summary = result.summary_table()
    summary.index = [SUMMARY_LABELS.get(k, k) for k in summary.index]
    summary.index.name = "metric"
    parts += ["<h2>Summary</h2>", _table(summary)]
    parts += [f'<p class="meta">{escape_html(note)}</p>' for note in interval_notes(result)]
    small = {g: "small" for g in result.report.index if result.report.loc[g].get("note", "")}
    # Several tables rather than one too wide to read: distributions, rates at the threshold,
    # confusion counts, the rates' intervals.
    parts.append("<h2>Per group</h2>")
    for caption, frame in per_group_tables(result.report):
        if caption:
            parts.append(f"<h3>{escape_html(caption)}</h3>")
        parts.append(_table(frame, small))
    if result.figures:
        parts.append("<h2>Figures</h2>")
    for key, figure in result.figures.items():
        caption = escape_html(CAPTIONS.get(key, key))
        parts.append(f"<figure>{figure_svg(figure)}<figcaption>{caption}</figcaption></figure>")
    for heading, paragraphs, tables in extra_sections(result):
        parts.append(f"<section><h2>{escape_html(heading)}</h2>")
        parts += [f"<p>{escape_html(text)}</p>" for text in paragraphs]
        for caption, frame in tables:
            if caption:
                parts.append(f"<h3>{escape_html(caption)}</h3>")
            parts.append(_table(frame))
        parts.append("</section>")
    parts.append("</div>")
    return "\n".join(parts)


def render_page(result: Any) -> str:
    """A complete, self-contained HTML document."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape_html(result.title)}</title>\n</head>\n<body>\n"
        f"{render_fragment(result)}\n</body>\n</html>\n"
    )
