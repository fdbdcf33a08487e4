"""``fairot audit --task verification``: the face-verification audit of a CSV of pair scores.

Kept out of ``_cmd_audit.py``, which only adds the options below, asks
:func:`verification_audit` for the result and prints and writes it as every audit. The table has
one row per pair: a score (a similarity, higher = more alike), whether the two images are the
same person, and the pair's group; by default the columns ``score``, ``is_same`` and ``group``
that :func:`fairot.face.evaluation.pair_scores` writes.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from fairot.cli import CLIError
from fairot.cli._io import (
    check_no_missing,
    check_out_dir,
    label_column,
    numeric_column,
    read_table,
    require_columns,
    split_columns,
)

#: Default columns: those of ``fairot.face.evaluation.pair_scores(...)``.
DEFAULT_COLUMNS = {"score": "score", "label": "is_same", "sensitive": "group"}
#: The words read as "same person" and "different people" in the label column (any case).
SAME = ("1", "1.0", "true", "same", "genuine", "mated")
DIFFERENT = ("0", "0.0", "false", "different", "impostor", "nonmated", "non-mated")
#: NIST's FRVT demographic reports read 1:1 algorithms at FMR 1e-4 and below, over millions of
#: impostor pairs; 1e-3 is the lowest rate that a few thousand impostor pairs (RFW's 3,000 per
#: group) can estimate with more than a handful of false matches behind it.
DEFAULT_TARGET_FMR = 1e-3

#: What ``--out`` receives, as the command says once it has written it.
VERIFICATION_FILES = "report.html, report.md, report.json, det_curves.png"

MSG_TARGET = "--target-fmr must be a number in (0, 1); got {value}"
MSG_NEEDS_SCORES = "--task verification reads a table of pair scores: pass it with --scores FILE"
MSG_SCORES_TASK = "--scores is the pair-score table of --task verification; add --task verification"
MSG_UNUSED = "{option} does not apply to --task verification ({reason})"
MSG_SAME = (
    "column {column!r} must say whether each pair is the same person: 1/0, true/false, "
    "same/different or genuine/impostor; got {values} (name the 'same' value with --pos-label)"
)


def add_verification_arguments(parser: argparse.ArgumentParser) -> None:
    """``--scores``'s options: the target FMR and the folds of MBN's accuracy."""
    parser.add_argument(
        "--target-fmr",
        type=float,
        default=DEFAULT_TARGET_FMR,
        metavar="RATE",
        help=(
            "verification: overall false match rate that sets the one threshold every group is "
            "read at (1e-3: the lowest rate a few thousand impostor pairs can estimate; needs "
            "at least 1/RATE impostor pairs)"
        ),
    )
    parser.add_argument(
        "--n-folds",
        type=int,
        default=10,
        metavar="K",
        help="verification: folds of the per-group accuracy protocol (LFW/RFW: 10)",
    )


def _check_arguments(args: argparse.Namespace) -> None:
    if args.task != "verification":
        raise CLIError(MSG_SCORES_TASK)
    if args.scores is None:
        raise CLIError(MSG_NEEDS_SCORES)
    if not (math.isfinite(args.target_fmr) and 0.0 < args.target_fmr < 1.0):
        raise CLIError(MSG_TARGET.format(value=args.target_fmr))
    if args.threshold != 0.5:
        raise CLIError(MSG_UNUSED.format(option="--threshold", reason="--target-fmr sets it"))
    if args.sample_weight:
        raise CLIError(MSG_UNUSED.format(option="--sample-weight", reason="pairs count equally"))
    if args.group_mode != "intersection":
        raise CLIError(
            MSG_UNUSED.format(option="--group-mode", reason="groups partition the pairs")
        )
    if args.out is not None:
        check_out_dir(args.out)


def _same_column(frame, column: str, path: Path, pos_label: str | None) -> np.ndarray:
    if pos_label is not None:
        return label_column(frame, column, path, pos_label).astype(bool)
    check_no_missing(frame, [column], path)
    words = frame[column].astype(str).str.strip().str.lower()
    same, different = words.isin(SAME), words.isin(DIFFERENT)
    if not (same | different).all() or not same.any() or not different.any():
        values = sorted({str(v) for v in frame[column].unique()})[:10]
        raise CLIError(MSG_SAME.format(column=column, values=values))
    return same.to_numpy()


def read_pairs(args: argparse.Namespace):
    """The pairs' labels, scores and groups from ``--scores``, each checked with a clear error."""
    path = args.scores
    score = args.score or DEFAULT_COLUMNS["score"]
    label = args.label or DEFAULT_COLUMNS["label"]
    groups = split_columns(args.sensitive or DEFAULT_COLUMNS["sensitive"])
    frame = read_table(path, args.sep, text_columns=groups)
    require_columns(frame, [score, label, *groups], path)
    scores = numeric_column(frame, score, path)
    same = _same_column(frame, label, path, args.pos_label)
    check_no_missing(frame, groups, path)
    return same, scores, frame[groups], f"fairot verification audit of {path.name}: {score}"


def verification_audit(args: argparse.Namespace):
    """The audit of the ``--scores`` table, every input checked first (``_cmd_audit`` emits it)."""
    from fairot.reporting import audit_verification

    _check_arguments(args)
    same, scores, groups, title = read_pairs(args)
    return audit_verification(
        same,
        scores,
        sensitive_features=groups,
        target_fmr=args.target_fmr,
        n_folds=args.n_folds,
        title=title,
        plots=args.out is not None or args.format == "html",
    )
