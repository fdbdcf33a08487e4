"""Reading the user's table and checking the output folder, shared by every data command.

Every check runs before any computation or output, so a bad input ends with one line on stderr
(exit 2) and never with a half-written folder or a report printed above the error.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gzip
import io
import os
import stat
import tempfile
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from fairot.cli import CLIError

SNIFF_BYTES = 65_536
DELIMITERS = ",\t;|"
TAB_SUFFIXES = (".tsv", ".tab")
SEP_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}

#: Largest decompressed size of a gzip-compressed table (1 GiB): a small file can inflate
#: without bound (a "zip bomb"), and the table is held in memory.
MAX_DECOMPRESSED_BYTES = 1 << 30
#: Formats recognised by their first bytes; gzip is read, the others refused.
MAGIC_BYTES = (
    ("gzip", b"\x1f\x8b"),
    ("zip", b"PK\x03\x04"),
    ("zip", b"PK\x05\x06"),
    ("bzip2", b"BZh"),
    ("xz", b"\xfd7zXZ\x00"),
    ("zstd", b"\x28\xb5\x2f\xfd"),
    ("7z", b"7z\xbc\xaf\x27\x1c"),
)
#: The format a suffix promises; the bytes must agree.
COMPRESSED_SUFFIXES = {
    ".gz": "gzip",
    ".gzip": "gzip",
    ".zip": "zip",
    ".bz2": "bzip2",
    ".xz": "xz",
    ".zst": "zstd",
    ".7z": "7z",
    ".tar": "tar",
}

MSG_NO_FILE = "no such file: {path}"
MSG_NOT_REGULAR = "{path} is {kind}; expected a data file (CSV or TSV, plain or .gz)"
MSG_ARCHIVE = (
    "{path} is a {format} archive; fairot reads CSV or TSV text, plain or gzip-compressed "
    "(.csv.gz): extract the table first"
)
MSG_SUFFIX = (
    "{path} ends in {suffix} but holds {found}, not {expected} data; rename it to match its content"
)
MSG_TOO_LARGE_GZIP = (
    "{path} decompresses to more than {limit:,} bytes (the limit for compressed tables); "
    "decompress it and pass the plain file"
)
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


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _format_of(head: bytes) -> str | None:
    """The compression or archive format whose magic bytes start ``head`` (None: none)."""
    for name, magic in MAGIC_BYTES:
        if head.startswith(magic):
            return name
    # POSIX and GNU tar headers; both hold a NUL byte, which a text table never has there.
    if head[257:265] in (b"ustar\x0000", b"ustar  \x00"):
        return "tar"
    return None


def _decompressed(handle, path: Path) -> io.BytesIO:
    """The gzip data of ``handle`` in memory, refused beyond :data:`MAX_DECOMPRESSED_BYTES`."""
    try:
        with gzip.GzipFile(fileobj=handle, mode="rb") as unzipped:
            data = unzipped.read(MAX_DECOMPRESSED_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        reason = f"not a complete gzip file ({exc})"
        raise CLIError(MSG_UNREADABLE.format(path=path, reason=reason)) from None
    if len(data) > MAX_DECOMPRESSED_BYTES:
        raise CLIError(MSG_TOO_LARGE_GZIP.format(path=path, limit=MAX_DECOMPRESSED_BYTES))
    return io.BytesIO(data)


@contextlib.contextmanager
def _open_table(path: Path) -> Iterator[IO[bytes]]:
    """The bytes of a table file: a regular file, plain or gzip-compressed, checked by content.

    Devices and FIFOs are refused before they are opened (``/dev/zero`` never ends, a FIFO
    blocks); the format is read from the first bytes and must agree with the suffix, so that a
    text file named ``.zip`` or a zip named ``.csv`` is one clear error, not a parser's.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise CLIError(MSG_NO_FILE.format(path=path)) from None
    except OSError as exc:
        raise CLIError(MSG_UNREADABLE.format(path=path, reason=exc.strerror or exc)) from None
    if stat.S_ISDIR(mode):
        raise CLIError(MSG_NOT_FILE.format(path=path))
    if not stat.S_ISREG(mode):
        raise CLIError(MSG_NOT_REGULAR.format(path=path, kind=_kind(mode)))
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise CLIError(MSG_UNREADABLE.format(path=path, reason=exc.strerror or exc)) from None
    with handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # swapped since the check
            raise CLIError(MSG_NOT_REGULAR.format(path=path, kind="not a regular file"))
        try:
            found = _format_of(handle.read(512))
            handle.seek(0)
        except OSError as exc:
            raise CLIError(MSG_UNREADABLE.format(path=path, reason=exc.strerror or exc)) from None
        suffix = path.suffix.lower()
        expected = COMPRESSED_SUFFIXES.get(suffix)
        if found is not None and found != "gzip":
            raise CLIError(MSG_ARCHIVE.format(path=path, format=found))
        if expected is not None and expected != found:
            raise CLIError(
                MSG_SUFFIX.format(
                    path=path, suffix=suffix, expected=expected, found=found or "text"
                )
            )
        yield _decompressed(handle, path) if found == "gzip" else handle


def _detect_separator(path: Path, head: str) -> str:
    if path.suffix.lower() in COMPRESSED_SUFFIXES:
        path = path.with_suffix("")  # data.tsv.gz is tab-separated
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
    with _open_table(path) as source:
        try:
            text = io.TextIOWrapper(source, encoding="utf-8-sig", newline="")
            head = text.read(SNIFF_BYTES)
            if not head.strip():
                raise CLIError(MSG_UNREADABLE.format(path=path, reason="the file is empty"))
            sep = SEP_NAMES.get(sep, sep) if sep else _detect_separator(path, head)
            # The whole header record, however long (a duplicate at column 6,003 is still a
            # duplicate), read by the csv module so that quoted names with separators count once.
            text.seek(0)
            header = next(csv.reader(text, delimiter=sep), [])
            text.detach()
        except UnicodeDecodeError:
            raise CLIError(MSG_UNREADABLE.format(path=path, reason="not UTF-8 text")) from None
        except csv.Error as exc:
            raise CLIError(MSG_UNREADABLE.format(path=path, reason=exc)) from None
        except OSError as exc:
            raise CLIError(MSG_UNREADABLE.format(path=path, reason=exc.strerror or exc)) from None
        source.seek(0)
        frame = _parse(source, path, sep, header, text_columns)
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.empty:
        raise CLIError(f"{path} has no rows")
    frame.attrs["sep"] = sep
    return frame


def _parse(source, path: Path, sep: str, header: list[str], text_columns: Iterable[str]):
    """The table of ``source`` (bytes) after the header checks, or a one-line error."""
    duplicated = sorted(name for name, n in Counter(h.strip() for h in header).items() if n > 1)
    if duplicated:
        raise CLIError(MSG_DUPLICATE.format(path=path, names=duplicated))
    # Group-like columns are text: pandas would read the codes "01" and "1" as the integer 1
    # and merge two groups. The dtype is keyed by the raw header name (before stripping).
    wanted = set(text_columns)
    dtype = {raw: str for raw in header if raw.strip() in wanted}
    try:
        # compression=None: the format was read from the bytes (_open_table), never guessed
        # from the suffix (a text file named .zip would reach pandas' unzip).
        return pd.read_csv(
            source,
            sep=sep,
            encoding="utf-8-sig",
            skipinitialspace=True,
            dtype=dtype or None,
            compression=None,
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise CLIError(MSG_UNREADABLE.format(path=path, reason=reason)) from None


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

    The folder is then written all or nothing by :func:`fairot.cli._outdir.staged_folder`.
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
