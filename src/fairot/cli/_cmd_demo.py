"""``fairot demo``: the main job on embedded data (``make demo``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    """Add the ``demo`` subcommand."""
    p = subparsers.add_parser(
        "demo",
        help="audit a logistic regression on the embedded Adult data",
        description=(
            "Train scikit-learn's LogisticRegression on the embedded Adult data (official "
            "train split; the COT paper's four race x sex groups), audit its test scores and "
            "write a report folder."
        ),
    )
    p.add_argument(
        "--out", type=Path, default=Path("fairot-demo"), help="report folder (default: fairot-demo)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo."""
    from fairot.reporting import audit_logistic_regression

    result = audit_logistic_regression("adult")
    print(result.to_text())
    result.write(args.out)
    print(f"\nReport written to {args.out}/ (report.md, metrics.json, plots)", file=sys.stderr)
    return 0
