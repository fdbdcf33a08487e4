"""``fairot monitor``: windows in time order, alerts after the change, outputs and errors."""

import datetime as dt
import re

import numpy as np
import pandas as pd
import pytest

from fairot.cli import main
from fairot.metrics import strong_demographic_disparity


@pytest.fixture(scope="module")
def stream_csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 3000
    times = pd.date_range("2026-01-01", periods=n, freq="h")
    g = rng.choice(["a", "b"], n)
    s = rng.uniform(size=n)
    s = np.where((np.arange(n) >= 2000) & (g == "a"), np.clip(s + 0.3, 0, 1), s)
    frame = pd.DataFrame({"when": times.astype(str), "g": g, "score": s})
    path = tmp_path_factory.mktemp("stream") / "stream.csv"
    # Rows shuffled: the command must sort by time.
    frame.sample(frac=1, random_state=0).to_csv(path, index=False)
    return path, frame


def _run(capsys, *args):
    code = main(list(map(str, args)))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_monitor_alerts_after_the_change(stream_csv, tmp_path, capsys):
    path, frame = stream_csv
    out = tmp_path / "mon"
    code, printed, _ = _run(
        capsys,
        "monitor",
        "--data",
        path,
        "--time",
        "when",
        "--score",
        "score",
        "--sensitive",
        "g",
        "--window",
        500,
        "--n-bootstrap",
        50,
        "--out",
        out,
    )
    assert code == 0
    table = pd.read_csv(out / "monitor.csv")
    # First 500 rows are the reference; windows 0-2 cover rows 500-2000 (before the change).
    assert table["alert"].tolist() == [False, False, False, True, True]
    for k, row in table.iterrows():
        rows = frame.iloc[500 + 500 * k : 1000 + 500 * k]
        assert row["value"] == pytest.approx(
            strong_demographic_disparity(None, rows.score, sensitive_features=rows.g)
        )
        assert row["time_from"] == rows.when.iloc[0]
    assert (out / "monitor.png").stat().st_size > 0
    assert printed.count("ALERT") == 2


def _assert_error(code, out, err, pattern):
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert re.search(pattern, err), err


def test_monitor_errors(stream_csv, tmp_path, capsys):
    path, frame = stream_csv
    base = ["monitor", "--data", path, "--score", "score", "--sensitive", "g"]
    code, out, err = _run(capsys, *base, "--time", "nope")
    _assert_error(code, out, err, r"column\(s\) \['nope'\] not in")
    code, out, err = _run(capsys, *base, "--time", "when", "--window", 5000)
    _assert_error(code, out, err, "fewer than one window")
    code, out, err = _run(capsys, *base, "--time", "when", "--threshold", "0")
    _assert_error(code, out, err, "--threshold must be a finite number > 0")
    bad = frame.assign(when=frame.when.where(frame.index != 7, "not a time"))
    bad_path = tmp_path / "bad.csv"
    bad.to_csv(bad_path, index=False)
    code, out, err = _run(
        capsys,
        "monitor",
        "--data",
        bad_path,
        "--score",
        "score",
        "--sensitive",
        "g",
        "--time",
        "when",
    )
    _assert_error(code, out, err, r"column 'when' must hold times .* line 9")


def _tz_stream(tmp_path, times):
    rng = np.random.default_rng(1)
    n = len(times)
    frame = pd.DataFrame(
        {"when": times, "g": np.tile(["a", "b"], n // 2), "score": rng.uniform(size=n)}
    )
    path = tmp_path / "tz.csv"
    frame.to_csv(path, index=False)
    return path, ["monitor", "--data", path, "--time", "when", "--score", "score"]


def test_monitor_naive_and_aware_times_name_time(tmp_path, capsys):
    from fairot.cli._cmd_monitor import MSG_TIME_ZONES

    times = [f"2026-01-01T{h % 24:02d}:00:00" for h in range(60)]
    times[7] = "2026-01-01T07:00:00+02:00"
    times[9] = "2026-01-01T09:00:00-05:00"
    path, base = _tz_stream(tmp_path, times)
    code, out, err = _run(capsys, *base, "--sensitive", "g", "--window", 20)
    expected = MSG_TIME_ZONES.format(
        column="when",
        aware=times[7],
        aware_line=9,
        naive=times[0],
        naive_line=2,
    )
    _assert_error(code, out, err, re.escape(expected))
    assert "--time" in err


def test_monitor_offsets_from_several_zones_are_ordered_in_utc(tmp_path, capsys):
    # Row k is at 00:00 UTC + k minutes, written in alternating zones: the UTC order is the row
    # order, which the local wall-clock strings do not sort to.
    utc = pd.date_range("2026-01-01", periods=60, freq="min", tz="UTC")
    zones = [dt.timezone(dt.timedelta(hours=5)), dt.timezone(dt.timedelta(hours=-3))]
    times = [t.to_pydatetime().astimezone(zones[k % 2]).isoformat() for k, t in enumerate(utc)]
    path, base = _tz_stream(tmp_path, times)
    out_dir = tmp_path / "o"
    code, _, _ = _run(capsys, *base, "--sensitive", "g", "--window", 20, "--out", out_dir)
    assert code == 0
    table = pd.read_csv(out_dir / "monitor.csv")
    assert pd.to_datetime(table["time_from"]).tolist() == [utc[20], utc[40]]
