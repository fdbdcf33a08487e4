"""``fairot audit --dataset acs-excerpts --task regression``: the built-in regression audit."""

import json
import re
from itertools import combinations

import numpy as np
import pytest
from scipy.stats import wasserstein_distance
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from fairot.cli import main
from fairot.cli._cmd_audit import MSG_DATASET_TASK
from fairot.datasets import load_acs_excerpts


def test_acs_excerpts_regression_audit_matches_sklearn_and_scipy(tmp_path, capsys):
    out = tmp_path / "report"
    argv = ["audit", "--dataset", "acs-excerpts", "--task", "regression", "--n-bootstrap", "0"]
    code = main([*argv, "--json", "--out", str(out)])
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert (out / "report.html").stat().st_size > 0 and (out / "metrics.json").is_file()

    # The same task rebuilt from the loader and scikit-learn: the regression paper's ACS filter,
    # three race groups, a 70/30 split stratified by group, default gradient boosting.
    acs = load_acs_excerpts(
        subset="regression-paper", features="regression-paper", target="log_income", n_groups=3
    )
    race = acs.sensitive["race"]
    train, test = train_test_split(
        np.arange(len(race)), test_size=0.3, random_state=0, stratify=race
    )
    model = GradientBoostingRegressor(random_state=0).fit(acs.data.iloc[train], acs.target[train])
    pred = model.predict(acs.data.iloc[test])
    y, groups = acs.target.to_numpy()[test], race.to_numpy()[test]
    summary = payload["summary"]
    assert summary["n_samples"] == len(test) == 4138 and summary["n_groups"] == 3
    assert summary["r2"] == pytest.approx(r2_score(y, pred), rel=1e-10)
    w1 = max(
        wasserstein_distance(pred[groups == a], pred[groups == b])
        for a, b in combinations(["Asian", "Black", "White"], 2)
    )
    assert summary["max_pairwise_w1"] == pytest.approx(w1, rel=1e-9)
    sizes = {row["group"]: row["size"] for row in payload["groups"] if row["group"] != "overall"}
    assert sizes == {g: int((groups == g).sum()) for g in ("Asian", "Black", "White")}


@pytest.mark.parametrize(
    ("argv", "task"),
    [
        (["--dataset", "acs-excerpts"], "regression"),
        (["--dataset", "adult", "--task", "regression"], "classification"),
    ],
)
def test_dataset_and_task_must_agree(argv, task, capsys):
    code = main(["audit", *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    expected = MSG_DATASET_TASK.format(name=argv[1], task=task)
    assert re.search(re.escape(expected), err)
