r"""Small helpers shared by every package (the bottom floor: imports nothing from fairot).

- :func:`atomic_write` / :func:`write_atomic` — files that are either the old or the complete new
  content, never truncated (checkpoints, CLI outputs); :func:`remove_stale_temporaries` clears
  what a writer killed mid-write left behind.
- :func:`load_model` — load a ``.skops`` model trusting only fairot's and scikit-learn's own
  types (never what the file lists), with its trees validated and its size bounded;
  :func:`save_model` / :func:`model_to_bytes` save one with the fairot version recorded.
- :func:`escape_markdown` / :func:`markdown_table` — user strings as literal Markdown text in
  every ``.md`` fairot writes.
- :func:`escape_terminal`, :func:`terminal_text`, :func:`terminal_frame`,
  :func:`terminal_table`, :func:`escape_html`, :func:`figure_label` (with :data:`PLAIN_TEXT`)
  and :func:`show_invisible` — user strings on the terminal, in HTML and in figures, their
  control and format characters (escape sequences, bidi overrides, zero-width spaces) shown as
  escapes such as ``\x1b``.
- :class:`ScoreColumn` — an identity model whose score is a column of ``X`` (post-process
  scores that come from elsewhere, as ``fairot mitigate`` does).
"""

from ._atomic import atomic_write, remove_stale_temporaries, write_atomic
from ._escape import (
    FIGURE_LABEL_LENGTH,
    PLAIN_TEXT,
    escape_html,
    escape_terminal,
    figure_label,
    show_invisible,
    terminal_frame,
    terminal_table,
    terminal_text,
)
from ._markdown import escape_markdown, markdown_table
from ._persistence import (
    fairot_version,
    is_allowed_type,
    load_model,
    model_to_bytes,
    save_model,
)
from ._score_column import ScoreColumn

__all__ = [
    "FIGURE_LABEL_LENGTH",
    "PLAIN_TEXT",
    "ScoreColumn",
    "atomic_write",
    "escape_html",
    "escape_markdown",
    "escape_terminal",
    "fairot_version",
    "figure_label",
    "is_allowed_type",
    "load_model",
    "markdown_table",
    "model_to_bytes",
    "remove_stale_temporaries",
    "save_model",
    "show_invisible",
    "terminal_frame",
    "terminal_table",
    "terminal_text",
    "write_atomic",
]
