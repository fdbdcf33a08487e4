"""All-or-nothing output folders: a command's files appear together or not at all.

``fairot mitigate`` writes a model, two audit folders and an adjusted table. Writing them one by
one into ``--out`` leaves a mix of new and old files when a later write fails (disk full, a
permission). Instead everything is written into a staging folder on the same file system and
moved into place only once complete.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["staged_folder"]

_STAGE_PREFIX = ".fairot-staging-"


def _swap(stage: Path, out: Path, owned: Iterable[str]) -> None:
    # Renames inside one file system: each is atomic, and any that fails is undone in reverse,
    # so the folder ends with all the old entries or all the new ones.
    backup = stage / ".previous"
    backup.mkdir()
    done: list[tuple[Path, Path]] = []
    try:
        for name in owned:
            old, new = out / name, stage / name
            if old.exists() or old.is_symlink():
                os.rename(old, backup / name)
                done.append((old, backup / name))
            if new.exists():
                os.rename(new, old)
                done.append((new, old))
    except BaseException:
        for source, target in reversed(done):
            os.rename(target, source)
        raise


@contextlib.contextmanager
def staged_folder(out: Path, owned: Iterable[str]) -> Iterator[Path]:
    """Yield an empty staging folder whose entries replace ``owned`` in ``out`` on success.

    Parameters
    ----------
    out : Path
        The output folder. When absent, the staging folder is a hidden sibling renamed to
        ``out`` in one step. When present, the staging folder is hidden inside it and, once the
        block ends without error, each name in ``owned`` is replaced: the new entry, or removed
        when the block wrote none (no stale file of an earlier run stays beside new ones).
        Other entries of ``out`` are left alone.
    owned : iterable of str
        The entry names the command writes.

    Yields
    ------
    Path
        The folder to write into. On an error it is deleted and ``out`` is unchanged.
    """
    out = Path(out).absolute()
    owned = tuple(owned)
    if out.is_dir():
        stage = Path(tempfile.mkdtemp(prefix=_STAGE_PREFIX, dir=out))
        try:
            yield stage
            _swap(stage, out, owned)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}{_STAGE_PREFIX}", dir=out.parent))
    # mkdtemp makes a private folder (0700); the renamed --out gets what mkdir would give it.
    umask = os.umask(0)
    os.umask(umask)
    stage.chmod(0o777 & ~umask)
    try:
        yield stage
        os.rename(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
