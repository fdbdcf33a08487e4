"""``fairot audit``: the fairness report of scores in a CSV file, or of a built-in baseline."""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from pathlib import Path
from typing import Any

from fairot.cli._io import (
    add_table_arguments,
    check_no_missing,
    check_out_dir,
    label_column,
    numeric_column,
    read_table,
    require_columns,
    split_columns,
)
from fairot.cli._options import (
    add_constraint_argument,
    add_control_argument,
    add_favorable_outcome_argument,
    check_n_bootstrap,
    read_control,
)
from fairot.cli._verification import (
    VERIFICATION_FILES,
    add_verification_arguments,
    verification_audit,
)

PRINT_FORMATS = ("text", "md", "json", "html")
# The rules of ``fairot.reporting.audit(standards=...)``, listed here so that ``--help`` needs no
# import of the reporting package; a test checks they agree.
AUDIT_STANDARDS = ("four-fifths", "ll144", "credit", "distributional")
MSG_THRESHOLD = "--threshold must be a number in [0, 1]; got {value}"
MSG_WEIGHTS = "column {column!r} must hold non-negative weights with a positive sum"
MSG_WRITE_FAILED = "cannot write --out {path} ({reason}); it was left as it was"
MSG_NEEDS_COLUMNS = "--data needs --score COL and --sensitive COL[,COL]"
MSG_DATASET_TASK = "--dataset {name} is {task} data; pass --task {task}"
MSG_SCORE_RANGE = (
    "column {column!r} must hold scores in [0, 1] for classification; got [{low:g}, {high:g}] "
    "(use --task regression?)"
)


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    """Options shared by the commands that write an audit (``audit``, ``mitigate``)."""
    p.add_argument(
        "--threshold", type=float, default=0.5, help="decision threshold in [0, 1] (0.5)"
    )
    add_favorable_outcome_argument(p)
    p.add_argument(
        "--n-bootstrap",
        type=int,
        default=200,
        metavar="B",
        help="bootstrap replicates for the 95%% intervals, stratified by group (200; 0: none)",
    )
    p.add_argument("--random-state", type=int, default=0, help="seed of the bootstrap (0)")
    p.add_argument(
        "--min-group-size",
        type=int,
        default=30,
        metavar="N",
        help="leave groups with fewer rows out of the headline (30)",
    )
    small = p.add_mutually_exclusive_group()
    small.add_argument(
        "--include-small-groups",
        action="store_true",
        help="keep the groups under --min-group-size in the headline (default: left out, "
        "unless fewer than two groups would remain)",
    )
    small.add_argument(
        "--exclude-small-groups",
        action="store_true",
        help="always leave them out of the headline; an error if fewer than two groups remain",
    )
    p.add_argument(
        "--reference",
        metavar="GROUP",
        help="the group impact ratios and the credit rule compare against (default: the group "
        "given the favourable decision most often)",
    )
    p.add_argument(
        "--standard",
        action="append",
        choices=AUDIT_STANDARDS,
        metavar="RULE",
        help="apply a rule with a pass/fail verdict; repeat for several: "
        + ", ".join(AUDIT_STANDARDS)
        + " (default: four-fifths and distributional; distributional only for regression)",
    )


def report_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`fairot.reporting.audit` set by the shared options."""
    small = None
    if args.include_small_groups:
        small = False
    elif args.exclude_small_groups:
        small = True
    return {
        "n_bootstrap": args.n_bootstrap,
        "random_state": args.random_state,
        "min_group_size": args.min_group_size,
        "exclude_small_groups": small,
        "threshold": args.threshold,
        "favorable_outcome": args.favorable_outcome,
        "reference": args.reference,
        "standards": None if not args.standard else tuple(dict.fromkeys(args.standard)),
    }


def input_provenance(args: argparse.Namespace, path: Path | None) -> dict[str, Any]:
    """The command line and, for a file, its name, size and SHA-256."""
    from fairot.reporting import file_provenance

    out: dict[str, Any] = {"command": shlex.join(getattr(args, "command_line", ["fairot"]))}
    if path is not None:
        out.update({f"input_{k}": v for k, v in file_provenance(path).items()})
    return out


def register(subparsers) -> None:
    """Add the ``audit`` subcommand."""
    from fairot.reporting import BUILTIN_DATASETS, BUILTIN_REGRESSION_DATASETS

    p = subparsers.add_parser(
        "audit",
        help="audit scores or predictions for group unfairness",
        description=(
            "Print the per-group fairness report of scores (classification) or predictions "
            "(regression), with bootstrap intervals; with --out, write report.html (one "
            "self-contained page), report.md, metrics.json (flat, for MLflow) and plots. Either "
            "--data with --score and --sensitive, or --dataset to audit a logistic regression "
            "on built-in data. --out is written all or nothing (a staging folder put in place in "
            "one step); an earlier run there is replaced, other files are left alone."
        ),
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--data", type=Path, metavar="FILE", help="CSV/TSV file to audit")
    source.add_argument(
        "--scores",
        type=Path,
        metavar="FILE",
        help="with --task verification: CSV of face-verification pairs (score, is_same, group)",
    )
    source.add_argument(
        "--dataset",
        choices=BUILTIN_DATASETS + BUILTIN_REGRESSION_DATASETS,
        help=(
            "audit LogisticRegression() (classification) or GradientBoostingRegressor() "
            "(acs-excerpts, with --task regression) on a built-in data set's test split"
        ),
    )
    add_table_arguments(p)
    p.add_argument("--score", metavar="COL", help="column of scores or predictions")
    p.add_argument(
        "--sensitive",
        metavar="COL[,COL]",
        help="sensitive column(s); several columns form intersectional groups",
    )
    p.add_argument("--label", metavar="COL", help="column of labels or responses (optional)")
    p.add_argument(
        "--pos-label",
        metavar="VALUE",
        help="the positive class of a --label column that is not 0/1 (e.g. '>50K')",
    )
    p.add_argument(
        "--sample-weight",
        metavar="COL",
        help="column of non-negative sample weights (e.g. survey weights); weighted intervals",
    )
    p.add_argument(
        "--task", choices=("classification", "regression", "verification"), default="classification"
    )
    add_verification_arguments(p)
    p.add_argument(
        "--group-mode",
        choices=("intersection", "marginal"),
        default="intersection",
        help="how several sensitive columns form groups (default: intersection)",
    )
    add_control_argument(
        p,
        "legitimate strata (conditional parity): a section per stratum, and the "
        "distributional metrics recombined over the strata (needs --data)",
    )
    add_constraint_argument(
        p,
        "criterion audited besides the rates: equalized_odds / equal_opportunity add the "
        "strong disparities given the label (need --label)",
    )
    add_report_arguments(p)
    p.add_argument(
        "--out",
        type=Path,
        help="folder for report.html, report.md, metrics.json, report.json, plots",
    )
    p.add_argument(
        "--format",
        choices=PRINT_FORMATS,
        default="text",
        help="what to print on stdout: text (default), md, json or a whole html page",
    )
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.set_defaults(func=run)


def check_report_arguments(args: argparse.Namespace) -> None:
    """Validate the shared report options (before any file is read)."""
    from fairot.cli import CLIError

    if not (math.isfinite(args.threshold) and 0.0 <= args.threshold <= 1.0):
        raise CLIError(MSG_THRESHOLD.format(value=args.threshold))
    check_n_bootstrap(args.n_bootstrap, zero_allowed=True)
    if args.min_group_size < 1:
        raise CLIError(f"--min-group-size must be at least 1; got {args.min_group_size}")
    if getattr(args, "out", None) is not None:
        check_out_dir(args.out)


def read_audit_columns(
    path: Path,
    *,
    score: str | None,
    sensitive: str | None,
    label: str | None,
    task: str,
    sep: str | None,
    pos_label: str | None,
) -> tuple[Any, Any, Any, Any]:
    """The table and its labels, scores and sensitive columns, each checked with a clear error."""
    from fairot.cli import CLIError

    if not score or not sensitive:
        raise CLIError(MSG_NEEDS_COLUMNS)
    columns = split_columns(sensitive)
    frame = read_table(path, sep, text_columns=columns)
    require_columns(frame, [score, *columns] + ([label] if label else []), path)
    scores = numeric_column(frame, score, path)
    if task == "classification" and (scores.min() < 0 or scores.max() > 1):
        raise CLIError(MSG_SCORE_RANGE.format(column=score, low=scores.min(), high=scores.max()))
    check_no_missing(frame, columns, path)
    labels = None
    if label:
        if task == "classification":
            labels = label_column(frame, label, path, pos_label)
        else:
            labels = numeric_column(frame, label, path)
    elif pos_label is not None:
        raise CLIError("--pos-label needs --label")
    return frame, labels, scores, frame[columns]


def emit(
    result,
    args: argparse.Namespace,
    files: str = "report.html, report.md, metrics.json, report.json, plots",
) -> None:
    """Write the report folder (if asked), then print: nothing is printed before a failure."""
    from fairot.utils import escape_terminal

    fmt = "json" if getattr(args, "json", False) else args.format
    rendered = {
        "text": result.to_text,
        "md": result.to_markdown,
        "json": result.to_json,
        "html": result.to_html,
    }[fmt]()
    if args.out is not None:
        write_out(args.out, "audit", result.write)
    sys.stdout.write(rendered + "\n")
    if args.out is not None and fmt == "text":
        print(
            f"\nReport written to {escape_terminal(args.out)}/ ({files})",
            file=sys.stderr,
        )


def write_out(out: Path, command: str, write: Any, owned: tuple[str, ...] = ()) -> None:
    """Call ``write(folder)`` on a staging folder that then replaces ``out`` all or nothing."""
    from fairot.cli import CLIError
    from fairot.cli._outdir import staged_folder

    try:
        with staged_folder(out, owned, command=command) as stage:
            write(stage)
    except OSError as exc:
        raise CLIError(MSG_WRITE_FAILED.format(path=out, reason=exc.strerror or exc)) from None


def read_weights(frame: Any, column: str, path: Path) -> Any:
    """The ``--sample-weight`` column as finite non-negative floats, or a one-line error."""
    from fairot.cli import CLIError

    require_columns(frame, [column], path)
    weights = numeric_column(frame, column, path)
    if (weights < 0).any() or weights.sum() <= 0:
        raise CLIError(MSG_WEIGHTS.format(column=column))
    return weights


def run(args: argparse.Namespace) -> int:
    """Run the audit and print it."""
    from fairot.cli import CLIError
    from fairot.reporting import (
        BUILTIN_REGRESSION_DATASETS,
        audit,
        audit_gradient_boosting,
        audit_logistic_regression,
    )

    if args.task == "verification" or args.scores is not None:
        emit(verification_audit(args), args, VERIFICATION_FILES)
        return 0
    check_report_arguments(args)
    plots = args.out is not None or args.format == "html"
    options = {**report_options(args), "plots": plots}
    weight_column = getattr(args, "sample_weight", None)
    control = getattr(args, "control", None)
    if args.dataset:
        if weight_column:
            raise CLIError("--sample-weight needs --data")
        if control:
            raise CLIError("--control needs --data")
        if args.constraint != "demographic_parity":
            raise CLIError("--constraint needs --data (with --label)")
        regression = args.dataset in BUILTIN_REGRESSION_DATASETS
        if regression != (args.task == "regression"):
            task = "regression" if regression else "classification"
            raise CLIError(MSG_DATASET_TASK.format(name=args.dataset, task=task))
        options["provenance_extra"] = input_provenance(args, None)
        if regression:
            del options["threshold"], options["favorable_outcome"]
            result = audit_gradient_boosting(args.dataset, **options)
        else:
            result = audit_logistic_regression(args.dataset, **options)
    else:
        frame, labels, scores, sensitive = read_audit_columns(
            args.data,
            score=args.score,
            sensitive=args.sensitive,
            label=args.label,
            task=args.task,
            sep=args.sep,
            pos_label=args.pos_label,
        )
        result = audit(
            labels,
            scores,
            sensitive,
            task=args.task,
            group_mode=args.group_mode,
            title=f"fairot audit of {args.data.name}: {args.score}",
            model=f"scores in column {args.score!r} of {args.data.name}",
            provenance_extra=input_provenance(args, args.data),
            sample_weight=(
                None if not weight_column else read_weights(frame, weight_column, args.data)
            ),
            control_features=read_control(frame, control, args.data),
            constraint=args.constraint,
            **options,
        )
    emit(result, args)
    return 0
