"""Kill a fairot command at every file-system change it makes into ``--out`` (issue 37).

Run by ``tests/cli/test_outdir.py`` as ``python _kill_child.py SPEC.json RESULT.json``. The old
run is written into ``--out`` first. Then the new run starts, and when it reaches the writing
(``fairot.cli._outdir.staged_folder``, everything computed) it ``fork``-s, once per kill point:
in a child the functions that change the file system (``os.replace``, ``os.rename``,
``os.mkdir``, ``os.unlink``, ``os.rmdir``, the ``renameat2`` of ``fairot.cli._outdir``) count
their calls, and the ``N``-th sends ``SIGKILL`` to its own process before it acts: a real
``kill -9``, for every ``N`` up to the number of calls. After each kill this records ``--out``,
then ``--out`` after the recovery a next run starts with (``_recover``, in a child), then after
a whole next write from the killed state (in a child) with what it said on stderr; then it puts
the old run back. Forking at the write keeps the compute out of the loop (the write is what is
under test); this process then writes the new run itself.

The pictures are drawn once. Every child starts from the same forked state and makes the same
calls, so the N-th ``Figure.savefig`` into memory (the PNG and inline SVG bytes of the report
files) is the same in all of them: the first child, which writes the whole new run, keeps each
rendering under ``renders/`` beside RESULT.json, and the later children (and this process's own
write at the end) copy it into the buffer instead of drawing it again (drawing was 90 % of
every write). The files, their bytes and every file-system call the kills count are unchanged;
a rendering that does not match its key (the same figure, format and arguments) is drawn as usual.

SPEC keys: ``old`` (arguments of the run already in ``--out``, or null), ``new`` (those of the
killed run), ``out``, ``keep`` (a file of the user's put in ``--out`` first, or null),
``exchange`` (false: act as a system without ``renameat2``), ``kinds`` (the counted functions),
``next_every`` (a whole next write after every such kill point and the last; the recovery is
checked after every one).
"""

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import signal
import sys
import traceback
import zipfile
from pathlib import Path

STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")


def digest(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"PK":  # a skops zip stamps its members with the time: compare the contents
        with zipfile.ZipFile(path) as archive:
            data = json.dumps(sorted((i.filename, i.CRC) for i in archive.infolist())).encode()
    return hashlib.sha256(STAMP.sub(b"<time>", data)).hexdigest()


def snapshot(out: Path):
    """Every entry of ``out`` (a stage inside it left out) with its content digest; None: absent."""
    if not out.exists():
        return None
    entries = {}
    for path in sorted(out.rglob("*")):
        relative = path.relative_to(out).as_posix()
        if relative.startswith(".fairot-stage-"):
            continue
        entries[relative] = digest(path) if path.is_file() else "folder"
    return entries


def leftovers(out: Path) -> list[str]:
    names = [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    if out.is_dir():
        names += [p.name for p in out.iterdir() if p.name.startswith(".fairot-")]
    return sorted(n for n in names if n != ".fairot-run.json")


def render_once(renders: Path, active: list[bool]) -> None:
    """Patch ``Figure.savefig``: in a child, the N-th rendering into memory is drawn once."""
    from matplotlib.figure import Figure

    real = Figure.savefig
    calls = [0]

    def savefig(self, fname, *args, **kwargs):
        if not active[0] or not isinstance(fname, io.StringIO | io.BytesIO) or args:
            return real(self, fname, *args, **kwargs)
        calls[0] += 1
        key = repr((calls[0], id(self), type(fname).__name__, sorted(kwargs.items())))
        path = renders / f"{calls[0]}.json"
        if path.exists():
            kept = json.loads(path.read_text())
            if kept["key"] == key:
                text = kept["data"]
                fname.write(text if isinstance(fname, io.StringIO) else bytes.fromhex(text))
                return None
        start = fname.tell()
        real(self, fname, **kwargs)
        data = fname.getvalue()[start:]
        text = data if isinstance(fname, io.StringIO) else data.hex()
        # open() and write(): none of the counted calls (os.replace, os.rename, ...) is made.
        with open(path, "w") as kept:
            json.dump({"key": key, "data": text}, kept)
        return None

    Figure.savefig = savefig


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    import matplotlib

    import fairot.cli._outdir as outdir

    # The same SVG ids in every run (matplotlib draws them at random otherwise).
    matplotlib.rcParams["svg.hashsalt"] = "fairot-kill-test"
    from fairot.cli import main as fairot_main

    out = Path(spec["out"])
    work = Path(sys.argv[2]).parent
    stderr = work / "stderr.txt"
    if spec["keep"]:
        out.mkdir(parents=True)
        (out / spec["keep"]).write_text("mine")
    with contextlib.redirect_stdout(open(os.devnull, "w")):  # noqa: SIM115
        if spec["old"] is not None:
            assert fairot_main(spec["old"]) == 0
        else:  # warm the imports and kernels all the same, then start from no folder
            assert fairot_main(spec["new"]) == 0
            shutil.rmtree(out)
    pristine = work / "pristine"
    if out.exists():
        shutil.copytree(out, pristine, symlinks=True)

    def restore() -> None:
        if out.exists():
            shutil.rmtree(out)
        for name in leftovers(out):
            target = out.parent / name
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        if pristine.exists():
            shutil.copytree(pristine, out, symlinks=True)

    real = outdir.staged_folder
    in_child = [False]
    renders = work / "renders"
    renders.mkdir()
    # Kept renderings are used from the fork point on: in the children, and in this process's
    # own write of the new run at the end (the old run above was drawn as usual).
    from_fork = [False]
    render_once(renders, from_fork)

    def child(action: str, kill_at: int | None) -> tuple[str, int, str]:
        """Fork; the child goes on with ``action`` and never comes back here."""
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            in_child[0] = from_fork[0] = True
            os.close(read)
            fd = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fd, 2)
            calls = [0]

            def counted(function):
                def wrapper(*args, **kwargs):
                    calls[0] += 1
                    if calls[0] == kill_at:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return function(*args, **kwargs)

                return wrapper

            if not spec["exchange"]:
                outdir._renameat2 = lambda source, target, flags: False
            for kind in spec["kinds"]:
                if kind == "renameat2":
                    outdir._renameat2 = counted(outdir._renameat2)
                else:
                    setattr(os, kind, counted(getattr(os, kind)))
            child.report = lambda: os.write(write, str(calls[0]).encode())
            if action == "recover":
                try:
                    for line in outdir._recover(Path(os.path.abspath(out))):
                        print(line, file=sys.stderr)
                finally:
                    sys.stderr.flush()
                os._exit(0)
            return "", 0, ""  # the child: go on writing
        os.close(write)
        with os.fdopen(read) as pipe:
            count = pipe.read()
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            end = "killed" if os.WTERMSIG(status) == signal.SIGKILL else "signal"
        else:
            end = f"exit {os.WEXITSTATUS(status)}"
        return end, int(count) if count else -1, stderr.read_text()

    @contextlib.contextmanager
    def forking(target, owned=(), *, command="fairot"):
        # Here the new run has computed everything; each child writes from this point.
        result = {"old": snapshot(out)}
        end, total, said = child("run", None)
        if not in_child[0]:
            assert end == "exit 0", said
            result.update(new=snapshot(out), total=total, kills=[], new_leftovers=leftovers(out))
            for kill_at in range(1, total + 1):
                if in_child[0]:
                    break
                restore()
                end, _, said = child("run", kill_at)
                if in_child[0]:
                    break
                record = {"kill_at": kill_at, "end": end, "said": said}
                record.update(after_kill=snapshot(out), leftovers_after_kill=leftovers(out))
                saved = work / "killed"
                shutil.copytree(out.parent, saved, symlinks=True)
                record["recover_end"], _, record["recover_said"] = child("recover", None)
                record["after_recover"] = snapshot(out)
                record["leftovers_after_recover"] = leftovers(out)
                shutil.rmtree(out.parent)
                shutil.copytree(saved, out.parent, symlinks=True)
                shutil.rmtree(saved)
                if kill_at % spec["next_every"] == 0 or kill_at == total:
                    record["next_end"], _, record["next_said"] = child("run", None)
                    if in_child[0]:
                        break
                    record.update(after_next=snapshot(out), leftovers_after_next=leftovers(out))
                result["kills"].append(record)
            if not in_child[0]:
                Path(sys.argv[2]).write_text(json.dumps(result))
                from_fork[0] = True
                restore()
        try:
            with real(target, owned, command=command) as stage:
                yield stage
        except BaseException:
            if in_child[0]:
                traceback.print_exc()
                sys.stderr.flush()
                os._exit(70)
            raise
        if in_child[0]:
            child.report()
            sys.stderr.flush()
            os._exit(0)

    outdir.staged_folder = forking
    with contextlib.redirect_stdout(open(os.devnull, "w")):  # noqa: SIM115
        code = fairot_main(spec["new"])
    if in_child[0]:  # pragma: no cover - the children end in forking
        os._exit(71)
    assert code == 0


if __name__ == "__main__":
    main()
