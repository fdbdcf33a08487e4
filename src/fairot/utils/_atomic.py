"""Atomic file writes: a file is either the old one or the complete new one, never a torn mix.

A process killed mid-write (SIGKILL, out of memory, power loss) must not leave a truncated
checkpoint or report where the previous good one was. The new content goes to a temporary file in
the destination's folder (same file system, so the final rename is atomic), is flushed and
``fsync``-ed, and only then replaces the destination with :func:`os.replace`; the folder is
``fsync``-ed too so that the rename itself survives a crash (POSIX).
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

__all__ = ["atomic_write", "remove_stale_temporaries", "write_atomic"]

MODE_ERROR = "mode must be 'w' (text) or 'wb' (binary); got {value!r}."
DATA_ERROR = "data must be str or bytes; got {value}."
#: Name of the temporary file beside the destination (hidden, so that globs skip it).
_TEMPORARY = ".{name}.{token}.tmp"


def _fsync_directory(folder: Path) -> None:
    # Without this a crash right after os.replace can lose the rename on some file systems.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows cannot open folders
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on a folder
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike, mode: Literal["w", "wb"] = "wb", *, encoding: str = "utf-8"
) -> Iterator[IO[Any]]:
    """Open a temporary file that atomically replaces ``path`` when the block ends without error.

    Parameters
    ----------
    path : str or path-like
        Destination; its parent folder is created if needed. An existing file stays intact until
        the new content is complete on disk.
    mode : {"wb", "w"}, default="wb"
        Binary or text.
    encoding : str, default="utf-8"
        Text encoding (``mode="w"`` only).

    Yields
    ------
    file object
        Write to it; do not close it. If the block raises, the temporary file is removed and
        ``path`` is left as it was.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_write(folder / "out.txt", "w") as f:
    ...     _ = f.write("complete")
    >>> (folder / "out.txt").read_text()
    'complete'
    >>> sorted(p.name for p in folder.iterdir())
    ['out.txt']
    """
    if mode not in ("w", "wb"):
        raise ValueError(MODE_ERROR.format(value=mode))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / _TEMPORARY.format(name=path.name, token=secrets.token_hex(6))
    # O_EXCL: never reuse another writer's file; 0o666 lets the umask set the permissions, as a
    # plain open() would (mkstemp's 0o600 would surprise users of CLI outputs).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        kwargs = {"encoding": encoding} if mode == "w" else {}
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        # BaseException: a KeyboardInterrupt mid-write must not leave the temporary file behind.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_directory(path.parent)


def write_atomic(path: str | os.PathLike, data: str | bytes, *, encoding: str = "utf-8") -> None:
    r"""Write ``data`` to ``path`` atomically (see :func:`atomic_write`).

    Parameters
    ----------
    path : str or path-like
    data : str or bytes
        Text is encoded with ``encoding``.
    encoding : str, default="utf-8"

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "report.csv"
    >>> write_atomic(target, "a,b\n1,2\n")
    >>> target.read_text()
    'a,b\n1,2\n'
    """
    if isinstance(data, str):
        mode = "w"
    elif isinstance(data, (bytes, bytearray, memoryview)):
        mode = "wb"
    else:
        raise TypeError(DATA_ERROR.format(value=type(data).__name__))
    with atomic_write(path, mode, encoding=encoding) as f:
        f.write(data)


def remove_stale_temporaries(path: str | os.PathLike) -> int:
    """Delete the temporary files that writers of ``path`` killed mid-write left behind.

    Only call this where a single process writes ``path`` (a training run's checkpoint): the
    temporary file of a concurrent writer would be deleted too.

    Parameters
    ----------
    path : str or path-like
        The destination of :func:`atomic_write`.

    Returns
    -------
    int
        Number of files deleted.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / ".model.pt.1a2b3c.tmp").write_bytes(b"torn")
    >>> remove_stale_temporaries(folder / "model.pt")
    1
    """
    path = Path(path)
    pattern = _TEMPORARY.format(name=glob.escape(path.name), token="*")
    removed = 0
    for stale in path.parent.glob(pattern):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
            removed += 1
    return removed
