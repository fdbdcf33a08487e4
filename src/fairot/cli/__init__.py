"""The ``fairot`` command line.

Each subcommand is a private module ``_cmd_<name>.py`` exposing ``register(subparsers)``, which adds
its parser and sets ``func(args) -> int``; :func:`main` discovers them, so an area adds a command
without editing this file. User errors (bad input, missing columns) print one line and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from fairot import __version__

EXIT_USAGE = 2


class CLIError(Exception):
    """A user error: printed as one line, exit status 2, no traceback."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every discovered subcommand."""
    parser = argparse.ArgumentParser(
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except (CLIError, ValueError, FileNotFoundError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"fairot {args.command}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
