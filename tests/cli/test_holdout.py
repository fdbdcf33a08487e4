"""``fairot mitigate`` reports on held-out rows, on one before/after page.

The expected numbers are computed here, independently of the command: the split is rebuilt with
scikit-learn's ``train_test_split`` on a group x label key made in the test, the post-processor
is fitted with the library's estimator on the training rows, and the held-out rows are audited
with ``fairot.reporting.audit`` and ``fairot.metrics``.
"""

import html
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from fairot.classification import QuantileParityPostProcessor
from fairot.cli import main
from fairot.cli._holdout import MSG_EVAL_AND_SIZE, MSG_TEST_SIZE
from fairot.metrics import demographic_parity_difference, strong_demographic_disparity
from fairot.reporting import audit
from fairot.reporting._format import format_value
from fairot.utils import ScoreColumn


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(1)
    n = 600
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "label": rng.integers(0, 2, n)})
    frame["score"] = np.clip(rng.beta(2, 4, n) + 0.2 * (frame.sex == "M"), 0, 1)
    path = tmp_path_factory.mktemp("holdout") / "data.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _mitigate(capsys, path, out, *extra):
    args = ["mitigate", "--data", path, "--score", "score", "--sensitive", "sex"]
    args += ["--label", "label", "--method", "dpp", "--out", out, "--n-bootstrap", "0", *extra]
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _held_out(frame, test_size=0.3, seed=0):
    key = frame.sex.astype(str) + "|" + frame.label.astype(str)
    train, test = train_test_split(
        np.arange(len(frame)), test_size=test_size, random_state=seed, stratify=key
    )
    return frame.iloc[np.sort(train)], frame.iloc[np.sort(test)]


def _fit_dpp(train):
    model = QuantileParityPostProcessor(estimator=ScoreColumn())
    return model.fit(train[["score"]].to_numpy(), train.label, sensitive_features=train[["sex"]])


def test_held_out_numbers_equal_an_independent_audit(data, tmp_path, capsys):
    path, frame = data
    out = tmp_path / "out"
    code, printed, _ = _mitigate(capsys, path, out, "--random-state", "0")
    assert code == 0
    train, test = _held_out(frame)
    fair = _fit_dpp(train).predict_proba(
        test[["score"]].to_numpy(), sensitive_features=test[["sex"]]
    )[:, 1]
    sf = test[["sex"]]
    report = json.loads((out / "report.json").read_text())
    before, after = report["audits"]["before"]["summary"], report["audits"]["after dpp"]["summary"]
    assert before["n_samples"] == after["n_samples"] == len(test) == 180
    for key, metric in [
        ("sdd", strong_demographic_disparity),
        ("demographic_parity_difference", demographic_parity_difference),
    ]:
        assert before[key] == pytest.approx(metric(test.label, test.score, sensitive_features=sf))
        assert after[key] == pytest.approx(metric(test.label, fair, sensitive_features=sf))
    assert "audited on 180 held-out rows" in printed
    # The in-sample figure the command printed before is not the held-out one.
    in_sample = _fit_dpp(frame).predict_proba(
        frame[["score"]].to_numpy(), sensitive_features=frame[["sex"]]
    )[:, 1]
    in_sample_sdd = strong_demographic_disparity(None, in_sample, sensitive_features=frame.sex)
    assert after["sdd"] > 2 * in_sample_sdd


def test_one_page_with_both_models_equal_to_separate_audits(data, tmp_path, capsys):
    path, frame = data
    train, test = _held_out(frame, test_size=0.4, seed=3)
    train_path, eval_path = tmp_path / "train.csv", tmp_path / "eval.csv"
    train.to_csv(train_path, index=False)
    test.to_csv(eval_path, index=False)
    out = tmp_path / "out"
    code, _, _ = _mitigate(capsys, train_path, out, "--eval", eval_path)
    assert code == 0
    fair = _fit_dpp(train).predict_proba(
        test[["score"]].to_numpy(), sensitive_features=test[["sex"]]
    )[:, 1]
    options = dict(n_bootstrap=0, plots=False)
    raw_audit = audit(test.label.to_numpy(), test.score.to_numpy(), test[["sex"]], **options)
    fair_audit = audit(test.label.to_numpy(), fair, test[["sex"]], **options)
    page = (out / "report.html").read_text()
    report = json.loads((out / "report.json").read_text())
    for name, expected in [("before", raw_audit), ("after dpp", fair_audit)]:
        got = report["audits"][name]["summary"]
        for key in ("sdd", "wass1", "demographic_parity_difference", "err"):
            assert got[key] == pytest.approx(expected.summary[key], abs=1e-12)
            assert format_value(expected.summary[key]) in page
    change = report["change"]["sdd"]
    assert change == pytest.approx(fair_audit.summary["sdd"] - raw_audit.summary["sdd"])
    assert html.escape(f"audited on the {len(test)} rows of eval.csv") in page
    assert (out / "before" / "report.html").exists() and (out / "report.md").exists()


def test_group_names_are_escaped(tmp_path, capsys):
    rng = np.random.default_rng(2)
    n = 200
    evil = "<script>alert(1)</script>"
    frame = pd.DataFrame({"sex": rng.choice([evil, "M|x"], n), "label": rng.integers(0, 2, n)})
    frame["score"] = rng.uniform(size=n)
    path = tmp_path / "evil.csv"
    frame.to_csv(path, index=False)
    code, _, _ = _mitigate(capsys, path, tmp_path / "out")
    assert code == 0
    page = (tmp_path / "out" / "report.html").read_text()
    assert evil not in page and html.escape(evil) in page
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "<script>" not in markdown


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--test-size", "1.5"], MSG_TEST_SIZE.format(value=1.5)),
        (["--test-size", "0.2", "--eval", "x.csv"], MSG_EVAL_AND_SIZE),
    ],
)
def test_bad_holdout_arguments(data, tmp_path, capsys, extra, message):
    path, _ = data
    code, printed, err = _mitigate(capsys, path, tmp_path / "never", *extra)
    assert code == 2 and printed == "" and message in err
    assert not (tmp_path / "never").exists()
