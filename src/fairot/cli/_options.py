"""Options shared by the commands: ``--constraint``, ``--control``, the direction, the bootstrap.

``--favorable-outcome`` is shared by ``audit``, ``mitigate`` and ``monitor``; the bounds of
``--n-bootstrap`` by ``audit``, ``mitigate`` and ``monitor``.

One definition each, so that the commands spell, document and read them alike: the audit of
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
#: Most bootstrap replicates a command draws: 10,000 already puts a 95 % interval's ends within
#: about 0.1 standard error of their limit, and a replicate holds a row index per row (10^12 of
#: them asked for 7 TiB and ended in numpy's MemoryError).
MAX_N_BOOTSTRAP = 10_000
MSG_N_BOOTSTRAP = "--n-bootstrap must be {allowed}; got {value}"


def check_n_bootstrap(value: int, *, zero_allowed: bool) -> None:
    """Refuse a ``--n-bootstrap`` outside 10 to :data:`MAX_N_BOOTSTRAP` (or 0, when allowed)."""
    from fairot.cli import CLIError

    if zero_allowed and value == 0:
        return
    if not 10 <= value <= MAX_N_BOOTSTRAP:
        allowed = f"an integer from 10 to {MAX_N_BOOTSTRAP:,}"
        if zero_allowed:
            allowed = f"0 (no intervals) or {allowed}"
        raise CLIError(MSG_N_BOOTSTRAP.format(allowed=allowed, value=value))


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
