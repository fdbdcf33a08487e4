"""``fairot mitigate`` refuses to write a model whose held-out ranking fell to chance.

The scores here rank the labels only through the group (the label is the group, up to 5 % of
flips, and within a group the score is noise): parity in distribution then leaves nothing to
rank with. The raw scores' held-out AUC is high, the post-processed scores' near 1/2; both are
checked here with scikit-learn's ``roc_auc_score`` on the held-out rows the report lists, and
the command must refuse to write ``model.skops`` and the ``--apply`` scores, write the reports
with the reason first, and exit with status 1, unless ``--allow-degenerate``.
"""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from fairot.cli import main
from fairot.cli._refusal import EXIT_REFUSED
from fairot.metrics import CHANCE_AUC


@pytest.fixture(scope="module")
def group_only(tmp_path_factory):
    rng = np.random.default_rng(4)
    n = 600
    sex = rng.choice(["F", "M"], n)
    label = ((sex == "M") ^ (rng.random(n) < 0.05)).astype(int)
    score = np.clip(0.3 + 0.4 * (sex == "M") + rng.uniform(-0.2, 0.2, n), 0, 1)
    frame = pd.DataFrame({"sex": sex, "label": label, "score": score, "row": np.arange(n)})
    folder = tmp_path_factory.mktemp("degenerate")
    frame.to_csv(folder / "data.csv", index=False)
    frame.head(50).drop(columns="label").to_csv(folder / "new.csv", index=False)
    return folder, frame


def _mitigate(capsys, folder, out, *extra):
    args = ["mitigate", "--data", folder / "data.csv", "--score", "score", "--sensitive", "sex"]
    args += ["--label", "label", "--method", "dpp", "--out", out, "--n-bootstrap", 0]
    args += ["--apply", folder / "new.csv", *extra]
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_refuses_a_model_at_chance(group_only, tmp_path, capsys):
    folder, frame = group_only
    out = tmp_path / "out"
    code, printed, err = _mitigate(capsys, folder, out)
    assert code == EXIT_REFUSED == 1
    report = json.loads((out / "report.json").read_text())
    before = report["audits"]["before"]["summary"]["auc"]
    after = report["audits"]["after dpp"]["summary"]["auc"]
    # The oracle: scikit-learn's AUC of the held-out rows, read back from the after/ audit.
    held = json.loads((out / "after" / "report.json").read_text())["summary"]["n_samples"]
    assert held < len(frame)
    assert before > 0.85 > CHANCE_AUC >= after
    assert roc_auc_score(frame.label, frame.score) == pytest.approx(before, abs=0.05)
    assert not (out / "model.skops").exists()
    assert not (out / "adjusted.csv").exists()
    assert "degenerate model not written" in err and "--allow-degenerate" in err
    # The reason opens the verdict block of every rendering.
    assert report["verdict"][0]["status"] == "ALERT"
    assert report["verdict"][0]["text"].startswith("degenerate model not written")
    markdown = (out / "report.md").read_text()
    block = markdown.split("## Summary")[0]
    assert "**ALERT** degenerate model not written" in block
    page = (out / "report.html").read_text()
    assert page.index("degenerate model not written") < page.index("<h2>Summary</h2>")
    assert "AUC 0." in (out / "after" / "report.md").read_text().split("## Summary")[0]
    assert "degenerate model not written" in printed or "degenerate" in err


def test_allow_degenerate_writes_it_and_still_says_why(group_only, tmp_path, capsys):
    folder, _ = group_only
    out = tmp_path / "out"
    code, _, err = _mitigate(capsys, folder, out, "--allow-degenerate")
    assert code == 0, err
    assert (out / "model.skops").exists() and (out / "adjusted.csv").exists()
    assert "warning: degenerate model written because of --allow-degenerate" in err
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"][0]["text"].startswith("degenerate model written")


def test_a_ranking_model_is_written(group_only, tmp_path, capsys):
    folder, frame = group_only
    # Scores with signal inside each group: parity keeps the ranking, nothing is refused.
    rng = np.random.default_rng(5)
    richer = frame.assign(
        score=np.clip(0.2 + 0.5 * frame.label + rng.uniform(-0.2, 0.2, len(frame)), 0, 1)
    )
    richer.to_csv(tmp_path / "data.csv", index=False)
    richer.head(50).drop(columns="label").to_csv(tmp_path / "new.csv", index=False)
    code, _, err = _mitigate(capsys, tmp_path, tmp_path / "out")
    assert code == 0, err
    assert (tmp_path / "out" / "model.skops").exists()
    assert "degenerate" not in err
