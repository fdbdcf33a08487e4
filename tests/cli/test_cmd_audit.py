"""``fairot audit`` end to end: report files, JSON output, and one-line errors with exit code 2."""

import json
import re
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
            "--n-bootstrap",
            "50",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "race=White, sex=Male" in printed and "SDD" in printed
    for name in (
        "report.html",
        "report.md",
        "metrics.json",
        "score_histograms.png",
        "quantile_functions.png",
        "group_metrics.png",
    ):
        assert (out / name).stat().st_size > 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["sdd"] == pytest.approx(
        strong_demographic_disparity(None, frame.score, sensitive_features=frame[["race", "sex"]])
    )
    assert metrics["sdd_ci_low"] < metrics["sdd_ci_high"]
    # Flat name -> number, with names MLflow's log_metrics accepts.
    assert all(isinstance(v, float) for v in metrics.values())
    assert all(re.fullmatch(r"[\w\-./ :]+", k) for k in metrics)
    assert "group/race_White_sex_Male/tpr" in metrics


def test_audit_json_output(scores_csv, capsys):
    path, frame = scores_csv
    assert (
        main(["audit", "--data", str(path), "--score", "score", "--sensitive", "sex", "--json"])
        == 0
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["summary"]["wass1"] == pytest.approx(
        wass1(None, frame.score, sensitive_features=frame.sex)
    )


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
            "must hold numbers.*line 2",
        ),
        (
            lambda f: f.assign(score=f.score.where(f.index > 0)),
            ["--score", "score", "--sensitive", "sex"],
            "missing value",
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
    assert re.search(message, err)


def test_missing_file(tmp_path, capsys):
    assert (
        main(["audit", "--data", str(tmp_path / "x.csv"), "--score", "s", "--sensitive", "g"]) == 2
    )
    assert "no such file" in capsys.readouterr().err


def _run(capsys, *args):
    code = main(list(map(str, args)))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_one_line_error(code, out, err, pattern):
    assert code == 2
    assert out == ""  # never a report printed before the failure
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert re.search(pattern, err), err


def test_tsv_is_detected_and_pos_label(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], 200),
            "income": rng.choice(["<=50K", ">50K"], 200),
        }
    )
    frame["score"] = rng.uniform(size=200)
    path = tmp_path / "data.txt"
    frame.to_csv(path, sep="\t", index=False)
    base = ["audit", "--data", path, "--score", "score", "--sensitive", "sex", "--label", "income"]
    code, out, err = _run(capsys, *base)
    _assert_one_line_error(code, out, err, r"column 'income' must hold two classes.*--pos-label")
    code, out, _ = _run(
        capsys, *base, "--pos-label", ">50K", "--format", "json", "--n-bootstrap", 0
    )
    assert code == 0
    payload = json.loads(out)
    y = (frame.income == ">50K").astype(int)
    assert payload["summary"]["err"] == pytest.approx(np.mean((frame.score > 0.5) != y))
    code, out, err = _run(capsys, *base, "--pos-label", "yes")
    _assert_one_line_error(code, out, err, r"--pos-label 'yes' is not a value of column 'income'")


def test_explicit_separator(tmp_path, capsys):
    path = tmp_path / "semi.csv"
    path.write_text("g;s\n" + "".join(f"{'ab'[i % 2]};{i / 100}\n" for i in range(60)))
    code, out, _ = _run(
        capsys,
        "audit",
        "--data",
        path,
        "--score",
        "s",
        "--sensitive",
        "g",
        "--sep",
        ";",
        "--n-bootstrap",
        0,
    )
    assert code == 0 and "Summary" in out


@pytest.mark.parametrize("fmt, marker", [("md", "## Summary"), ("html", "<!DOCTYPE html>")])
def test_print_formats(scores_csv, capsys, fmt, marker):
    path, _ = scores_csv
    code, out, _ = _run(
        capsys,
        "audit",
        "--data",
        path,
        "--score",
        "score",
        "--sensitive",
        "sex",
        "--format",
        fmt,
        "--n-bootstrap",
        0,
    )
    assert code == 0 and marker in out


def test_nan_error_names_column_and_line(scores_csv, tmp_path, capsys):
    _, frame = scores_csv
    bad = frame.copy()
    bad.loc[[4, 9], "race"] = np.nan
    path = tmp_path / "nan.csv"
    bad.to_csv(path, index=False)
    code, out, err = _run(
        capsys, "audit", "--data", path, "--score", "score", "--sensitive", "race"
    )
    _assert_one_line_error(
        code, out, err, r"column 'race' has 2 missing value\(s\) \(first on line 6"
    )


def test_duplicate_column_names(tmp_path, capsys):
    path = tmp_path / "dup.csv"
    path.write_text("g,score,score\na,0.1,0.2\nb,0.3,0.4\n")
    code, out, err = _run(capsys, "audit", "--data", path, "--score", "score", "--sensitive", "g")
    _assert_one_line_error(code, out, err, r"duplicate column name\(s\) \['score'\]")


@pytest.mark.parametrize("value", ["nan", "1.5", "-0.1", "inf"])
def test_threshold_out_of_range(scores_csv, capsys, value):
    path, _ = scores_csv
    code, out, err = _run(
        capsys,
        "audit",
        "--data",
        path,
        "--score",
        "score",
        "--sensitive",
        "sex",
        "--threshold",
        value,
    )
    _assert_one_line_error(code, out, err, r"--threshold must be a number in \[0, 1\]")


def test_bad_out_paths(scores_csv, tmp_path, capsys):
    path, _ = scores_csv
    base = ["audit", "--data", path, "--score", "score", "--sensitive", "sex", "--n-bootstrap", 0]
    code, out, err = _run(capsys, *base, "--out", path)
    _assert_one_line_error(code, out, err, "is an existing file; it must be a folder")
    code, out, err = _run(capsys, *base, "--out", path / "sub")
    _assert_one_line_error(code, out, err, "is a file, not a folder")
    # /proc refuses new entries even to root: the out-of-reach folder of any machine.
    code, out, err = _run(capsys, *base, "--out", "/proc/fairot-test-out")
    _assert_one_line_error(code, out, err, "is not writable")


def test_out_folder_is_reused_and_files_replaced(scores_csv, tmp_path, capsys):
    path, _ = scores_csv
    out = tmp_path / "r"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "report.md").write_text("old")
    code, _, _ = _run(
        capsys,
        "audit",
        "--data",
        path,
        "--score",
        "score",
        "--sensitive",
        "sex",
        "--n-bootstrap",
        0,
        "--out",
        out,
    )
    assert code == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "report.md").read_text().startswith("# fairot audit")
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    "content, pattern",
    [
        (b"", "the file is empty"),
        (b"\xff\xfe\x00\x81garbage\x00\x9f", "not UTF-8 text"),
        (b'g,score\n"a,0.1\n', "cannot read"),
    ],
)
def test_unreadable_input(tmp_path, capsys, content, pattern):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    code, out, err = _run(capsys, "audit", "--data", path, "--score", "score", "--sensitive", "g")
    _assert_one_line_error(code, out, err, pattern)


def test_folder_as_input(tmp_path, capsys):
    code, out, err = _run(capsys, "audit", "--data", tmp_path, "--score", "s", "--sensitive", "g")
    _assert_one_line_error(code, out, err, "is a folder, not a data file")


def test_argparse_error_is_one_line(capsys):
    with pytest.raises(SystemExit) as info:
        main(["audit", "--data", "x.csv", "--threshold", "abc"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid float value" in err


def test_small_groups_warned_and_excluded(tmp_path, capsys):
    rng = np.random.default_rng(0)
    g = np.array(["a"] * 100 + ["b"] * 100 + ["c"] * 10)
    s = rng.uniform(size=210)
    pd.DataFrame({"g": g, "s": s}).to_csv(tmp_path / "d.csv", index=False)
    base = ["audit", "--data", tmp_path / "d.csv", "--score", "s", "--sensitive", "g"]
    code, out, _ = _run(capsys, *base, "--format", "json", "--n-bootstrap", 0)
    payload = json.loads(out)
    assert code == 0 and "min_group_size=30" in payload["warnings"][0]
    # Issue 24: small groups are out of the headline by default, in with --include-small-groups.
    assert payload["summary"]["n_groups"] == 2
    assert payload["settings"]["excluded_groups"] == ["c"]
    code, out, _ = _run(
        capsys, *base, "--format", "json", "--n-bootstrap", 0, "--include-small-groups"
    )
    assert json.loads(out)["summary"]["n_groups"] == 3
    code, out, _ = _run(
        capsys, *base, "--format", "json", "--n-bootstrap", 0, "--exclude-small-groups"
    )
    payload = json.loads(out)
    keep = g != "c"
    assert payload["summary"]["n_groups"] == 2
    assert payload["summary"]["sdd"] == pytest.approx(
        strong_demographic_disparity(None, s[keep], sensitive_features=g[keep])
    )
    code, out, _ = _run(
        capsys, *base, "--format", "json", "--n-bootstrap", 0, "--min-group-size", 5
    )
    assert json.loads(out)["warnings"] == []


@pytest.mark.integration
def test_broken_pipe_is_quiet(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"g": [f"group{i % 150}" for i in range(n)], "s": rng.uniform(size=n)})
    frame.to_csv(tmp_path / "many.csv", index=False)
    command = (
        f"{sys.executable} -m fairot audit --data {tmp_path / 'many.csv'} --score s "
        f"--sensitive g --n-bootstrap 0 --min-group-size 1 | head -n 2"
    )
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True
    )
    assert result.stdout.count("\n") == 2
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr


@pytest.mark.integration
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
    assert main(["demo", "--out", str(out), "--audit-only", "--n-bootstrap", "20"]) == 0
    assert "race=Black, sex=Female" in capsys.readouterr().out
    assert (out / "report.md").exists() and (out / "metrics.json").exists()
    assert "<svg" in (out / "report.html").read_text()
    assert list(out.glob("*.png"))
    assert not (out / "mitigation").exists()


def test_demo_mitigates(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--no-progress", "--n-bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    # The last table printed is the one page: every model side by side on the test rows.
    header = re.search(r"^\s+logistic regression\s+COT\s+DOT\s+DPP\s+change$", printed, re.M)
    assert header is not None
    results = json.loads((out / "mitigation" / "results.json").read_text())
    rows = {row["method"]: row for row in results["tables"]["adult"]}
    # Every mitigation must cut the logistic regression's Wass1 several-fold.
    for method in ("COT", "DOT", "DPP"):
        assert rows[method]["Wass1"] < rows["LR"]["Wass1"] / 4
    assert (
        "| metric | logistic regression | COT | DOT | DPP | change |"
        in (out / "report.md").read_text()
    )
    assert (out / "mitigation" / "histograms.png").is_file()
    assert (out / "logistic" / "report.md").is_file()
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_standards_reference_and_provenance_from_the_command_line(tmp_path, capsys):
    # Issue 24: several --standard at once, --reference, and the input file's provenance.
    import hashlib

    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "race": np.repeat(["x", "y"], 60),
            "sex": np.tile(["f", "m"], 60),
            "s": rng.uniform(size=120),
        }
    )
    path = tmp_path / "my data.csv"
    frame.to_csv(path, index=False)
    args = ["audit", "--data", path, "--score", "s", "--sensitive", "race,sex", "--n-bootstrap"]
    args += [0, "--standard", "four-fifths", "--standard", "ll144", "--standard", "credit"]
    args += ["--reference", "race=y, sex=m", "--format", "json", "--out", tmp_path / "out"]
    code, out, err = _run(capsys, *args)
    assert code == 0, err
    payload = json.loads(out)
    assert [v["standard"] for v in payload["verdicts"]] == ["four-fifths", "ll144", "credit"]
    assert payload["settings"]["reference"] == "race=y, sex=m"
    prov = payload["provenance"]
    data = path.read_bytes()
    assert prov["input_name"] == "my data.csv" and prov["input_size_bytes"] == len(data)
    assert prov["input_sha256"] == hashlib.sha256(data).hexdigest()
    assert prov["command"].startswith("fairot audit --data '") and "my data.csv'" in prov["command"]
    assert json.loads((tmp_path / "out" / "report.json").read_text())["provenance"] == prov
    assert "input\\_sha256" in (tmp_path / "out" / "report.md").read_text()
    with pytest.raises(SystemExit) as exc:
        main(list(map(str, [*args[:-4], "--standard", "nope"])))
    assert exc.value.code == 2 and "--standard" in capsys.readouterr().err
