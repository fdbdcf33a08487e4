"""``fairot audit``: the fairness report of scores in a CSV file, or of a built-in baseline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def register(subparsers) -> None:
    """Add the ``audit`` subcommand."""
    from fairot.reporting import BUILTIN_DATASETS

    p = subparsers.add_parser(
        "audit",
        help="audit scores or predictions for group unfairness",
        description=(
            "Print the per-group fairness report of scores (classification) or predictions "
            "(regression) and write report.md, metrics.json and plots. Either --data with "
            "--score and --sensitive, or --dataset to audit a logistic regression on built-in data."
        ),
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--data", type=Path, metavar="FILE.csv", help="CSV file to audit")
    source.add_argument(
        "--dataset",
        choices=BUILTIN_DATASETS,
        help="audit LogisticRegression() on a built-in data set's test split",
    )
    p.add_argument("--score", metavar="COL", help="column of scores or predictions")
    p.add_argument(
        "--sensitive",
        metavar="COL[,COL]",
        help="sensitive column(s); several columns form intersectional groups",
    )
    p.add_argument("--label", metavar="COL", help="column of labels or responses (optional)")
    p.add_argument("--task", choices=("classification", "regression"), default="classification")
    p.add_argument(
        "--groups",
        choices=("intersection", "marginal"),
        default="intersection",
        help="how several sensitive columns form groups (default: intersection)",
    )
    p.add_argument("--threshold", type=float, default=0.5, help="decision threshold (0.5)")
    p.add_argument("--out", type=Path, help="folder for report.md, metrics.json and plots")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(func=run)


def _read_columns(args: argparse.Namespace):
    from fairot.cli import CLIError

    if not args.score or not args.sensitive:
        raise CLIError("--data needs --score COL and --sensitive COL[,COL]")
    if not args.data.is_file():
        raise CLIError(f"no such file: {args.data}")
    try:
        frame = pd.read_csv(args.data)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise CLIError(f"cannot read {args.data} as CSV: {exc}") from None
    if frame.empty:
        raise CLIError(f"{args.data} has no rows")
    sensitive = [c.strip() for c in args.sensitive.split(",") if c.strip()]
    wanted = [args.score, *sensitive] + ([args.label] if args.label else [])
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise CLIError(f"column(s) {missing} not in {args.data}; it has {list(frame.columns)}")
    scores = frame[args.score]
    if not pd.api.types.is_numeric_dtype(scores):
        raise CLIError(f"column {args.score!r} must be numeric scores; got dtype {scores.dtype}")
    if not np.all(np.isfinite(scores.to_numpy(dtype=float))):
        bad = int((~np.isfinite(scores.to_numpy(dtype=float))).sum())
        raise CLIError(f"column {args.score!r} has {bad} NaN or infinite value(s)")
    if args.task == "classification" and (scores.min() < 0 or scores.max() > 1):
        raise CLIError(
            f"column {args.score!r} must hold scores in [0, 1] for classification; "
            f"got [{scores.min():g}, {scores.max():g}] (use --task regression?)"
        )
    if frame[sensitive].isna().any().any():
        raise CLIError(f"sensitive column(s) {sensitive} have missing values")
    labels = frame[args.label] if args.label else None
    if labels is not None and labels.isna().any():
        raise CLIError(f"column {args.label!r} has missing values")
    return labels, scores, frame[sensitive]


def run(args: argparse.Namespace) -> int:
    """Run the audit and print it."""
    from fairot.reporting import audit, audit_logistic_regression

    plots = args.out is not None
    if args.dataset:
        result = audit_logistic_regression(args.dataset, plots=plots)
    else:
        labels, scores, sensitive = _read_columns(args)
        result = audit(
            labels,
            scores,
            sensitive,
            task=args.task,
            groups=args.groups,
            threshold=args.threshold,
            plots=plots,
            title=f"fairot audit of {args.data.name}: {args.score}",
        )
    print(result.to_json() if args.json else result.to_text())
    if args.out is not None:
        result.write(args.out)
        if not args.json:
            print(
                f"\nReport written to {args.out}/ (report.md, metrics.json, plots)", file=sys.stderr
            )
    return 0
