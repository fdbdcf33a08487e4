"""``fairot mitigate``: make a model fair, from a CSV of its scores or of its features.

Post-processing (``--method dpp|regression``, :mod:`fairot.cli._postprocess`) adjusts a column of
the user's scores; in-processing (``--method cot|dot|fair-mlp|rate``, :mod:`fairot.cli._inprocess`)
fits the unaware logistic regression on feature columns and a fair model from it. The model is
fitted on part of ``--data`` and audited, before and after, on the held-out rest (a split
stratified on group x label, ``--test-size``, seeded by ``--random-state``), or fitted on all of
``--data`` and audited on ``--eval FILE`` (:mod:`fairot.cli._holdout`); the audits use the
``--constraint`` (and the ``--control`` strata) the model was fitted for. Writes
``report.html`` / ``report.md`` / ``report.json`` (before and after side by side on the held-out
rows, :func:`fairot.reporting.compare_audits`), ``model.skops``, the ``before/`` and ``after/``
audits and, with ``--apply``, ``adjusted.csv`` (``adjusted.tsv`` for a tab-separated ``--apply``
table): the new table with a ``<score>_fair`` column (``score_fair`` for in-processing).
``--sample-weight`` weighs the fit and the audits.
"""

from __future__ import annotations

import argparse
import io
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from fairot.cli import _inprocess, _postprocess
from fairot.cli._cmd_audit import (
    add_report_arguments,
    check_report_arguments,
    input_provenance,
    read_audit_columns,
    read_weights,
    report_options,
    write_out,
)
from fairot.cli._holdout import (
    DEFAULT_TEST_SIZE,
    Rows,
    add_holdout_arguments,
    check_holdout_arguments,
    split_rows,
)
from fairot.cli._inprocess import IN_PROCESSING
from fairot.cli._io import add_table_arguments, read_table, split_columns
from fairot.cli._options import (
    DEFAULT_CONSTRAINT,
    add_constraint_argument,
    add_control_argument,
    read_control,
)
from fairot.cli._postprocess import POST_PROCESSING
from fairot.cli._refusal import EXIT_REFUSED, degenerate_alert

METHODS = POST_PROCESSING + IN_PROCESSING
MSG_EPSILON = (
    "--epsilon is an absolute tolerance of --method regression; for --method {method} give "
    "--tau, the fraction of the raw disparity kept, in [0, 1]"
)
MSG_TAU_UNIT = (
    "--tau must be a number in [0, 1] for --method {method} (the fraction of the raw disparity "
    "kept: 1 keeps the raw model's score distributions, 0 is strong parity); got {value}"
)
MSG_TAU_CONSTRAINT = (
    "--tau {value:g} is a tolerance towards demographic parity; with --constraint {constraint} "
    "--method {method} fits the full criterion: leave --tau out (or 0)"
)
MSG_TOLERANCE_VALUE = "--{name} must be a finite number >= 0; got {value}"
MSG_ONLY_FOR = "--{name} is for --method {methods}; not --method {method}"
MSG_FEATURES_POST = (
    "--features is for the in-processing methods (cot, dot, fair-mlp); --method {method} "
    "adjusts the --score column"
)
MSG_SMALL_STRATA = "--small-strata is the policy for the strata of --control; pass --control COL"
MSG_SAME_FILE = "--apply {path} is inside --out; write the outputs elsewhere"
MSG_OUTPUT_COLUMN = "--apply {path} already has a column {column!r}, which mitigate would write"
MSG_STRATA_NOTE = (
    "Conditional parity given {control}: one map per stratum. The rows 'given the strata' "
    "recombine the strata with their shares of the rows; before/report.html and "
    "after/report.html have a section per stratum."
)
ADJUSTED_CSV = "adjusted.csv"
ADJUSTED_TSV = "adjusted.tsv"
#: Every entry mitigate writes in --out; all are replaced together (a stale adjusted table of an
#: earlier run with --apply is removed, so it never sits beside a model it did not come from).
OWNED = (
    "model.skops",
    "before",
    "after",
    "report.html",
    "report.md",
    "report.json",
    ADJUSTED_CSV,
    ADJUSTED_TSV,
)
COMPARED = (
    "sdd",
    "wass1",
    "demographic_parity_difference",
    "equalized_odds_difference",
    "seod",
    "seopd",
    "sdd_given_control",
    "wass1_given_control",
    "max_pairwise_w2",
    "max_pairwise_winf",
    "err",
    "mse",
)


def register(subparsers) -> None:
    """Add the ``mitigate`` subcommand."""
    p = subparsers.add_parser(
        "mitigate",
        help="make a model fair: post-process its scores, or train a fair model on features; "
        "save the model and before/after audits",
        description=(
            "Post-process the scores in --data (--method dpp|regression), or train a fair "
            "classifier on its feature columns (--method cot|dot|fair-mlp), on all but a "
            "held-out --test-size share (stratified on group x label; or on all of it with "
            "--eval FILE), and write to --out: report.html, report.md and report.json (the "
            "model before and after, side by side, on the held-out rows), model.skops (load "
            "with fairot.load_model), before/ and after/ audits of the held-out rows "
            "(report.html, report.md, metrics.json) and, with --apply, adjusted.csv (the "
            "--apply table with a <score>_fair column, score_fair for cot/dot/fair-mlp, in the "
            "--apply file's separator; adjusted.tsv when that is a tab). For cot/dot/fair-mlp "
            "the model's inputs are --features (default: every column but --label, "
            "--sensitive, --control and --sample-weight), numeric ones standardised and the "
            "others one-hot encoded; the sensitive columns are never inputs (they name the "
            "groups at fit only), and 'before' is the unaware LogisticRegression() on the same "
            "inputs. All outputs appear together or not at all: they replace those of an "
            "earlier run in --out in one step; other files there are left alone."
        ),
    )
    p.add_argument("--data", type=Path, required=True, metavar="FILE", help="table to fit on")
    add_table_arguments(p)
    p.add_argument(
        "--score", metavar="COL", help="dpp/regression: column of the model's scores to adjust"
    )
    p.add_argument("--sensitive", required=True, metavar="COL[,COL]", help="sensitive column(s)")
    p.add_argument(
        "--label",
        metavar="COL",
        help="labels or responses: for the audits; the training labels of cot/dot/fair-mlp",
    )
    p.add_argument("--pos-label", metavar="VALUE", help="positive class of a non-0/1 --label")
    p.add_argument(
        "--sample-weight",
        metavar="COL",
        help="non-negative sample weights, for the fit and the audits (and their intervals)",
    )
    p.add_argument(
        "--method",
        choices=METHODS,
        required=True,
        help="dpp: quantile post-processing of scores in [0, 1] to strong demographic parity; "
        "regression: approximate demographic parity within a Wasserstein tolerance; cot / "
        "dot: a logistic model trained by continuous / discrete optimal transport "
        "(COTClassifier / DOTClassifier, from the unaware one); fair-mlp: an MLP with the "
        "Wasserstein parity penalty (FairMLPClassifier, needs PyTorch); rate: the "
        "attribute-blind classifier most accurate within a rate budget (RateConstrainedClassifier, "
        "with --max-difference or --min-ratio)",
    )
    p.add_argument(
        "--features",
        metavar="COL[,COL]",
        help="cot/dot/fair-mlp: the model's input columns (default: every column but --label, "
        "--sensitive, --control and --sample-weight; a sensitive column is refused)",
    )
    add_constraint_argument(
        p,
        "criterion fitted and audited: demographic_parity (default), or equalized_odds / "
        "equal_opportunity (the groups' scores given the label; cot/dot/fair-mlp only, since a "
        "score map without labels at prediction cannot equalise them)",
    )
    add_control_argument(
        p,
        "dpp/regression: legitimate strata (conditional parity): parity is fitted within each "
        "stratum (one map per stratum; --apply rows need these columns), and the audits have a "
        "section per stratum",
    )
    p.add_argument(
        "--small-strata",
        choices=("pooled", "error"),
        help="with --control: a stratum where a group is missing or has too few rows is mapped "
        "with the map of all strata together (pooled, the default; the report names them), or "
        "is an error",
    )
    tolerance = p.add_mutually_exclusive_group()
    tolerance.add_argument(
        "--tau",
        type=float,
        help="fraction of the raw disparity kept: regression, a share of today's largest W_p "
        "gap; the others, in [0, 1], each group moved 1 - tau of the way to the common "
        "target (0, the default: strong demographic parity; above 0, only with --constraint "
        "demographic_parity)",
    )
    tolerance.add_argument("--epsilon", type=float, help="regression: absolute W_p tolerance")
    p.add_argument(
        "--p", default="2", choices=("1", "2", "inf"), help="regression: order of W_p (2)"
    )
    p.add_argument(
        "--n-updates",
        type=int,
        metavar="K",
        help="cot/dot: number of updates (default: the classifier's, 100000)",
    )
    p.add_argument(
        "--n-epochs", type=int, metavar="N", help="fair-mlp: training epochs (default: 40)"
    )
    _inprocess.add_rate_arguments(p)
    add_holdout_arguments(p)
    p.add_argument(
        "--apply",
        type=Path,
        metavar="FILE",
        help="table of new rows to score: dpp/regression adjust its --score column (it needs "
        "the sensitive columns); cot/dot/fair-mlp score its --features columns",
    )
    p.add_argument("--out", type=Path, required=True, help="output folder")
    p.add_argument(
        "--allow-degenerate",
        action="store_true",
        help="write model.skops and the --apply scores even when the mitigated model's held-out "
        "AUC fell to chance (at or below fairot.metrics.CHANCE_AUC, 0.55) while the raw "
        "model's did not (default: refuse, write the reports saying why, exit with status 1)",
    )
    add_report_arguments(p)
    p.set_defaults(func=run, format="text")


def _check_tolerance(args: argparse.Namespace) -> None:
    from fairot.cli import CLIError

    if args.epsilon is not None and args.method != "regression":
        raise CLIError(MSG_EPSILON.format(method=args.method))
    for name in ("tau", "epsilon"):
        value = getattr(args, name)
        if value is None:
            continue
        if args.method != "regression" and not 0 <= value <= 1:
            raise CLIError(MSG_TAU_UNIT.format(method=args.method, value=value))
        if not (math.isfinite(value) and value >= 0):
            raise CLIError(MSG_TOLERANCE_VALUE.format(name=name, value=value))
    if args.tau and args.constraint != DEFAULT_CONSTRAINT:
        raise CLIError(
            MSG_TAU_CONSTRAINT.format(
                value=args.tau, constraint=args.constraint, method=args.method
            )
        )


def _check_method_options(args: argparse.Namespace) -> None:
    from fairot.cli import CLIError

    only = {"n_updates": ("cot", "dot"), "n_epochs": ("fair-mlp",), "p": ("regression",)}
    for name, methods in only.items():
        value = getattr(args, name)
        if value is None or (name == "p" and value == "2"):
            continue
        flag = name.replace("_", "-")
        if args.method not in methods:
            raise CLIError(
                MSG_ONLY_FOR.format(name=flag, methods="/".join(methods), method=args.method)
            )
        if name != "p" and value < 1:
            raise CLIError(_inprocess.MSG_COUNT_OPTION.format(name=flag, value=value))
    if args.small_strata is not None and not args.control:
        raise CLIError(MSG_SMALL_STRATA)
    _inprocess.check_rate_options(args)
    if args.method in IN_PROCESSING:
        if args.score:
            raise CLIError(_inprocess.MSG_NO_SCORE.format(method=args.method))
        if not args.label:
            raise CLIError(_inprocess.MSG_NEEDS_LABEL.format(method=args.method))
        if args.control:
            raise CLIError(_inprocess.MSG_CONTROL.format(method=args.method))
        return
    if args.features:
        raise CLIError(MSG_FEATURES_POST.format(method=args.method))
    if not args.score:
        raise CLIError(_postprocess.MSG_NEEDS_SCORE.format(method=args.method))
    if args.constraint != DEFAULT_CONSTRAINT:
        raise CLIError(
            _postprocess.MSG_CONSTRAINT.format(constraint=args.constraint, method=args.method)
        )


def _check_arguments(args: argparse.Namespace) -> None:
    from fairot.cli import CLIError

    _check_tolerance(args)
    _check_method_options(args)
    check_report_arguments(args)
    check_holdout_arguments(args)
    if args.apply is not None and args.apply.resolve().is_relative_to(args.out.resolve()):
        raise CLIError(MSG_SAME_FILE.format(path=args.apply))


def _comparison(before, after) -> pd.DataFrame:
    rows = {}
    for key in COMPARED:
        if key in before.summary:
            rows[key] = {"before": before.summary[key], "after": after.summary[key]}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "metric"
    return table


def _read_rows(
    args: argparse.Namespace, path: Path, task: str, features: _inprocess.Features | None
) -> tuple[Rows, _inprocess.Features | None]:
    """The rows of a table (``--data`` or ``--eval``), with their weights and strata."""
    if args.method in IN_PROCESSING:
        frame, rows, features = _inprocess.read_rows(args, path, features)
    else:
        frame, labels, scores, sensitive = read_audit_columns(
            path,
            score=args.score,
            sensitive=args.sensitive,
            label=args.label,
            task=task,
            sep=args.sep,
            pos_label=args.pos_label,
        )
        rows = Rows(scores, labels, sensitive.reset_index(drop=True), None)
    if args.sample_weight:
        rows.weights = read_weights(frame, args.sample_weight, path)
    control = read_control(frame, args.control, path)
    rows.control = None if control is None else control.reset_index(drop=True)
    return rows, features


class _Mitigation:
    """What one run fitted and computed: the model, the held-out scores, the report's words."""

    def __init__(self, args: argparse.Namespace, fit_rows: Rows, held: Rows, features) -> None:
        name = args.data.name
        if args.method in IN_PROCESSING:
            fitted = _inprocess.fit(args, fit_rows, features)
            self.model = fitted.fair
            self.before = _inprocess.scores(fitted.raw, held.features)
            self.after = _inprocess.scores(fitted.fair, held.features)
            self.notes = [
                features.describe(split_columns(args.sensitive)),
                _inprocess.describe_models(args, fitted),
                *fitted.warnings,
            ]
            self.warnings = fitted.warnings
            self.subject = f"a model of {args.label} on {name}"
            self.before_title = f"Before: unaware logistic regression of {args.label} on {name}"
            self.output_column = "score_fair"
        else:
            with _postprocess.caught_warnings() as said:
                self.model = _postprocess.fit(args, fit_rows)
                self.after = _postprocess.predict(
                    self.model, args.method, held.scores, held.sensitive, held.control
                )
            self.before = held.scores
            self.notes, self.warnings = list(said), list(said)
            if args.control:
                self.notes.insert(0, MSG_STRATA_NOTE.format(control=args.control))
            self.subject = f"{args.score} on {name}"
            self.before_title = f"Before: {self.subject}"
            self.output_column = f"{args.score}_fair"

    def apply(self, args: argparse.Namespace, features) -> tuple[pd.DataFrame, np.ndarray] | None:
        """The ``--apply`` table and its new scores (``None`` without ``--apply``)."""
        from fairot.cli import CLIError

        if args.apply is None:
            return None
        if args.method in IN_PROCESSING:
            frame, inputs = _inprocess.read_apply(args, args.apply, features)
            applied = _inprocess.scores(self.model, inputs)
        else:
            # Read as --data is (read_audit_columns), so that the strata compare equal.
            frame = read_table(args.apply, args.sep, text_columns=split_columns(args.sensitive))
            applied = _postprocess.adjust(self.model, args, frame, args.apply)
        if self.output_column in frame.columns:
            raise CLIError(MSG_OUTPUT_COLUMN.format(path=args.apply, column=self.output_column))
        return frame, applied


def run(args: argparse.Namespace) -> int:
    """Fit, adjust, audit on held-out rows, then write everything; print before and after."""
    from fairot.reporting import audit, compare_audits
    from fairot.utils import escape_terminal, model_to_bytes, terminal_table, write_atomic

    _check_arguments(args)
    task = "regression" if args.method == "regression" else "classification"
    rows, features = _read_rows(args, args.data, task, None)
    if args.eval is not None:
        fit_rows = rows
        held, _ = _read_rows(args, args.eval, task, features)
        how = f"Fitted on all {len(rows)} rows of {args.data.name}, audited on the "
        how += f"{len(held)} rows of {args.eval.name}."
    else:
        size = DEFAULT_TEST_SIZE if args.test_size is None else args.test_size
        fit_rows, held, how = split_rows(
            rows, task=task, test_size=size, random_state=args.random_state
        )
    done = _Mitigation(args, fit_rows, held, features)
    applied = done.apply(args, features)

    options = {
        "task": task,
        **report_options(args),
        "sample_weight": held.weights,
        "control_features": held.control,
        "constraint": args.constraint,
        "provenance_extra": input_provenance(args, args.data),
    }
    before = audit(held.labels, done.before, held.sensitive, title=done.before_title, **options)
    after = audit(
        held.labels,
        done.after,
        held.sensitive,
        title=f"After {args.method}: {done.subject}",
        **options,
    )
    alert, refused = degenerate_alert(before, after, args.allow_degenerate)
    comparison = compare_audits(
        {"before": before, f"after {args.method}": after},
        title=f"fairot mitigate --method {args.method}: {done.subject}",
        notes=[how, *done.notes],
        alerts=[] if alert is None else [alert],
    )
    # skops cannot save a torch network: the fair MLP is used in this run (--apply) only.
    # model_to_bytes: skops' bytes with the fairot version recorded (load_model reads it).
    model_bytes = None if args.method == "fair-mlp" else model_to_bytes(done.model)
    if refused:  # a model at chance is not written, nor its scores (the reports say why)
        model_bytes, applied = None, None

    # Everything is computed; only now is anything written, all into a staging folder that
    # replaces the outputs in --out in one step (all or nothing).
    adjusted_name = None
    if applied is not None:
        apply_frame, scores = applied
        sep = apply_frame.attrs.get("sep", ",")
        adjusted_name = ADJUSTED_TSV if sep == "\t" else ADJUSTED_CSV

    def write(stage: Path) -> None:
        comparison.write(stage, figures=False)
        before.write(stage / "before")
        after.write(stage / "after")
        if model_bytes is not None:
            write_atomic(stage / "model.skops", model_bytes)
        if applied is not None:
            table = apply_frame.copy()
            table[done.output_column] = scores
            buffer = io.StringIO()
            table.to_csv(buffer, index=False, sep=sep)
            write_atomic(stage / adjusted_name, buffer.getvalue())

    write_out(args.out, "mitigate", write, OWNED)

    # File, column and group names are user strings: each shown on its line, never obeyed.
    for line in done.warnings:
        print(f"fairot mitigate: warning: {escape_terminal(line)}", file=sys.stderr)
    print(f"fairot mitigate --method {args.method}: {escape_terminal(done.subject)}")
    notes = [how, *done.notes[: 2 if args.method in IN_PROCESSING else 0]]
    print("\n".join(escape_terminal(n) for n in notes) + "\n")
    print(terminal_table(_comparison(before, after), float_format=lambda v: f"{v:.4f}"))
    written = "report.html, report.md, report.json, before/, after/"
    written += "" if model_bytes is None else ", model.skops"
    written += f", {adjusted_name}" if adjusted_name else ""
    print(f"\nWritten to {escape_terminal(args.out)}/: {written}", file=sys.stderr)
    if alert is not None:
        # the alert names groups: user strings, escaped for the terminal
        shown = escape_terminal(alert)
        print(f"fairot mitigate: {'error' if refused else 'warning'}: {shown}", file=sys.stderr)
    return EXIT_REFUSED if refused else 0
