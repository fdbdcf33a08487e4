"""``fairot mitigate --method fair-mlp`` refuses to write an MLP whose ranking fell to chance.

The label is the group up to 30 % of flips, and the model's inputs carry the group only: a
``title`` column (Mr / Ms, a copy of the sensitive column, which is itself never an input) and a
noise column ``z``. The unaware logistic regression ranks the held-out rows through the title
(AUC about .70); :class:`fairot.torch.FairMLPClassifier` with its default penalty (``lam=3``)
meets demographic parity by making its scores nearly constant (standard deviation about .01),
so the held-out AUC falls to chance. Measured over the data and fit seeds 0 to 5 (train 1,500
rows, 30 epochs, 6,000 held-out rows): AUC after .485 to .519, all well under
:data:`fairot.metrics.CHANCE_AUC` (.55), before .694 to .705; seed 2 is used here (.494).

The held-out rows are an ``--eval`` file so that they are known: the oracle is scikit-learn's
``roc_auc_score`` of the ``--apply`` scores of those rows (written with ``--allow-degenerate``).
"""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from fairot.cli import main
from fairot.cli._refusal import EXIT_REFUSED
from fairot.metrics import CHANCE_AUC

pytest.importorskip("torch")

SEED = 2


def _table(rng, n):
    sex = rng.choice(["F", "M"], n)
    label = ((sex == "M") ^ (rng.random(n) < 0.3)).astype(int)
    title = np.where(sex == "M", "Mr", "Ms")
    return pd.DataFrame({"sex": sex, "label": label, "title": title, "z": rng.normal(size=n)})


def _mitigate(folder, out, *extra):
    args = ["mitigate", "--data", folder / "data.csv", "--eval", folder / "eval.csv"]
    args += ["--sensitive", "sex", "--label", "label", "--method", "fair-mlp", "--out", out]
    args += ["--n-bootstrap", 0, "--n-epochs", 30, "--random-state", SEED]
    args += ["--apply", folder / "new.csv", *extra]
    printed, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, printed.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same fit twice: refused, then written with --allow-degenerate."""
    rng = np.random.default_rng(SEED)
    train, held = _table(rng, 1500), _table(rng, 6000)
    folder = tmp_path_factory.mktemp("collapsed-mlp")
    train.to_csv(folder / "data.csv", index=False)
    held.to_csv(folder / "eval.csv", index=False)
    held.drop(columns="label").to_csv(folder / "new.csv", index=False)
    refused = folder / "refused"
    allowed = folder / "allowed"
    return {
        "held": held,
        "refused": (refused, *_mitigate(folder, refused)),
        "allowed": (allowed, *_mitigate(folder, allowed, "--allow-degenerate")),
    }


def test_refuses_a_collapsed_mlp(runs):
    out, code, printed, err = runs["refused"]
    assert code == EXIT_REFUSED == 1, err
    report = json.loads((out / "report.json").read_text())
    before = report["audits"]["before"]["summary"]["auc"]
    after = report["audits"]["after fair-mlp"]["summary"]["auc"]
    assert before > 0.65 > CHANCE_AUC
    assert after == pytest.approx(0.5, abs=0.03)  # at chance, far from the line at .55
    # Nothing to score new rows with: no --apply output (and fair-mlp never writes model.skops).
    assert not (out / "adjusted.csv").exists() and not (out / "model.skops").exists()
    assert "degenerate model not written" in err and "--allow-degenerate" in err
    # The MLP ran the shared collapse check (diagnose_fit) and its warning is listed.
    assert "DegenerateModelWarning: FairTrainer: degenerate model" in err
    # The reason opens the verdict block of every rendering.
    assert report["verdict"][0]["status"] == "ALERT"
    assert report["verdict"][0]["text"].startswith("degenerate model not written")
    assert f"{after:.3f}" in report["verdict"][0]["text"]
    block = (out / "report.md").read_text().split("## Summary")[0]
    assert "**ALERT** degenerate model not written" in block
    page = (out / "report.html").read_text()
    assert page.index("degenerate model not written") < page.index("<h2>Summary</h2>")


def test_allow_degenerate_writes_the_scores_and_still_says_why(runs):
    out, code, _, err = runs["allowed"]
    assert code == 0, err
    assert "warning: degenerate model written because of --allow-degenerate" in err
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"][0]["text"].startswith("degenerate model written")
    # The oracle: scikit-learn's AUC of the written scores of the held-out (--eval) rows.
    held = runs["held"]
    scores = pd.read_csv(out / "adjusted.csv")["score_fair"]
    after = report["audits"]["after fair-mlp"]["summary"]["auc"]
    assert roc_auc_score(held["label"], scores) == pytest.approx(after, abs=1e-9)
    assert scores.std() < 0.05  # nearly constant: parity met by telling no one apart
    # The same seed, the same fit: the refused run's numbers are this run's.
    refused = json.loads((runs["refused"][0] / "report.json").read_text())
    assert refused["audits"]["after fair-mlp"]["summary"]["auc"] == after
