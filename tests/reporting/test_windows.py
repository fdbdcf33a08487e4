"""How the monitor cuts a stream into windows (issue 24): calendar windows against a hand grouping
with pandas, the partial last window, and the times it refuses."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairot.metrics import strong_demographic_disparity
from fairot.reporting import FairnessMonitor
from fairot.reporting._monitor import (
    MSG_FLUSHED,
    MSG_NEEDS_TIMES,
    MSG_WINDOW,
    MSG_WINDOW_AND_EVERY,
)
from fairot.reporting._windows import MSG_TIME_ORDER, MSG_TIMES_DATES, MSG_TIMES_INFINITE
from fairot.utils.calendar import MSG_EVERY
from tests.helpers import reference_stream as _reference
from tests.helpers import window_monitor as _monitor


@pytest.mark.parametrize("every", ["7D", "1W", "1M", "ME", "3D"])
def test_calendar_windows_equal_a_pandas_grouping(small, every):
    monitor = _monitor(every=every)
    results = monitor.update(small.s, small.g, times=small.t) + monitor.flush()
    freq = {"1M": "ME"}.get(every, every)
    expected = [(k, rows) for k, rows in small.groupby(pd.Grouper(key="t", freq=freq)) if len(rows)]
    assert [r.period for r in results] == [k for k, _ in expected]
    for r, (_, rows) in zip(results, expected, strict=True):
        assert r.stop - r.start == len(rows)
        assert list(range(r.start, r.stop)) == rows.index.tolist()
        assert (r.time_from, r.time_to) == (rows.t.iloc[0], rows.t.iloc[-1])
        if rows.g.nunique() > 1:
            oracle = strong_demographic_disparity(None, rows.s, sensitive_features=rows.g)
            assert r.value == pytest.approx(oracle, abs=1e-12)
    assert [r.partial for r in results] == [False] * (len(results) - 1) + [True]


def test_month_windows_by_hand(small):
    # January holds the first 21 rows, February the other 19: written out, not computed.
    monitor = _monitor(every="1M")
    results = monitor.update(small.s, small.g, times=small.t) + monitor.flush()
    assert [(str(r.period.date()), r.start, r.stop, r.partial) for r in results] == [
        ("2026-01-31", 0, 21, False),
        ("2026-02-28", 21, 40, True),
    ]


def test_month_windows_are_named_as_written(small, tmp_path):
    # issue 36: "1M" windows were labelled "ME", pandas' name of a month end
    monitor = _monitor(every="1M")
    monitor.update(small.s, small.g, times=small.t)
    monitor.flush()
    assert monitor.every_label == "1M"
    out = monitor.write(tmp_path / "out")
    record = json.loads((out / "monitor.json").read_text())
    assert record["settings"]["every"] == "1M"
    for name in ("monitor.md", "monitor.html"):
        text = (out / name).read_text()
        assert "windows of 1M" in text
        assert not re.search(r"\bME\b", text), name
    figure = monitor.plot()
    assert figure.axes[0].get_xlabel().endswith("(windows of 1M)")


def test_weeks_by_hand(small):
    # Weeks ending on Sunday ("W"): 5-11 Jan holds 7 rows (11 Jan 23:59 included), 12-18 Jan 7,
    # 19-25 Jan 7, the week of 26 Jan is empty (skipped), 2-8 Feb 7, 9-15 Feb 7, 16-22 Feb 5.
    monitor = _monitor(every="W")
    results = monitor.update(small.s, small.g, times=small.t) + monitor.flush()
    assert [r.stop - r.start for r in results] == [7, 7, 7, 7, 7, 5]
    assert str(results[0].period.date()) == "2026-01-11"


@pytest.mark.parametrize("cuts", [[1], [6, 7, 8], [20, 21], list(range(1, 40))])
def test_calendar_windows_do_not_depend_on_the_chunks(small, cuts):
    whole = _monitor(every="7D")
    whole.update(small.s, small.g, times=small.t)
    whole.flush()
    pieces = _monitor(every="7D")
    for rows in np.split(np.arange(len(small)), cuts):
        pieces.update(small.s.iloc[rows], small.g.iloc[rows], times=small.t.iloc[rows])
    pieces.flush()
    pd.testing.assert_frame_equal(whole.history_, pieces.history_)


def test_reference_times_start_the_calendar(small):
    # The bins are resample's over the reference rows followed by the stream.
    ref, stream = small.iloc[:9], small.iloc[9:]
    monitor = FairnessMonitor(
        ref.s, ref.g, every="7D", threshold=0.5, n_bootstrap=20, reference_times=ref.t
    )
    results = monitor.update(stream.s, stream.g, times=stream.t) + monitor.flush()
    grouped = small.groupby(pd.Grouper(key="t", freq="7D"))
    expected = {k: rows.index[rows.index >= 9] for k, rows in grouped}
    expected = {k: v for k, v in expected.items() if len(v)}
    assert [r.period for r in results] == list(expected)
    assert [r.stop - r.start for r in results] == [len(v) for v in expected.values()]
    assert monitor.n_reference_ == 9
    assert monitor.reference_span_ == (small.t.iloc[0], small.t.iloc[8])


def test_partial_last_window_is_reported_and_flagged():
    rng = np.random.default_rng(1)
    s, g = rng.uniform(size=278), rng.choice(["a", "b"], 278)
    monitor = _monitor(window=100)
    full = monitor.update(s, g)
    assert [(r.start, r.stop, r.partial) for r in full] == [(0, 100, False), (100, 200, False)]
    (last,) = monitor.flush()
    assert (last.index, last.start, last.stop, last.partial) == (2, 200, 278, True)
    oracle = strong_demographic_disparity(None, s[200:], sensitive_features=g[200:])
    assert last.value == pytest.approx(oracle, abs=1e-12)
    assert monitor.table()["rows"].tolist() == [100, 100, 78]
    assert monitor.table()["partial"].tolist() == [False, False, True]
    assert monitor.flush() == []
    with pytest.raises(ValueError, match=re.escape(MSG_FLUSHED)):
        monitor.update(s, g)


def test_no_partial_window_when_the_stream_ends_on_a_boundary():
    rng = np.random.default_rng(2)
    s, g = rng.uniform(size=200), rng.choice(["a", "b"], 200)
    monitor = _monitor(window=100)
    assert len(monitor.update(s, g)) == 2
    assert monitor.flush() == []


def test_a_window_of_one_group_is_noted_not_evaluated(small):
    rows = small.iloc[:3].assign(g="a")  # one week, group a only
    monitor = _monitor(every="7D")
    monitor.update(rows.s, rows.g, times=rows.t)
    (r,) = monitor.flush()
    assert r.note == "one group (a): not evaluated" and not r.alert
    assert np.isnan([r.value, r.low, r.high, r.p_value]).all()


def test_validation(small):
    with pytest.raises(ValueError, match=re.escape(MSG_WINDOW_AND_EVERY.split("{")[0])):
        _monitor(window=100, every="7D")
    for bad in ("7X", "fortnight", "-1D", "0D", 7, ""):
        with pytest.raises(ValueError, match=re.escape(MSG_EVERY.format(name="every", value=bad))):
            _monitor(every=bad)
    with pytest.raises(ValueError, match=re.escape(MSG_WINDOW.split("{")[0])):
        _monitor(window=0)
    monitor = _monitor(every="7D")
    with pytest.raises(ValueError, match=re.escape(MSG_NEEDS_TIMES)):
        monitor.update(small.s, small.g)
    with pytest.raises(TypeError, match=re.escape(MSG_TIMES_DATES.format(dtype="int64"))):
        monitor.update(small.s, small.g, times=np.arange(len(small)))
    backwards = small.t.iloc[::-1]
    message = MSG_TIME_ORDER.format(got=backwards.iloc[1], last=backwards.iloc[0])
    with pytest.raises(ValueError, match=re.escape(message)):
        monitor.update(small.s, small.g, times=backwards)
    monitor.update(small.s.iloc[10:], small.g.iloc[10:], times=small.t.iloc[10:])
    message = MSG_TIME_ORDER.format(got=small.t.iloc[0], last=small.t.iloc[-1])
    with pytest.raises(ValueError, match=re.escape(message)):
        monitor.update(small.s.iloc[:5], small.g.iloc[:5], times=small.t.iloc[:5])


@settings(max_examples=25, deadline=None)
@given(
    gaps=st.lists(st.integers(0, 3 * 86_400), min_size=1, max_size=60),
    every=st.sampled_from(["6h", "1D", "3D", "W", "1M"]),
    cuts=st.lists(st.integers(1, 59), max_size=4),
    seed=st.integers(0, 2**16),
)
def test_calendar_windows_property(gaps, every, cuts, seed):
    """Any times, any chunking: the windows are the non-empty bins of a pandas Grouper."""
    rng = np.random.default_rng(seed)
    t = pd.Timestamp("2026-01-01 03:00") + pd.to_timedelta(np.cumsum(gaps), "s")
    frame = pd.DataFrame(
        {"t": t, "g": rng.choice(["a", "b"], len(t)), "s": rng.uniform(size=len(t))}
    )
    monitor = FairnessMonitor(
        *_reference(), every=every, threshold=0.5, n_bootstrap=10, n_permutations=19
    )
    results = []
    for rows in np.split(np.arange(len(frame)), sorted(c for c in set(cuts) if c < len(frame))):
        part = frame.iloc[rows]
        results += monitor.update(part.s, part.g, times=part.t)
    results += monitor.flush()
    freq = {"1M": "ME"}.get(every, every)
    expected = [rows.index.tolist() for _, rows in frame.groupby(pd.Grouper(key="t", freq=freq))]
    assert [list(range(r.start, r.stop)) for r in results] == [e for e in expected if e]
    assert [r.partial for r in results] == [False] * (len(results) - 1) + [True]


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_time_is_refused(bad):
    # Issue 37: a time of +inf sorted last and was accepted; it closes no window.
    monitor = FairnessMonitor(np.linspace(0, 1, 40), np.tile(["a", "b"], 20), window=20,
                              n_bootstrap=10)  # fmt: skip
    times = np.arange(40.0)
    times[-1 if bad > 0 else 0] = bad
    row = 39 if bad > 0 else 0
    message = MSG_TIMES_INFINITE.format(count=1, value=bad, row=row)
    with pytest.raises(ValueError, match=re.escape(message)):
        monitor.update(np.linspace(0, 1, 40), np.tile(["a", "b"], 20), times=times)
