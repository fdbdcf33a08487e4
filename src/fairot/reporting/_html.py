"""A self-contained HTML rendering of an :class:`~fairot.reporting.Audit`.

One file that opens anywhere, offline: inline CSS, figures as inline SVG (text drawn as paths, so
no font is fetched), no script. The same fragment is the notebook rendering (``_repr_html_``).
"""

from __future__ import annotations

import html
import io
import re
from typing import Any

import numpy as np
import pandas as pd

from fairot.reporting._format import SUMMARY_LABELS, format_value
from fairot.reporting._sections import extra_sections, interval_notes
from fairot.reporting._verdict_block import VERDICT_STYLE, verdict_html

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
.fairot-audit .scroll { overflow-x: auto; }
.fairot-audit figure { margin: 1rem 0; }
.fairot-audit figure svg { max-width: 100%; height: auto; }
.fairot-audit figcaption { color: #57606a; font-size: 0.85rem; }
"""

DISTRIBUTION_COLUMNS = ("size", "share", "accuracy", "mse", "r2", "mean_score", "w1_to_pooled")
COUNT_COLUMNS = ("selected", "positives", "negatives", "tp", "fp", "tn", "fn", "base_rate", "fnr")
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
    return f"<td>{html.escape(str(value))}</td>"


def _table(frame: pd.DataFrame, row_class: dict[Any, str] | None = None) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in [frame.index.name or "", *frame])
    rows = []
    for index, row in frame.iterrows():
        css = (row_class or {}).get(index, "")
        attr = f' class="{css}"' if css else ""
        cells = "".join(_cell(v) for v in row.to_numpy(dtype=object))
        rows.append(f"<tr{attr}><th>{html.escape(str(index))}</th>{cells}</tr>")
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
        f"<h1>{html.escape(result.title)}</h1>",
        f'<p class="meta">{" · ".join(meta)}</p>',
        verdict_html(result),  # the answer first, then the summary, then the detail
    ]
    parts += [f'<div class="warning">⚠ {html.escape(w)}</div>' for w in result.warnings]

    summary = result.summary_table()
    summary.index = [SUMMARY_LABELS.get(k, k) for k in summary.index]
    summary.index.name = "metric"
    parts += ["<h2>Summary</h2>", _table(summary)]
    parts += [f'<p class="meta">{html.escape(note)}</p>' for note in interval_notes(result)]
    small = {g: "small" for g in result.report.index if result.report.loc[g].get("note", "")}
    # Two tables rather than one too wide to read: distributions, then rates at the threshold.
    report = result.report
    first = [c for c in report.columns if c in DISTRIBUTION_COLUMNS or c == "note"]
    counted = [c for c in report.columns if c in COUNT_COLUMNS or c.endswith(("_low", "_high"))]
    rest = [c for c in report.columns if c not in first and c not in counted]
    parts += ["<h2>Per group</h2>", _table(report[first], small)]
    if rest:
        # Rates are per group; the pooled row would only repeat dashes.
        rates = report.loc[[g for g in report.index if g != "overall"], rest]
        parts += ["<h3>Rates and errors</h3>", _table(rates, small)]
    if counted:
        parts += [
            "<h3>Confusion counts and rate intervals</h3>",
            _table(report[[c for c in counted if not c.endswith(("_low", "_high"))]], small),
            _table(report[[c for c in counted if c.endswith(("_low", "_high"))]], small),
        ]
    if result.figures:
        parts.append("<h2>Figures</h2>")
    for key, figure in result.figures.items():
        caption = html.escape(CAPTIONS.get(key, key))
        parts.append(f"<figure>{figure_svg(figure)}<figcaption>{caption}</figcaption></figure>")
    for heading, paragraphs, tables in extra_sections(result):
        parts.append(f"<section><h2>{html.escape(heading)}</h2>")
        parts += [f"<p>{html.escape(text)}</p>" for text in paragraphs]
        for caption, frame in tables:
            if caption:
                parts.append(f"<h3>{html.escape(caption)}</h3>")
            parts.append(_table(frame))
        parts.append("</section>")
    parts.append("</div>")
    return "\n".join(parts)


def render_page(result: Any) -> str:
    """A complete, self-contained HTML document."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(result.title)}</title>\n</head>\n<body>\n"
        f"{render_fragment(result)}\n</body>\n</html>\n"
    )
