"""``fairot mitigate --control``: conditional parity within strata for the post-processors.

The expected numbers are computed here: the split is rebuilt with ``train_test_split`` on a
group x stratum x label key made in the test, the post-processor is fitted with the library's
estimator on the training rows, and the recombined "given the strata" numbers are recomputed
stratum by stratum with ``fairot.metrics`` and the strata's shares of the held-out rows.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split

import fairot
from fairot.classification import QuantileParityPostProcessor
from fairot.cli import main
from fairot.metrics import strong_demographic_disparity, wass1
from fairot.regression import WassersteinFairRegressor
from fairot.utils import ScoreColumn


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(7)
    n = 480
    frame = pd.DataFrame(
        {"sex": rng.choice(["F", "M"], n), "band": rng.choice(["high", "low"], n, p=[0.4, 0.6])}
    )
    frame["score"] = np.clip(
        rng.beta(2, 4, n) + 0.2 * (frame.sex == "M") + 0.3 * (frame.band == "high"), 0, 1
    )
    frame["y"] = (rng.random(n) < frame.score).astype(int)
    folder = tmp_path_factory.mktemp("control")
    path = folder / "data.csv"
    frame.to_csv(path, index=False)
    new = frame.drop(columns="y").sample(30, random_state=2)
    new_path = folder / "new.csv"
    new.to_csv(new_path, index=False)
    return path, frame, new_path, new


def _run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _split(frame, labelled):
    # The command's key: the group, the stratum and (for classification) the label.
    key = frame.sex + "\x1f" + frame.band
    if labelled:
        key = key + "\x1e" + frame.y.astype(str)
    train, test = train_test_split(
        np.arange(len(frame)), test_size=0.3, random_state=0, stratify=key
    )
    return frame.iloc[np.sort(train)], frame.iloc[np.sort(test)]


def _given_strata(metric, scores, test):
    """A metric recombined over the strata by hand: each stratum's value times its share."""
    total = 0.0
    for _, rows in test.assign(s=scores).groupby("band"):
        value = metric(rows.y, rows.s, sensitive_features=rows[["sex"]])
        total += len(rows) / len(test) * value
    return total


@pytest.mark.parametrize("method", ["dpp", "regression"])
def test_held_out_numbers_given_the_strata(data, tmp_path, capsys, method):
    path, frame, new_path, new = data
    out = tmp_path / "out"
    args = ["mitigate", "--data", path, "--score", "score", "--sensitive", "sex", "--label", "y"]
    args += ["--method", method, "--control", "band", "--apply", new_path]
    code, printed, err = _run(capsys, *args, "--out", out, "--n-bootstrap", 0)
    assert code == 0, err
    labelled = method == "dpp"
    assert f"stratified on group x stratum{' x label' if labelled else ''}," in printed
    train, test = _split(frame, labelled)
    X = train[["score"]].to_numpy()
    if method == "dpp":
        model = QuantileParityPostProcessor(estimator=ScoreColumn())
    else:
        model = WassersteinFairRegressor(estimator=FrozenEstimator(ScoreColumn().fit(X)))
    model.fit(X, train.y, sensitive_features=train[["sex"]], control_features=train[["band"]])

    def adjusted(rows):
        X, groups, strata = rows[["score"]].to_numpy(), rows[["sex"]], rows[["band"]]
        if method == "dpp":
            return model.predict_proba(X, sensitive_features=groups, control_features=strata)[:, 1]
        return model.predict(X, sensitive_features=groups, control_features=strata)

    fair = adjusted(test)
    report = json.loads((out / "report.json").read_text())
    before = report["audits"]["before"]["summary"]
    after = report["audits"][f"after {method}"]["summary"]
    assert before["n_samples"] == after["n_samples"] == len(test)
    # SDD for classification; Wass1 (the same W1 sum, without the [0, 1] range) for regression.
    key, metric = ("sdd", strong_demographic_disparity) if labelled else ("wass1", wass1)
    given = f"{key}_given_control"
    assert before[given] == pytest.approx(_given_strata(metric, test.score, test))
    assert after[given] == pytest.approx(_given_strata(metric, fair, test))
    assert after[given] < before[given]
    # --apply reads the strata of the new rows too; the saved model is the one audited.
    np.testing.assert_allclose(
        pd.read_csv(out / "adjusted.csv")["score_fair"], adjusted(new), rtol=1e-12
    )
    loaded = fairot.load_model(out / "model.skops")
    assert loaded.small_strata == "pooled"
    # One section per stratum in each audit; the page says where they are.
    for folder in ("before", "after"):
        text = (out / folder / "report.md").read_text()
        assert "## Stratum high" in text and "## Stratum low" in text
    assert "Conditional parity given band" in (out / "report.md").read_text()


def test_small_strata(data, tmp_path, capsys):
    path, frame, *_ = data
    small = frame.copy()
    # A stratum of 16 rows, 4 per group x label cell: too few to fit a map of its own (the
    # training rows hold about 3 per cell), and both groups among the held-out rows.
    rare = small.groupby(["sex", "y"]).head(4).index
    small.loc[rare, "band"] = "rare"
    small_path = tmp_path / "small.csv"
    small.to_csv(small_path, index=False)
    args = ["mitigate", "--data", small_path, "--score", "score", "--sensitive", "sex"]
    args += ["--label", "y", "--method", "dpp", "--control", "band", "--n-bootstrap", 0]
    out = tmp_path / "out"
    code, printed, err = _run(capsys, *args, "--out", out)
    assert code == 0, err
    # The default pools the small stratum, and says so on stderr and in the report.
    assert re.search(r"warning: \w*Warning: .*rare", err), err
    assert "rare" in (out / "report.md").read_text()
    never = tmp_path / "never"
    code, printed, err = _run(capsys, *args, "--small-strata", "error", "--out", never)
    assert code == 2 and printed == "" and err.count("\n") == 1, err
    assert "too small to fit" in err and "rare" in err
    assert not never.exists()


def test_control_needs_its_columns(data, tmp_path, capsys):
    path, *_ = data
    args = ["mitigate", "--data", path, "--score", "score", "--sensitive", "sex"]
    args += ["--method", "dpp", "--control", "region", "--out", tmp_path / "o"]
    code, printed, err = _run(capsys, *args)
    assert code == 2 and printed == "" and err.count("\n") == 1
    assert re.search(r"column\(s\) \['region'\] not in", err)


@pytest.mark.parametrize(
    "extra, pattern",
    [
        (["--small-strata", "error"], "--small-strata is the policy for the strata of --control"),
        (["--features", "band"], "--features is for the in-processing methods"),
        (["--p", "1"], "--p is for --method regression; not --method dpp"),
    ],
)
def test_post_processing_refusals(data, tmp_path, capsys, extra, pattern):
    path, *_ = data
    args = ["mitigate", "--data", path, "--score", "score", "--sensitive", "sex"]
    code, printed, err = _run(capsys, *args, "--method", "dpp", *extra, "--out", tmp_path / "o")
    assert code == 2 and printed == "" and err.count("\n") == 1
    assert re.search(pattern, err), err
    assert not (tmp_path / "o").exists()


def test_post_processing_needs_a_score(data, tmp_path, capsys):
    path, *_ = data
    args = ["mitigate", "--data", path, "--sensitive", "sex", "--method", "regression"]
    code, printed, err = _run(capsys, *args, "--out", tmp_path / "o")
    assert code == 2 and "--method regression post-processes a column of scores" in err
