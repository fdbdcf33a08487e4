"""User strings for the terminal, HTML and figures (issue 37): shown, never obeyed."""

import html
import unicodedata

import numpy as np
import pandas as pd
import pytest

from fairot.utils import (
    FIGURE_LABEL_LENGTH,
    escape_html,
    escape_terminal,
    figure_label,
    show_invisible,
    terminal_frame,
    terminal_table,
    terminal_text,
)

HOSTILE = ["\x1b[2K\x1b[1A four-fifths: PASS", "\r", "\u202e", "a|b\nc", "z\u200b", "\x9b2J"]
BIDI = [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]]
CONTROLS = [chr(c) for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)]]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


@pytest.mark.parametrize("char", CONTROLS + BIDI + ZERO_WIDTH + ["\u2028", "\u2029"])
def test_every_invisible_character_is_shown_as_python_escapes_it(char):
    shown = escape_terminal(f"a{char}b")
    # Python's own escape of the character (repr without the quotes), e.g. "\x1b", "\u202e".
    assert shown == "a" + char.encode("unicode_escape").decode("ascii") + "b"
    assert shown.isascii() and shown.isprintable()


@pytest.mark.parametrize("text", ["plain", "é ü ß 中文 а", "$10K-$50K", "<script>", " spaced "])
def test_printable_text_is_left_as_it_is(text):
    assert escape_terminal(text) == text
    assert figure_label(text) == text


def test_terminal_text_keeps_only_the_page_line_breaks():
    page = "title\n" + "\n".join(HOSTILE)
    shown = terminal_text(page)
    assert shown.count("\n") == page.count("\n")
    assert all(line.isprintable() for line in shown.split("\n"))


def test_terminal_table_escapes_index_columns_and_cells():
    frame = pd.DataFrame(
        {"rate\x1b": [0.5, 0.25], "pair": ["a\rb", "c"]}, index=pd.Index(HOSTILE[:2], name="g\n")
    )
    text = terminal_table(frame)
    assert all(line.isprintable() for line in text.split("\n"))
    # Header, index name, two rows: no name starts a line of its own.
    assert len(text.split("\n")) == 4 and text.split("\n")[1].startswith("g\\n")
    assert "\\x1b[2K" in text and "a\\rb" in text and "rate\\x1b" in text
    assert list(frame.index) == HOSTILE[:2]  # the caller's frame is unchanged
    multi = pd.DataFrame(
        {"v": [1]}, index=pd.MultiIndex.from_tuples([("x\r", 2)], names=["a", "b"])
    )
    assert terminal_frame(multi).index[0] == ("x\\r", 2)


def test_escape_html_is_html_escape_of_the_visible_text():
    for name in [*HOSTILE, "<script>alert(1)</script>", "a & b"]:
        assert escape_html(name) == html.escape(show_invisible(name))
        assert "<" not in escape_html(name)


def test_figure_label_is_bounded_and_visible():
    assert figure_label("x" * 100_000) == "x" * (FIGURE_LABEL_LENGTH - 1) + "…"
    assert len(figure_label("x" * 100_000)) == FIGURE_LABEL_LENGTH
    assert figure_label("x" * FIGURE_LABEL_LENGTH) == "x" * FIGURE_LABEL_LENGTH
    assert figure_label("\u202e" * 100) == ("\\u202e" * 7)[: FIGURE_LABEL_LENGTH - 1] + "…"
    assert figure_label("$\\frac{") == "$\\frac{"


def test_random_strings_never_leave_an_invisible_character():
    rng = np.random.default_rng(0)
    for _ in range(200):
        text = "".join(chr(c) for c in rng.integers(0, 0x3000, size=20))
        shown = escape_terminal(text)
        categories = {unicodedata.category(ch) for ch in shown}
        assert not categories & {"Cc", "Cf", "Cs", "Zl", "Zp"}, repr(shown)
