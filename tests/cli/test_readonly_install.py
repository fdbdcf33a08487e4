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


@pytest.mark.integration
def test_import_and_kernels_from_read_only_install(read_only_copy):
    result = _run(_command(read_only_copy, PROGRAM))
    assert result.returncode == 0, result.stderr[-2000:]
    value, cache_dir = result.stdout.split()
    assert float(value) == pytest.approx(2 / 3)
    assert "fairot-numba-cache" in cache_dir


@pytest.mark.integration
def test_help_from_read_only_install(read_only_copy):
    code = "import sys; from fairot.cli import main; sys.argv = ['fairot', '--help']; main()"
    result = _run(_command(read_only_copy, code))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "mitigate" in result.stdout and "monitor" in result.stdout


def test_explicit_writable_cache_dir_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    fairot._ensure_numba_cache_dir()
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "mine")


def test_fallback_sets_numba_config(monkeypatch, tmp_path):
    import numba.core.config

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(fairot, "_writable", lambda path: False)
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", numba.core.config.CACHE_DIR)
    fairot._ensure_numba_cache_dir()
    assert "fairot-numba-cache" in os.environ["NUMBA_CACHE_DIR"]
    assert os.environ["NUMBA_CACHE_DIR"] == numba.core.config.CACHE_DIR


def _predictable_folder():
    import tempfile

    return Path(tempfile.gettempdir()) / f"fairot-numba-cache-{os.getuid()}"


@pytest.fixture
def planted_folder():
    """The predictable cache folder, prepared by 'another user': world-writable, or not ours."""
    folder = _predictable_folder()
    saved = folder.with_name(folder.name + "-saved-by-test")
    if folder.exists():
        folder.rename(saved)
    folder.mkdir()
    (folder / "planted.nbi").write_bytes(b"not a real index")
    yield folder
    if folder.is_symlink():
        folder.unlink()
    shutil.rmtree(folder, ignore_errors=True)
    if saved.exists():
        saved.rename(folder)


@pytest.mark.parametrize("attack", ["world-writable", "other-owner", "symlink"])
def test_prepared_cache_folder_is_not_used(monkeypatch, planted_folder, tmp_path, attack):
    if attack == "world-writable":
        planted_folder.chmod(0o777)
    elif attack == "other-owner":
        if os.geteuid() != 0:
            pytest.skip("only root can give a folder to another user")
        os.chown(planted_folder, 12345, 12345)
        planted_folder.chmod(0o755)
    else:
        shutil.rmtree(planted_folder)
        target = tmp_path / "elsewhere"
        target.mkdir(mode=0o700)
        planted_folder.symlink_to(target)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(fairot, "_writable", lambda path: False)
    with pytest.warns(RuntimeWarning, match="not a private folder of this user"):
        fairot._ensure_numba_cache_dir()
    chosen = Path(os.environ["NUMBA_CACHE_DIR"])
    assert chosen != planted_folder and chosen.resolve() != planted_folder.resolve()
    info = chosen.lstat()
    assert info.st_uid == os.getuid() and info.st_mode & 0o077 == 0
    shutil.rmtree(chosen)


def test_private_predictable_folder_is_reused(monkeypatch):
    folder = _predictable_folder()
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(fairot, "_writable", lambda path: False)
    fairot._ensure_numba_cache_dir()
    assert Path(os.environ["NUMBA_CACHE_DIR"]) == folder
    info = folder.lstat()
    assert info.st_uid == os.getuid() and info.st_mode & 0o022 == 0


@pytest.mark.integration
def test_unwritable_explicit_cache_dir_is_one_line_not_a_traceback(tmp_path):
    # numba itself dies at import with a long traceback; fairot warns once and falls back.
    # Below a regular file: nobody, root included, can create that folder.
    (tmp_path / "a-file").write_text("")
    blocked = str(tmp_path / "a-file" / "cache")
    code = "import fairot; from fairot.transport import ecdf_rank; import numpy as np; " + (
        "print(ecdf_rank(np.arange(3.0), np.array([1.5]))[0])"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": blocked}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert float(result.stdout) == pytest.approx(2 / 3)
    assert "cannot be written by this user" in result.stderr
    assert "Traceback" not in result.stderr


def _numba_subfolder(cache: Path, module) -> Path:
    """Where numba caches the kernels of ``module``'s folder inside ``cache`` (its own rule)."""
    from numba.core.caching import _CacheLocator

    return cache / _CacheLocator.get_suitable_cache_subpath(module.__file__)


@pytest.mark.parametrize("blocker", ["file", "read-only folder"])
def test_cache_dir_with_an_unwritable_subfolder_is_one_warning_line(monkeypatch, tmp_path, blocker):
    import numba.core.config

    import fairot.transport

    monkeypatch.setattr(numba.core.config, "CACHE_DIR", numba.core.config.CACHE_DIR)
    cache = tmp_path / "cache"
    cache.mkdir()
    sub = _numba_subfolder(cache, fairot.transport)
    if blocker == "file":  # a file where numba needs a folder: unwritable for root too
        sub.write_text("")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders")
        sub.mkdir(mode=0o500)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    with pytest.warns(RuntimeWarning, match="numba's cache folder .* cannot be written") as seen:
        fairot._ensure_numba_cache_dir()
    assert len(seen) == 1 and str(sub) in str(seen[0].message)
    chosen = Path(os.environ["NUMBA_CACHE_DIR"])
    assert chosen != cache and "fairot-numba-cache" in chosen.name


@pytest.mark.integration
def test_help_with_an_unwritable_cache_subfolder_is_not_a_traceback(tmp_path):
    import fairot.transport

    cache = tmp_path / "cache"
    cache.mkdir()
    _numba_subfolder(cache, fairot.transport).write_text("")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    result = subprocess.run(
        [sys.executable, "-m", "fairot", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert "numba's cache folder" in result.stderr
    assert len([line for line in result.stderr.splitlines() if line.strip()]) <= 2
