"""Every ```python block of README.md and docs/*.md runs as written and prints what the page says.

README.md is run by ``tests/test_readme.py`` (with :func:`run_page_in`), docs/*.md here.

How a page is run
-----------------
One test per page. The page's ```python blocks run in order, in one namespace (a later block may
use what an earlier one defined, as a reader following the page would), in a fresh temporary
folder (the working directory is changed to ``tmp_path``, so a block that writes a file writes it
there), with every warning turned into an error (a ``FutureWarning`` or a stray ``RuntimeWarning``
fails the page) and stdout captured. Blocks must be self-contained and small: no network, no files
outside the temporary folder, and all pages together in well under a minute.

How a page states what a block prints
-------------------------------------
Two conventions, both compared exactly against the captured stdout (so numbers are compared
rounded as they are printed; a block prints with an explicit format such as ``:.3f`` wherever
the last digit could depend on the platform):

- a comment line ``# prints: <text>`` directly after a line that calls ``print(...)``: ``<text>``
  is one whole line that call prints; a block's stated lines must appear in its output in that
  order (other output, such as a progress line, may come between them);
- a ```text block directly after the ```python block (only blank lines between them): its
  content is the block's whole output, line for line.

A block with neither may print anything; its output is not compared.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import sklearn
import torch

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
PRINTS = re.compile(r"^\s*# prints: (.*)$")


@dataclass
class Block:
    """One ```python block: its code, where it starts, and what the page says it prints."""

    code: str
    line: int
    expected: list[str] = field(default_factory=list)
    whole_output: bool = False


def parse(page: Path) -> list[Block]:
    """The ```python blocks of ``page``, each with its stated output (see the module docstring)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    previous_python_end: int | None = None
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        # a block inside a list item is indented; its body is read without that indent
        indent, language, start = match.group(1), match.group(2), i + 1
        end = start
        while end < len(lines) and not lines[end].lstrip().startswith("```"):
            end += 1
        body = [
            text[len(indent) :] if text.startswith(indent) else text for text in lines[start:end]
        ]
        if language == "python":
            block = Block("\n".join(body) + "\n", start + 1)
            for k, text in enumerate(body):
                stated = PRINTS.match(text)
                if stated:
                    assert k > 0 and "print(" in body[k - 1], (
                        f"{page.name}:{start + k + 1}: '# prints:' must follow a print(...) line"
                    )
                    block.expected.append(stated.group(1))
            blocks.append(block)
            previous_python_end = end
        elif language == "text" and previous_python_end is not None:
            between = lines[previous_python_end + 1 : i]
            if all(not text.strip() for text in between):
                block = blocks[-1]
                assert not block.expected, (
                    f"{page.name}:{block.line}: use '# prints:' or a ```text block, not both"
                )
                block.expected, block.whole_output = list(body), True
            previous_python_end = None
        else:
            previous_python_end = None
        i = end + 1
    return blocks


def check_output(page: Path, block: Block, printed: str) -> None:
    """Compare what ``block`` printed with what the page states."""
    if not block.expected:
        return
    got = [line.rstrip() for line in printed.rstrip("\n").splitlines()]
    where = f"{page.name}:{block.line}"
    if block.whole_output:
        assert got == [line.rstrip() for line in block.expected], where
        return
    remaining = iter(got)
    for stated in block.expected:
        # `in` on an iterator consumes it up to the match: the stated lines must come in order
        assert stated in remaining, f"{where}: expected a printed line {stated!r} in {got}"


# README.md is run by tests/test_readme.py with this runner, which then checks what its blocks
# built (one run of its examples, not two).
PAGES_WITH_BLOCKS = [page for page in PAGES if page.name != "README.md" and parse(page)]


@pytest.mark.parametrize("page", PAGES_WITH_BLOCKS, ids=lambda p: p.name)
def test_page_blocks_run_as_written(page, tmp_path, monkeypatch):
    run_page_in(page, tmp_path, monkeypatch)


def run_page_in(page: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Run ``page`` in ``folder`` as a reader would (see the module docstring); its namespace."""
    monkeypatch.chdir(folder)
    namespace: dict = {"__name__": "__doc_block__"}
    threads = torch.get_num_threads()
    # a block may turn on metadata routing or open figures; neither may outlive its page
    with sklearn.config_context():
        try:
            run_page(page, namespace)
        finally:
            torch.set_num_threads(threads)
            plt.close("all")
    return namespace


def run_page(page: Path, namespace: dict) -> None:
    """Run ``page``'s blocks in order in ``namespace``, checking what each one prints."""
    for block in parse(page):
        # a leading newline per skipped line keeps tracebacks on the page's own line numbers
        code = compile("\n" * (block.line - 1) + block.code, str(page), "exec")
        out = io.StringIO()
        with warnings.catch_warnings(), contextlib.redirect_stdout(out):
            warnings.simplefilter("error")
            exec(code, namespace)  # noqa: S102
        check_output(page, block, out.getvalue())


def test_the_parser_reads_both_conventions(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nprint(1)\n# prints: 1\n```\n\n"
        "```python\nprint('a')\nprint('b')\n```\n\n```text\na\nb\n```\n"
        "- item\n\n  ```python\n  x = 1\n  ```\n",
        encoding="utf-8",
    )
    first, second, third = parse(page)
    assert (first.expected, first.whole_output, first.line) == (["1"], False, 2)
    assert (second.expected, second.whole_output) == (["a", "b"], True)
    assert (third.code, third.expected) == ("x = 1\n", [])
    check_output(page, second, "a\nb\n")
    with pytest.raises(AssertionError):
        check_output(page, first, "2\n")


def test_a_warning_or_a_wrong_stated_output_fails_the_page(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nimport warnings\nwarnings.warn('old', FutureWarning)\n```\n", encoding="utf-8"
    )
    with pytest.raises(FutureWarning):
        run_page(page, {})
    page.write_text("```python\nprint(f'{2 / 3:.3f}')\n# prints: 0.667\n```\n", encoding="utf-8")
    run_page(page, {})
    page.write_text("```python\nprint(f'{2 / 3:.3f}')\n# prints: 0.666\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="0.666"):
        run_page(page, {})
