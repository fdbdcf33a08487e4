"""fairot.utils.compilation: one log line when fairot's numba kernels compile long."""

import logging
import os
import subprocess
import sys
import time

import numba
import pytest
from numba.core import event

from fairot.cli import COMPILE_LOGGER, show_compile_notice
from fairot.utils.compilation import (
    LOGGER_NAME,
    MSG_COMPILING,
    NOTICE_AFTER_S,
    CompileNotice,
    install_compile_notice,
)

PREFIX = MSG_COMPILING.split("(")[0]


def _fresh_kernel(module: str):
    """A new dispatcher (so calling it compiles) whose Python function lives in ``module``."""

    def kernel(x):
        total = 0.0
        for i in range(x):
            total += i * 0.5
        return total

    kernel.__module__ = module
    return numba.njit(kernel)


def _records(caplog):
    return [r for r in caplog.records if r.name == LOGGER_NAME]


def test_a_long_compile_of_fairot_kernels_is_logged_once(caplog):
    notice = CompileNotice(after_s=0.0)
    with (
        caplog.at_level(logging.INFO, logger=LOGGER_NAME),
        event.install_listener("numba:compile", notice),
    ):
        assert _fresh_kernel("fairot._probe")(5) == 5.0
        assert _fresh_kernel("fairot.regression._probe")(3) == 1.5
    records = _records(caplog)
    assert len(records) == 1 and records[0].levelno == logging.INFO
    assert records[0].getMessage().startswith(PREFIX)
    assert notice.announced


def test_the_line_comes_while_compiling_from_the_timer(caplog):
    # A threshold below the compile time of any kernel: the timer fires before the compile ends.
    notice = CompileNotice(after_s=1e-4)
    with caplog.at_level(logging.INFO, logger=LOGGER_NAME):
        with event.install_listener("numba:compile", notice):
            _fresh_kernel("fairot._probe")(4)
        deadline = time.monotonic() + 5
        while not _records(caplog) and time.monotonic() < deadline:
            time.sleep(0.01)
    assert len(_records(caplog)) == 1
    assert notice.compiled_s > 1e-4


def test_short_compiles_and_other_libraries_kernels_say_nothing(caplog):
    quiet = CompileNotice(after_s=60.0)
    other = CompileNotice(after_s=0.0)
    with caplog.at_level(logging.INFO, logger=LOGGER_NAME):
        with event.install_listener("numba:compile", quiet):
            _fresh_kernel("fairot._probe")(4)
        with event.install_listener("numba:compile", other):
            _fresh_kernel("someone_else.kernels")(4)
    assert _records(caplog) == []
    assert 0 < quiet.compiled_s < 60 and not quiet.announced
    assert other.compiled_s == 0 and not other.announced


def test_the_notice_is_installed_once_per_process():
    import fairot.transport  # noqa: F401  (a kernel module installs it at import)

    assert install_compile_notice() is install_compile_notice()
    assert install_compile_notice().after_s == NOTICE_AFTER_S == 3.0


def test_the_cli_prints_the_library_log_line_on_stderr(capsys):
    assert COMPILE_LOGGER == LOGGER_NAME
    show_compile_notice()
    show_compile_notice()  # idempotent: one handler, one line
    logging.getLogger(LOGGER_NAME).info("fairot: compiling numba kernels (test)...")
    assert capsys.readouterr().err == "fairot: compiling numba kernels (test)...\n"


def test_the_library_alone_prints_nothing(tmp_path):
    # Without logging configured, an INFO record never reaches stderr (Python's last resort
    # handler shows WARNING and above): the library stays silent.
    code = (
        "import logging, fairot.utils.compilation as c;"
        "logging.getLogger(c.LOGGER_NAME).info(c.MSG_COMPILING.format(cache='x'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr == ""


@pytest.mark.slow
def test_a_cold_cache_cli_run_says_so_once_and_a_warm_one_does_not(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env["PYTHONPATH"] = os.path.abspath(src) + os.pathsep + env.get("PYTHONPATH", "")
    code = (
        "import sys, numpy as np; from sklearn.linear_model import LogisticRegression;"
        "from fairot.cli import show_compile_notice; show_compile_notice();"
        "from fairot.classification import COTClassifier;"
        "rng = np.random.default_rng(0); X = rng.normal(size=(200, 3));"
        "g = rng.integers(0, 2, 200); y = (X[:, 0] + g > 0.5).astype(int);"
        "COTClassifier(estimator=LogisticRegression(), n_updates=20, random_state=0)"
        ".fit(X, y, sensitive_features=g)"
    )
    cold = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count(PREFIX) == 1, cold.stderr
    warm = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert warm.returncode == 0 and PREFIX not in warm.stderr, warm.stderr
