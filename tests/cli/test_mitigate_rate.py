"""``fairot mitigate --method rate``: the rate-constrained classifier trained on the features.

As in ``test_inprocess.py``, the expected numbers are computed here, independently of
the command: the split is rebuilt with scikit-learn's ``train_test_split`` on a group x label key
made in the test, the encoder and the classifier are built and fitted here, and the held-out rows
are measured with ``fairot.metrics``.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest
import skops.io
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import fairot
from fairot.classification import RateConstrainedClassifier
from fairot.cli import main
from fairot.cli._inprocess import MSG_RATE_BUDGET, MSG_RATE_ONLY, MSG_RATE_TAU
from fairot.metrics import (
    demographic_parity_difference,
    equalized_odds_difference,
    strong_demographic_disparity,
)
from tests.helpers import (
    assert_one_line_error,
    mitigation_encoder,
    mitigation_split,
    mitigation_table,
)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return mitigation_table(tmp_path_factory.mktemp("rate"), seed=5, n=400)


@pytest.fixture
def one_openmp_thread():
    """HistGradientBoostingClassifier on one OpenMP thread (the command's fit and the test's).

    On 400 rows its threads wait on each other longer than they compute: on two shared cores the
    boosted case took 31 s of CPU with the default threads against 2.4 s with one.
    """
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def _run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _mitigate(capsys, path, out, *extra):
    return _run(
        capsys,
        "mitigate", "--data", path, "--sensitive", "sex", "--label", "y", "--method", "rate",
        "--out", out, "--n-bootstrap", 0, *extra,
    )  # fmt: skip


def _fit_here(train, probabilities, **options):
    """The encoder and the rate-constrained classifier, built here from their parts."""
    encoder = mitigation_encoder(train)
    X = encoder.transform(train)
    unaware = LogisticRegression().fit(X, train.y)
    fair = RateConstrainedClassifier(estimator=probabilities, random_state=0, **options)
    fair.fit(X, train.y, sensitive_features=train[["sex"]])
    return encoder, unaware, fair


@pytest.mark.parametrize(
    "extra, probabilities, options",
    [
        (
            ["--max-difference", 0.05],
            LogisticRegression(max_iter=1000),
            {"constraint": "demographic_parity", "max_difference": 0.05},
        ),
        (
            ["--min-ratio", 0.8, "--constraint", "equal_opportunity"],
            LogisticRegression(max_iter=1000),
            {"constraint": "equal_opportunity", "min_ratio": 0.8},
        ),
        (
            ["--max-difference", 0.1, "--probability-model", "boosted"],
            HistGradientBoostingClassifier(early_stopping=True, random_state=0),
            {"constraint": "demographic_parity", "max_difference": 0.1},
        ),
    ],
)
@pytest.mark.usefixtures("one_openmp_thread")
def test_held_out_numbers_equal_an_independent_fit(
    data, tmp_path, capsys, extra, probabilities, options
):
    path, frame, new_path, new = data
    out = tmp_path / "out"
    code, printed, err = _mitigate(capsys, path, out, *extra, "--apply", new_path)
    assert code == 0, err
    train, test = mitigation_split(frame)
    encoder, unaware, fair = _fit_here(train, probabilities, **options)
    report = json.loads((out / "report.json").read_text())
    sf = test[["sex"]]
    summaries = (report["audits"]["before"]["summary"], report["audits"]["after rate"]["summary"])
    for summary, model in zip(summaries, (unaware, fair), strict=True):
        scores = model.predict_proba(encoder.transform(test))[:, 1]
        assert summary["n_samples"] == len(test) == 120
        assert summary["sdd"] == pytest.approx(
            strong_demographic_disparity(test.y, scores, sensitive_features=sf)
        )
        assert summary["demographic_parity_difference"] == pytest.approx(
            demographic_parity_difference(test.y, scores, sensitive_features=sf)
        )
    # The audited scores decide as the classifier's predict does (their 0.5 threshold).
    decided = fair.predict(encoder.transform(test))
    after = fair.predict_proba(encoder.transform(test))[:, 1]
    np.testing.assert_array_equal(after > 0.5, decided == 1)
    assert "RateConstrainedClassifier(constraint=" in printed
    # --apply scores the new rows from their features alone; the saved model is the one audited.
    adjusted = pd.read_csv(out / "adjusted.csv")
    expected = fair.predict_proba(encoder.transform(new))[:, 1]
    np.testing.assert_allclose(adjusted.score_fair, expected, rtol=1e-12)
    untrusted = skops.io.get_untrusted_types(file=out / "model.skops")
    assert all(t.startswith(("fairot.", "sklearn.")) for t in untrusted), untrusted
    model = fairot.load_model(out / "model.skops")
    np.testing.assert_allclose(model.predict_proba(new)[:, 1], expected, rtol=1e-12)
    np.testing.assert_array_equal(model.predict(new), fair.predict(encoder.transform(new)))
    assert list(model.named_steps["features"].feature_names_in_) == ["x1", "x2", "job"]


def test_equalized_odds_budget_is_audited_on_the_held_out_rows(data, tmp_path, capsys):
    path, frame, *_ = data
    out = tmp_path / "out"
    extra = ("--max-difference", 0.05, "--constraint", "equalized_odds")
    code, _, err = _mitigate(capsys, path, out, *extra)
    assert code == 0, err
    train, test = mitigation_split(frame)
    encoder, _, fair = _fit_here(
        train,
        LogisticRegression(max_iter=1000),
        constraint="equalized_odds",
        max_difference=0.05,
    )
    report = json.loads((out / "report.json").read_text())
    summary = report["audits"]["after rate"]["summary"]
    scores = fair.predict_proba(encoder.transform(test))[:, 1]
    assert summary["equalized_odds_difference"] == pytest.approx(
        equalized_odds_difference(test.y, scores, sensitive_features=test[["sex"]])
    )
    assert fairot.load_model(out / "model.skops").named_steps["model"].constraint == (
        "equalized_odds"
    )


def test_eval_file_fits_on_every_row_of_data(data, tmp_path, capsys):
    path, frame, *_ = data
    eval_path = tmp_path / "eval.csv"
    frame.iloc[:100].to_csv(eval_path, index=False)
    out = tmp_path / "out"
    code, printed, err = _mitigate(capsys, path, out, "--min-ratio", 0.8, "--eval", eval_path)
    assert code == 0, err
    assert "Fitted on all 400 rows of data.csv, audited on the 100 rows of eval.csv" in printed
    encoder, _, fair = _fit_here(frame, LogisticRegression(max_iter=1000), min_ratio=0.8)
    model = fairot.load_model(out / "model.skops")
    assert model.named_steps["model"].min_ratio == 0.8
    inputs = frame.drop(columns=["sex", "y"])
    np.testing.assert_array_equal(model.predict(inputs), fair.predict(encoder.transform(inputs)))
    np.testing.assert_allclose(
        model.named_steps["model"].multipliers_, fair.multipliers_, rtol=1e-9, atol=1e-12
    )


def test_seeded_runs_are_identical(data, tmp_path, capsys):
    path, _, new_path, _ = data
    extra = ("--max-difference", 0.05, "--apply", new_path, "--random-state", 3)
    texts = []
    for name in ("one", "two"):
        assert _mitigate(capsys, path, tmp_path / name, *extra)[0] == 0
        texts.append((tmp_path / name / "adjusted.csv").read_text())
    assert texts[0] == texts[1]


@pytest.mark.parametrize(
    "extra, pattern",
    [
        ([], re.escape(MSG_RATE_BUDGET)),
        (["--max-difference", 0.1, "--tau", 0.2], re.escape(MSG_RATE_TAU)),
        (["--max-difference", 0.1, "--n-updates", 5], "--n-updates is for --method cot/dot"),
        (["--max-difference", 0.1, "--control", "job"], "--control is not supported"),
        (["--max-difference", -0.1], "--method rate cannot fit this budget: .*max_difference"),
        (["--max-difference", "nan"], "--method rate cannot fit this budget: .*max_difference"),
        (["--min-ratio", 1.5], "--method rate cannot fit this budget: .*min_ratio"),
        (
            ["--max-difference", 0.1, "--confidence", 1.5],
            "--method rate cannot fit this budget: .*'confidence'",
        ),
        (
            ["--max-difference", 0.001, "--confidence", 0.99],
            "--method rate cannot fit this budget: " + re.escape("confidence=0.99 cannot be met"),
        ),
    ],
)
def test_refusals(data, tmp_path, capsys, extra, pattern):
    path, *_ = data
    out = tmp_path / "never"
    code, printed, err = _mitigate(capsys, path, out, *extra)
    assert_one_line_error(code, printed, err, pattern)
    assert not out.exists()


@pytest.mark.parametrize(
    "extra, pattern",
    [
        (["--max-difference", 0.1, "--min-ratio", 0.8], "not allowed with argument"),
        (["--max-difference", 0.1, "--probability-model", "forest"], "invalid choice: 'forest'"),
    ],
)
def test_usage_errors(data, tmp_path, capsys, extra, pattern):
    path, *_ = data
    with pytest.raises(SystemExit) as exit_:
        _mitigate(capsys, path, tmp_path / "never", *extra)
    assert exit_.value.code == 2
    assert re.search(pattern, capsys.readouterr().err)


@pytest.mark.parametrize(
    "option, value",
    [
        ("--max-difference", 0.1),
        ("--min-ratio", 0.8),
        ("--probability-model", "boosted"),
        ("--confidence", 0.9),
    ],
)
def test_rate_options_are_refused_for_other_methods(data, tmp_path, capsys, option, value):
    path, *_ = data
    args = ["mitigate", "--data", path, "--sensitive", "sex", "--label", "y", "--method", "cot"]
    code, printed, err = _run(capsys, *args, option, value, "--out", tmp_path / "o")
    message = MSG_RATE_ONLY.format(name=option[2:], method="cot")
    assert_one_line_error(code, printed, err, re.escape(message))


def test_confidence_chooses_the_margin_as_the_estimator_does(data, tmp_path, capsys):
    path, frame, *_ = data
    out = tmp_path / "out"
    extra = ("--max-difference", 0.25, "--confidence", 0.8)
    code, printed, err = _mitigate(capsys, path, out, *extra)
    assert code == 0, err
    train, _ = mitigation_split(frame)
    _, _, fair = _fit_here(
        train, LogisticRegression(max_iter=1000), max_difference=0.25, confidence=0.8
    )
    saved = fairot.load_model(out / "model.skops").named_steps["model"]
    assert fair.margin_ > 0 and fair.cv_difference_upper_ <= 0.25
    assert saved.confidence == 0.8 and saved.margin_ == fair.margin_
    np.testing.assert_allclose(saved.multipliers_, fair.multipliers_, rtol=1e-9, atol=1e-12)
    assert f"confidence=0.8 (margin_={fair.margin_:.4f})" in printed
