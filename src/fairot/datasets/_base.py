"""Shared machinery of the loaders: data home, raw-file lookup, checksums, download, preprocessing.

Every loader finds its raw files the same way (see :func:`fetch_raw_file`):

1. the data home folder (``data_home``, else ``$FAIROT_DATA_HOME``, else ``~/fairot_data``), in a
   sub-folder per data set that uses the publisher's file names (``<data_home>/adult/adult.data``);
2. the gzip-compressed copy shipped inside the package (Adult, German Credit, Communities & Crime);
3. a download from the publisher into the data home, when ``download_if_missing=True``.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.request
import warnings
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

__all__ = ["RemoteFile", "get_data_home", "fetch_raw_file", "read_raw_bytes"]

DATA_HOME_ENV = "FAIROT_DATA_HOME"
DEFAULT_DATA_HOME = Path("~") / "fairot_data"
DOWNLOAD_TIMEOUT_S = 60

MSG_NOT_FOUND = (
    "The raw file {name!r} was not found in {folder} and download_if_missing=False. "
    "Put a copy of {name!r} (from {url}) in that folder, or set data_home= or the "
    "FAIROT_DATA_HOME environment variable to a folder that holds '{subdir}/{name}'."
)
MSG_DOWNLOAD_FAILED = (
    "Could not download {name!r} from {url} ({error}). If this machine is offline, download the "
    "file elsewhere and put it in {folder}, or set data_home= or the FAIROT_DATA_HOME environment "
    "variable to a folder that holds '{subdir}/{name}'."
)
MSG_BAD_DOWNLOAD_CHECKSUM = (
    "The file downloaded from {url} has SHA-256 {actual}, expected {expected}; it was discarded. "
    "The publisher may have changed the file; put a verified copy in {folder}."
)
MSG_BAD_SHIPPED_CHECKSUM = (
    "The copy of {name!r} shipped with fairot ({path}) has SHA-256 {actual}, expected {expected}: "
    "the installation is damaged; reinstall fairot."
)
MSG_LOCAL_CHECKSUM_DIFFERS = (
    "{path} has SHA-256 {actual}, which differs from the publisher's release ({expected}); "
    "numbers computed from it may differ from the documented ones."
)


@dataclass(frozen=True)
class RemoteFile:
    """A raw file of a public data set.

    Parameters
    ----------
    name : str
        The publisher's file name, e.g. ``"adult.data"``.
    subdir : str
        Sub-folder of the data home that holds it, e.g. ``"adult"``.
    url : str
        Official download address.
    sha256 : str or None
        SHA-256 of the file as released (``None`` when no checksum is published).
    shipped : bool
        Whether a gzip-compressed copy ``<name>.gz`` ships in ``fairot/datasets/data/``.
    archive_member : str or None
        When ``url`` points at a zip archive, the member to extract as ``name``.
    """

    name: str
    subdir: str
    url: str
    sha256: str | None = None
    shipped: bool = False
    archive_member: str | None = None


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """Return the folder where fairot looks for (and downloads) raw data files.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder to use. When ``None``, the ``FAIROT_DATA_HOME`` environment variable, else
        ``~/fairot_data``. ``~`` is expanded. The folder is not created here (only a download
        creates it).

    Returns
    -------
    data_home : pathlib.Path
        The resolved folder.

    Examples
    --------
    >>> from fairot.datasets import get_data_home
    >>> get_data_home("/tmp/fairot_data").as_posix()
    '/tmp/fairot_data'
    """
    if data_home is None:
        data_home = os.environ.get(DATA_HOME_ENV) or DEFAULT_DATA_HOME
    return Path(data_home).expanduser()


def _shipped_path(remote: RemoteFile) -> Path | None:
    if not remote.shipped:
        return None
    path = Path(str(resources.files("fairot.datasets") / "data" / f"{remote.name}.gz"))
    return path if path.is_file() else None


def _sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _download(url: str, destination: Path) -> None:
    """Download ``url`` to ``destination`` (atomically: a partial file never stays behind).

    Tests replace this function to prove when the loaders do (not) go online.
    """
    destination.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=destination.parent, delete=False, suffix=".part") as tmp:
        tmp_path = Path(tmp.name)
        try:
            with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response:
                shutil.copyfileobj(response, tmp)
        except BaseException:
            tmp.close()
            tmp_path.unlink(missing_ok=True)
            raise
    tmp_path.replace(destination)


def _download_raw_file(remote: RemoteFile, local: Path) -> None:
    folder = local.parent
    fmt = {"name": remote.name, "url": remote.url, "folder": folder, "subdir": remote.subdir}
    target = local if remote.archive_member is None else local.with_name(local.name + ".zip")
    try:
        _download(remote.url, target)
    except OSError as exc:  # urllib.error.URLError and socket timeouts are OSErrors
        raise OSError(MSG_DOWNLOAD_FAILED.format(error=exc, **fmt)) from exc
    if remote.archive_member is not None:
        with (
            zipfile.ZipFile(target) as archive,
            archive.open(remote.archive_member) as member,
            open(local, "wb") as out,
        ):
            shutil.copyfileobj(member, out)
        target.unlink()
    if remote.sha256 is not None:
        actual = _file_sha256(local)
        if actual != remote.sha256:
            local.unlink()
            raise OSError(
                MSG_BAD_DOWNLOAD_CHECKSUM.format(
                    url=remote.url, actual=actual, expected=remote.sha256, folder=folder
                )
            )


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_raw_file(
    remote: RemoteFile,
    *,
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
) -> Path:
    """Locate a raw file: data home, then the shipped copy, then a download.

    Parameters
    ----------
    remote : RemoteFile
        The file to find.
    data_home : str or path-like, default=None
        See :func:`get_data_home`.
    download_if_missing : bool, default=True
        Download the file into ``<data_home>/<remote.subdir>/`` when neither a local nor a shipped
        copy exists. When ``False`` a missing file raises :class:`FileNotFoundError`.

    Returns
    -------
    path : pathlib.Path
        The file; a shipped copy ends in ``.gz`` (read it with :func:`read_raw_bytes`).

    Raises
    ------
    FileNotFoundError
        When the file is missing and ``download_if_missing=False``; the message names the file and
        the folder to put it in.
    OSError
        When the download fails (e.g. offline) or its checksum is wrong.
    """
    folder = get_data_home(data_home) / remote.subdir
    local = folder / remote.name
    if local.is_file():
        return local
    shipped = _shipped_path(remote)
    if shipped is not None:
        return shipped
    if not download_if_missing:
        raise FileNotFoundError(
            MSG_NOT_FOUND.format(
                name=remote.name, folder=folder, url=remote.url, subdir=remote.subdir
            )
        )
    _download_raw_file(remote, local)
    return local


@functools.lru_cache(maxsize=16)
def _read_verified(path: str, mtime_ns: int, size: int, expected: str | None) -> bytes:
    # mtime and size are part of the cache key so that a replaced file is read again.
    content = Path(path).read_bytes()
    shipped = path.endswith(".gz")
    if shipped:
        content = gzip.decompress(content)
    if expected is not None:
        actual = _sha256(content)
        if actual != expected and shipped:
            raise OSError(
                MSG_BAD_SHIPPED_CHECKSUM.format(
                    name=Path(path).stem, path=path, actual=actual, expected=expected
                )
            )
        if actual != expected:
            warnings.warn(
                MSG_LOCAL_CHECKSUM_DIFFERS.format(path=path, actual=actual, expected=expected),
                UserWarning,
                stacklevel=5,
            )
    return content


def read_raw_bytes(path: Path, remote: RemoteFile) -> bytes:
    """Return the bytes of a raw file found by :func:`fetch_raw_file`, checked against its SHA-256.

    A shipped ``.gz`` copy is decompressed; its checksum must match (else :class:`OSError`). A
    user's own copy that differs from the publisher's release is read with a ``UserWarning``. The
    result is cached per (path, modification time, size).
    """
    stat = path.stat()
    return _read_verified(str(path), stat.st_mtime_ns, stat.st_size, remote.sha256)


def file_key(path: Path) -> tuple[str, int, int]:
    """Identify a file's current version, as a cache key for parsed frames."""
    stat = path.stat()
    return str(path), stat.st_mtime_ns, stat.st_size


def one_hot_standardize(
    frame: pd.DataFrame, categorical: list[str], numeric: list[str]
) -> pd.DataFrame:
    """One-hot encode ``categorical`` columns and standardise ``numeric`` ones.

    Numeric columns are centred and divided by their population standard deviation (``ddof=0``,
    as :class:`sklearn.preprocessing.StandardScaler`), a constant column becomes 0. Categorical
    columns get one 0/1 column per observed value, named ``<column>_<value>``, none dropped (the
    papers' models are L2-penalised, so the redundant column is harmless and keeps every group
    visible). Column order: the input's, each categorical column expanded in place with its values
    sorted.

    Notes
    -----
    The statistics come from the whole frame passed in (train and test together). The COT paper
    (Section "Results") describes no per-split preprocessing, so one standardised table, split
    afterwards, is what its setup implies; it reproduces the paper's logistic-regression baseline
    on Adult. Fit a :class:`~sklearn.compose.ColumnTransformer` on the training rows of the raw
    frame (``preprocess=False``) to keep the test rows out of the statistics.
    """
    columns = []
    for name in frame.columns:
        col = frame[name]
        if name in numeric:
            values = col.to_numpy(dtype=float)
            scale = values.std()
            centred = values - values.mean()
            columns.append(pd.Series(centred / scale if scale > 0 else centred * 0.0, name=name))
        elif name in categorical:
            dummies = pd.get_dummies(col.astype(str), prefix=name, prefix_sep="_", dtype=float)
            columns.extend(dummies[c] for c in sorted(dummies.columns))
        else:
            columns.append(col.astype(float))
    out = pd.concat(columns, axis=1)
    out.index = frame.index
    return out


def threshold_label(values: pd.Series, cut: float, *, above: str, below: str) -> pd.Series:
    """Label each value ``above`` when strictly greater than ``cut``, else ``below``."""
    labels = np.where(values.to_numpy(dtype=float) > cut, above, below)
    return pd.Series(labels, index=values.index, name=values.name)


def load_descr(name: str) -> str:
    """Return the text of ``fairot/datasets/descr/<name>.rst``."""
    descr = resources.files("fairot.datasets") / "descr" / f"{name}.rst"
    return descr.read_text(encoding="utf-8")


def make_bunch(
    *,
    data: pd.DataFrame,
    target: pd.Series,
    sensitive: pd.DataFrame,
    split: pd.Series | None,
    descr: str,
) -> Bunch:
    """Assemble the loaders' common return value (see :func:`fairot.datasets.load_adult`)."""
    return Bunch(
        data=data,
        target=target,
        sensitive=sensitive,
        split=split,
        feature_names=list(data.columns),
        target_names=[target.name],
        DESCR=descr,
    )
