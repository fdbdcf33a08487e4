"""A second ``fairot face train`` into a locked ``out_dir`` is refused with one clear message;
a lock left by a dead process is taken over."""

import os
import re
import socket
import subprocess
import sys

import pytest

from fairot.face import train_from_config
from fairot.face._lock import LOCK_NAME, RUN_LOCKED_ERROR, hold_run_lock
from tests.face.test_groups_csv import _config

_HOLDER = """
import sys
from fairot.face._lock import hold_run_lock
with hold_run_lock(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def _hold_in_child(out_dir):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(out_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout.readline().strip() == "locked"
    return child


@pytest.mark.integration
def test_second_run_into_a_locked_out_dir_is_refused(tmp_path):
    config, _ = _config(tmp_path)
    out = tmp_path / "run"
    out.mkdir()
    child = _hold_in_child(out)
    try:
        holder = f"pid {child.pid} on {socket.gethostname()}"
        prefix = RUN_LOCKED_ERROR.format(path=out, holder=holder)
        with pytest.raises(ValueError, match=re.escape(prefix)):
            train_from_config(config, progress=False)
        assert not (out / "checkpoint.pt").exists()
    finally:
        child.stdin.close()
        child.wait(timeout=60)
        child.stdout.close()
    # the holder has ended: its lock is gone and this run trains
    trainer = train_from_config(config, progress=False)
    assert trainer.step_ == 1 and (out / "checkpoint.pt").exists()


def test_two_locks_in_one_process_and_a_stale_lock(tmp_path):
    busy = pytest.raises(ValueError, match="in use by another")
    with hold_run_lock(tmp_path), busy, hold_run_lock(tmp_path):
        pass
    # A lock file left by a dead process (any PID in it) holds no flock: it is taken over.
    (tmp_path / LOCK_NAME).write_text("pid 999999999 on elsewhere\n")
    with hold_run_lock(tmp_path) as path:
        assert path.read_text().startswith(f"pid {os.getpid()} on ")
