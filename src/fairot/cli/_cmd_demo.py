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
            "methods. Writes a report folder: report.html (self-contained), report.md, "
            "metrics.json, plots and mitigation/."
        ),
    )
    p.add_argument(
        "--out", type=Path, default=Path("fairot-demo"), help="report folder (default: fairot-demo)"
    )
    p.add_argument(
        "--audit-only", action="store_true", help="stop after the audit of the logistic regression"
    )
    p.add_argument("--random-state", type=int, default=0, help="seed of COT, DOT and the bootstrap")
    p.add_argument(
        "--n-bootstrap", type=int, default=200, metavar="B", help="bootstrap replicates (200)"
    )
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo."""
    from fairot.cli._io import check_out_dir
    from fairot.reporting import audit_logistic_regression
    from fairot.utils import write_atomic

    check_out_dir(args.out)
    result = audit_logistic_regression(
        "adult", random_state=args.random_state, n_bootstrap=args.n_bootstrap
    )
    result.write(args.out)
    print(result.to_text())
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
        write_atomic(
            args.out / "report.md",
            result.to_markdown()
            + "\n## Mitigation\n\nCOT, DOT and DPP from the same logistic regression: "
            "see [mitigation/results.md](mitigation/results.md).\n\n"
            "![score histograms](mitigation/histograms.png)\n",
        )
    print(f"\nReport written to {args.out}/ (open report.html)", file=sys.stderr)
    return 0
