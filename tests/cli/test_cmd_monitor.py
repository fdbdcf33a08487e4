"""``fairot monitor``: windows in time order, alerts after the change, outputs and errors."""

import datetime as dt
import json
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


def _monitor_args(path, *extra):
    return [
        "monitor", "--data", path, "--time", "when", "--score", "score", "--sensitive", "g",
        "--n-bootstrap", 20, *extra,
    ]  # fmt: skip


def test_monitor_every_equals_a_pandas_grouping(stream_csv, tmp_path, capsys):
    path, frame = stream_csv
    out = tmp_path / "weeks"
    code, printed, err = _run(capsys, *_monitor_args(path, "--every", "7D", "--out", out))
    assert code == 0, err
    table = pd.read_csv(out / "monitor.csv")
    weeks = [
        (label, rows)
        for label, rows in frame.assign(t=pd.to_datetime(frame.when)).groupby(
            pd.Grouper(key="t", freq="7D")
        )
    ]
    # The first week is the reference window; every later week is one window.
    (_, reference), monitored = weeks[0], weeks[1:]
    assert len(reference) == 168 and len(table) == len(monitored) == 17
    assert pd.to_datetime(table["period"]).tolist() == [label for label, _ in monitored]
    assert table["rows"].tolist() == [len(rows) for _, rows in monitored]
    for (_, rows), (_, row) in zip(monitored, table.iterrows(), strict=True):
        assert pd.Timestamp(row["time_from"]) == pd.Timestamp(rows.when.iloc[0])
        assert pd.Timestamp(row["time_to"]) == pd.Timestamp(rows.when.iloc[-1])
        assert row["value"] == pytest.approx(
            strong_demographic_disparity(None, rows.score, sensitive_features=rows.g)
        )
    # 3000 hours end on 6 May 23:00, inside the week of 30 April: the last window is partial.
    assert table["partial"].tolist() == [False] * 16 + [True]
    assert table["rows"].iloc[-1] == 3000 - 168 * 17
    assert "reference window: first window of stream.csv, 168 rows, 2026-01-01 00:00:00 to " in (
        printed
    )
    record = json.loads((out / "monitor.json").read_text())
    assert record["settings"]["every"] == "7D" and record["settings"]["window"] is None
    assert record["reference"]["rows"] == 168
    assert record["reference"]["time_to"] == "2026-01-07 23:00:00"


def test_monitor_reports_the_partial_last_window(stream_csv, tmp_path, capsys):
    path, frame = stream_csv
    out = tmp_path / "rows"
    code, printed, err = _run(capsys, *_monitor_args(path, "--window", 700, "--out", out))
    assert code == 0, err
    table = pd.read_csv(out / "monitor.csv")
    # 700 reference rows, three full windows, and the 200 newest rows as a partial window.
    assert table["rows"].tolist() == [700, 700, 700, 200]
    assert table["partial"].tolist() == [False, False, False, True]
    rows = frame.iloc[2800:]
    assert table["value"].iloc[-1] == pytest.approx(
        strong_demographic_disparity(None, rows.score, sensitive_features=rows.g)
    )
    assert table["time_from"].iloc[-1] == "2026-04-27 16:00:00"  # hour 2800
    assert printed.count("partial") == 2  # the column header and the flag
    assert "1 partial" in err
    record = json.loads((out / "monitor.json").read_text())
    assert record["windows"][-1]["partial"] is True and record["windows"][-1]["rows"] == 200
    assert (
        record["reference"]
        == {
            "source": "first window of stream.csv",
            "rows": 700,
            "time_from": "2026-01-01 00:00:00",
            "time_to": "2026-01-30 03:00:00",  # hour 699
            "value": pytest.approx(
                strong_demographic_disparity(
                    None, frame.score[:700], sensitive_features=frame.g[:700]
                )
            ),
        }
    )
    markdown = (out / "monitor.md").read_text()
    assert "| 700 | 2026-01-01 00:00:00 | 2026-01-30 03:00:00 |" in markdown
    page = (out / "monitor.html").read_text()
    assert "<h2>Reference window</h2>" in page and "2026-01-30 03:00:00" in page


def test_monitor_reference_file_is_listed(stream_csv, tmp_path, capsys):
    path, frame = stream_csv
    reference = tmp_path / "ref.csv"
    frame.iloc[:400].to_csv(reference, index=False)
    out = tmp_path / "ref"
    args = _monitor_args(path, "--every", "1M", "--reference", reference, "--out", out)
    code, printed, err = _run(capsys, *args)
    assert code == 0, err
    record = json.loads((out / "monitor.json").read_text())
    assert record["reference"]["source"] == "reference file ref.csv"
    assert record["reference"]["rows"] == 400
    assert record["reference"]["time_to"] == "2026-01-17 15:00:00"  # hour 399
    # With a reference file the whole stream is monitored: Jan..Apr full, May partial.
    months = frame.groupby(pd.to_datetime(frame.when).dt.month).size().tolist()
    assert [w["rows"] for w in record["windows"]] == months
    assert [w["partial"] for w in record["windows"]] == [False] * 4 + [True]
    # the period as written (issue 36: pandas' "ME" was printed for "1M")
    assert record["settings"]["every"] == "1M"
    assert "per 1M period" in printed and not re.search(r"\bME\b", printed)


def test_monitor_every_errors(stream_csv, tmp_path, capsys):
    from fairot.cli._cmd_monitor import MSG_EVERY_DATES
    from fairot.utils.calendar import MSG_EVERY

    path, frame = stream_csv
    for bad in ("7X", "weekly", "-1D", "0W"):
        code, out, err = _run(capsys, *_monitor_args(path, f"--every={bad}"))
        _assert_error(code, out, err, re.escape(MSG_EVERY.format(name="--every", value=bad)))
    with pytest.raises(SystemExit) as exit_:
        main(list(map(str, _monitor_args(path, "--every", "7D", "--window", 100))))
    captured = capsys.readouterr()
    _assert_error(
        exit_.value.code,
        captured.out,
        captured.err,
        "argument --window: not allowed with argument --every",
    )
    numeric = tmp_path / "numeric.csv"
    frame.assign(when=np.arange(len(frame))).to_csv(numeric, index=False)
    code, out, err = _run(capsys, *_monitor_args(numeric, "--every", "7D"))
    _assert_error(code, out, err, re.escape(MSG_EVERY_DATES.format(column="when")))
    code, out, err = _run(capsys, *_monitor_args(path, "--every", "1Y"))
    _assert_error(code, out, err, "no rows after its reference window")


@pytest.mark.parametrize("favorable", [1, 0])
def test_monitor_states_the_direction_and_its_gaps_do_not_depend_on_it(
    stream_csv, tmp_path, capsys, favorable
):
    # demographic_parity_difference = max - min of the groups' rates, the same for 1 - rate.
    path, frame = stream_csv
    args = _monitor_args(path, "--window", 500, "--metric", "demographic_parity_difference")
    out = tmp_path / "out"
    code, printed, _ = _run(capsys, *args, "--favorable-outcome", favorable, "--out", out)
    assert code == 0
    which = "positive decision (score > 0.5)" if favorable else "negative decision (score <= 0.5)"
    assert f"favourable outcome: the {which}" in printed.splitlines()[0]
    # The class takes the reading (FairnessMonitor(favorable_outcome=)) and states it itself.
    settings = json.loads((out / "monitor.json").read_text())["settings"]
    assert settings["favorable_outcome"] == favorable
    assert settings["direction"] == f"favourable outcome: the {which}"
    rows = frame.iloc[500:1000]
    decided = rows.score > 0.5
    favoured = decided if favorable else ~decided
    rates = favoured.groupby(rows.g).mean()
    # The first window's value, by hand from the favourable decisions.
    assert f"{rates.max() - rates.min():.4f}" in printed.splitlines()[4]
