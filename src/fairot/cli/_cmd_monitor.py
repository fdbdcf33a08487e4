"""``fairot monitor``: a fairness metric over time windows of a score stream, with alerts.

Sorts the table by ``--time``, cuts it into consecutive windows of ``--window`` rows or calendar
periods ``--every`` (``7D``, ``1W``, ``1M``), and runs :class:`fairot.reporting.FairnessMonitor`
over them: the reference window, then one line per window (time range, rows, metric, bootstrap
band, permutation p-value, ALERT when the band is above ``--threshold`` and the p-value is at most
``--alpha``); the last, unfinished window is reported and flagged ``partial``. With ``--out``:
``monitor.csv``, ``monitor.json``, ``monitor.md``, ``monitor.html`` and ``monitor.png``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from fairot.cli._cmd_audit import write_out
from fairot.cli._io import (
    add_table_arguments,
    check_no_missing,
    check_out_dir,
    numeric_column,
    read_table,
    require_columns,
    split_columns,
)
from fairot.cli._options import add_favorable_outcome_argument, check_n_bootstrap

MSG_TIME = "column {column!r} must hold times (numbers or dates); got {example!r} on line {line}"
MSG_TIME_ZONES = (
    "--time column {column!r} mixes times with a UTC offset ({aware!r}, line {aware_line}) and "
    "without one ({naive!r}, line {naive_line}); expected all times with an offset (they are "
    "compared in UTC) or all without"
)
MSG_SHORT = (
    "{path} has no rows after its {reference} reference rows (the first window): fewer than one "
    "window of {window} to monitor; lower --window or give --reference FILE"
)
MSG_SHORT_EVERY = (
    "{path} has no rows after its reference window (the first {every} period, {reference} "
    "rows): nothing to monitor; use a shorter --every or give --reference FILE"
)
MSG_EVERY_DATES = (
    "--every needs dates in the --time column {column!r}; got numbers (use --window N to cut "
    "the stream by rows)"
)
MSG_THRESHOLD = "--threshold must be a finite number > 0 (the alert level); got {value}"


def register(subparsers) -> None:
    """Add the ``monitor`` subcommand."""
    from fairot.reporting import MONITOR_METRICS

    p = subparsers.add_parser(
        "monitor",
        help="fairness metric over time windows of a score stream, with drift alerts",
        description=(
            "Sort --data by --time, cut it into windows of --window rows or calendar periods "
            "--every (7D, 1W, 1M: the bins of pandas resample) and print the fairness metric of "
            "each with a bootstrap band; ALERT marks a band above --threshold whose value is "
            "also significant (p-value <= --alpha) against a null without disparity (groups "
            "permuted within the window). The last, unfinished window is reported, flagged "
            "partial. Times with UTC offsets are compared in UTC. The reference (for --metric "
            "reference_w1 and the baseline) is --reference FILE or the first window. With --out: "
            "monitor.csv, monitor.json, monitor.md, monitor.html and monitor.png, written all "
            "or nothing (an earlier run there is replaced in one step). Times must be finite "
            "numbers or dates."
        ),
    )
    p.add_argument("--data", type=Path, required=True, metavar="FILE", help="the stream")
    add_table_arguments(p)
    p.add_argument("--time", required=True, metavar="COL", help="time column (numbers or dates)")
    p.add_argument("--score", required=True, metavar="COL", help="column of scores in [0, 1]")
    p.add_argument("--sensitive", required=True, metavar="COL[,COL]", help="sensitive column(s)")
    p.add_argument(
        "--metric", choices=MONITOR_METRICS, default="sdd", help="metric per window (sdd)"
    )
    windows = p.add_mutually_exclusive_group()
    windows.add_argument(
        "--window", type=int, metavar="N", help="rows per window (1000 unless --every is given)"
    )
    windows.add_argument(
        "--every",
        metavar="PERIOD",
        help="calendar windows instead: a pandas offset alias such as 7D, 1W, 1M, 12h (needs "
        "dates in --time)",
    )
    p.add_argument("--threshold", type=float, default=0.05, help="alert level of the metric (0.05)")
    p.add_argument(
        "--decision-threshold",
        type=float,
        default=0.5,
        help="decision threshold of demographic_parity_difference (0.5)",
    )
    add_favorable_outcome_argument(p)
    p.add_argument("--reference", type=Path, metavar="FILE", help="reference scores (same columns)")
    p.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="false-alarm rate: alert only if the window's permutation p-value is <= ALPHA (0.05)",
    )
    p.add_argument(
        "--n-bootstrap", type=int, default=200, metavar="B", help="replicates, 10 to 10,000 (200)"
    )
    p.add_argument("--random-state", type=int, default=0, help="seed of the bootstrap (0)")
    p.add_argument("--out", type=Path, help="folder for monitor.csv/.json/.md/.html/.png")
    p.set_defaults(func=run)


def _has_offset(value: object) -> bool:
    """Whether one time value parses with a UTC offset (an unparsable one counts as naive)."""
    try:
        return pd.Timestamp(value).tzinfo is not None
    except (ValueError, TypeError):
        return False


def _times(frame: pd.DataFrame, column: str, path: Path) -> pd.Series:
    from fairot.cli import CLIError

    check_no_missing(frame, [column], path)
    raw = frame[column]
    if pd.api.types.is_numeric_dtype(raw):
        # +inf sorts last and would close no window: finite numbers only (named, with the line).
        return pd.Series(numeric_column(frame, column, path), index=raw.index, name=column)
    try:
        parsed = pd.to_datetime(raw, errors="coerce", format="mixed")
    except ValueError:
        # pandas refuses times from several zones. All carrying an offset: one instant each, so
        # compare them in UTC. Some naive: their zone is unknown, nothing to order them by.
        aware = raw.map(_has_offset).to_numpy()
        if not aware.all():
            first_aware, first_naive = int(np.argmax(aware)), int(np.argmin(aware))
            raise CLIError(
                MSG_TIME_ZONES.format(
                    column=column,
                    aware=raw.iloc[first_aware],
                    aware_line=first_aware + 2,
                    naive=raw.iloc[first_naive],
                    naive_line=first_naive + 2,
                )
            ) from None
        parsed = pd.to_datetime(raw, errors="coerce", format="mixed", utc=True)
    bad = parsed.isna().to_numpy()
    if bad.any():
        line = int(np.flatnonzero(bad)[0])
        raise CLIError(MSG_TIME.format(column=column, example=raw.iloc[line], line=line + 2))
    return parsed


def _scores_and_groups(frame: pd.DataFrame, args: argparse.Namespace, path: Path):
    from fairot.cli import CLIError

    columns = split_columns(args.sensitive)
    require_columns(frame, [args.score, *columns], path)
    scores = numeric_column(frame, args.score, path)
    if scores.min() < 0 or scores.max() > 1:
        raise CLIError(
            f"column {args.score!r} must hold scores in [0, 1]; got "
            f"[{scores.min():g}, {scores.max():g}]"
        )
    check_no_missing(frame, columns, path)
    return scores, frame[columns].reset_index(drop=True)


def _reference(args, frame, times, scores, groups):
    """Reference scores, groups, times, the rows it takes from the stream, and its description."""
    if args.reference is not None:
        reference = read_table(args.reference, args.sep)
        ref_scores, ref_groups = _scores_and_groups(reference, args, args.reference)
        ref_times = None
        if args.time in reference.columns:
            ref_times = _times(reference, args.time, args.reference)
        return ref_scores, ref_groups, ref_times, 0, f"reference file {args.reference.name}"
    if args.every is None:
        skip = min(args.window, len(frame))
    else:
        bins = pd.Series(np.arange(len(times)), index=pd.DatetimeIndex(times)).resample(args.every)
        skip = len(bins.indices[min(bins.indices)])
    source = f"first window of {args.data.name}"
    return scores[:skip], groups.iloc[:skip], times.iloc[:skip], skip, source


def run(args: argparse.Namespace) -> int:
    """Run the monitor over the stream and print one line per window."""
    from fairot.cli import CLIError
    from fairot.reporting import FairnessMonitor
    from fairot.utils import escape_terminal, terminal_table
    from fairot.utils.calendar import calendar_offset

    if not (math.isfinite(args.threshold) and args.threshold > 0):
        raise CLIError(MSG_THRESHOLD.format(value=args.threshold))
    # the period as the user wrote it ("1M") names the windows; pandas' alias would say "ME"
    every_label = None if args.every is None else str(args.every).strip()
    check_n_bootstrap(args.n_bootstrap, zero_allowed=False)
    if args.every is not None:
        args.every = calendar_offset(args.every, name="--every")
    elif args.window is None:
        args.window = 1000
    if args.out is not None:
        check_out_dir(args.out)
    frame = read_table(args.data, args.sep)
    require_columns(frame, [args.time], args.data)
    times = _times(frame, args.time, args.data)
    if args.every is not None and pd.api.types.is_numeric_dtype(times):
        raise CLIError(MSG_EVERY_DATES.format(column=args.time))
    order = np.argsort(times.to_numpy(), kind="stable")
    frame = frame.iloc[order].reset_index(drop=True)
    times = times.iloc[order].reset_index(drop=True)
    scores, groups = _scores_and_groups(frame, args, args.data)
    ref_scores, ref_groups, ref_times, skip, source = _reference(args, frame, times, scores, groups)
    if len(frame) == skip:
        every = every_label
        message = MSG_SHORT if args.every is None else MSG_SHORT_EVERY
        raise CLIError(
            message.format(path=args.data, reference=skip, window=args.window, every=every)
        )
    monitor = FairnessMonitor(
        ref_scores,
        ref_groups,
        metric=args.metric,
        window=args.window,
        every=every_label,
        threshold=args.threshold,
        n_bootstrap=args.n_bootstrap,
        alpha=args.alpha,
        decision_threshold=args.decision_threshold,
        favorable_outcome=args.favorable_outcome,
        random_state=args.random_state,
        reference_times=ref_times,
    )
    monitor.update(scores[skip:], groups.iloc[skip:], times=times.iloc[skip:])
    monitor.flush()
    # The monitor states the reading (monitor.direction) in every file and on the plot.
    if args.out is not None:
        write_out(
            args.out,
            "monitor",
            lambda stage: monitor.write(
                stage,
                title=f"{args.metric} of {args.score} per window of {args.data.name}",
                reference_source=source,
            ),
        )

    size = f"{args.window} rows" if args.every is None else f"{every_label} period"
    # Column and file names are user strings: shown, never obeyed by the terminal.
    print(
        f"fairot monitor: {args.metric} of {escape_terminal(args.score)} per {size} of "
        f"{escape_terminal(args.data.name)} "
        f"(alert when the {monitor.confidence:.0%} band is above {args.threshold:g} and the "
        f"permutation p-value is <= {monitor.alpha:g}); {monitor.direction}"
    )
    span = ""
    if monitor.reference_span_ is not None:
        span = f", {monitor.reference_span_[0]} to {monitor.reference_span_[1]}"
    print(
        f"reference window: {escape_terminal(source)}, {monitor.n_reference_} rows{span}; "
        f"{args.metric} {monitor.reference_value_:.4f}\n"
    )
    table = monitor.table().drop(columns="readjusted")
    shown = table.assign(
        alert=np.where(table["alert"], "ALERT", ""),
        partial=np.where(table["partial"], "partial", ""),
    )
    print(terminal_table(shown, index=False, float_format=lambda v: f"{v:.4f}"))
    n_alerts = int(table["alert"].sum())
    n_partial = int(table["partial"].sum())
    print(
        f"\n{n_alerts} alert(s) in {len(table)} window(s), {n_partial} partial",
        file=sys.stderr,
    )
    return 0
