"""Atomic writes: the destination is the old or the complete new content, never torn."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fairot.utils import atomic_write, remove_stale_temporaries, write_atomic
from fairot.utils._atomic import DATA_ERROR, MODE_ERROR


def test_text_and_binary_round_trip(tmp_path):
    write_atomic(tmp_path / "a.txt", "héllo\n")
    write_atomic(tmp_path / "sub" / "b.bin", b"\x00\x01")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "héllo\n"
    assert (tmp_path / "sub" / "b.bin").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.txt", "b.bin", "sub"]


def test_error_inside_block_keeps_old_file_and_removes_temp(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="boom"), atomic_write(target, "w") as f:
        f.write("half of the new")
        raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_permissions_follow_umask_like_open(tmp_path):
    write_atomic(tmp_path / "atomic.txt", "x")
    (tmp_path / "plain.txt").write_text("x")
    mode = (tmp_path / "atomic.txt").stat().st_mode & 0o777
    assert mode == (tmp_path / "plain.txt").stat().st_mode & 0o777


def test_bad_mode_and_data(tmp_path):
    with pytest.raises(ValueError, match=re.escape(MODE_ERROR.format(value="a"))):
        atomic_write(tmp_path / "x", "a").__enter__()
    with pytest.raises(TypeError, match=DATA_ERROR.format(value="int")):
        write_atomic(tmp_path / "x", 3)


_SLOW_WRITER = """
import sys, time
from fairot.utils import atomic_write
path, tag = sys.argv[1], sys.argv[2]
while True:
    with atomic_write(path, "w") as f:
        for i in range(200):
            f.write(tag * 1000 + "\\n")
            f.flush()
            if i == 5:
                print("writing", flush=True)
            time.sleep(0.0005)
        f.write("END\\n")
"""


@pytest.mark.integration
def test_sigkill_mid_write_leaves_a_complete_file(tmp_path):
    # The oracle: every complete version ends with END and has one tag; a torn one would not.
    # (tests/face/test_checkpoint.py kills a training process 20 times; one kill suffices here.)
    target = tmp_path / "data.txt"
    write_atomic(target, "o" * 1000 + "\nEND\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_WRITER, str(target), "n"], stdout=subprocess.PIPE, env=env
    )
    assert proc.stdout.readline() == b"writing\n"
    time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    lines = target.read_text().splitlines()
    assert lines[-1] == "END"
    assert len({line for line in lines[:-1]}) == 1


def test_remove_stale_temporaries_only_touches_this_destination(tmp_path):
    (tmp_path / ".ckpt.pt.abc.tmp").write_bytes(b"torn")
    (tmp_path / ".other.pt.abc.tmp").write_bytes(b"keep")
    (tmp_path / "ckpt.pt").write_bytes(b"good")
    assert remove_stale_temporaries(tmp_path / "ckpt.pt") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.pt.abc.tmp", "ckpt.pt"]
