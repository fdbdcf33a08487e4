"""Reading the user's table and checking the output folder, shared by every data command.

Every check runs before any computation or output, so a bad input ends with one line on stderr
(exit 2) and never with a half-written folder or a report printed above the error.
"""

from __future__ import annotations

import argparse
import csv
import os
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from fairot.cli import CLIError

SNIFF_BYTES = 65_536
DELIMITERS = ",\t;|"
TAB_SUFFIXES = (".tsv", ".tab")
SEP_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}

MSG_NO_FILE = "no such file: {path}"
MSG_NOT_FILE = "{path} is a folder, not a data file"
MSG_UNREADABLE = "cannot read {path}: {reason}"
MSG_DUPLICATE = (
    "{path} has duplicate column name(s) {names}: a column named twice is ambiguous; rename them"
)
MSG_MISSING_COLUMNS = "column(s) {missing} not in {path}; it has {columns}"
MSG_NAN = (
    "column {column!r} has {count} missing value(s) (first on line {line} of {path}); "
    "drop or fill those rows"
)
MSG_NOT_NUMERIC = "column {column!r} must hold numbers; got {example!r} on line {line} of {path}"
MSG_NOT_FINITE = "column {column!r} has {count} infinite value(s) (first on line {line} of {path})"
#: Largest magnitude a numeric column may hold: the audits square differences of scores (MSE,
#: W2), and beyond about 1e154 those squares overflow float64 to inf.
MAX_MAGNITUDE = 1e150
MSG_TOO_LARGE = (
    "column {column!r} holds {value:g} on line {line} of {path}; values beyond {limit:g} in "
    "magnitude overflow the squared distances of the audit: rescale the column"
)
MSG_LABELS = (
    "column {column!r} must hold two classes (0/1 or true/false); it holds {values}. "
    "Name the positive one with --pos-label"
)
MSG_POS_LABEL = "--pos-label {label!r} is not a value of column {column!r}; it holds {values}"
#: Name prefix of the empty file that tests whether --out can be written (then the pid, "-").
PROBE_PREFIX = ".fairot-probe-"
MSG_OUT_FILE = "--out {path} is an existing file; it must be a folder"
MSG_OUT_UNDER_FILE = "--out {path} cannot be created: {parent} is a file, not a folder"
MSG_OUT_UNWRITABLE = "--out {path} is not writable ({reason})"


def add_table_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sep`` for the commands that read a table."""
    parser.add_argument(
        "--sep",
        metavar="SEP",
        help="column separator: a character, or tab/comma/semicolon/pipe "
        "(default: detected; .tsv files are tab-separated)",
    )


def _detect_separator(path: Path, head: str) -> str:
    if path.suffix.lower() in TAB_SUFFIXES:
        return "\t"
    try:
        return csv.Sniffer().sniff(head, delimiters=DELIMITERS).delimiter
    except csv.Error:
        # A single column, or a file the sniffer cannot decide: the commonest separator.
        return "\t" if head.count("\t") > head.count(",") else ","


def read_table(
    path: Path, sep: str | None = None, text_columns: Iterable[str] = ()
) -> pd.DataFrame:
    """Read a delimited text file, refusing what would make later checks ambiguous.

    Parameters
    ----------
    path : Path
        The file.
    sep : str, optional
        Separator (a character or a name in :data:`SEP_NAMES`); detected when omitted.
    text_columns : iterable of str, default=()
        Columns read as text, never as numbers (sensitive groups: ``01`` and ``1`` are two
        groups). Names absent from the file are ignored here; :func:`require_columns` names them.

    Returns
    -------
    pandas.DataFrame
        With the separator used in ``frame.attrs["sep"]`` (so that outputs can match the input).
    """
    if not path.exists():
        raise CLIError(MSG_NO_FILE.format(path=path))
    if path.is_dir():
        raise CLIError(MSG_NOT_FILE.format(path=path))
    try:
        with path.open("r", encoding="utf-8-sig", newline="") as handle:
            head = handle.read(SNIFF_BYTES)
            if not head.strip():
                raise CLIError(MSG_UNREADABLE.format(path=path, reason="the file is empty"))
            sep = SEP_NAMES.get(sep, sep) if sep else _detect_separator(path, head)
            # The whole header record, however long (a duplicate at column 6,003 is still a
            # duplicate), read by the csv module so that quoted names with separators count once.
            handle.seek(0)
            header = next(csv.reader(handle, delimiter=sep), [])
    except UnicodeDecodeError:
        raise CLIError(MSG_UNREADABLE.format(path=path, reason="not UTF-8 text")) from None
    except csv.Error as exc:
        raise CLIError(MSG_UNREADABLE.format(path=path, reason=exc)) from None
    except OSError as exc:
        raise CLIError(MSG_UNREADABLE.format(path=path, reason=exc.strerror or exc)) from None
    duplicated = sorted(name for name, n in Counter(h.strip() for h in header).items() if n > 1)
    if duplicated:
        raise CLIError(MSG_DUPLICATE.format(path=path, names=duplicated))
    # Group-like columns are text: pandas would read the codes "01" and "1" as the integer 1
    # and merge two groups. The dtype is keyed by the raw header name (before stripping).
    wanted = set(text_columns)
    dtype = {raw: str for raw in header if raw.strip() in wanted}
    try:
        frame = pd.read_csv(
            path, sep=sep, encoding="utf-8-sig", skipinitialspace=True, dtype=dtype or None
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise CLIError(MSG_UNREADABLE.format(path=path, reason=reason)) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.empty:
        raise CLIError(f"{path} has no rows")
    frame.attrs["sep"] = sep
    return frame


def require_columns(frame: pd.DataFrame, columns: list[str], path: Path) -> None:
    """Raise naming every missing column and the ones the file has."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise CLIError(MSG_MISSING_COLUMNS.format(missing=missing, path=path, columns=list(frame)))


def _line(frame: pd.DataFrame, mask: np.ndarray) -> int:
    # Line numbers as an editor shows them: the header is line 1.
    return int(np.flatnonzero(mask)[0]) + 2


def check_no_missing(frame: pd.DataFrame, columns: list[str], path: Path) -> None:
    """Raise naming the first column with missing values, how many, and the first line."""
    for column in columns:
        missing = frame[column].isna().to_numpy()
        if missing.any():
            raise CLIError(
                MSG_NAN.format(
                    column=column, count=int(missing.sum()), line=_line(frame, missing), path=path
                )
            )


def numeric_column(frame: pd.DataFrame, column: str, path: Path) -> np.ndarray:
    """A column as finite floats, or an error naming the column, the bad value and its line."""
    check_no_missing(frame, [column], path)
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna().to_numpy()
    if bad.any():
        line = _line(frame, bad)
        raise CLIError(
            MSG_NOT_NUMERIC.format(
                column=column, example=frame[column].iloc[line - 2], line=line, path=path
            )
        )
    array = values.to_numpy(dtype=float)
    infinite = ~np.isfinite(array)
    if infinite.any():
        raise CLIError(
            MSG_NOT_FINITE.format(
                column=column, count=int(infinite.sum()), line=_line(frame, infinite), path=path
            )
        )
    huge = np.abs(array) > MAX_MAGNITUDE
    if huge.any():
        line = _line(frame, huge)
        raise CLIError(
            MSG_TOO_LARGE.format(
                column=column, value=array[line - 2], line=line, path=path, limit=MAX_MAGNITUDE
            )
        )
    return array


def label_column(frame: pd.DataFrame, column: str, path: Path, pos_label: str | None) -> np.ndarray:
    """Binary labels as 0/1: numeric 0/1 or booleans as they are, other values by ``pos_label``."""
    check_no_missing(frame, [column], path)
    raw = frame[column]
    values = sorted({str(v) for v in raw.unique()})
    if pos_label is not None:
        text = raw.astype(str).str.strip()
        if pos_label not in set(text):
            raise CLIError(MSG_POS_LABEL.format(label=pos_label, column=column, values=values))
        if text.nunique() > 2:
            raise CLIError(MSG_LABELS.format(column=column, values=values))
        return (text == pos_label).to_numpy().astype(int)
    if raw.dtype == bool:
        return raw.to_numpy().astype(int)
    numbers = pd.to_numeric(raw, errors="coerce")
    if numbers.notna().all() and numbers.isin((0, 1)).all():
        return numbers.to_numpy().astype(int)
    lowered = raw.astype(str).str.strip().str.lower()
    if lowered.isin(("true", "false")).all():
        return (lowered == "true").to_numpy().astype(int)
    raise CLIError(MSG_LABELS.format(column=column, values=values[:10]))


def split_columns(text: str) -> list[str]:
    """``"race, sex"`` → ``["race", "sex"]``."""
    return [c.strip() for c in text.split(",") if c.strip()]


def check_out_dir(path: Path) -> None:
    """Refuse an output folder that cannot be created or written, before any work is done.

    An existing folder is reused: the files a command writes are replaced atomically (each is
    either the old or the complete new file); other files in it are left alone.
    """
    if path.exists() and not path.is_dir():
        raise CLIError(MSG_OUT_FILE.format(path=path))
    ancestor = path
    while not ancestor.exists():
        if ancestor.parent == ancestor:
            break
        ancestor = ancestor.parent
    if ancestor.exists() and not ancestor.is_dir():
        raise CLIError(MSG_OUT_UNDER_FILE.format(path=path, parent=ancestor))
    # A real probe: os.access says yes to root on a read-only mount's chmod bits and no to
    # nothing it cannot see, while creating a file tells the truth.
    try:
        # The pid in the name: the probe of a run killed right here is removed by the next one.
        fd, probe = tempfile.mkstemp(prefix=f"{PROBE_PREFIX}{os.getpid()}-", dir=ancestor)
    except OSError as exc:
        raise CLIError(MSG_OUT_UNWRITABLE.format(path=path, reason=exc.strerror or exc)) from None
    os.close(fd)
    os.unlink(probe)
