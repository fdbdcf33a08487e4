"""``fairot monitor``: a fairness metric over time windows of a score stream, with alerts.

Sorts the table by ``--time``, cuts it into consecutive windows of ``--window`` rows, and runs
:class:`fairot.reporting.FairnessMonitor` over them: one line per window (time range, metric,
bootstrap band, permutation p-value, ALERT when the band is above ``--threshold`` and the p-value
is at most ``--alpha``). With ``--out``: ``monitor.csv``
and ``monitor.png``.
"""

from __future__ import annotations

import argparse
import io
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from fairot.cli._io import (
    add_table_arguments,
    check_no_missing,
    check_out_dir,
    numeric_column,
    read_table,
    require_columns,
    split_columns,
)

MSG_TIME = "column {column!r} must hold times (numbers or dates); got {example!r} on line {line}"
MSG_TIME_ZONES = (
    "--time column {column!r} mixes times with a UTC offset ({aware!r}, line {aware_line}) and "
    "without one ({naive!r}, line {naive_line}); expected all times with an offset (they are "
    "compared in UTC) or all without"
)
MSG_SHORT = (
    "{path} has {n} rows after the {reference} reference rows: fewer than one window of "
    "{window}; lower --window"
)
MSG_THRESHOLD = "--threshold must be a finite number > 0 (the alert level); got {value}"


def register(subparsers) -> None:
    """Add the ``monitor`` subcommand."""
    from fairot.reporting import MONITOR_METRICS

    p = subparsers.add_parser(
        "monitor",
        help="fairness metric over time windows of a score stream, with drift alerts",
        description=(
            "Sort --data by --time, cut it into windows of --window rows and print the fairness "
            "metric of each with a bootstrap band; ALERT marks a band above --threshold whose "
            "value is also significant (p-value <= --alpha) against a null without disparity "
            "(groups permuted within the window). Times with UTC offsets are compared in UTC. The "
            "reference (for --metric reference_w1 and the baseline) is --reference FILE or the "
            "first window. With --out: monitor.csv and monitor.png (replaced if present)."
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
    p.add_argument("--window", type=int, default=1000, metavar="N", help="rows per window (1000)")
    p.add_argument("--threshold", type=float, default=0.05, help="alert level of the metric (0.05)")
    p.add_argument(
        "--decision-threshold",
        type=float,
        default=0.5,
        help="decision threshold of demographic_parity_difference (0.5)",
    )
    p.add_argument("--reference", type=Path, metavar="FILE", help="reference scores (same columns)")
    p.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="false-alarm rate: alert only if the window's permutation p-value is <= ALPHA (0.05)",
    )
    p.add_argument("--n-bootstrap", type=int, default=200, metavar="B", help="replicates (200)")
    p.add_argument("--random-state", type=int, default=0, help="seed of the bootstrap (0)")
    p.add_argument("--out", type=Path, help="folder for monitor.csv and monitor.png")
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
        return raw
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


def run(args: argparse.Namespace) -> int:
    """Run the monitor over the stream and print one line per window."""
    from fairot.cli import CLIError
    from fairot.reporting import FairnessMonitor

    if not (math.isfinite(args.threshold) and args.threshold > 0):
        raise CLIError(MSG_THRESHOLD.format(value=args.threshold))
    if args.out is not None:
        check_out_dir(args.out)
    frame = read_table(args.data, args.sep)
    require_columns(frame, [args.time], args.data)
    times = _times(frame, args.time, args.data)
    order = np.argsort(times.to_numpy(), kind="stable")
    frame = frame.iloc[order].reset_index(drop=True)
    times = times.iloc[order].reset_index(drop=True)
    scores, groups = _scores_and_groups(frame, args, args.data)
    if args.reference is not None:
        reference = read_table(args.reference, args.sep)
        ref_scores, ref_groups = _scores_and_groups(reference, args, args.reference)
        skip = 0
    else:
        skip = min(args.window, len(frame))
        ref_scores, ref_groups = scores[:skip], groups.iloc[:skip]
    if len(frame) - skip < args.window:
        raise CLIError(
            MSG_SHORT.format(
                path=args.data, n=len(frame) - skip, reference=skip, window=args.window
            )
        )
    monitor = FairnessMonitor(
        ref_scores,
        ref_groups,
        metric=args.metric,
        window=args.window,
        threshold=args.threshold,
        n_bootstrap=args.n_bootstrap,
        alpha=args.alpha,
        decision_threshold=args.decision_threshold,
        random_state=args.random_state,
    )
    monitor.update(scores[skip:], groups.iloc[skip:])
    table = monitor.history_.drop(columns="readjusted")
    table.insert(1, "time_from", times.iloc[skip + table["start"]].to_numpy())
    table.insert(2, "time_to", times.iloc[skip + table["stop"] - 1].to_numpy())
    table = table.drop(columns=["start", "stop"])

    if args.out is not None:
        from fairot.utils import write_atomic

        buffer = io.StringIO()
        table.to_csv(buffer, index=False)
        png = io.BytesIO()
        monitor.plot(title=f"{args.metric} of {args.score} per window of {args.data.name}").savefig(
            png, format="png", dpi=110, bbox_inches="tight"
        )
        write_atomic(args.out / "monitor.csv", buffer.getvalue())
        write_atomic(args.out / "monitor.png", png.getvalue())

    reference = "reference file" if args.reference else f"first {skip} rows"
    print(
        f"fairot monitor: {args.metric} of {args.score} per {args.window} rows of "
        f"{args.data.name} (reference: {reference}, {args.metric} {monitor.reference_value_:.4f}; "
        f"alert when the {monitor.confidence:.0%} band is above {args.threshold:g} and the "
        f"permutation p-value is <= {monitor.alpha:g})\n"
    )
    shown = table.assign(alert=np.where(table["alert"], "ALERT", ""))
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    n_alerts = int(table["alert"].sum())
    print(f"\n{n_alerts} alert(s) in {len(table)} window(s)", file=sys.stderr)
    return 0
