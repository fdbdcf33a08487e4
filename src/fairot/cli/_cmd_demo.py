"""``fairot demo``: the main job on embedded data (``make demo``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    """Add the ``demo`` subcommand."""
    p = subparsers.add_parser(
        "demo",
        help="audit and mitigate a logistic regression on the embedded Adult data",
        description=(
            "Train scikit-learn's LogisticRegression on the embedded Adult data (official "
            "train split; the COT paper's four race x sex groups), audit its test scores, then "
            "make them fair with COT, DOT and quantile post-processing (DPP) and compare all four "
            "methods. Writes a report folder."
        ),
    )
    p.add_argument(
        "--out", type=Path, default=Path("fairot-demo"), help="report folder (default: fairot-demo)"
    )
    p.add_argument(
        "--audit-only", action="store_true", help="stop after the audit of the logistic regression"
    )
    p.add_argument("--random-state", type=int, default=0, help="seed of COT and DOT (0)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo."""
    from fairot.reporting import audit_logistic_regression

    result = audit_logistic_regression("adult")
    print(result.to_text())
    result.write(args.out)
    if not args.audit_only:
        from fairot.experiments.cot import run_demo_comparison

        print(
            "\nMitigation: COT, DOT and DPP from the same logistic regression ...", file=sys.stderr
        )
        comparison = run_demo_comparison(
            random_state=args.random_state, progress=not args.no_progress
        )
        comparison.write(args.out / "mitigation")
        print()
        print(comparison.to_markdown().split("## Figures")[0].strip())
        with (args.out / "report.md").open("a", encoding="utf-8") as report:
            report.write(
                "\n## Mitigation\n\nCOT, DOT and DPP from the same logistic regression: "
                "see [mitigation/results.md](mitigation/results.md).\n\n"
                "![score histograms](mitigation/histograms.png)\n"
            )
    print(f"\nReport written to {args.out}/", file=sys.stderr)
    return 0
