"""The verdict block that opens every rendering of an audit: the answer before the evidence.

PASS/FAIL per rule with the groups it names as adversely impacted, the direction (which
decision was read as favourable, stated even when it is the default), and the model's ranking
(overall AUC and the lowest within-group AUC, marked when at chance), then the summary, then the
detail. Format-neutral: a list of ``(status, text)`` lines that the text, markdown and HTML
renderings each draw and escape their own way.

Internal surface: :func:`verdict_lines`, :func:`verdict_text`, :func:`verdict_markdown`,
:func:`verdict_html`, :func:`wrap_lines`, :data:`VERDICT_HEADING`, :data:`VERDICT_STYLE`.
"""

from __future__ import annotations

import math
from typing import Any

from fairot.metrics import CHANCE_AUC
from fairot.utils import escape_html

VERDICT_HEADING = "Verdict"
#: The width of the text block (the terminal rendering keeps within 100 columns).
TEXT_WIDTH = 100


def verdict_lines(result: Any) -> list[tuple[str, str]]:
    """``(status, text)`` lines of the block; status is PASS, FAIL, INFO, NOTE or ALERT."""
    lines: list[tuple[str, str]] = []
    direction = result.settings.get("direction")
    if direction:
        lines.append(("NOTE", direction[0].upper() + direction[1:] + "."))
    for verdict in result.verdicts:
        named = ""
        if verdict.adversely_impacted:
            named = f" Adversely impacted: {', '.join(verdict.adversely_impacted)}."
        lines.append((verdict.status, f"{verdict.title}.{named} {verdict.line}"))
    auc = result.summary.get("auc")
    if isinstance(auc, float) and math.isfinite(auc):
        text = f"Ranking: AUC {auc:.3f} overall"
        low = result.summary.get("min_group_auc")
        if isinstance(low, float) and math.isfinite(low):
            text += f", lowest within a group {low:.3f} ({result.summary['min_group_auc_group']})"
        worst = min(auc, low) if isinstance(low, float) and math.isfinite(low) else auc
        if worst <= CHANCE_AUC:
            lines.append(
                (
                    "ALERT",
                    f"{text}: at or below chance (AUC <= {CHANCE_AUC}); parity met by a model "
                    "that does not rank its labels is no fairness.",
                )
            )
        else:
            lines.append(("NOTE", text + "."))
    if not lines:
        lines.append(("INFO", "No rule applied (standards=())."))
    return lines


#: The block's look in the HTML page (kept here so that the page's own style stays untouched).
VERDICT_STYLE = """
.fairot-audit .verdict { border: 2px solid #57606a; border-radius: 6px; padding: 0.3rem 0.8rem;
  margin: 0.6rem 0; }
.fairot-audit .verdict p { margin: 0.3rem 0; }
.fairot-audit .verdict .FAIL, .fairot-audit .verdict .ALERT { color: #cf222e; font-weight: 700; }
.fairot-audit .verdict .PASS { color: #1a7f37; font-weight: 700; }
.fairot-audit .verdict .INFO, .fairot-audit .verdict .NOTE { color: #57606a; font-weight: 700; }
"""


def verdict_html(result: Any) -> str:
    """The block as an HTML ``<section>``, every string escaped."""
    rows = "".join(
        f'<p><span class="{status}">{status}</span> {escape_html(text)}</p>'
        for status, text in verdict_lines(result)
    )
    return f'<section class="verdict" id="verdict"><h2>{VERDICT_HEADING}</h2>{rows}</section>'


def verdict_text(result: Any) -> list[str]:
    """The block as plain-text lines (heading, then ``STATUS  text`` lines)."""
    return [VERDICT_HEADING, "-" * len(VERDICT_HEADING), *wrap_lines(verdict_lines(result)), ""]


def wrap_lines(lines: list[tuple[str, str]]) -> list[str]:
    """``STATUS  text`` lines within the terminal's 100 columns, continuations under the text."""
    import textwrap

    out = []
    for status, text in lines:
        out += textwrap.wrap(f"{status:<5}  {text}", width=TEXT_WIDTH, subsequent_indent=" " * 7)
    return out


def verdict_markdown(result: Any, escape) -> list[str]:
    """The block as markdown lines; ``escape`` is the markdown escaper of every user string."""
    out = [f"## {VERDICT_HEADING}", ""]
    out += [f"- **{status}** {escape(text)}" for status, text in verdict_lines(result)]
    return [*out, ""]
