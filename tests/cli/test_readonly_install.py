"""``import fairot`` and ``fairot --help`` from a read-only install with a read-only $HOME.

numba's ``cache=True`` raises RuntimeError at import when it can write neither next to the sources
nor in ~/.cache; fairot then points NUMBA_CACHE_DIR at a temporary folder.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fairot

PROGRAM = (
    "import os, numpy as np, fairot; from fairot.transport import ecdf_rank; "
    "from fairot.cli import main; "
    "print(ecdf_rank(np.arange(3.0), np.array([1.5]))[0]); "
    "print(os.environ.get('NUMBA_CACHE_DIR'))"
)


@pytest.fixture
def read_only_copy(tmp_path):
    copy = tmp_path / "site"
    shutil.copytree(
        Path(fairot.__file__).parent, copy / "fairot", ignore=shutil.ignore_patterns("__pycache__")
    )
    return copy


def _command(site: Path, code: str) -> list[str]:
    env = f"HOME={site} PYTHONPATH={site} XDG_CACHE_HOME= NUMBA_CACHE_DIR="
    run = f'cd / && env {env} {sys.executable} -c "{code}"'
    if os.geteuid() != 0:
        # Permissions bind everyone but root.
        subprocess.run(["chmod", "-R", "a-w", str(site)], check=True)
        return ["sh", "-c", run]
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare(1): cannot make a read-only mount for this test")
    # Root ignores permissions: a read-only bind mount in a private mount namespace (gone when
    # the command exits) makes the copy truly read-only.
    mount = f"mount --bind {site} {site} && mount -o remount,bind,ro {site}"
    return ["unshare", "--mount", "sh", "-c", f"{mount} && {run}"]


def _run(command):
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if "mount:" in result.stderr or "unshare:" in result.stderr:
        pytest.skip(f"no read-only mount here: {result.stderr.strip()[:200]}")
    return result


def test_import_and_kernels_from_read_only_install(read_only_copy):
    result = _run(_command(read_only_copy, PROGRAM))
    assert result.returncode == 0, result.stderr[-2000:]
    value, cache_dir = result.stdout.split()
    assert float(value) == pytest.approx(2 / 3)
    assert "fairot-numba-cache" in cache_dir


def test_help_from_read_only_install(read_only_copy):
    code = "import sys; from fairot.cli import main; sys.argv = ['fairot', '--help']; main()"
    result = _run(_command(read_only_copy, code))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "mitigate" in result.stdout and "monitor" in result.stdout


def test_explicit_cache_dir_wins(monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/somewhere")
    monkeypatch.setattr(fairot, "_writable", lambda path: False)
    fairot._ensure_numba_cache_dir()
    assert os.environ["NUMBA_CACHE_DIR"] == "/somewhere"


def test_fallback_sets_numba_config(monkeypatch, tmp_path):
    import numba.core.config

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(fairot, "_writable", lambda path: False)
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", numba.core.config.CACHE_DIR)
    fairot._ensure_numba_cache_dir()
    assert "fairot-numba-cache" in os.environ["NUMBA_CACHE_DIR"]
    assert os.environ["NUMBA_CACHE_DIR"] == numba.core.config.CACHE_DIR
