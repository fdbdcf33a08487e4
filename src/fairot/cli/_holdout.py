"""The held-out rows of ``fairot mitigate``: a stratified split of ``--data``, or ``--eval FILE``.

A post-processor fitted on rows and audited on the same rows reports its own fit (a DP
difference of .004 in sample where the held-out truth was .097). ``fairot mitigate``
fits on one part and audits the raw and the adjusted scores on the other: a split of ``--data``
stratified on group x label (``--test-size``, seeded by ``--random-state``), or the rows of
``--eval``.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

MSG_TEST_SIZE = "--test-size must be a number strictly between 0 and 1; got {value}"
MSG_EVAL_AND_SIZE = "give --eval FILE or --test-size, not both"
MSG_TOO_FEW = (
    "--data has {n} rows: too few to hold out --test-size {size:g} and still fit on every group; "
    "pass a larger table or --eval FILE"
)
DEFAULT_TEST_SIZE = 0.3


@dataclass
class Rows:
    """Scores, labels, sensitive columns and weights of one part of the data.

    ``scores`` are the user's (post-processing) or ``None``, with ``features`` the model inputs
    (in-processing); ``control`` holds the ``--control`` strata, if any.
    """

    scores: np.ndarray | None
    labels: np.ndarray | None
    sensitive: pd.DataFrame
    weights: np.ndarray | None
    features: pd.DataFrame | None = None
    control: pd.DataFrame | None = None

    def __len__(self) -> int:
        return self.sensitive.shape[0]

    def take(self, index: np.ndarray) -> Rows:
        """The rows at positions ``index``."""

        def rows(frame: pd.DataFrame | None) -> pd.DataFrame | None:
            return None if frame is None else frame.iloc[index].reset_index(drop=True)

        def values(array: np.ndarray | None) -> np.ndarray | None:
            return None if array is None else array[index]

        return Rows(
            values(self.scores),
            values(self.labels),
            rows(self.sensitive),
            values(self.weights),
            rows(self.features),
            rows(self.control),
        )


def add_holdout_arguments(p: argparse.ArgumentParser) -> None:
    """``--test-size`` and ``--eval``."""
    p.add_argument(
        "--test-size",
        type=float,
        default=None,
        metavar="SHARE",
        help="share of --data held out for the before/after audits, stratified on group x label "
        f"and seeded by --random-state ({DEFAULT_TEST_SIZE})",
    )
    p.add_argument(
        "--eval",
        type=Path,
        default=None,
        metavar="FILE",
        help="audit on this table (same columns) instead of a split: --data is all fitted on",
    )


def check_holdout_arguments(args: argparse.Namespace) -> None:
    """Refuse ``--eval`` with ``--test-size`` and a share outside (0, 1)."""
    from fairot.cli import CLIError

    if args.eval is not None and args.test_size is not None:
        raise CLIError(MSG_EVAL_AND_SIZE)
    if args.test_size is not None and not (
        math.isfinite(args.test_size) and 0 < args.test_size < 1
    ):
        raise CLIError(MSG_TEST_SIZE.format(value=args.test_size))


def strata(sensitive: pd.DataFrame, labels: np.ndarray | None, task: str) -> np.ndarray:
    """One key per row: the group, and the label for classification."""
    key = sensitive.astype(str).agg("\x1f".join, axis=1).to_numpy()
    if labels is not None and task == "classification":
        key = np.char.add(np.char.add(key.astype(str), "\x1e"), labels.astype(str))
    return key


def split_rows(
    rows: Rows, *, task: str, test_size: float, random_state: int
) -> tuple[Rows, Rows, str]:
    """Fit and held-out rows, and a line saying how they were chosen.

    Stratified on group x label (x the ``--control`` stratum, so that every stratum's map is
    fitted and audited in proportion); where a cell has a single row, on the group only; where
    a group has a single row, plain random (that group is then fitted on, never audited, or the
    reverse, and the fit says so).
    """
    from sklearn.model_selection import train_test_split

    from fairot.cli import CLIError

    n = len(rows)
    index = np.arange(n)
    labelled = rows.labels is not None and task == "classification"
    tried: list[tuple[str, Any]] = []
    if rows.control is not None:
        # Positional columns: a column both sensitive and control must not clash by name.
        cells = pd.concat([rows.sensitive, rows.control], axis=1, ignore_index=True)
        tried.append(
            (
                "group x stratum x label" if labelled else "group x stratum",
                strata(cells, rows.labels, task),
            )
        )
    tried += [
        ("group x label" if labelled else "group",
         strata(rows.sensitive, rows.labels, task)),
        ("group", strata(rows.sensitive, None, task)),
        ("nothing", None),
    ]  # fmt: skip
    chosen = None
    for how, key in tried:
        try:
            fit, held = train_test_split(
                index, test_size=test_size, random_state=random_state, stratify=key
            )
        except ValueError:
            continue
        chosen = how
        break
    if chosen is None:
        raise CLIError(MSG_TOO_FEW.format(n=n, size=test_size))
    fit, held = np.sort(fit), np.sort(held)
    note = (
        f"Fitted on {fit.shape[0]} rows, audited on {held.shape[0]} held-out rows "
        f"({test_size:.0%} of the data, stratified on {chosen}, random_state={random_state})."
    )
    return rows.take(fit), rows.take(held), note
