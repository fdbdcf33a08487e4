"""Output folders written all or nothing (issue 37, item 5): killed at every write, ``--out`` is
the complete old run or the complete new one, and the next run cleans the stage and says so."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fairot.utils
from fairot.cli import main
from fairot.cli._cmd_audit import MSG_WRITE_FAILED
from fairot.cli._outdir import (
    MANIFEST,
    MSG_CLEANED,
    MSG_LEFTOVER,
    MSG_ROLLED_BACK,
    _recover,
    staged_folder,
)
from tests.helpers import mitigate_args as _mitigate_args
from tests.helpers import run_cli as _run

CHILD = Path(__file__).with_name("_kill_child.py")
# Every write, rename and folder made or removed (the unlinks of the old folder's files, all
# alike once the new run is in place, are left out to keep the test short).
ALL_KINDS = ["replace", "rename", "mkdir", "rmdir", "renameat2"]


def _table(path: Path, seed: int, n: int = 60) -> Path:
    rng = np.random.default_rng(seed)
    scores = rng.uniform(0, 1, n)
    labels = (rng.uniform(0, 1, n) < scores).astype(int)
    rows = [f"{s:.6f},{i % 2},{y},{i}" for i, (s, y) in enumerate(zip(scores, labels, strict=True))]
    path.write_text("score,group,y,t\n" + "\n".join(rows) + "\n")
    return path


def _args(command: str, data: Path, out: Path) -> list[str]:
    common = ["--data", str(data), "--score", "score", "--sensitive", "group"]
    if command == "audit":
        return ["audit", *common, "--label", "y", "--n-bootstrap", "0", "--out", str(out)]
    if command == "monitor":
        return ["monitor", *common, "--time", "t", "--window", "20", "--n-bootstrap", "10",
                "--out", str(out)]  # fmt: skip
    return ["mitigate", *common, "--label", "y", "--method", "dpp", "--n-bootstrap", "0",
            "--out", str(out)]  # fmt: skip


def _kill_everywhere(tmp_path, command, *, old=True, keep=None, exchange=True, kinds=ALL_KINDS):
    old_data, new_data = _table(tmp_path / "old.csv", 1), _table(tmp_path / "new.csv", 2)
    out = tmp_path / "outs" / "out"
    out.parent.mkdir()
    spec = {
        "old": _args(command, old_data, out) if old else None,
        "new": _args(command, new_data, out),
        "out": str(out),
        "keep": keep,
        "exchange": exchange,
        "kinds": kinds,
        "next_every": 4,
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    result_path = tmp_path / "result.json"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg", "SOURCE_DATE_EPOCH": "0"}
    done = subprocess.run(
        [sys.executable, str(CHILD), str(tmp_path / "spec.json"), str(result_path)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(result_path.read_text()), out


def _check(result, *, in_place=False):
    old, new = result["old"], result["new"]
    assert new is not None and new != old and MANIFEST in new
    assert result["new_leftovers"] == []
    outcomes = set()
    for record in result["kills"]:
        where = f"killed at call {record['kill_at']} of {result['total']}"
        assert record["end"] == "killed", where
        if not in_place:
            # At every instant --out is the complete old run (or absent) or the complete new one.
            assert record["after_kill"] in (old, new), where
        # The recovery the next run starts with leaves exactly one run and no stage.
        assert record["recover_end"] == "exit 0", (where, record["recover_said"])
        assert record["after_recover"] in (old, new), where
        outcomes.add("old" if record["after_recover"] == old else "new")
        assert record["leftovers_after_recover"] == [], where
        if record["leftovers_after_kill"]:
            assert "staging folder of an interrupted run" in record["recover_said"], where
        if "next_end" not in record:
            continue
        # The whole next run succeeds from that state, and leaves the new run, nothing else.
        assert record["next_end"] == "exit 0", (where, record["next_said"])
        assert record["after_next"] == new, where
        assert record["leftovers_after_next"] == [], where
        if record["leftovers_after_kill"]:
            assert "note: removed" in record["next_said"], (where, record["next_said"])
    # The kills span the switch: some leave the old run, some the new one.
    assert outcomes == {"old", "new"}


@pytest.mark.integration
def test_audit_killed_at_every_write_replaces_whole_folder(tmp_path):
    result, _ = _kill_everywhere(tmp_path, "audit")
    assert result["total"] >= 10
    _check(result)


@pytest.mark.integration
# A variant of the switch: `make kill-tests` runs it (`make test` runs the main three).
@pytest.mark.slow
def test_audit_killed_at_every_write_without_exchange(tmp_path):
    # Where renameat2(RENAME_EXCHANGE) is missing: --out may be absent for an instant (between
    # two renames), never mixed; a run killed there is restored from the folder set aside.
    # The steps of the switch (the writes before it are those of the test above).
    result, _ = _kill_everywhere(
        tmp_path, "audit", exchange=False, kinds=["rename", "renameat2", "rmdir", "unlink"]
    )
    old = result["old"]
    for record in result["kills"]:
        assert record["after_kill"] in (old, result["new"], None)
        if record["after_kill"] is None:
            assert record["after_recover"] == old
            assert "restored the earlier run" in record["recover_said"]
    _check({**result, "kills": [r for r in result["kills"] if r["after_kill"] is not None]})


@pytest.mark.integration
# A variant of the switch: `make kill-tests` runs it (`make test` runs the main three).
@pytest.mark.slow
def test_audit_killed_at_every_write_into_new_folder(tmp_path):
    # The folder made, the manifest written, the rename into place and the marker removed.
    result, _ = _kill_everywhere(
        tmp_path, "audit", old=False, kinds=["mkdir", "renameat2", "rename", "unlink"]
    )
    assert result["old"] is None
    _check(result)


@pytest.mark.integration
def test_monitor_killed_at_every_write(tmp_path):
    result, _ = _kill_everywhere(tmp_path, "monitor")
    _check(result)


@pytest.mark.integration
def test_mitigate_killed_at_every_step(tmp_path):
    # The steps that put the run in place and remove the old one (each file's write inside
    # the stage is the audit's, killed at every one above; a mitigate write costs seconds).
    result, _ = _kill_everywhere(tmp_path, "mitigate", kinds=["rename", "rmdir", "renameat2"])
    assert result["total"] >= 4
    _check(result)


@pytest.mark.integration
# A variant of the switch: `make kill-tests` runs it (`make test` runs the main three).
@pytest.mark.slow
def test_in_place_killed_at_every_write(tmp_path):
    # --out also holds a file of the user's: the entries are swapped one by one, so a kill
    # between two renames leaves a mix, which the recovery rolls back to the old run.
    result, _ = _kill_everywhere(
        tmp_path, "audit", keep="notes.txt", kinds=["rename", "mkdir", "unlink"]
    )
    assert result["new"]["notes.txt"] == result["old"]["notes.txt"]
    mixed = [r for r in result["kills"] if r["after_kill"] not in (result["old"], result["new"])]
    assert mixed  # the window exists (documented), and every one of them is repaired:
    for record in mixed:
        assert record["after_recover"] == result["old"]
        assert "rolled back" in record["recover_said"]
    _check(result, in_place=True)


def test_stage_of_a_live_run_is_left_alone(tmp_path):
    out = tmp_path / "out"
    with staged_folder(out, command="audit") as stage:
        (stage / "a.txt").write_text("x")
        # Another run into the same --out while this one writes: it must not touch this stage.
        assert _recover(out) == []
        assert (stage / "a.txt").exists()
    assert (out / "a.txt").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_stage_of_a_dead_run_is_removed_and_reported(tmp_path):
    out = tmp_path / "out"
    stage = tmp_path / ".out.fairot-stage-0123456789ab"
    stage.mkdir()
    (stage / "report.md").write_text("half")
    # A process that has exited: its pid is free (or reused, with another start time).
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    Path(f"{stage}.pid").write_text(f"{int(child.stdout)} 1\n")
    said = _recover(out)
    assert said == [MSG_CLEANED.format(path=stage, pid=int(child.stdout))]
    assert list(tmp_path.iterdir()) == []


def test_leftover_without_marker_is_reported_not_removed(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    legacy = out / ".fairot-staging-abc123"  # the name of fairot's stages before the markers
    legacy.mkdir()
    data = _table(tmp_path / "d.csv", 3)
    assert main(_args("audit", data, out)) == 0
    err = capsys.readouterr().err
    assert MSG_LEFTOVER.format(path=legacy, out=out) in err
    assert legacy.exists()


def test_in_place_swap_rolled_back_from_its_plan(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "model.skops").write_text("old model")
    (out / "report.md").write_text("old report")
    # A swap killed after the model was replaced, before the report was.
    stage = out / ".fairot-stage-0123456789ab"
    (stage / ".previous").mkdir(parents=True)
    (stage / "report.md").write_text("new report")
    os.rename(out / "model.skops", stage / ".previous" / "model.skops")
    (out / "model.skops").write_text("new model")
    plan = [{"name": "model.skops", "old": True, "new": True},
            {"name": "report.md", "old": True, "new": True}]  # fmt: skip
    (stage / ".fairot-swap.json").write_text(json.dumps(plan))
    Path(f"{stage}.pid").write_text("999999999 1\n")  # beyond any pid: not running
    said = _recover(out)
    assert said[0] == MSG_ROLLED_BACK.format(pid=999999999, out=out)
    assert sorted(p.name for p in out.iterdir()) == ["model.skops", "notes.txt", "report.md"]
    assert (out / "model.skops").read_text() == "old model"
    assert (out / "report.md").read_text() == "old report"


def test_foreign_folder_is_updated_in_place(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    inode = out.stat().st_ino
    with staged_folder(out, command="audit") as stage:
        (stage / "report.md").write_text("new")
    assert out.stat().st_ino == inode  # the user's folder itself is kept
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "notes.txt", "report.md"]


def test_earlier_run_is_replaced_whole_without_stale_files(tmp_path):
    out = tmp_path / "out"
    with staged_folder(out, command="audit") as stage:
        (stage / "old_plot.png").write_bytes(b"png")
        (stage / "report.md").write_text("old")
    with staged_folder(out, command="audit") as stage:
        (stage / "report.md").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "report.md"]
    assert (out / "report.md").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_other_commands_run_is_kept(tmp_path):
    out = tmp_path / "out"
    with staged_folder(out, command="monitor") as stage:
        (stage / "monitor.csv").write_text("m")
    with staged_folder(out, command="audit") as stage:
        (stage / "report.md").write_text("a")
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "monitor.csv", "report.md"]


def test_failure_inside_leaves_earlier_run(tmp_path):
    out = tmp_path / "out"
    with staged_folder(out, command="audit") as stage:
        (stage / "report.md").write_text("old")
    with pytest.raises(OSError), staged_folder(out, command="audit") as stage:
        (stage / "report.md").write_text("new")
        raise OSError(28, "No space left on device")
    assert (out / "report.md").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_probe_of_a_dead_run_is_removed(tmp_path):
    from fairot.cli._io import PROBE_PREFIX

    out = tmp_path / "out"
    out.mkdir()
    stale = out / f"{PROBE_PREFIX}999999999-abc"  # a pid beyond any: its run is over
    stale.write_bytes(b"")
    mine = out / f"{PROBE_PREFIX}{os.getpid()}-abc"  # this process: alive, left alone
    mine.write_bytes(b"")
    assert _recover(out) == []
    assert not stale.exists() and mine.exists()


def _snapshot(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("fail_on", ["model.skops", "adjusted.csv"])
def test_failed_write_leaves_new_out_absent(coded_csv, tmp_path, capsys, monkeypatch, fail_on):
    path, _, _ = coded_csv
    out = tmp_path / "new" / "out"
    real = fairot.utils.write_atomic

    def failing(target, data, **kwargs):
        if str(target).endswith(fail_on):
            raise OSError(28, "No space left on device")
        return real(target, data, **kwargs)

    monkeypatch.setattr(fairot.utils, "write_atomic", failing)
    code, printed, err = _run(capsys, *_mitigate_args(path, out, "--apply", path))
    assert code == 2 and printed == ""
    assert MSG_WRITE_FAILED.format(path=out, reason="No space left on device") in err
    assert not out.exists()
    assert list(out.parent.iterdir()) == []  # no staging folder left behind


def test_failed_write_leaves_existing_out_unchanged(coded_csv, tmp_path, capsys, monkeypatch):
    path, _, _ = coded_csv
    out = tmp_path / "out"
    code, _, err = _run(capsys, *_mitigate_args(path, out, "--apply", path))
    assert code == 0, err
    (out / "notes.txt").write_text("mine")
    before = _snapshot(out)
    real = fairot.utils.write_atomic

    def failing(target, data, **kwargs):
        if str(target).endswith("adjusted.csv"):
            raise OSError(28, "No space left on device")
        return real(target, data, **kwargs)

    monkeypatch.setattr(fairot.utils, "write_atomic", failing)
    # A different fit (regression) would write different files: none of them may appear.
    code, _, err = _run(
        capsys, "mitigate", "--data", path, "--score", "score", "--sensitive", "group",
        "--method", "regression", "--out", out, "--n-bootstrap", 0, "--apply", path,
    )  # fmt: skip
    assert code == 2
    assert _snapshot(out) == before
    assert sorted(p.name for p in out.iterdir()) == [
        MANIFEST, "adjusted.csv", "after", "before", "model.skops", "notes.txt",
        "report.html", "report.json", "report.md",
    ]  # fmt: skip


def test_rerun_replaces_outputs_together(coded_csv, tmp_path, capsys):
    path, _, _ = coded_csv
    out = tmp_path / "out"
    assert _run(capsys, *_mitigate_args(path, out, "--apply", path))[0] == 0
    (out / "notes.txt").write_text("mine")
    # Without --apply, the adjusted table of the first run would belong to no model: removed.
    assert _run(capsys, *_mitigate_args(path, out))[0] == 0
    assert sorted(p.name for p in out.iterdir()) == [
        MANIFEST, "after", "before", "model.skops", "notes.txt", "report.html", "report.json",
        "report.md",
    ]  # fmt: skip
    assert (out / "notes.txt").read_text() == "mine"


def test_new_out_folder_gets_the_usual_permissions(tmp_path):
    import os

    from fairot.cli._outdir import staged_folder

    out = tmp_path / "fresh"
    with staged_folder(out, ["a.txt"]) as stage:
        (stage / "a.txt").write_text("x")
    umask = os.umask(0)
    os.umask(umask)
    assert (out / "a.txt").read_text() == "x"
    assert out.stat().st_mode & 0o777 == 0o777 & ~umask
