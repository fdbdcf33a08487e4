"""``fairot mitigate --method cot|dot|fair-mlp``: a fair model trained on the table's features.

The expected numbers are computed here, independently of the command: the split is rebuilt with
scikit-learn's ``train_test_split`` on a group x label key made in the test, the encoder, the
unaware logistic regression and the fair classifier are built and fitted here from scikit-learn
and the library's estimators, and the held-out rows are measured with ``fairot.metrics``.
"""

import contextlib
import html
import io
import json

import numpy as np
import pandas as pd
import pytest
import skops.io
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import fairot
from fairot.classification import COTClassifier, DOTClassifier
from fairot.cli import main
from fairot.metrics import (
    demographic_parity_difference,
    strong_demographic_disparity,
    strong_equalized_odds_disparity,
)
from tests.helpers import (
    assert_one_line_error,
    mitigation_encoder,
    mitigation_split,
    mitigation_table,
)

N_UPDATES = 300


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return mitigation_table(tmp_path_factory.mktemp("inprocess"), seed=3, n=360)


def _run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _mitigate(capsys, path, out, method, *extra):
    return _run(
        capsys,
        "mitigate", "--data", path, "--sensitive", "sex", "--label", "y", "--method", method,
        "--out", out, "--n-bootstrap", 0, *extra,
    )  # fmt: skip


@pytest.fixture(scope="module")
def cot_run(data, tmp_path_factory):
    """One ``--method cot`` run shared by the tests that read its outputs."""
    path, _, new_path, _ = data
    out = tmp_path_factory.mktemp("cot") / "out"
    args = ["mitigate", "--data", path, "--sensitive", "sex", "--label", "y", "--method", "cot"]
    args += ["--n-updates", N_UPDATES, "--tau", 0.2, "--apply", new_path, "--n-bootstrap", 0]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        code = main([str(a) for a in [*args, "--out", out]])
    assert code == 0
    return out, printed.getvalue()


def _fit_here(train, cls, **options):
    """The encoder, the unaware logistic model and the fair one, built from their parts."""
    encoder = mitigation_encoder(train)
    X = encoder.transform(train)
    unaware = LogisticRegression().fit(X, train.y)
    fair = cls(estimator=FrozenEstimator(unaware), random_state=0, **options)
    fair.fit(X, train.y, sensitive_features=train[["sex"]])
    return encoder, unaware, fair


def _check_held_out(out, printed, frame, new, method, cls):
    train, test = mitigation_split(frame)
    encoder, unaware, fair = _fit_here(train, cls, n_updates=N_UPDATES, tau=0.2)
    raw = unaware.predict_proba(encoder.transform(test))[:, 1]
    after = fair.predict_proba(encoder.transform(test))[:, 1]
    report = json.loads((out / "report.json").read_text())
    summaries = (
        report["audits"]["before"]["summary"],
        report["audits"][f"after {method}"]["summary"],
    )
    sf = test[["sex"]]
    for summary, scores in zip(summaries, (raw, after), strict=True):
        assert summary["n_samples"] == len(test) == 108
        assert summary["sdd"] == pytest.approx(
            strong_demographic_disparity(test.y, scores, sensitive_features=sf)
        )
        assert summary["demographic_parity_difference"] == pytest.approx(
            demographic_parity_difference(test.y, scores, sensitive_features=sf)
        )
    assert summaries[1]["sdd"] < summaries[0]["sdd"]
    assert "audited on 108 held-out rows" in printed
    # --apply scores the new rows from their features alone (new.csv has no sex, no label).
    adjusted = pd.read_csv(out / "adjusted.csv")
    assert list(adjusted.columns) == [*new.columns, "score_fair"]
    expected = fair.predict_proba(encoder.transform(new))[:, 1]
    np.testing.assert_allclose(adjusted.score_fair, expected, rtol=1e-12)
    # The saved model is the one audited, and loads with fairot.load_model.
    untrusted = skops.io.get_untrusted_types(file=out / "model.skops")
    assert all(t.startswith("fairot.") for t in untrusted)
    model = fairot.load_model(out / "model.skops")
    np.testing.assert_allclose(model.predict_proba(new)[:, 1], expected, rtol=1e-12)


def test_cot_held_out_numbers_equal_an_independent_fit(data, cot_run):
    path, frame, new_path, new = data
    _check_held_out(*cot_run, frame, new, "cot", COTClassifier)


def test_dot_held_out_numbers_equal_an_independent_fit(data, tmp_path, capsys):
    path, frame, new_path, new = data
    out = tmp_path / "out"
    code, printed, _ = _mitigate(
        capsys, path, out, "dot", "--n-updates", N_UPDATES, "--tau", 0.2, "--apply", new_path
    )
    assert code == 0
    _check_held_out(out, printed, frame, new, "dot", DOTClassifier)


def test_sensitive_attribute_is_not_an_input(data, tmp_path, capsys, cot_run):
    path, *_ = data
    out, printed = cot_run
    model = fairot.load_model(out / "model.skops")
    assert list(model.named_steps["features"].feature_names_in_) == ["x1", "x2", "job"]
    names = list(model.named_steps["features"].get_feature_names_out())
    assert not any("sex" in name for name in names)
    assert model.named_steps["model"].n_features_in_ == len(names) == 5
    assert "sex are not inputs" in printed
    page = (out / "report.html").read_text()
    assert "they define the groups at fit only" in page
    code, printed, err = _mitigate(capsys, path, tmp_path / "x", "cot", "--features", "x1,sex")
    assert_one_line_error(code, printed, err, "--features names 'sex', the sensitive column")


def test_constraint_and_features_are_fitted_and_audited(data, tmp_path, capsys):
    path, frame, *_ = data
    out = tmp_path / "out"
    extra = ("--n-updates", N_UPDATES, "--constraint", "equalized_odds", "--features", "x1,job")
    code, _, err = _mitigate(capsys, path, out, "dot", *extra)
    assert code == 0
    # A (group, label) cell smaller than DOT's batch: the warning is one line, not a traceback.
    assert "warning: UserWarning: group 'F, y=0' has 69 rows, fewer than batch_size=100" in err
    model = fairot.load_model(out / "model.skops")
    assert list(model.named_steps["features"].feature_names_in_) == ["x1", "job"]
    assert model.named_steps["model"].constraint == "equalized_odds"
    train, test = mitigation_split(frame)
    encoder = ColumnTransformer(
        [("num", StandardScaler(), ["x1"]), ("cat", OneHotEncoder(sparse_output=False), ["job"])]
    ).fit(train)
    unaware = LogisticRegression().fit(encoder.transform(train), train.y)
    fair = DOTClassifier(
        estimator=FrozenEstimator(unaware),
        n_updates=N_UPDATES,
        constraint="equalized_odds",
        random_state=0,
    )
    with pytest.warns(UserWarning, match="fewer than batch_size"):
        fair.fit(encoder.transform(train), train.y, sensitive_features=train[["sex"]])
    report = json.loads((out / "report.json").read_text())
    sf = test[["sex"]]
    for key, model in [("before", unaware), ("after dot", fair)]:
        summary = report["audits"][key]["summary"]
        scores = model.predict_proba(encoder.transform(test))[:, 1]
        assert summary["seod"] == pytest.approx(
            strong_equalized_odds_disparity(test.y, scores, sensitive_features=sf)
        )
    assert "UserWarning: group 'F, y=0'" in (out / "report.md").read_text()


def test_seeded_runs_are_identical(data, tmp_path, capsys, cot_run):
    path, _, new_path, _ = data
    out = tmp_path / "again"
    extra = ("--n-updates", N_UPDATES, "--tau", 0.2, "--random-state", 0, "--apply", new_path)
    assert _mitigate(capsys, path, out, "cot", *extra)[0] == 0
    for name in ("adjusted.csv", "report.json"):
        first = (cot_run[0] / name).read_text()
        again = (out / name).read_text()
        if name == "report.json":  # the provenance names the output folder and the time
            first, again = (json.loads(t)["audits"]["after cot"]["summary"] for t in (first, again))
        assert first == again


def test_eval_file(data, tmp_path, capsys):
    path, frame, *_ = data
    eval_path = tmp_path / "eval.csv"
    frame.iloc[:100].to_csv(eval_path, index=False)
    out = tmp_path / "out"
    code, printed, _ = _mitigate(
        capsys, path, out, "cot", "--n-updates", N_UPDATES, "--eval", eval_path
    )
    assert code == 0
    assert "Fitted on all 360 rows of data.csv, audited on the 100 rows of eval.csv" in printed
    _, unaware, fair = _fit_here(frame, COTClassifier, n_updates=N_UPDATES)
    np.testing.assert_allclose(
        fairot.load_model(out / "model.skops").named_steps["model"].coef_, fair.coef_
    )


@pytest.mark.parametrize(
    "method, extra, pattern",
    [
        ("cot", ["--score", "x1"], "--score is for the post-processors"),
        ("dot", ["--control", "job"], "--control is not supported with --method dot"),
        ("cot", ["--epsilon", "0.1"], "--epsilon is an absolute tolerance of --method regression"),
        ("cot", ["--tau", "2"], r"--tau must be a number in \[0, 1\] for --method cot"),
        (
            "cot",
            ["--tau", "0.3", "--constraint", "equal_opportunity"],
            "--tau 0.3 is a tolerance towards demographic parity",
        ),
        ("cot", ["--n-epochs", "3"], "--n-epochs is for --method fair-mlp; not --method cot"),
        ("fair-mlp", ["--n-updates", "3"], "--n-updates is for --method cot/dot"),
        ("dot", ["--n-updates", "0"], "--n-updates must be a positive integer"),
        ("cot", ["--features", "x1,nope"], r"column\(s\) \['nope'\] not in"),
        ("cot", ["--features", "y"], "--features names 'y', the label column"),
    ],
)
def test_refusals(data, tmp_path, capsys, method, extra, pattern):
    path, *_ = data
    out = tmp_path / "never"
    code, printed, err = _mitigate(capsys, path, out, method, *extra)
    assert_one_line_error(code, printed, err, pattern)
    assert not out.exists()


def test_label_is_required(data, tmp_path, capsys):
    path, *_ = data
    args = ["mitigate", "--data", path, "--sensitive", "sex", "--method", "cot"]
    code, printed, err = _run(capsys, *args, "--out", tmp_path / "o")
    assert_one_line_error(code, printed, err, "--method cot trains a classifier on the features")


@pytest.mark.parametrize("method", ["dpp", "regression"])
def test_post_processors_refuse_label_constraints(data, tmp_path, capsys, method):
    path, *_ = data
    args = ["mitigate", "--data", path, "--score", "x2", "--sensitive", "sex", "--method", method]
    args += ["--constraint", "equalized_odds", "--out", tmp_path / "o"]
    code, printed, err = _run(capsys, *args)
    assert_one_line_error(code, printed, err, "reads no label at prediction")
    assert "distributions given Y" in err and "use --method cot or --method dot" in err


def test_fair_mlp_without_torch(data, tmp_path, capsys, monkeypatch):
    path, *_ = data
    monkeypatch.setitem(__import__("sys").modules, "fairot.torch", None)
    code, printed, err = _mitigate(capsys, path, tmp_path / "o", "fair-mlp")
    assert_one_line_error(code, printed, err, r"--method fair-mlp needs PyTorch.*fairot\[torch\]")


def test_fair_mlp(data, tmp_path, capsys):
    torch = pytest.importorskip("torch")
    from fairot.torch import FairMLPClassifier

    path, frame, new_path, new = data
    out = tmp_path / "out"
    code, _, err = _mitigate(
        capsys, path, out, "fair-mlp", "--n-epochs", 3, "--tau", 0.5, "--apply", new_path
    )
    assert code == 0, err
    train, test = mitigation_split(frame)
    encoder = ColumnTransformer(
        [
            ("num", StandardScaler(), ["x1", "x2"]),
            ("cat", OneHotEncoder(sparse_output=False), ["job"]),
        ]
    ).fit(train)
    torch.manual_seed(0)
    fair = FairMLPClassifier(n_epochs=3, tau=0.5, random_state=0)
    fair.fit(encoder.transform(train), train.y, sensitive_features=train[["sex"]])
    after = fair.predict_proba(encoder.transform(test))[:, 1]
    report = json.loads((out / "report.json").read_text())
    assert report["audits"]["after fair-mlp"]["summary"]["sdd"] == pytest.approx(
        strong_demographic_disparity(test.y, after, sensitive_features=test[["sex"]]), rel=1e-6
    )
    adjusted = pd.read_csv(out / "adjusted.csv")
    expected = fair.predict_proba(encoder.transform(new))[:, 1]
    np.testing.assert_allclose(adjusted.score_fair, expected, rtol=1e-6)
    # skops cannot save a torch network: no model.skops, and the report says so.
    assert not (out / "model.skops").exists()
    assert "No model.skops" in (out / "report.md").read_text()


def test_user_strings_are_escaped(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 240
    group = rng.choice(["<script>alert(1)</script>", "b&b"], n)
    frame = pd.DataFrame({"<img src=x>": rng.normal(size=n), "g": group})
    frame["y"] = (frame["<img src=x>"] + rng.normal(size=n) > 0).astype(int)
    path = tmp_path / "<b>data&.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "out"
    args = ["mitigate", "--data", path, "--sensitive", "g", "--label", "y", "--method", "cot"]
    code, _, err = _run(capsys, *args, "--n-updates", 50, "--out", out, "--n-bootstrap", 0)
    assert code == 0, err
    page = (out / "report.html").read_text()
    for text in ["<script>alert(1)</script>", "<img src=x>", "<b>data&.csv"]:
        assert text not in page
    assert html.escape("<img src=x>") in page
    assert html.escape("<script>alert(1)</script>") in page
