r"""User strings made safe for each medium fairot writes to: the terminal, HTML, figures.

Group names, column names, file names and titles come from users. On a terminal an escape
sequence in a group name (``"\x1b[2K\x1b[1A four-fifths: PASS"``) erases the line above and
prints a verdict of its own; a carriage return or a bidi override (U+202E) rewrites what the
reader sees; a zero-width space makes two groups print alike. Every medium therefore shows these
characters *visibly*, in Python's escape notation (``\x1b``, ``\r``, ``\u202e``):

- :func:`show_invisible` — the one rule: control characters (C0, DEL, C1), format characters
  (bidi embeddings, overrides and isolates, zero-width spaces and joiners, soft hyphen, BOM),
  line and paragraph separators and lone surrogates become their escape; everything else stays.
- :func:`escape_terminal` — one line of terminal text (a newline in a name is shown as ``\n``).
- :func:`terminal_text` — the net over a whole rendered page: every such character but the
  page's own line breaks.
- :func:`terminal_frame` / :func:`terminal_table` — a DataFrame with its index, columns and
  text cells escaped, and as text.
- :func:`escape_html` — :func:`html.escape` of the visible text.
- :func:`figure_label` — a matplotlib label: visible, shortened to a bounded length. Labels are
  drawn with ``parse_math=False`` (:data:`PLAIN_TEXT`), so ``"$10K-$50K"`` is text, not maths.

Markdown's escaping (:func:`fairot.utils.escape_markdown`) applies the same rule.
"""

from __future__ import annotations

import html
import unicodedata
from typing import Any

__all__ = [
    "FIGURE_LABEL_LENGTH",
    "PLAIN_TEXT",
    "escape_html",
    "escape_terminal",
    "figure_label",
    "show_invisible",
    "terminal_frame",
    "terminal_table",
    "terminal_text",
]

# Cc: C0 controls, DEL and C1 controls; Cf: format characters (bidi controls U+202A-U+202E and
# U+2066-U+2069, zero-width space/joiners, BOM, soft hyphen); Cs: lone surrogates (they cannot
# even be encoded to UTF-8); Zl, Zp: line and paragraph separators.
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
#: Longest label drawn in a figure (characters, the ellipsis included); tables keep full names.
FIGURE_LABEL_LENGTH = 40
#: Text properties of every label fairot draws from user strings: ``$`` is a dollar, not maths.
PLAIN_TEXT = {"parse_math": False}


def is_invisible(char: str) -> bool:
    """Whether ``char`` is shown as its escape (a control, format or separator character)."""
    return unicodedata.category(char) in _INVISIBLE


def _visible(char: str) -> str:
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def show_invisible(text: Any, keep: str = "") -> str:
    r"""``str(text)`` with every control, format and separator character shown as its escape.

    Parameters
    ----------
    text : object
        Anything; it is converted with ``str``.
    keep : str, default=""
        Characters to leave as they are (``"\n"`` for a whole page of text).

    Returns
    -------
    str
        The text, each character of Unicode category Cc, Cf, Cs, Zl or Zp written as
        ``\t``, ``\n``, ``\r``, ``\xNN``, ``\uNNNN`` or ``\UNNNNNNNN``.

    Examples
    --------
    >>> show_invisible("\x1b[2K ok\u202e")
    '\\x1b[2K ok\\u202e'
    >>> show_invisible("a\nb", keep="\n")
    'a\nb'
    """
    text = str(text)
    if text.isprintable():  # no character of the "Other" and "Separator" categories but " "
        return text
    # A page is mostly printable lines: only the others are read character by character.
    newline = "\n" if "\n" in keep else _SHORT["\n"]
    return newline.join(
        line if line.isprintable() else _show_line(line, keep) for line in text.split("\n")
    )


def _show_line(text: str, keep: str) -> str:
    return "".join(
        char if char in keep or not is_invisible(char) else _visible(char) for char in text
    )


def escape_terminal(text: Any) -> str:
    r"""A user string as one line of terminal text: no escape sequence, no line break.

    Examples
    --------
    >>> escape_terminal("\x1b[1A four-fifths: PASS\r")
    '\\x1b[1A four-fifths: PASS\\r'
    """
    return show_invisible(text)


def terminal_text(text: Any) -> str:
    r"""A rendered page for the terminal: :func:`show_invisible` of all but its line breaks.

    The last net under every text rendering: whatever a renderer forgot to escape, no escape
    sequence, carriage return or bidi control reaches the terminal. Line breaks stay (they are
    the page's); user strings must be escaped with :func:`escape_terminal` where they are
    written, so that a newline inside a name cannot start a line of its own.

    Examples
    --------
    >>> terminal_text("title\nrow \x1b[2K")
    'title\nrow \\x1b[2K'
    """
    return show_invisible(text, keep="\n")


def terminal_frame(frame: Any) -> Any:
    r"""A copy of ``frame`` whose index, columns and text cells are :func:`escape_terminal`-ed.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; left unchanged.

    Returns
    -------
    pandas.DataFrame
        The copy, ready for :meth:`~pandas.DataFrame.to_string`.

    Examples
    --------
    A group name that would erase the line above on a terminal is shown, not obeyed:

    >>> import pandas as pd
    >>> from fairot.utils import terminal_frame
    >>> frame = pd.DataFrame({"rate": [0.5]}, index=["\x1b[1Aa"])
    >>> terminal_frame(frame).index.tolist()
    ['\\x1b[1Aa']
    """
    import pandas as pd

    shown = frame.copy()
    shown.columns = pd.Index([escape_terminal(c) for c in frame.columns])
    if isinstance(frame.index, pd.MultiIndex):
        shown.index = pd.MultiIndex.from_tuples(
            [tuple(_escape_cell(k) for k in key) for key in frame.index],
            names=[None if n is None else escape_terminal(n) for n in frame.index.names],
        )
    else:
        name = frame.index.name
        shown.index = pd.Index(
            [_escape_cell(i) for i in frame.index],
            name=None if name is None else escape_terminal(name),
        )
    for column in range(shown.shape[1]):
        values = shown.iloc[:, column]
        if values.dtype == object:
            shown.isetitem(column, values.map(_escape_cell))
    return shown


def terminal_table(frame: Any, **to_string: Any) -> str:
    r"""``frame.to_string(**to_string)`` with the index, the columns and text cells escaped.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; left unchanged.
    **to_string
        Passed to :meth:`pandas.DataFrame.to_string`.

    Returns
    -------
    str
        The table, every user string on one line with its invisible characters shown.

    Examples
    --------
    >>> import pandas as pd
    >>> print(terminal_table(pd.DataFrame({"rate": [0.5]}, index=["a\x1b[2K"])))
             rate
    a\x1b[2K   0.5
    """
    return terminal_text(terminal_frame(frame).to_string(**to_string))


def _escape_cell(value: Any) -> Any:
    return escape_terminal(value) if isinstance(value, str) else value


def escape_html(text: Any) -> str:
    r"""A user string as HTML text: :func:`html.escape` of :func:`show_invisible`.

    Examples
    --------
    >>> escape_html("<script>\u202e")
    '&lt;script&gt;\\u202e'
    """
    return html.escape(show_invisible(text))


def figure_label(text: Any, max_length: int = FIGURE_LABEL_LENGTH) -> str:
    r"""A user string as a figure label: visible and at most ``max_length`` characters.

    Longer names end with an ellipsis (tables keep them whole). Draw the label with
    :data:`PLAIN_TEXT` (``parse_math=False``) so that a ``$`` is not read as maths.

    Examples
    --------
    >>> figure_label("$10K-$50K")
    '$10K-$50K'
    >>> figure_label("x" * 100, max_length=8)
    'xxxxxxx…'
    """
    # Only the first characters can be shown: a name of 100,000 characters costs no more.
    shown = show_invisible(str(text)[: max_length + 1])
    if len(shown) > max_length:
        shown = shown[: max(max_length - 1, 0)] + "…"
    return shown
