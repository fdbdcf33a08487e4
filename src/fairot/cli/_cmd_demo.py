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
            "methods. Writes a report folder: report.html (self-contained: the four models side "
            "by side on the test rows), report.md, report.json, logistic/ (the audit of the "
            "logistic regression, with intervals and plots) and mitigation/ (the study). With "
            "--audit-only, the audit of the logistic regression is the report."
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


def demo_page(fitted, *, random_state: int = 0):
    """The one before/after page: every method's held-out (test) scores audited side by side.

    Parameters
    ----------
    fitted : fairot.experiments.cot.DemoScores
        The methods fitted on Adult's training rows, with their test scores.
    random_state : int, default=0

    Returns
    -------
    fairot.reporting.AuditComparison
    """
    from fairot.reporting import audit, compare_audits

    split = fitted.split
    names = {"LR": "logistic regression", "COT": "COT", "DOT": "DOT", "DPP": "DPP"}
    audits = {
        label: audit(
            split.y_test,
            fitted.scores[key],
            split.sensitive_test,
            title=f"{label} on Adult (test set)",
            plots=key == "LR",
            n_bootstrap=0,
            random_state=random_state,
        )
        for key, label in names.items()
    }
    note = (
        f"Adult, {split.split_note}: every model fitted on the {len(split.y_train)} training "
        f"rows and audited on the {len(split.y_test)} test rows. COT, DOT ({fitted.n_updates} "
        "updates) and DPP start from the same logistic regression; the change is DPP minus it."
    )
    return compare_audits(
        audits, title="fairot demo: before and after mitigation, Adult test set", notes=[note]
    )


def run(args: argparse.Namespace) -> int:
    """Run the demo."""
    from fairot.cli._io import check_out_dir
    from fairot.reporting import audit_logistic_regression

    check_out_dir(args.out)
    result = audit_logistic_regression(
        "adult", random_state=args.random_state, n_bootstrap=args.n_bootstrap
    )
    if args.audit_only:
        result.write(args.out)
        print(result.to_text())
        print(f"\nReport written to {args.out}/ (open report.html)", file=sys.stderr)
        return 0
    from fairot.experiments.cot import demo_test_scores, run_demo_comparison

    print(result.to_text())
    print("\nMitigation: COT, DOT and DPP from the same logistic regression ...", file=sys.stderr)
    fitted = demo_test_scores(random_state=args.random_state, progress=not args.no_progress)
    comparison = run_demo_comparison(fitted=fitted)
    page = demo_page(fitted, random_state=args.random_state)
    result.write(args.out / "logistic")
    comparison.write(args.out / "mitigation")
    page.write(args.out, figures=False)
    print()
    print(page.to_text())
    print(
        f"\nReport written to {args.out}/ (open report.html: every model side by side; "
        "logistic/ the audit of the logistic regression with intervals; mitigation/ the study)",
        file=sys.stderr,
    )
    return 0
