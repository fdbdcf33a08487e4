"""``fairot mitigate``: make a model's scores fair by post-processing, from a CSV of its scores.

``--method dpp`` fits :class:`~fairot.classification.QuantileParityPostProcessor` (every group's
scores mapped onto their barycenter: strong demographic parity, or ``1 - τ`` of the way there
with ``--tau``); ``--method regression`` fits
:class:`~fairot.regression.WassersteinFairRegressor` (every pair of groups within ε in W_p, or
τ times the current gap). Both wrap :class:`fairot.utils.ScoreColumn`, so the user's scores are
the model. The model is fitted on part of ``--data`` and audited, before and after, on the
held-out rest (a split stratified on group x label, ``--test-size``, seeded by
``--random-state``), or fitted on all of ``--data`` and audited on ``--eval FILE``
(:mod:`fairot.cli._holdout`). Writes ``report.html`` / ``report.md`` / ``report.json`` (the raw
and the adjusted scores side by side on the held-out rows,
:func:`fairot.reporting.compare_audits`), ``model.skops``, the ``before/`` and ``after/``
audits and, with ``--apply``, ``adjusted.csv`` (``adjusted.tsv`` for a tab-separated
``--apply`` table): the new table with a ``<score>_fair`` column. ``--sample-weight`` weighs
the fit and the audits.
"""

from __future__ import annotations

import argparse
import io
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from fairot.cli._cmd_audit import (
    add_report_arguments,
    check_report_arguments,
    input_provenance,
    read_audit_columns,
    read_weights,
    report_options,
)
from fairot.cli._holdout import (
    DEFAULT_TEST_SIZE,
    Rows,
    add_holdout_arguments,
    check_holdout_arguments,
    split_rows,
)
from fairot.cli._io import (
    add_table_arguments,
    numeric_column,
    read_table,
    require_columns,
    split_columns,
)

MSG_TOLERANCE_DPP = (
    "--epsilon is an absolute tolerance of --method regression; for --method dpp give --tau, the "
    "fraction of the raw disparity kept, in [0, 1]"
)
MSG_TAU_DPP = (
    "--tau must be a number in [0, 1] for --method dpp (the fraction of the raw disparity kept: "
    "1 keeps the scores, 0 is strong demographic parity); got {value}"
)
MSG_TOLERANCE_VALUE = "--{name} must be a finite number >= 0; got {value}"
MSG_BOTH = "give --tau or --epsilon, not both"
MSG_SAME_FILE = "--apply {path} is inside --out; write the outputs elsewhere"
MSG_WRITE_FAILED = "cannot write --out {path} ({reason}); it was left as it was"
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
    "max_pairwise_w2",
    "max_pairwise_winf",
    "err",
    "mse",
)


def register(subparsers) -> None:
    """Add the ``mitigate`` subcommand."""
    p = subparsers.add_parser(
        "mitigate",
        help="post-process scores from a CSV to fairness; save the model and before/after audits",
        description=(
            "Fit a fairness post-processor on the scores in --data (all but a held-out "
            "--test-size share, stratified on group x label; or all of it with --eval FILE) and "
            "write to --out: report.html, report.md and report.json (the scores before and "
            "after, side by side, on the held-out rows), model.skops (load with "
            "fairot.load_model), before/ and after/ audits of the held-out rows (report.html, "
            "report.md, metrics.json) and, with --apply, adjusted.csv (the --apply table with a "
            "<score>_fair column, in the --apply file's separator; adjusted.tsv when that is a "
            "tab). All outputs appear together or not at all: they replace those of an earlier "
            "run in --out in one step; other files there are left alone."
        ),
    )
    p.add_argument("--data", type=Path, required=True, metavar="FILE", help="scores to fit on")
    add_table_arguments(p)
    p.add_argument("--score", required=True, metavar="COL", help="column of the model's scores")
    p.add_argument("--sensitive", required=True, metavar="COL[,COL]", help="sensitive column(s)")
    p.add_argument("--label", metavar="COL", help="labels or responses, for the audits")
    p.add_argument("--pos-label", metavar="VALUE", help="positive class of a non-0/1 --label")
    p.add_argument(
        "--sample-weight",
        metavar="COL",
        help="non-negative sample weights, for the fit and the audits (and their intervals)",
    )
    p.add_argument(
        "--method",
        choices=("dpp", "regression"),
        required=True,
        help="dpp: quantile post-processing of scores in [0, 1] to strong demographic parity; "
        "regression: approximate demographic parity within a Wasserstein tolerance",
    )
    tolerance = p.add_mutually_exclusive_group()
    tolerance.add_argument(
        "--tau",
        type=float,
        help="fraction of the raw disparity kept: regression, a share of today's largest W_p "
        "gap; dpp, in [0, 1], each group moved 1 - tau of the way to the barycenter (0)",
    )
    tolerance.add_argument("--epsilon", type=float, help="regression: absolute W_p tolerance")
    p.add_argument(
        "--p", default="2", choices=("1", "2", "inf"), help="regression: order of W_p (2)"
    )
    add_holdout_arguments(p)
    p.add_argument("--apply", type=Path, metavar="FILE", help="table of new scores to adjust")
    p.add_argument("--out", type=Path, required=True, help="output folder")
    add_report_arguments(p)
    p.set_defaults(func=run, format="text")


def _check_arguments(args: argparse.Namespace) -> None:
    from fairot.cli import CLIError

    for name in ("tau", "epsilon"):
        value = getattr(args, name)
        if value is None:
            continue
        if args.method == "dpp" and name == "epsilon":
            raise CLIError(MSG_TOLERANCE_DPP)
        if args.method == "dpp" and not 0 <= value <= 1:
            raise CLIError(MSG_TAU_DPP.format(value=value))
        if not (math.isfinite(value) and value >= 0):
            raise CLIError(MSG_TOLERANCE_VALUE.format(name=name, value=value))
    check_report_arguments(args)
    check_holdout_arguments(args)
    if args.apply is not None and args.apply.resolve().is_relative_to(args.out.resolve()):
        raise CLIError(MSG_SAME_FILE.format(path=args.apply))


def _fit(args: argparse.Namespace, rows: Rows):
    from sklearn.frozen import FrozenEstimator

    from fairot.utils import ScoreColumn

    scores, labels, sensitive, weights = rows.scores, rows.labels, rows.sensitive, rows.weights
    X = scores[:, None]
    if args.method == "dpp":
        from fairot.classification import QuantileParityPostProcessor

        # Labels do not enter quantile post-processing; without them, a placeholder with both
        # classes (the upper half of the scores) gives the classifier its two classes.
        y = labels if labels is not None else (np.argsort(np.argsort(scores)) >= len(scores) // 2)
        y = np.asarray(y, dtype=int)
        # ScoreColumn's fit takes no weights; frozen, it is the same model and the weights go to
        # the group quantiles only.
        scorer = ScoreColumn() if weights is None else FrozenEstimator(ScoreColumn().fit(X, y))
        model = QuantileParityPostProcessor(
            estimator=scorer, tau=0.0 if args.tau is None else args.tau
        )
        return model.fit(X, y, sensitive_features=sensitive, sample_weight=weights)
    from fairot.regression import WassersteinFairRegressor

    model = WassersteinFairRegressor(
        estimator=FrozenEstimator(ScoreColumn().fit(X)),
        p=np.inf if args.p == "inf" else int(args.p),
        tau=args.tau,
        epsilon=args.epsilon,
    )
    # With the squared cost the responses do not enter the adjustment; the scores stand in.
    model.fit(
        X,
        scores if labels is None else labels,
        sensitive_features=sensitive,
        sample_weight=weights,
    )
    return model


def _predict(model, method: str, scores: np.ndarray, sensitive: pd.DataFrame) -> np.ndarray:
    """The adjusted scores of rows (scores and their sensitive columns)."""
    if method == "dpp":
        return model.predict_proba(scores[:, None], sensitive_features=sensitive)[:, 1]
    return model.predict(scores[:, None], sensitive_features=sensitive)


def _adjust(model, args: argparse.Namespace, frame: pd.DataFrame, path: Path) -> np.ndarray:
    from fairot.cli._cmd_audit import MSG_SCORE_RANGE
    from fairot.cli._io import check_no_missing

    columns = split_columns(args.sensitive)
    require_columns(frame, [args.score, *columns], path)
    scores = numeric_column(frame, args.score, path)
    check_no_missing(frame, columns, path)
    if args.method == "dpp" and (scores.min() < 0 or scores.max() > 1):
        from fairot.cli import CLIError

        raise CLIError(
            MSG_SCORE_RANGE.format(column=args.score, low=scores.min(), high=scores.max())
        )
    return _predict(model, args.method, scores, frame[columns])


def _comparison(before, after) -> pd.DataFrame:
    rows = {}
    for key in COMPARED:
        if key in before.summary:
            rows[key] = {"before": before.summary[key], "after": after.summary[key]}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "metric"
    return table


def _read_rows(args: argparse.Namespace, path: Path, task: str) -> tuple[pd.DataFrame, Rows]:
    frame, labels, scores, sensitive = read_audit_columns(
        path,
        score=args.score,
        sensitive=args.sensitive,
        label=args.label,
        task=task,
        sep=args.sep,
        pos_label=args.pos_label,
    )
    weights = None if not args.sample_weight else read_weights(frame, args.sample_weight, path)
    return frame, Rows(scores, labels, sensitive.reset_index(drop=True), weights)


def run(args: argparse.Namespace) -> int:
    """Fit, adjust, audit on held-out rows, then write everything; print before and after."""
    import skops.io

    from fairot.cli import CLIError
    from fairot.cli._outdir import staged_folder
    from fairot.reporting import audit, compare_audits
    from fairot.utils import write_atomic

    _check_arguments(args)
    task = "classification" if args.method == "dpp" else "regression"
    _, rows = _read_rows(args, args.data, task)
    if args.eval is not None:
        fit_rows = rows
        _, held = _read_rows(args, args.eval, task)
        how = f"Fitted on all {len(rows.scores)} rows of {args.data.name}, audited on the "
        how += f"{len(held.scores)} rows of {args.eval.name}."
    else:
        size = DEFAULT_TEST_SIZE if args.test_size is None else args.test_size
        fit_rows, held, how = split_rows(
            rows, task=task, test_size=size, random_state=args.random_state
        )
    apply_frame = (
        None
        if args.apply is None
        else read_table(args.apply, args.sep, text_columns=split_columns(args.sensitive))
    )
    model = _fit(args, fit_rows)
    fair = _predict(model, args.method, held.scores, held.sensitive)
    applied = None if apply_frame is None else _adjust(model, args, apply_frame, args.apply)

    options = {
        "task": task,
        **report_options(args),
        "sample_weight": held.weights,
        "provenance_extra": input_provenance(args, args.data),
    }
    name = args.data.name
    before = audit(
        held.labels, held.scores, held.sensitive, title=f"Before: {args.score} on {name}", **options
    )
    after = audit(
        held.labels,
        fair,
        held.sensitive,
        title=f"After {args.method}: {args.score} on {name}",
        **options,
    )
    comparison = compare_audits(
        {"before": before, f"after {args.method}": after},
        title=f"fairot mitigate --method {args.method}: {args.score} on {name}",
        notes=[how],
    )
    model_bytes = skops.io.dumps(model)

    # Everything is computed; only now is anything written, all into a staging folder that
    # replaces the outputs in --out in one step (all or nothing).
    adjusted_name = None
    if applied is not None:
        sep = apply_frame.attrs.get("sep", ",")
        adjusted_name = ADJUSTED_TSV if sep == "\t" else ADJUSTED_CSV
    try:
        with staged_folder(args.out, OWNED) as stage:
            comparison.write(stage, figures=False)
            before.write(stage / "before")
            after.write(stage / "after")
            write_atomic(stage / "model.skops", model_bytes)
            if applied is not None:
                table = apply_frame.copy()
                table[f"{args.score}_fair"] = applied
                buffer = io.StringIO()
                table.to_csv(buffer, index=False, sep=sep)
                write_atomic(stage / adjusted_name, buffer.getvalue())
    except OSError as exc:
        raise CLIError(MSG_WRITE_FAILED.format(path=args.out, reason=exc.strerror or exc)) from None

    print(f"fairot mitigate --method {args.method}: {args.score} on {name}")
    print(how + "\n")
    print(_comparison(before, after).to_string(float_format=lambda v: f"{v:.4f}"))
    written = "report.html, report.md, report.json, model.skops, before/, after/"
    written += f", {adjusted_name}" if adjusted_name else ""
    print(f"\nWritten to {args.out}/: {written}", file=sys.stderr)
    return 0
