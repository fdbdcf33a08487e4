"""The ``fairot`` command line.

Each subcommand is a private module ``_cmd_<name>.py`` exposing ``register(subparsers)``, which adds
its parser and sets ``func(args) -> int``; :func:`main` discovers them, so an area adds a command
without editing this file. User errors (bad input, missing columns, unwritable output) print one
line on stderr and exit 2, with no traceback; output piped into a reader that stops early (``|
head``) ends quietly.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import pkgutil
import sys
import warnings
from collections.abc import Sequence

from fairot import __version__

EXIT_USAGE = 2
#: The logger of :mod:`fairot.utils.compilation` (named here: importing it would load numba
#: before ``--help``).
COMPILE_LOGGER = "fairot.compile"
# The status of a process killed by SIGPIPE (128 + 13), as `yes | head` reports for `yes`.
EXIT_BROKEN_PIPE = 141


class CLIError(Exception):
    """A user error: printed as one line, exit status 2, no traceback."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (``fairot audit: error: ...``), still exit status 2."""

    def error(self, message: str):
        """Print one line naming the command and the problem, then exit 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every discovered subcommand."""
    parser = _Parser(
        prog="fairot",
        description="Measure and remove group unfairness with optimal transport.",
    )
    parser.add_argument("--version", action="version", version=f"fairot {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    package = importlib.import_module(__name__)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_cmd_"):
            importlib.import_module(f"{__name__}.{info.name}").register(subparsers)
    return parser


class _StderrLines(logging.Handler):
    """Each record as one line on the current ``sys.stderr`` (read at emit time, not bound)."""

    def emit(self, record: logging.LogRecord) -> None:
        print(self.format(record), file=sys.stderr, flush=True)


def show_compile_notice() -> None:
    """Print fairot's one "compiling numba kernels" line on stderr (the library only logs it)."""
    logger = logging.getLogger(COMPILE_LOGGER)
    if not any(isinstance(h, _StderrLines) for h in logger.handlers):
        logger.addHandler(_StderrLines())
    logger.setLevel(logging.INFO)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python's warning line, its user strings (group names) shown, never obeyed."""
    from fairot.utils import terminal_text

    text = warnings.formatwarning(message, category, filename, lineno, line)
    (sys.stderr if file is None else file).write(terminal_text(text))


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and exc.args:
        text = str(exc.args[0])
    elif isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}"
    else:
        text = str(exc)
    return " ".join(text.split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # Recorded in the provenance of the reports a command writes.
    args.command_line = ["fairot", *(sys.argv[1:] if argv is None else map(str, argv))]
    if getattr(args, "func", None) is None:
        parser.print_help()
        return EXIT_USAGE
    show_compile_notice()
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            code = int(args.func(args) or 0)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader left (`fairot audit ... | head`): point stdout at /dev/null so that the
        # interpreter's final flush does not raise again, and stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        # ValueError/OSError: stdout replaced by an object without a descriptor.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except (CLIError, ValueError, TypeError, OSError, KeyError) as exc:
        from fairot.utils import escape_terminal

        # Messages quote column, file and group names: shown, never obeyed by the terminal.
        print(f"fairot {args.command}: error: {escape_terminal(_one_line(exc))}", file=sys.stderr)
        return EXIT_USAGE
