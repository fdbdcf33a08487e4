"""No numpy RuntimeWarning reaches a user's stderr from fairot code (issue 21).

The command line runs in a fresh interpreter with Python's default warning filters (what a user
gets), on data that used to leak warnings: a group classified perfectly (an unbounded skewed error
ratio in every bootstrap replicate, which used to print ``invalid value encountered in
subtract``) and regression, with weights and intervals, through ``fairot audit`` (in the quick
suite) and ``fairot mitigate`` (slow: it fits, audits twice and draws the plots).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

SCRIPT = """
import sys
from fairot.cli import main
folder, chosen = sys.argv[1], sys.argv[2:]
runs = [
    ["audit", "--data", f"{folder}/cls.csv", "--score", "p", "--sensitive", "g", "--label", "y",
     "--sample-weight", "w", "--n-bootstrap", "10", "--min-group-size", "1", "--format", "json"],
    ["audit", "--data", f"{folder}/reg.csv", "--score", "p", "--sensitive", "g", "--label", "y",
     "--sample-weight", "w", "--task", "regression", "--n-bootstrap", "10", "--min-group-size",
     "1", "--format", "json"],
    ["mitigate", "--data", f"{folder}/cls.csv", "--score", "p", "--sensitive", "g", "--label",
     "y", "--method", "dpp", "--n-bootstrap", "10", "--min-group-size", "1",
     "--out", f"{folder}/mitigate"],
]
sys.exit(max(main(args) for args in runs if args[0] in chosen))
"""


def _frames():
    rng = np.random.default_rng(0)
    n = 120
    g = np.repeat(["a", "b", "c"], n // 3)
    y = rng.integers(0, 2, n)
    p = np.clip(rng.beta(2, 3, n) + 0.2 * (g == "b"), 0, 1)
    p[g == "a"] = np.where(y[g == "a"] == 1, 0.9, 0.1)  # group a: no error at all
    cls = pd.DataFrame({"g": g, "y": y, "p": p, "w": rng.uniform(0.5, 2.0, n)})
    response = rng.normal(2.0 * (g == "b"), 1.0)
    reg = pd.DataFrame({"g": g, "y": response, "p": response + rng.normal(0, 0.5, n)})
    reg["w"] = cls["w"]
    return cls, reg


def _run(tmp_path, *commands):
    cls, reg = _frames()
    cls.to_csv(tmp_path / "cls.csv", index=False)
    reg.to_csv(tmp_path / "reg.csv", index=False)
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("PYTHONWARNINGS", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), *commands],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "RuntimeWarning" not in done.stderr, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    return done


def test_audits_print_no_runtime_warning(tmp_path):
    done = _run(tmp_path, "audit")
    assert done.stdout.count('"summary"') == 2


@pytest.mark.slow
def test_mitigate_prints_no_runtime_warning(tmp_path):
    _run(tmp_path, "mitigate")
    assert (tmp_path / "mitigate" / "after" / "metrics.json").exists()
