"""Hypothesis fuzz of FairnessMonitor and ``fairot monitor``: the right answer or one clear error.

Random streams (NaN, out-of-range scores, one group, unknown groups), window sizes, metrics,
alpha and time columns (numbers, naive dates, dates with offsets from several zones, a mix,
garbage). Never a traceback, never a NaN in a result, never an alert that breaks its definition.
"""

import contextlib
import csv
import io
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fairot.utils.arrays as arrays
import fairot.utils.groups as groups
import fairot.utils.sensitive as sensitive
from fairot.cli import main
from fairot.reporting import FairnessMonitor, _monitor
from tests.helpers import fills_template, message_constants

pytestmark = pytest.mark.fuzz

TEMPLATES = message_constants((_monitor, arrays, groups, sensitive), prefix="MSG_")


def _ours(message: str) -> bool:
    """Whether ``message`` fills one of the monitor's or validation's message constants."""
    return fills_template(message, TEMPLATES)


SCORE = st.one_of(
    st.floats(0, 1), st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, 1.0])
)


@given(
    n=st.integers(0, 120),
    data=st.data(),
    labels=st.sampled_from([["a", "b"], ["a"], ["a", "b", "c"], ["a", "z"]]),
    window=st.one_of(st.integers(-3, 70), st.just(20)),
    metric=st.sampled_from(["sdd", "wass1", "demographic_parity_difference", "reference_w1"]),
    alpha=st.sampled_from([0.05, 0.1, 0.5, 0.0, 0.7]),
    threshold=st.sampled_from([1e-6, 0.05, 0.3, 0.0, float("nan")]),
    seed=st.integers(0, 2**16),
)
def test_monitor_right_answer_or_clear_error(
    n, data, labels, window, metric, alpha, threshold, seed
):
    scores = data.draw(st.lists(SCORE, min_size=n, max_size=n))
    groups = data.draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n))
    rng = np.random.default_rng(seed)
    reference = rng.uniform(size=60)
    reference_sensitive_features = np.tile(["a", "b", "c"], 20)
    try:
        monitor = FairnessMonitor(
            reference,
            reference_sensitive_features,
            metric=metric,
            window=window,
            threshold=threshold,
            alpha=alpha,
            n_bootstrap=10,
            n_permutations=40,
            random_state=seed,
        )
        results = monitor.update(scores, groups)
    except ValueError as exc:
        assert _ours(str(exc)), str(exc)
        return
    assert all(0 <= s <= 1 for s in scores)
    for r in results:
        assert math.isfinite(r.value) and r.low <= r.high
        assert 0 < r.p_value <= 1
        assert r.alert == (r.low > threshold and r.p_value <= alpha)


def _time_cells(kind, n, rng):
    minutes = rng.permutation(n)
    if kind == "numbers":
        return [int(m) for m in minutes]
    if kind == "naive":
        return [f"2026-03-01T{m // 60:02d}:{m % 60:02d}:00" for m in minutes]
    zones = ["+00:00", "+05:30", "-08:00"]
    cells = [f"2026-03-01T{m // 60:02d}:{m % 60:02d}:00{zones[m % 3]}" for m in minutes]
    if kind == "mixed" and n:
        cells[rng.integers(n)] = "2026-03-01T00:00:00"
    if kind == "garbage" and n:
        cells[rng.integers(n)] = "yesterday-ish"
    return cells


@given(
    n=st.integers(0, 90),
    kind=st.sampled_from(["numbers", "naive", "aware", "mixed", "garbage"]),
    window=st.sampled_from(["20", "25", "5", "0"]),
    every=st.sampled_from([None, None, "10min", "1h", "1D", "7X", "0h"]),
    metric=st.sampled_from(["sdd", "demographic_parity_difference", "reference_w1"]),
    one_group=st.booleans(),
    nan_at=st.one_of(st.none(), st.integers(0, 89)),
    seed=st.integers(0, 2**16),
)
def test_cli_monitor_never_tracebacks(
    tmp_path_factory, n, kind, window, every, metric, one_group, nan_at, seed
):
    rng = np.random.default_rng(seed)
    times = _time_cells(kind, n, rng)
    scores = [f"{v:.4f}" for v in rng.uniform(size=n)]
    if nan_at is not None and nan_at < n:
        scores[nan_at] = "NaN"
    groups = ["a"] * n if one_group else list(rng.choice(["a", "b"], n))
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["t", "s", "g"])
    writer.writerows(zip(times, scores, groups, strict=True))
    path = tmp_path_factory.mktemp("fuzz") / "stream.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    args = ["monitor", "--data", str(path), "--time", "t", "--score", "s", "--sensitive", "g"]
    args += ["--window", window] if every is None else [f"--every={every}"]
    args += ["--metric", metric, "--n-bootstrap", "10"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    message = err.getvalue()
    assert "Traceback" not in message
    assert code in (0, 2), message
    if code == 2:
        assert message.count("\n") == 1 and message.startswith("fairot "), message
    if kind == "mixed" and code == 2 and every is None and n >= 2 * int(window) > 0:
        assert "--time" in message or "NaN" in message or "group" in message, message
