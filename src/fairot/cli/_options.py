"""Options shared by the commands that audit: ``--constraint``, ``--control``, the direction.

``--favorable-outcome`` is shared by ``audit``, ``mitigate`` and ``monitor``.

One definition each, so that the two commands spell, document and read them alike: the audit of
a mitigated model uses the constraint and the strata it was fitted for.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fairot.cli._io import check_no_missing, require_columns, split_columns

#: The criteria of ``fairot.reporting.audit(constraint=...)`` and the in-processing classifiers.
CONSTRAINTS = ("demographic_parity", "equalized_odds", "equal_opportunity")
DEFAULT_CONSTRAINT = "demographic_parity"


def add_constraint_argument(p: argparse.ArgumentParser, help_text: str) -> None:
    """``--constraint demographic_parity|equalized_odds|equal_opportunity``."""
    p.add_argument("--constraint", choices=CONSTRAINTS, default=DEFAULT_CONSTRAINT, help=help_text)


def add_favorable_outcome_argument(p: argparse.ArgumentParser) -> None:
    """``--favorable-outcome 1|0``: which decision the rules read as favourable."""
    p.add_argument(
        "--favorable-outcome",
        type=int,
        choices=(1, 0),
        default=1,
        metavar="{1,0}",
        help="which decision is favourable: 1, the positive one (score > threshold: an "
        "approval, a hire; the default) or 0, the negative one (a risk score: 'high risk', "
        "P(default)). Every rule, impact ratio and verdict reads it, and the report states it "
        "beside the verdict; never guessed from the column names",
    )


def add_control_argument(p: argparse.ArgumentParser, help_text: str) -> None:
    """``--control COL[,COL]``: the legitimate strata of conditional parity."""
    p.add_argument("--control", metavar="COL[,COL]", help=help_text)


def control_columns(args: argparse.Namespace) -> list[str]:
    """The ``--control`` column names (empty without the option)."""
    control = getattr(args, "control", None)
    return split_columns(control) if control else []


def read_control(frame: Any, control: str | None, path: Path) -> Any:
    """The ``--control`` columns of the table (``None`` without the option)."""
    if not control:
        return None
    columns = split_columns(control)
    require_columns(frame, columns, path)
    check_no_missing(frame, columns, path)
    return frame[columns]
