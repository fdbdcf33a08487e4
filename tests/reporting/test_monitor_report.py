"""What a FairnessMonitor shows: the reference window in every output, dates on the x-axis."""

import json

import numpy as np
import pandas as pd
import pytest
from matplotlib import dates as mdates
from matplotlib.backends.backend_agg import FigureCanvasAgg

from fairot.metrics import strong_demographic_disparity
from fairot.reporting import FairnessMonitor
from tests.helpers import window_monitor as _monitor


def test_plot_has_a_date_axis_when_times_are_given(small):
    monitor = _monitor(every="7D")
    monitor.update(small.s, small.g, times=small.t)
    monitor.flush()
    figure = monitor.plot()
    ax = figure.axes[0]
    assert isinstance(ax.xaxis.get_major_formatter(), mdates.ConciseDateFormatter)
    # The metric line sits at each window's first time, as dates.
    x = mdates.num2date(ax.lines[0].get_xdata(orig=False))
    first_times = monitor.history_["time_from"].tolist()
    assert [t.replace(tzinfo=None) for t in x] == [t.to_pydatetime() for t in first_times]
    FigureCanvasAgg(figure).draw()
    labels = " ".join(t.get_text() for t in ax.get_xticklabels())
    assert "Jan" in labels or "Feb" in labels or "2026" in labels, labels


def test_plot_uses_the_window_index_without_times():
    rng = np.random.default_rng(4)
    monitor = _monitor(window=50)
    monitor.update(rng.uniform(size=150), np.tile(["a", "b"], 75))
    ax = monitor.plot().axes[0]
    assert not isinstance(ax.xaxis.get_major_formatter(), mdates.ConciseDateFormatter)
    assert list(ax.lines[0].get_xdata()) == [0, 1, 2]


def test_reference_window_in_every_format(small, tmp_path):
    ref, stream = small.iloc[:9], small.iloc[9:]
    monitor = FairnessMonitor(
        ref.s, ref.g, every="7D", threshold=0.5, n_bootstrap=20, reference_times=ref.t
    )
    monitor.update(stream.s, stream.g, times=stream.t)
    monitor.flush()
    source = "<script>alert(1)</script> week|1"
    out = monitor.write(tmp_path / "m", reference_source=source)
    record = json.loads((out / "monitor.json").read_text())
    assert record["reference"] == {
        "source": source,
        "rows": 9,
        "time_from": "2026-01-05 08:00:00",
        "time_to": "2026-01-13 07:00:00",
        "value": pytest.approx(
            strong_demographic_disparity(None, ref.s, sensitive_features=ref.g), abs=1e-12
        ),
    }
    windows = record["windows"]
    assert [w["partial"] for w in windows] == [False] * (len(windows) - 1) + [True]
    assert sum(w["rows"] for w in windows) == len(stream)
    markdown = (out / "monitor.md").read_text()
    assert "## Reference window" in markdown
    assert "| 9 | 2026-01-05 08:00:00 | 2026-01-13 07:00:00 |" in markdown
    assert "&lt;script&gt;" in markdown and "<script>" not in markdown and "week\\|1" in markdown
    assert "| partial |" in markdown
    page = (out / "monitor.html").read_text()
    assert "<h2>Reference window</h2>" in page and "2026-01-13 07:00:00" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>" not in page
    assert ">partial<" in page
    csv = pd.read_csv(out / "monitor.csv")
    assert csv["partial"].tolist() == [w["partial"] for w in windows]
    assert (out / "monitor.png").stat().st_size > 0


def test_write_before_any_window(tmp_path):
    monitor = _monitor(every="1D")
    out = monitor.write(tmp_path / "empty")
    assert sorted(p.name for p in out.iterdir()) == [
        "monitor.csv",
        "monitor.html",
        "monitor.json",
        "monitor.md",
    ]
    record = json.loads((out / "monitor.json").read_text())
    assert record["windows"] == [] and record["reference"]["rows"] == 60
    assert "No window evaluated yet" in (out / "monitor.html").read_text()
