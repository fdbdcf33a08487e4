"""``fairot audit`` end to end: report files, JSON output, and one-line errors with exit code 2."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from fairot.cli import main
from fairot.metrics import strong_demographic_disparity, wass1


@pytest.fixture
def scores_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame(
        {
            "race": rng.choice(["Black", "White"], n),
            "sex": rng.choice(["Female", "Male"], n),
            "label": rng.integers(0, 2, n),
        }
    )
    frame["score"] = np.clip(rng.beta(2, 5, n) + 0.2 * (frame.sex == "Male"), 0, 1)
    path = tmp_path / "scores.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_audit_writes_report(scores_csv, tmp_path, capsys):
    path, frame = scores_csv
    out = tmp_path / "report"
    code = main(
        [
            "audit",
            "--data",
            str(path),
            "--score",
            "score",
            "--sensitive",
            "race,sex",
            "--label",
            "label",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "race=White, sex=Male" in printed and "SDD" in printed
    for name in ("report.md", "metrics.json", "score_histograms.png", "quantile_functions.png"):
        assert (out / name).stat().st_size > 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["summary"]["sdd"] == pytest.approx(
        strong_demographic_disparity(frame.score, frame[["race", "sex"]])
    )
    assert len(metrics["groups"]) == 5


def test_audit_json_output(scores_csv, capsys):
    path, frame = scores_csv
    assert (
        main(["audit", "--data", str(path), "--score", "score", "--sensitive", "sex", "--json"])
        == 0
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["summary"]["wass1"] == pytest.approx(wass1(frame.score, frame.sex))


def test_audit_regression_task(tmp_path, capsys):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"g": rng.choice(["a", "b", "c"], 100), "pred": rng.normal(size=100)})
    path = tmp_path / "reg.csv"
    frame.to_csv(path, index=False)
    assert (
        main(
            [
                "audit",
                "--data",
                str(path),
                "--score",
                "pred",
                "--sensitive",
                "g",
                "--task",
                "regression",
                "--json",
            ]
        )
        == 0
    )
    assert "max_pairwise_winf" in json.loads(capsys.readouterr().out)["summary"]


def test_audit_builtin_dataset(capsys):
    assert main(["audit", "--dataset", "german-credit", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["summary"]["n_groups"] == 2


@pytest.mark.parametrize(
    "edit, args, message",
    [
        (None, ["--score", "nope", "--sensitive", "sex"], "not in"),
        (
            lambda f: f.assign(score=f.score.astype(str) + "x"),
            ["--score", "score", "--sensitive", "sex"],
            "must be numeric",
        ),
        (
            lambda f: f.assign(score=f.score.where(f.index > 0)),
            ["--score", "score", "--sensitive", "sex"],
            "NaN",
        ),
        (
            lambda f: f.assign(score=f.score * 3),
            ["--score", "score", "--sensitive", "sex"],
            r"in \[0, 1\]",
        ),
        (
            lambda f: f.assign(sex="Male"),
            ["--score", "score", "--sensitive", "sex"],
            "single group",
        ),
        (lambda f: f.iloc[:0], ["--score", "score", "--sensitive", "sex"], "no rows"),
        (None, ["--score", "score"], "--sensitive"),
    ],
)
def test_audit_bad_input_is_one_line_exit_2(scores_csv, tmp_path, capsys, edit, args, message):
    path, frame = scores_csv
    if edit is not None:
        path = tmp_path / "bad.csv"
        edit(frame).to_csv(path, index=False)
    code = main(["audit", "--data", str(path), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("fairot audit: error:")
    assert pytest.importorskip("re").search(message, err)


def test_missing_file(tmp_path, capsys):
    assert (
        main(["audit", "--data", str(tmp_path / "x.csv"), "--score", "s", "--sensitive", "g"]) == 2
    )
    assert "no such file" in capsys.readouterr().err


def test_python_dash_m_and_help():
    result = subprocess.run(
        [sys.executable, "-m", "fairot", "audit", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--sensitive" in result.stdout
    result = subprocess.run(
        [sys.executable, "-m", "fairot", "--help"], capture_output=True, text=True, check=True
    )
    for command in ("audit", "demo", "reproduce"):
        assert command in result.stdout


def test_demo_audit_only_writes_report(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--audit-only"]) == 0
    assert "race=Black, sex=Female" in capsys.readouterr().out
    assert (out / "report.md").exists() and (out / "metrics.json").exists()
    assert list(out.glob("*.png"))
    assert not (out / "mitigation").exists()


def test_demo_mitigates(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    for method in ("| LR |", "| COT |", "| DOT |", "| DPP |"):
        assert method in printed
    results = json.loads((out / "mitigation" / "results.json").read_text())
    rows = {row["method"]: row for row in results["tables"]["adult"]}
    # Every mitigation must cut the logistic regression's Wass1 several-fold.
    for method in ("COT", "DOT", "DPP"):
        assert rows[method]["Wass1"] < rows["LR"]["Wass1"] / 4
    assert "mitigation/histograms.png" in (out / "report.md").read_text()
