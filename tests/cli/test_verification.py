"""``fairot audit --task verification --scores FILE`` end to end, and its one-line errors."""

import json

import numpy as np
import pandas as pd
import pytest

from fairot.cli import main
from fairot.cli._outdir import MANIFEST
from fairot.cli._verification import MSG_NEEDS_SCORES, MSG_SAME, MSG_SCORES_TASK, MSG_TARGET
from fairot.verification import verification_rates

EVIL = "<script>alert(1)</script>"


@pytest.fixture
def pairs_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 900
    same = rng.random(n) < 0.5
    group = rng.choice([EVIL, "b"], n)
    frame = pd.DataFrame(
        {
            "score": np.where(same, 0.6, 0.1) + rng.normal(0, 0.15, n),
            "is_same": np.where(same, "same", "different"),
            "group": group,
        }
    )
    path = tmp_path / "pairs.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _run(capsys, *args):
    code = main(["audit", "--task", "verification", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_writes_the_report_and_prints_json(pairs_csv, tmp_path, capsys):
    path, frame = pairs_csv
    out = tmp_path / "out"
    code, printed, _ = _run(
        capsys, "--scores", str(path), "--target-fmr", "0.01", "--out", str(out), "--json"
    )
    assert code == 0
    payload = json.loads(printed)
    rates = verification_rates(
        frame["is_same"] == "same",
        frame["score"],
        sensitive_features=frame["group"],
        target_fmr=0.01,
    )
    assert payload["summary"]["threshold"] == rates.threshold
    by_group = {row["group"]: row for row in payload["groups"]}
    assert by_group[EVIL]["fnmr"] == rates.by_group.loc[EVIL, "fnmr"]
    assert {p.name for p in out.iterdir()} == {
        MANIFEST,
        "report.html",
        "report.md",
        "report.json",
        "det_curves.png",
    }
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<script>" not in (out / "report.md").read_text(encoding="utf-8")


def test_text_output_and_other_column_names(pairs_csv, tmp_path, capsys):
    path, frame = pairs_csv
    other = frame.rename(columns={"score": "cos", "is_same": "mated", "group": "race"})
    other["mated"] = (frame["is_same"] == "same").astype(int)
    other_path = tmp_path / "other.tsv"
    other.to_csv(other_path, sep="\t", index=False)
    args = ["--scores", str(other_path), "--score", "cos", "--label", "mated"]
    code, printed, _ = _run(capsys, *args, "--sensitive", "race", "--target-fmr", "0.01")
    assert code == 0 and "FNMR ratio" in printed and "NIST FRVT reading" in printed


@pytest.mark.parametrize(
    ("edit", "options", "message"),
    [
        (lambda f: f.drop(columns="group"), [], "column(s) ['group'] not in"),
        (lambda f: f.assign(is_same="maybe"), [], MSG_SAME.split("{")[0]),
        (lambda f: f.assign(is_same="same"), [], MSG_SAME.split("{")[0]),
        (lambda f: f.assign(group="only"), [], "at least two groups"),
        (lambda f: f.assign(score=f["score"].where(f.index != 3)), [], "missing value(s)"),
        (lambda f: f, [], "needs at least 1000 impostor"),
        (lambda f: f, ["--target-fmr", "0"], MSG_TARGET.split("{")[0]),
        (lambda f: f, ["--target-fmr", "0.01", "--threshold", "0.3"], "--threshold does not"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(pairs_csv, tmp_path, capsys, edit, options, message):
    path, frame = pairs_csv
    bad = tmp_path / "bad.csv"
    edit(frame.copy()).to_csv(bad, index=False)
    code, printed, err = _run(capsys, "--scores", str(bad), *options)
    assert code == 2 and printed == ""
    assert err.startswith("fairot audit: error: ") and err.count("\n") == 1
    assert message in err


def test_scores_and_task_go_together(pairs_csv, capsys):
    path, _ = pairs_csv
    assert main(["audit", "--scores", str(path)]) == 2
    assert MSG_SCORES_TASK in capsys.readouterr().err
    assert main(["audit", "--task", "verification", "--data", str(path)]) == 2
    assert MSG_NEEDS_SCORES in capsys.readouterr().err
