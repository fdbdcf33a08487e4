"""``fairot reproduce``: run one of the seed papers' studies and write its results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairot.cli import CLIError


def register(subparsers) -> None:
    """Add the ``reproduce`` subcommand."""
    from fairot.experiments import STUDIES

    p = subparsers.add_parser(
        "reproduce",
        help="reproduce a study of the seed papers",
        description="Run a study and write results.json, results.md and PNG figures to --out.",
    )
    p.add_argument("study", choices=sorted(STUDIES), help="the study to run")
    p.add_argument("--out", type=Path, help="output folder (default: fairot-out/STUDY)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="a reduced run (fewer updates, seeds and replications) for a smoke test",
    )
    p.add_argument(
        "--seeds",
        type=int,
        dest="n_seeds",
        metavar="N",
        help="number of seeds or replications (default: the study's)",
    )
    p.add_argument("--random-state", type=int, default=0, help="base seed (0)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the study and write its results."""
    from fairot.experiments import get_study

    try:
        study = get_study(args.study)
    except ImportError as error:  # a missing extra: one line, the extra named
        raise CLIError(str(error)) from error
    result = study(
        quick=args.quick,
        n_seeds=args.n_seeds,
        random_state=args.random_state,
        progress=not args.no_progress,
    )
    out = result.write(args.out or Path("fairot-out") / args.study)
    print(result.to_markdown())
    print(f"\nResults written to {out}/", file=sys.stderr)
    # A study whose reduced run cannot support its conclusions says so last, where it is seen.
    notice = result.config.get("notice")
    if notice:
        print(f"\n{notice}", file=sys.stderr)
    return 0
