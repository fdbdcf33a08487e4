"""``fairot mitigate``: post-processed scores, the skops model, the one-line error contract."""

import json
import re

import numpy as np
import pandas as pd
import pytest
import skops.io
from scipy.stats import wasserstein_distance

import fairot
from fairot.cli import main
from fairot.metrics import strong_demographic_disparity


@pytest.fixture(scope="module")
def train_csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "race": rng.choice(["Black", "White"], n),
            "sex": rng.choice(["F", "M"], n),
            "label": rng.choice(["no", "yes"], n),
        }
    )
    frame["score"] = np.clip(rng.beta(2, 5, n) + 0.25 * (frame.sex == "M"), 0, 1)
    folder = tmp_path_factory.mktemp("mitigate")
    path = folder / "train.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _run(capsys, *args):
    code = main(list(map(str, args)))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _load(path):
    # Only fairot's own estimator types are beyond skops' default trust.
    assert all(t.startswith("fairot.") for t in skops.io.get_untrusted_types(file=path))
    return fairot.load_model(path)


def test_dpp_end_to_end(train_csv, tmp_path, capsys):
    path, frame = train_csv
    out = tmp_path / "out"
    code, printed, _ = _run(
        capsys,
        "mitigate",
        "--data",
        path,
        "--score",
        "score",
        "--sensitive",
        "race,sex",
        "--label",
        "label",
        "--pos-label",
        "yes",
        "--method",
        "dpp",
        "--out",
        out,
        "--apply",
        path,
        "--eval",  # fit on all the rows and audit them: the in-sample check of this test
        path,
        "--n-bootstrap",
        0,
    )
    assert code == 0 and "sdd" in printed
    adjusted = pd.read_csv(out / "adjusted.csv")
    fair = adjusted["score_fair"].to_numpy()
    sf = frame[["race", "sex"]]
    # Applied to its own fit data, DPP gives every group the same distribution up to ties, so
    # SDD (computed here independently of the CLI) collapses.
    before = strong_demographic_disparity(None, frame.score, sensitive_features=sf)
    after = strong_demographic_disparity(None, fair, sensitive_features=sf)
    assert after < before / 10
    after_metrics = json.loads((out / "after" / "metrics.json").read_text())
    assert after_metrics["sdd"] == pytest.approx(after, abs=1e-12)
    assert json.loads((out / "before" / "metrics.json").read_text())["sdd"] == pytest.approx(before)
    model = _load(out / "model.skops")
    reloaded = model.predict_proba(frame[["score"]].to_numpy(), sensitive_features=sf)[:, 1]
    np.testing.assert_array_equal(reloaded, fair)
    assert (out / "after" / "report.html").exists()


def test_dpp_tolerance(train_csv, tmp_path, capsys):
    path, frame = train_csv
    adjusted = {}
    for tau in ("0", "0.4"):
        out = tmp_path / f"tau{tau}"
        code, _, _ = _run(
            capsys, "mitigate", "--data", path, "--score", "score", "--sensitive", "sex",
            "--method", "dpp", "--tau", tau, "--out", out, "--apply", path, "--n-bootstrap", 0,
        )  # fmt: skip
        assert code == 0
        adjusted[tau] = pd.read_csv(out / "adjusted.csv")["score_fair"].to_numpy()
        assert _load(out / "model.skops").tau_ == float(tau)
    # 40 % of the way from full parity back to the raw scores, row by row
    np.testing.assert_allclose(
        adjusted["0.4"], 0.4 * frame.score + 0.6 * adjusted["0"], rtol=0, atol=1e-12
    )
    for sex in ("F", "M"):
        rows = (frame.sex == sex).to_numpy()
        assert wasserstein_distance(adjusted["0.4"][rows], adjusted["0"][rows]) == pytest.approx(
            0.4 * wasserstein_distance(frame.score[rows], adjusted["0"][rows]), abs=1e-12
        )


def test_regression_tolerance(train_csv, tmp_path, capsys):
    path, frame = train_csv
    out = tmp_path / "reg"
    code, _, _ = _run(
        capsys,
        "mitigate",
        "--data",
        path,
        "--score",
        "score",
        "--sensitive",
        "sex",
        "--method",
        "regression",
        "--epsilon",
        "0.02",
        "--p",
        "1",
        "--out",
        out,
        "--apply",
        path,
        "--eval",
        path,
        "--n-bootstrap",
        0,
    )
    assert code == 0
    fair = pd.read_csv(out / "adjusted.csv")["score_fair"].to_numpy()
    women, men = fair[frame.sex == "F"], fair[frame.sex == "M"]
    raw_gap = wasserstein_distance(frame.score[frame.sex == "F"], frame.score[frame.sex == "M"])
    gap = wasserstein_distance(women, men)
    model = _load(out / "model.skops")
    assert model.epsilon_ == 0.02 and model.grid_gap_ <= 0.02 + 1e-12
    # Within ε on the calibration grid; the predictions of a group of n_g rows read the curves
    # at n_g ranks, which moves their empirical W1 by at most (score range) / n_g.
    n_g = min(len(women), len(men))
    assert gap <= 0.02 + 1.0 / n_g
    assert raw_gap > 5 * gap
    np.testing.assert_array_equal(
        model.predict(frame[["score"]].to_numpy(), sensitive_features=frame[["sex"]]), fair
    )


def _assert_error(code, out, err, pattern):
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert re.search(pattern, err), err


@pytest.mark.parametrize(
    "extra, pattern",
    [
        (["--method", "dpp", "--epsilon", "0.1"], "--epsilon is an absolute tolerance of"),
        (["--method", "dpp", "--tau", "1.5"], r"--tau must be a number in \[0, 1\] for"),
        (["--method", "regression", "--tau", "nan"], "--tau must be a finite number >= 0"),
        (["--method", "regression", "--epsilon", "-1"], "--epsilon must be a finite number"),
        (["--method", "dpp", "--threshold", "2"], r"--threshold must be a number in \[0, 1\]"),
    ],
)
def test_bad_arguments(train_csv, tmp_path, capsys, extra, pattern):
    path, _ = train_csv
    out = tmp_path / "never"
    code, printed, err = _run(
        capsys,
        "mitigate",
        "--data",
        path,
        "--score",
        "score",
        "--sensitive",
        "sex",
        "--out",
        out,
        *extra,
    )
    _assert_error(code, printed, err, pattern)
    assert not out.exists()


def test_unseen_group_in_apply_writes_nothing(train_csv, tmp_path, capsys):
    path, frame = train_csv
    new = frame.assign(sex=np.where(np.arange(len(frame)) == 3, "X", frame.sex))
    new_path = tmp_path / "new.csv"
    new.to_csv(new_path, index=False)
    out = tmp_path / "out"
    code, printed, err = _run(
        capsys,
        "mitigate",
        "--data",
        path,
        "--score",
        "score",
        "--sensitive",
        "sex",
        "--method",
        "dpp",
        "--out",
        out,
        "--apply",
        new_path,
        "--n-bootstrap",
        0,
    )
    _assert_error(code, printed, err, "X")
    assert not out.exists()


def test_apply_missing_column(train_csv, tmp_path, capsys):
    path, frame = train_csv
    new_path = tmp_path / "new.csv"
    frame.drop(columns="sex").to_csv(new_path, index=False)
    code, printed, err = _run(
        capsys,
        "mitigate",
        "--data",
        path,
        "--score",
        "score",
        "--sensitive",
        "sex",
        "--method",
        "dpp",
        "--out",
        tmp_path / "o",
        "--apply",
        new_path,
    )
    _assert_error(code, printed, err, r"column\(s\) \['sex'\] not in")
