"""All-or-nothing output folders: a run's files appear together or not at all, even under kill -9.

``fairot audit``, ``monitor`` and ``mitigate`` write several files into ``--out``. Written one by
one, a run killed half way (``kill -9``, out of memory, a full disk) leaves new files beside old
ones: a new ``model.skops`` beside the reports of the model before it. Instead a run writes
everything into a **staging folder** on the same file system and puts it in place at the end.

Two ways, chosen per run by :func:`staged_folder`:

* **Whole folder** (``--out`` absent, empty, or holding nothing but an earlier run of the same
  command, as its manifest ``.fairot-run.json`` lists): the stage is a hidden sibling
  ``.NAME.fairot-stage-TOKEN`` and one step replaces the folder: a rename when ``--out`` is
  absent or empty, else ``renameat2(RENAME_EXCHANGE)`` (Linux 3.15+, most local file systems),
  which swaps the two folders atomically; the old one, now under the stage's name, is then
  removed. At every instant ``--out`` is the complete old run or the complete new one. Where the
  exchange is not available the old folder is renamed aside (``.NAME.fairot-old-TOKEN``) and the
  stage renamed in: between those two renames ``--out`` is briefly **absent** (never a mix), and
  a run killed exactly there is restored by the next one (the old folder renamed back).
* **In place** (``--out`` also holds files of the user's, or is the working folder, a mount
  point, a link, someone else's folder, or its parent cannot be written): the stage is hidden
  inside ``--out`` and the run's entries are swapped in one rename each, other files left
  alone. Before the first rename the plan is written in the stage; a run killed between two
  renames (a window of microseconds) leaves ``--out`` mixed, and the next run rolls the swap
  back from the plan, so that ``--out`` holds the earlier run again.

Beside every stage is a marker ``<stage>.pid`` with the writer's process id and start time. The
next run into the same ``--out`` removes the stages whose writer is gone (finishing the recovery
above) and says so on stderr; it reports, and leaves, any other staging-like leftover (no
marker, an unreadable one, or one of an earlier fairot version).

Internal surface: :func:`staged_folder`, :data:`MANIFEST`, :data:`MSG_CLEANED`,
:data:`MSG_RESTORED`, :data:`MSG_ROLLED_BACK`, :data:`MSG_LEFTOVER`, :data:`MSG_TORN`.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import glob
import json
import os
import re
import secrets
import shutil
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from fairot.cli._io import PROBE_PREFIX
from fairot.utils import write_atomic

__all__ = ["MANIFEST", "staged_folder"]

#: The run's own list of its entries, written last into the stage (hidden, so globs skip it).
MANIFEST = ".fairot-run.json"
_STAGE = ".fairot-stage-"
_OLD = ".fairot-old-"
_MARKER_SUFFIX = ".pid"
_PLAN = ".fairot-swap.json"
_PREVIOUS = ".previous"
#: Staging names of fairot before the markers (no process id to tell whether they are stale).
_LEGACY_STAGE = ".fairot-staging-"
#: A manifest is a few hundred bytes; more is not ours.
_MANIFEST_MAX_BYTES = 1 << 20

MSG_CLEANED = "removed {path}, the staging folder of an interrupted run (process {pid})"
MSG_RESTORED = (
    "{out} was missing after an interrupted run (process {pid}) replaced it; restored the "
    "earlier run from {path}"
)
MSG_ROLLED_BACK = (
    "rolled back the interrupted swap of a run (process {pid}) in {out}: its files are those of "
    "the earlier run again"
)
MSG_LEFTOVER = (
    "{path} looks like the staging folder of an interrupted fairot run, but no marker says whose "
    "and that it is over: remove it if no fairot run is writing to {out}"
)

MSG_TORN = (
    "{path} is the temporary file of an interrupted write (earlier fairot versions wrote into "
    "--out file by file): remove it"
)
#: The temporary files of :func:`fairot.utils.atomic_write` (``.NAME.TOKEN.tmp``).
_TEMPORARY = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


def _libc_renameat2():
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # pragma: no cover - glibc < 2.28 or another libc
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function


_RENAMEAT2 = _libc_renameat2()


def _renameat2(source: Path, target: Path, flags: int) -> bool:
    """``renameat2(source, target, flags)``; False where the system or file system lacks it.

    POSIX ``rename`` cannot swap two folders; Linux's ``RENAME_EXCHANGE`` does, atomically.
    """
    if _RENAMEAT2 is None:
        return False
    result = _RENAMEAT2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), flags)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # an old kernel, or a file system without the flag (some NFS, FUSE)
    raise OSError(code, os.strerror(code), str(source), None, str(target))


def _fsync_folder(folder: Path) -> None:
    # Without it a crash right after a rename can lose the rename on some file systems.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), so a reused pid is told apart."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:
        return ""
    # The command name (field 2) may hold spaces and parentheses: count from its closing one.
    fields = text[text.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else ""


def _alive(pid: int, start: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: alive
    except OSError:  # pragma: no cover - e.g. an invalid pid
        return False
    return not start or not _start_time(pid) or _start_time(pid) == start


def _write_marker(marker: Path) -> None:
    fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(f"{os.getpid()} {_start_time(os.getpid())}\n")
        handle.flush()
        os.fsync(handle.fileno())


def _read_marker(marker: Path) -> tuple[int, str] | None:
    try:
        with marker.open("rb") as handle:
            words = handle.read(256).decode("ascii").split()
        return int(words[0]), words[1] if len(words) > 1 else ""
    except (OSError, UnicodeDecodeError, ValueError, IndexError):
        return None


def _remove(path: Path) -> None:
    # A real folder (never a link's target) or a single file, whatever is there.
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _plain_name(name: object) -> bool:
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "/" not in name
        and "\0" not in name
        and os.sep not in name
    )


def _read_manifest(folder: Path) -> tuple[str, set[str]] | None:
    """The command and entries an earlier run listed in ``folder`` (None: no valid manifest)."""
    path = folder / MANIFEST
    try:
        if not path.is_file() or path.stat().st_size > _MANIFEST_MAX_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        command, entries = data["command"], data["entries"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(command, str) or not isinstance(entries, list):
        return None
    if not all(_plain_name(e) and not e.startswith((_STAGE, _LEGACY_STAGE)) for e in entries):
        return None
    return command, set(entries)


def _roll_back(stage: Path, out: Path) -> bool:
    """Undo an in-place swap the plan in ``stage`` describes; True when there was one."""
    try:
        plan = json.loads((stage / _PLAN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    previous = stage / _PREVIOUS
    for item in reversed(plan):
        name = item.get("name")
        if not _plain_name(name):
            continue
        target, aside = out / name, previous / name
        moved_in = item.get("new") and not (stage / name).exists()
        if aside.exists() or aside.is_symlink():
            if moved_in:
                _remove(target)
            os.rename(aside, target)
        elif moved_in and not item.get("old"):
            _remove(target)
    return True


def _stage_names(folder: Path, prefix: str) -> list[Path]:
    try:
        return sorted(p for p in folder.glob(glob.escape(prefix) + "*"))
    except OSError:
        return []


def _recover(out: Path) -> list[str]:
    """Clean the stages of dead runs into ``out`` and report other leftovers; the lines to say."""
    said: list[str] = []
    parent, name = out.parent, out.name
    places = [(parent, f".{name}{_STAGE}", [f".{name}{_OLD}", f".{name}{_LEGACY_STAGE}"])]
    if out.is_dir() and not out.is_symlink():
        places.append((out, _STAGE, [_LEGACY_STAGE]))
    for folder, stage_prefix, other_prefixes in places:
        for marker in _stage_names(folder, stage_prefix):
            if not marker.name.endswith(_MARKER_SUFFIX):
                continue
            owner = _read_marker(marker)
            if owner is None:
                said.append(MSG_LEFTOVER.format(path=marker, out=out))
                continue
            pid, start = owner
            if _alive(pid, start):
                continue  # a run writing now: its own end removes its stage
            stage = marker.with_name(marker.name[: -len(_MARKER_SUFFIX)])
            token = stage.name[len(stage_prefix) :]
            if folder == out:
                if _roll_back(stage, out):
                    said.append(MSG_ROLLED_BACK.format(pid=pid, out=out))
            else:
                aside = folder / f".{name}{_OLD}{token}"
                if aside.is_dir() and not aside.is_symlink() and not out.exists():
                    os.rename(aside, out)
                    said.append(MSG_RESTORED.format(out=out, pid=pid, path=aside))
                _remove(aside)
            _remove(stage)
            os.unlink(marker)
            said.append(MSG_CLEANED.format(path=stage, pid=pid))
        for prefix in [stage_prefix, *other_prefixes]:
            for leftover in _stage_names(folder, prefix):
                token = leftover.name[len(prefix) :]
                if token.endswith(_MARKER_SUFFIX):
                    continue  # a marker: handled above
                if (
                    prefix != other_prefixes[-1]
                    and Path(f"{folder / stage_prefix}{token}{_MARKER_SUFFIX}").exists()
                ):
                    continue  # the stage of a run writing now
                said.append(MSG_LEFTOVER.format(path=leftover, out=out))
        for probe in _stage_names(folder, PROBE_PREFIX):
            # check_out_dir's empty probe file, named with its run's pid: ours, nothing in it.
            pid = probe.name[len(PROBE_PREFIX) :].split("-")[0]
            with contextlib.suppress(OSError):
                if pid.isdigit() and not _alive(int(pid), "") and probe.stat().st_size == 0:
                    os.unlink(probe)
        if folder == out:
            for torn in sorted(out.iterdir()):
                if _TEMPORARY.fullmatch(torn.name):
                    said.append(MSG_TORN.format(path=torn))
    return said


def _cwd_inside(folder: Path) -> bool:
    try:
        return Path.cwd().resolve().is_relative_to(folder.resolve())
    except OSError:  # pragma: no cover - the working folder was removed
        return False


def _whole_folder(out: Path, command: str) -> bool:
    """Whether ``out`` may be replaced as one folder (absent, empty, or only our earlier run)."""
    if not out.exists() and not out.is_symlink():
        return True
    if out.is_symlink() or not out.is_dir() or os.path.ismount(out) or _cwd_inside(out):
        return False
    if hasattr(os, "geteuid") and out.stat().st_uid != os.geteuid():
        return False  # a shared folder keeps its owner: replacing it would hand it to us
    entries = {p.name for p in out.iterdir()} - {MANIFEST}
    if not entries:
        return True
    manifest = _read_manifest(out)
    return manifest is not None and manifest[0] == command and entries <= manifest[1]


def _new_token() -> str:
    return secrets.token_hex(6)


def _write_manifest(stage: Path, command: str) -> None:
    import fairot

    entries = sorted(p.name for p in stage.iterdir() if p.name != MANIFEST)
    text = json.dumps({"command": command, "fairot": fairot.__version__, "entries": entries})
    write_atomic(stage / MANIFEST, text + "\n")


def _folder_mode(out: Path) -> int:
    if out.is_dir():
        return stat.S_IMODE(out.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


def _replace_whole(stage: Path, out: Path, aside: Path) -> None:
    """Put ``stage`` at ``out`` in one step (see the module docstring); remove the old folder."""
    if not out.exists():
        if not _renameat2(stage, out, _RENAME_NOREPLACE):
            os.rename(stage, out)
        return
    if not any(out.iterdir()):
        os.rename(stage, out)  # POSIX rename replaces an empty folder atomically
        return
    if _renameat2(stage, out, _RENAME_EXCHANGE):
        _fsync_folder(out.parent)
        _remove(stage)  # now the old run
        return
    # No atomic exchange: --out is absent between these two renames (never a mix).
    os.rename(out, aside)
    try:
        os.rename(stage, out)
    except BaseException:
        os.rename(aside, out)
        raise
    _fsync_folder(out.parent)
    _remove(aside)


def _swap_in_place(stage: Path, out: Path, owned: Iterable[str]) -> None:
    """Replace each owned entry of ``out`` by the stage's (or remove it), one rename each."""
    plan = [
        {
            "name": name,
            "old": (out / name).exists() or (out / name).is_symlink(),
            "new": (stage / name).exists(),
        }
        for name in owned
    ]
    previous = stage / _PREVIOUS
    os.mkdir(previous)
    # The plan first: a run killed between two renames is rolled back from it by the next one.
    write_atomic(stage / _PLAN, json.dumps(plan))
    done: list[tuple[Path, Path]] = []
    try:
        for item in plan:
            name = item["name"]
            if item["old"]:
                os.rename(out / name, previous / name)
                done.append((out / name, previous / name))
            if item["new"]:
                os.rename(stage / name, out / name)
                done.append((stage / name, out / name))
    except BaseException:
        for source, target in reversed(done):
            os.rename(target, source)
        raise
    # The commit point: without the plan, a leftover stage holds only the old entries.
    os.unlink(stage / _PLAN)
    _fsync_folder(out)


@contextlib.contextmanager
def staged_folder(
    out: str | os.PathLike, owned: Iterable[str] = (), *, command: str = "fairot"
) -> Iterator[Path]:
    """Yield an empty staging folder whose contents become ``out``'s run on success.

    Parameters
    ----------
    out : path-like
        The output folder (see the module docstring for the two ways it is replaced).
    owned : iterable of str, default=()
        Entry names the command may write besides those it does write this time: in place, each
        is replaced by the new entry or removed when the run wrote none (no stale file of an
        earlier run stays beside new ones). The entries the earlier run of the same command
        listed in its manifest count too.
    command : str, default="fairot"
        The command writing (``"audit"``), recorded in the manifest: a folder of another
        command's run is updated in place, never replaced.

    Yields
    ------
    Path
        The folder to write into. On an error it is removed and ``out`` is as it was.
    """
    out = Path(os.path.abspath(out))
    for line in _recover(out):
        print(f"fairot {command}: note: {line}", file=sys.stderr)
    whole = _whole_folder(out, command)
    token = _new_token()
    if whole:
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = out.parent / f".{out.name}{_STAGE}{token}"
        try:
            _write_marker(Path(f"{stage}{_MARKER_SUFFIX}"))
        except PermissionError:
            if not out.is_dir():
                raise
            whole = False  # the parent cannot be written: in place, inside --out
    if not whole:
        stage = out / f"{_STAGE}{token}"
        _write_marker(Path(f"{stage}{_MARKER_SUFFIX}"))
    marker = Path(f"{stage}{_MARKER_SUFFIX}")
    try:
        os.mkdir(stage, 0o700)
        yield stage
        _write_manifest(stage, command)
        if whole:
            stage.chmod(_folder_mode(out))
            _replace_whole(stage, out, out.parent / f".{out.name}{_OLD}{token}")
        else:
            earlier = _read_manifest(out)
            names = dict.fromkeys([*owned, *sorted(p.name for p in stage.iterdir())])
            if earlier is not None and earlier[0] == command:
                names.update(dict.fromkeys(sorted(earlier[1])))
            _swap_in_place(stage, out, names)
    finally:
        _remove(stage)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(marker)
