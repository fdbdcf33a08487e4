"""Every user string in report.md is literal text: no markup, no broken tables."""

import json

import numpy as np
import pandas as pd
import pytest

from fairot.reporting import audit
from fairot.utils import escape_markdown, markdown_table

HOSTILE = ["<script>alert(1)</script>", "a|b", "line\nbreak", "**bold** _it_ `code` [x](y)"]
# Names that rewrite what a reader sees (issue 37): each is shown as its escapes.
INVISIBLE = ["\x1b[2K\x1b[1A four-fifths: PASS", "\r", "\u202e", "z\u200b", "\x7f\x85", "\u2066"]


def _cells(line: str) -> list[str]:
    """Split a Markdown table row as CommonMark does: on pipes not preceded by a backslash."""
    cells, current, escaped = [], "", False
    for char in line.strip()[1:-1]:
        if char == "|" and not escaped:
            cells.append(current)
            current = ""
        else:
            current += char
        escaped = char == "\\" and not escaped
    return [*cells, current]


@pytest.mark.parametrize("name", HOSTILE)
def test_escape_is_one_literal_line(name):
    text = escape_markdown(name)
    assert "\n" not in text and "<" not in text and ">" not in text
    # Undo the escapes (CommonMark's own rules): the reader sees exactly the name, lines joined.
    shown = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    for char in "\\`*_[]|~":
        shown = shown.replace("\\" + char, char)
    # A line break is shown as the two characters "\n" (issue 37), never obeyed.
    assert shown == name.replace("\n", "\\n")


@pytest.mark.parametrize("name", INVISIBLE)
def test_control_and_format_characters_are_shown(name):
    text = escape_markdown(name)
    assert text.isprintable()
    # The escape's backslash is itself escaped: CommonMark shows "\x1b", "\r", "\u202e".
    shown = text.replace("\\\\", "\\").replace("\\[", "[")
    assert shown == name.encode("unicode_escape").decode("ascii")


def test_table_keeps_its_shape_with_hostile_names():
    frame = pd.DataFrame({"group": HOSTILE, "rate|x": [0.1, 0.2, 0.3, 0.4]})
    lines = markdown_table(frame).splitlines()
    assert len(lines) == 2 + len(HOSTILE)
    assert all(len(_cells(line)) == 2 for line in lines if not line.startswith("|---"))


def test_audit_markdown_escapes_group_names_and_title():
    rng = np.random.default_rng(0)
    groups = np.repeat(HOSTILE, 50)
    scores = rng.uniform(size=groups.size)
    labels = (scores + rng.normal(scale=0.2, size=groups.size) > 0.5).astype(int)
    result = audit(labels, scores, groups, title="<img src=x onerror=alert(1)>", n_bootstrap=0)
    text = result.to_markdown()
    assert "<script" not in text and "<img" not in text
    table = text.split("## Per group")[1].strip().split("\n\n")[0].splitlines()
    widths = {len(_cells(line)) for line in table if not line.startswith("|---")}
    assert len(table) == 3 + len(HOSTILE) and len(widths) == 1  # header, rule, groups, overall
    # JSON is data: names stay exactly as given.
    names = {row["group"] for row in json.loads(result.to_json())["groups"]}
    assert names == {*HOSTILE, "overall"}
