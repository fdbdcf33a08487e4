"""The one writer of result folders: audits and studies both write through it, atomically."""

import json

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import fairot.reporting.artifacts as artifacts
from fairot.experiments import StudyResult
from fairot.reporting import audit
from fairot.reporting.artifacts import jsonable, write_artifacts


class _BrokenFigure:
    def savefig(self, *args, **kwargs):
        raise RuntimeError("cannot render")


def test_a_figure_that_fails_leaves_the_folder_as_it_was(tmp_path):
    (tmp_path / "notes.md").write_text("old")
    with pytest.raises(RuntimeError, match="cannot render"):
        write_artifacts(tmp_path, {"notes.md": "new", "data.json": "{}"}, {"bad": _BrokenFigure()})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]
    assert (tmp_path / "notes.md").read_text() == "old"


def test_text_bytes_and_figures(tmp_path):
    fig = Figure(figsize=(2, 2))
    fig.subplots().plot([0, 1], [1, 0])
    out = write_artifacts(tmp_path / "new", {"a.md": "é\n", "b.bin": b"\x00\x01"}, {"line": fig})
    assert (out / "a.md").read_text(encoding="utf-8") == "é\n"
    assert (out / "b.bin").read_bytes() == b"\x00\x01"
    assert (out / "line.png").read_bytes()[:4] == b"\x89PNG"


def test_audit_and_study_share_the_writer(tmp_path, monkeypatch):
    written = []
    real = artifacts.write_atomic

    def spy(path, data, **kwargs):
        written.append(path.name)
        real(path, data, **kwargs)

    monkeypatch.setattr(artifacts, "write_atomic", spy)
    rng = np.random.default_rng(0)
    audit(None, rng.random(60), np.repeat(["a", "b"], 30), n_bootstrap=0).write(tmp_path / "a")
    fig = Figure(figsize=(2, 2))
    fig.subplots().plot([0, 1], [0, 1])
    StudyResult("s", tables={"t": pd.DataFrame({"x": [1.0]})}, figures={"f": fig}).write(
        tmp_path / "s"
    )
    assert {"report.html", "report.md", "metrics.json", "score_histograms.png"} <= set(written)
    assert {"results.json", "results.md", "f.png"} <= set(written)


def test_jsonable():
    value = {1: (np.float64(0.5), np.int64(3)), "x": [float("nan"), -float("inf")], "o": object}
    out = jsonable(value)
    assert out["1"] == [0.5, 3] and out["x"] == [None, "-inf"] and isinstance(out["o"], str)
    json.dumps(out)
