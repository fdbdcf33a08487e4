r"""Markdown that shows user strings as text: escaping and tables for every ``.md`` fairot writes.

Group names, column names and file names come from users. Left raw, ``<script>`` is rendered by
Markdown viewers that pass HTML through, ``|`` splits a table cell and a newline ends a table
row, and an escape sequence or a bidi override rewrites what a terminal or an editor shows.
:func:`escape_markdown` makes any string one line of literal text, its control and format
characters shown as escapes (``\x1b``, ``\n``, ``\u202e``; :func:`fairot.utils.show_invisible`);
:func:`markdown_table` escapes every header and cell.
"""

from __future__ import annotations

import math
from typing import Any

from ._escape import show_invisible

__all__ = ["escape_markdown", "markdown_table"]

# HTML's three, as entities (CommonMark passes raw HTML through but decodes entities to text).
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# ASCII punctuation with inline meaning; CommonMark turns "\x" into a literal x for each of them.
_BACKSLASHED = set("\\`*_[]|~")


def escape_markdown(text: Any) -> str:
    r"""``str(text)`` as literal, single-line Markdown text (safe inside a table cell).

    Parameters
    ----------
    text : object
        Anything; it is converted with ``str``.

    Returns
    -------
    str
        The text with ``& < >`` as HTML entities, Markdown punctuation (``\ ` * _ [ ] | ~``)
        backslash-escaped, and control, format and separator characters (line breaks, escape
        sequences, bidi overrides, zero-width spaces) shown as their escapes, ``\n``,
        ``\x1b``, ``\u202e``.

    Examples
    --------
    >>> escape_markdown("<script>alert(1)</script>")
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    >>> escape_markdown("a|b\nc *d*")
    'a\\|b\\\\nc \\*d\\*'
    """
    out = []
    # Control and format characters first become their visible escapes ("\\x1b"), whose
    # backslash is then escaped like any other: the reader sees "\x1b", never the byte.
    for char in show_invisible(text):
        if char in _ENTITIES:
            out.append(_ENTITIES[char])
        elif char in _BACKSLASHED:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def format_cell(value: Any) -> str:
    """A table cell: floats to four significant digits (blank for NaN), the rest as text."""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.3e}"
    return escape_markdown(value)


def markdown_table(frame: Any) -> str:
    r"""A pandas DataFrame as a Markdown table, every header and cell escaped.

    A default ``RangeIndex`` carries no information and is left out. No ``tabulate``
    dependency.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.

    Returns
    -------
    str
        The table, one line per row.

    Examples
    --------
    >>> import pandas as pd
    >>> print(markdown_table(pd.DataFrame({"group": ["a|b"], "rate": [0.5]})))
    | group | rate |
    |---|---|
    | a\|b | 0.5 |
    """
    import pandas as pd

    show_index = frame.index.name is not None or not isinstance(frame.index, pd.RangeIndex)
    header = [*([frame.index.name or ""] if show_index else []), *frame.columns]
    header = [escape_markdown(name) for name in header]
    rows = [
        [*([escape_markdown(idx)] if show_index else []), *(format_cell(v) for v in row)]
        for idx, row in zip(frame.index, frame.itertuples(index=False), strict=True)
    ]
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)
