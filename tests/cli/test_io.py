"""Issue 19 (CLI reading): text group codes, long headers, the adjusted table's format, values
near the float maximum, gzip tables and FIFOs (all-or-nothing ``--out``: ``test_outdir.py``)."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance

from fairot.cli._io import MAX_MAGNITUDE, MSG_DUPLICATE, MSG_TOO_LARGE
from tests.helpers import mitigate_args as _mitigate_args
from tests.helpers import run_cli as _run
from tests.helpers import write_rows as _write


def test_audit_keeps_01_and_1_apart(coded_csv, capsys):
    path, _, groups = coded_csv
    code, out, err = _run(
        capsys, "audit", "--data", path, "--score", "score", "--sensitive", "group",
        "--label", "y", "--n-bootstrap", 0, "--json",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert report["summary"]["n_groups"] == len(set(groups)) == 2


def test_mitigate_keeps_01_and_1_apart(coded_csv, tmp_path, capsys):
    path, scores, groups = coded_csv
    out = tmp_path / "out"
    code, _, err = _run(
        capsys, "mitigate", "--data", path, "--score", "score", "--sensitive", "group",
        "--method", "dpp", "--out", out, "--apply", path, "--n-bootstrap", 0,
        "--eval", path,  # fitted on every row, so that the oracle below holds
    )  # fmt: skip
    assert code == 0, err
    metrics = json.loads((out / "before" / "metrics.json").read_text())
    assert metrics["n_groups"] == 2
    adjusted = pd.read_csv(out / "adjusted.csv", dtype={"group": str})
    assert sorted(adjusted["group"].unique()) == ["01", "1"]
    # Oracle: dpp maps each group onto the common barycenter, so the fair scores of the two
    # groups have the same sorted values (equal group sizes) — impossible if they were merged.
    fair = adjusted["score_fair"].to_numpy()
    a, b = np.sort(fair[groups == "01"]), np.sort(fair[groups == "1"])
    np.testing.assert_allclose(a, b, atol=1e-9)


def test_duplicate_beyond_64_kib_of_header(tmp_path, capsys):
    names = ["score", "g"] + [f"column_{i:05d}" for i in range(6003)] + ["column_00005"]
    header = ",".join(names)
    assert len(header.encode()) > 65_536
    rows = [",".join([str(0.1 * (i + 1)), str(i % 2)] + ["0"] * 6004) for i in range(6)]
    path = _write(tmp_path / "wide.csv", rows, header)
    code, out, err = _run(
        capsys, "audit", "--data", path, "--score", "score", "--sensitive", "g",
        "--n-bootstrap", 0,
    )  # fmt: skip
    assert code == 2 and out == ""
    expected = MSG_DUPLICATE.format(path=path, names=["column_00005"])
    assert re.search(re.escape(expected), err)
    assert len(err.strip().splitlines()) == 1


def test_tsv_apply_writes_adjusted_tsv(coded_csv, tmp_path, capsys):
    path, scores, _ = coded_csv
    tsv = tmp_path / "new.tsv"
    tsv.write_text(path.read_text().replace(",", "\t"))
    out = tmp_path / "out"
    code, _, err = _run(capsys, *_mitigate_args(path, out, "--apply", tsv))
    assert code == 0, err
    assert not (out / "adjusted.csv").exists()
    adjusted = pd.read_csv(out / "adjusted.tsv", sep="\t", dtype={"group": str})
    assert list(adjusted.columns) == ["score", "group", "y", "score_fair"]
    np.testing.assert_array_equal(adjusted["score"].to_numpy(), scores)
    assert "adjusted.tsv" in err


@pytest.mark.parametrize("command", ["audit", "mitigate"])
@pytest.mark.parametrize("value", [1.7e308, -1.7e308, 1e200])
def test_values_near_float_max_one_clear_error(tmp_path, capsys, command, value):
    rng = np.random.default_rng(2)
    rows = [f"{v:.17g},{i % 2}" for i, v in enumerate(rng.uniform(0, 1, 40))]
    rows[3] = f"{value!r},1"
    path = _write(tmp_path / "big.csv", rows, "pred,group")
    common = ["--data", path, "--score", "pred", "--sensitive", "group", "--n-bootstrap", 0]
    if command == "audit":
        args = ["audit", *common, "--task", "regression"]
    else:
        args = ["mitigate", *common, "--method", "regression", "--out", tmp_path / "out"]
    code, out, err = _run(capsys, *args)
    assert code == 2 and out == ""
    expected = MSG_TOO_LARGE.format(
        column="pred", value=value, line=5, path=path, limit=MAX_MAGNITUDE
    )
    assert expected in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_large_but_representable_values_audit(tmp_path, capsys):
    # 1e150 is within the limit: the audit's W1 between the groups matches scipy's.
    rng = np.random.default_rng(3)
    pred = rng.uniform(0, 1e150, 40)
    group = np.arange(40) % 2
    rows = [f"{p:.17g},{g}" for p, g in zip(pred, group, strict=True)]
    path = _write(tmp_path / "large.csv", rows, "pred,group")
    code, out, err = _run(
        capsys, "audit", "--data", path, "--score", "pred", "--sensitive", "group",
        "--task", "regression", "--n-bootstrap", 0, "--json",
    )  # fmt: skip
    assert code == 0, err
    w1 = json.loads(out)["summary"]["max_pairwise_w1"]
    expected = wasserstein_distance(pred[group == 0] / 1e150, pred[group == 1] / 1e150) * 1e150
    np.testing.assert_allclose(w1, expected, rtol=1e-9)


def _json_audit(capsys, path, *extra):
    code, out, err = _run(
        capsys, "audit", "--data", path, "--score", "score", "--sensitive", "group",
        "--label", "y", "--n-bootstrap", 0, "--json", *extra,
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    for key in ("provenance", "title"):  # they name the file, its size and hash
        report.pop(key, None)
    return report


@pytest.mark.parametrize("suffix, sep", [(".csv.gz", ","), (".tsv.gz", "\t")])
def test_gzip_table_reads_like_the_plain_one(coded_csv, tmp_path, capsys, suffix, sep):
    import gzip

    path, _, _ = coded_csv
    text = path.read_text().replace(",", sep)
    plain = tmp_path / f"plain{suffix[:-3]}"
    plain.write_text(text)
    packed = tmp_path / f"packed{suffix}"
    packed.write_bytes(gzip.compress(text.encode()))
    assert _json_audit(capsys, packed) == _json_audit(capsys, plain)


def test_gzip_beyond_the_decompressed_limit_is_refused(coded_csv, tmp_path, capsys, monkeypatch):
    import gzip

    import fairot.cli._io as cli_io

    path, _, _ = coded_csv
    packed = tmp_path / "bomb.csv.gz"
    packed.write_bytes(gzip.compress(path.read_bytes() + b"0.5,1,1\n" * 10_000))
    monkeypatch.setattr(cli_io, "MAX_DECOMPRESSED_BYTES", 4096)
    code, out, err = _run(
        capsys, "audit", "--data", packed, "--score", "score", "--sensitive", "group",
    )  # fmt: skip
    assert code == 2 and out == ""
    assert cli_io.MSG_TOO_LARGE_GZIP.format(path=packed, limit=4096) in err


def test_truncated_gzip_is_one_clear_error(coded_csv, tmp_path, capsys):
    import gzip

    path, _, _ = coded_csv
    packed = tmp_path / "cut.csv.gz"
    packed.write_bytes(gzip.compress(path.read_bytes())[:-20])
    code, out, err = _run(capsys, "audit", "--data", packed, "--score", "score",
                          "--sensitive", "group")  # fmt: skip
    assert code == 2 and out == ""
    assert f"cannot read {packed}: not a complete gzip file" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("option", ["--data", "--eval", "--apply"])
def test_fifo_is_refused_without_blocking(coded_csv, tmp_path, capsys, option):
    import os

    from fairot.cli._io import MSG_NOT_REGULAR

    path, _, _ = coded_csv
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    args = {"--data": path, "--eval": path, "--apply": path}
    args[option] = fifo
    code, out, err = _run(
        capsys, "mitigate", "--data", args["--data"], "--score", "score", "--sensitive", "group",
        "--method", "dpp", "--out", tmp_path / "out", "--n-bootstrap", 0,
        "--eval", args["--eval"], "--apply", args["--apply"],
    )  # fmt: skip
    assert code == 2 and out == ""
    assert MSG_NOT_REGULAR.format(path=fifo, kind="a FIFO") in err
