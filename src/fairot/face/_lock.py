"""An exclusive lock on a training run's ``out_dir``, held for the whole run.

Two ``fairot face train`` runs into one folder would overwrite each other's ``checkpoint.pt``
and ``history.csv``. The run holds ``fcntl.flock`` on ``out_dir/.fairot-train.lock`` (the file
records the holder's PID and host for the error message). The kernel drops the lock when its
process dies, however it dies: a lock file left by a dead run is stale and is simply taken over;
no PID check can be fooled by a reused PID. Only POSIX systems have ``fcntl``.

Internal surface (used by ``_config``): :func:`hold_run_lock`, :data:`LOCK_NAME`,
:data:`RUN_LOCKED_ERROR`.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path

LOCK_NAME = ".fairot-train.lock"
RUN_LOCKED_ERROR = (
    "out_dir {path!s} is in use by another training run ({holder}); two runs into one folder "
    "would overwrite each other's checkpoint. Wait for it to end, or choose another out_dir."
)
NO_LOCK_ERROR = (
    "out_dir {path!s} cannot be locked on this platform (no fcntl); run one training per folder."
)


@contextlib.contextmanager
def hold_run_lock(out_dir: str | Path) -> Iterator[Path]:
    """Hold the exclusive lock of ``out_dir`` for the ``with`` block; yields the lock file.

    Raises
    ------
    ValueError
        If another live process holds it (the message names its PID and host).
    """
    try:
        import fcntl
    except ImportError:  # Windows
        raise ValueError(NO_LOCK_ERROR.format(path=out_dir)) from None
    path = Path(out_dir) / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 256, 0).decode(errors="replace").strip() or "unknown process"
            raise ValueError(RUN_LOCKED_ERROR.format(path=out_dir, holder=holder)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        yield path
    finally:
        # Closing the descriptor releases the lock; the file stays, harmless, for the next run.
        os.close(fd)
