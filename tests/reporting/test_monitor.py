"""FairnessMonitor: window metrics against independent oracles, alerts, and the closed loop on
the COT paper's drift design (a group's positive rate resampled; COT re-adjusted by partial_fit)."""

import json
import re

import numpy as np
import pytest
from fairlearn.metrics import demographic_parity_difference as fl_dpd
from scipy.stats import wasserstein_distance

from fairot.classification import COTClassifier
from fairot.metrics import strong_demographic_disparity, wass1
from fairot.reporting import FairnessMonitor, audit
from fairot.reporting._direction import MSG_FAVORABLE_OUTCOME
from fairot.reporting._monitor import (
    MSG_METRIC,
    MSG_NEEDS_XY,
    MSG_THRESHOLD,
    MSG_WINDOW,
    MSG_WINDOW_GROUPS,
)
from fairot.utils import escape_html, escape_markdown


def _stream(n, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], n)
    s = np.clip(rng.beta(2, 3, n) + shift * (g == "a"), 0, 1)
    return s, g


@pytest.mark.parametrize("metric", ["sdd", "wass1", "demographic_parity_difference"])
def test_window_values_match_oracles(metric):
    ref_s, ref_g = _stream(500, 0)
    monitor = FairnessMonitor(
        ref_s, ref_g, metric=metric, window=300, threshold=0.5, n_bootstrap=20
    )
    s, g = _stream(900, 1, shift=0.2)
    results = monitor.update(s, g)
    assert [r.index for r in results] == [0, 1, 2]
    oracle = {
        "sdd": lambda s, g: strong_demographic_disparity(None, s, sensitive_features=g),
        "wass1": lambda s, g: wass1(None, s, sensitive_features=g),
        "demographic_parity_difference": lambda s, g: fl_dpd(
            g, (s > 0.5).astype(int), sensitive_features=g
        ),
    }[metric]
    for r in results:
        rows = slice(r.start, r.stop)
        assert r.value == pytest.approx(oracle(s[rows], g[rows]), abs=1e-12)
    assert monitor.reference_value_ == pytest.approx(oracle(ref_s, ref_g), abs=1e-12)


def test_reference_w1_against_scipy():
    ref_s, ref_g = _stream(400, 0)
    monitor = FairnessMonitor(
        ref_s, ref_g, metric="reference_w1", window=250, threshold=0.5, n_bootstrap=20
    )
    s, g = _stream(250, 2, shift=0.1)
    (r,) = monitor.update(s, g)
    expected = sum(wasserstein_distance(s[g == k], ref_s[ref_g == k]) for k in ("a", "b"))
    assert r.value == pytest.approx(expected, abs=1e-12)


def test_windows_do_not_depend_on_how_the_stream_is_chunked():
    ref_s, ref_g = _stream(300, 0)
    s, g = _stream(1000, 3, shift=0.15)
    whole = FairnessMonitor(ref_s, ref_g, window=200, threshold=0.1, n_bootstrap=30)
    pieces = FairnessMonitor(ref_s, ref_g, window=200, threshold=0.1, n_bootstrap=30)
    whole.update(s, g)
    for cut in np.split(np.arange(1000), [7, 150, 151, 600, 999]):
        pieces.update(s[cut], g[cut])
    np.testing.assert_array_equal(whole.history_.to_numpy(), pieces.history_.to_numpy())
    assert pieces.n_seen_ == 1000


def test_alerts_only_where_the_band_is_above():
    ref_s, ref_g = _stream(600, 0)
    monitor = FairnessMonitor(ref_s, ref_g, window=500, threshold=0.08, n_bootstrap=100)
    fair = monitor.update(*_stream(1500, 4))
    unfair = monitor.update(*_stream(1500, 5, shift=0.3))
    assert not any(r.alert for r in fair)
    assert all(r.alert for r in unfair)
    for r in fair + unfair:
        assert r.low <= r.high and r.alert == (r.low > 0.08)
    fig = monitor.plot()
    assert fig.axes[0].get_ylabel() == "sdd"
    shown = monitor._repr_html_()
    # The reference window's table (header + one row), then the windows' (header + one each).
    assert "<svg" in shown and "Reference window" in shown
    assert shown.count("</tr>") == 2 + 1 + len(fair) + len(unfair)


def _draw(rng, n, rate_a, rate_b=0.5):
    """The drift design: group a's P(y=1) is set by resampling; the score's input follows y."""
    a = rng.integers(0, 2, n)
    y = (rng.uniform(size=n) < np.where(a == 1, rate_a, rate_b)).astype(int)
    x = rng.normal(1.5 * y, 1.0)
    return np.column_stack([x, a]), y, np.where(a == 1, "a", "b")


def test_closed_loop_readjusts_cot_after_each_change():
    rng = np.random.default_rng(0)
    threshold = 0.05
    X, y, g = _draw(rng, 4000, 0.5)
    model = COTClassifier(n_updates=1000, step_size=1e-3, random_state=0)
    model.fit(X, y, sensitive_features=g)
    alerts = []
    monitor = FairnessMonitor(
        model.predict_proba(X)[:, 1],
        g,
        window=2000,
        threshold=threshold,
        estimator=model,
        n_updates=3000,
        n_bootstrap=100,
        on_alert=lambda mon, result: alerts.append(result.index),
    )
    # As in the COT paper's sequence: the positive rate of one group falls, rises, falls.
    rates = (0.5, 0.2, 0.5, 0.2)
    windows_per_segment = 3
    for segment, rate in enumerate(rates):
        for _ in range(windows_per_segment):
            Xw, yw, gw = _draw(rng, 2000, rate)
            monitor.update(model.predict_proba(Xw)[:, 1], gw, X=Xw, y=yw)
        if segment > 0:
            # After the re-adjustment, SDD on a large fresh sample of the new data is back
            # under the threshold.
            Xt, _, gt = _draw(rng, 20000, rate)
            assert (
                strong_demographic_disparity(
                    None, model.predict_proba(Xt)[:, 1], sensitive_features=gt
                )
                < threshold
            )
    history = monitor.history_
    first_after_change = [windows_per_segment * s for s in range(1, len(rates))]
    # The alert fires within one window of each change, and re-adjusts the model there.
    assert set(first_after_change) <= set(alerts)
    assert history.loc[first_after_change, "readjusted"].all()
    # No alert before the first change.
    assert not history.loc[: windows_per_segment - 1, "alert"].any()


def test_validation():
    s, g = _stream(100, 0)
    with pytest.raises(ValueError, match=re.escape(MSG_METRIC.split("{")[0])):
        FairnessMonitor(s, g, metric="auc")
    with pytest.raises(ValueError, match=re.escape(MSG_WINDOW.split("{")[0])):
        FairnessMonitor(s, g, window=5)
    for bad in (0, -1, float("nan"), float("inf"), "x"):
        with pytest.raises(ValueError, match=re.escape(MSG_THRESHOLD.split("{")[0])):
            FairnessMonitor(s, g, threshold=bad)
    monitor = FairnessMonitor(s, g, window=50, estimator=COTClassifier())
    with pytest.raises(ValueError, match=re.escape(MSG_NEEDS_XY)):
        monitor.update(s, g)
    lonely = FairnessMonitor(s, g, window=50, n_bootstrap=10)
    with pytest.raises(ValueError, match=re.escape(MSG_WINDOW_GROUPS.split("{")[0])):
        lonely.update(s[:50], np.full(50, "a"))
    with pytest.raises(ValueError, match="not seen|unseen|Unseen"):
        lonely.update(s[:10], np.full(10, "z"))
    with pytest.raises(ValueError, match="scores"):
        lonely.update(s[:10] + 2, g[:10])


@pytest.mark.parametrize("bad", [2, -1, True, "0", 0.0, None])
def test_favorable_outcome_is_validated_as_in_audit(bad):
    s, g = _stream(100, 0)
    with pytest.raises(ValueError, match=re.escape(MSG_FAVORABLE_OUTCOME.format(value=bad))):
        FairnessMonitor(s, g, favorable_outcome=bad)
    with pytest.raises(ValueError, match=re.escape(MSG_FAVORABLE_OUTCOME.format(value=bad))):
        audit(None, s, sensitive_features=g, favorable_outcome=bad)


def test_dp_difference_by_hand_in_both_readings():
    # Three groups whose positive rates differ: the favourable rates 1 - r are another vector,
    # but max - min is the same, by hand here (NumPy on the decisions) in either reading.
    rng = np.random.default_rng(7)
    threshold = 0.4
    g = rng.choice(["a", "b", "c"], 1200)
    s = np.clip(rng.uniform(size=1200) + np.select([g == "a", g == "b"], [0.25, -0.1], 0), 0, 1)
    kept = {}
    for favorable in (1, 0):
        monitor = FairnessMonitor(
            s[:300],
            g[:300],
            metric="demographic_parity_difference",
            window=300,
            threshold=0.05,
            n_bootstrap=30,
            n_permutations=30,
            decision_threshold=threshold,
            favorable_outcome=favorable,
        )
        assert monitor.favorable_outcome == favorable
        results = monitor.update(s[300:], g[300:])
        assert len(results) == 3
        for r in results:
            rows = slice(300 + r.start, 300 + r.stop)
            favoured = s[rows] > threshold if favorable else s[rows] <= threshold
            rates = [favoured[g[rows] == k].mean() for k in "abc"]
            assert r.value == pytest.approx(max(rates) - min(rates), abs=1e-12)
        kept[favorable] = monitor.history_
    # Not the same rates (the data tell the readings apart), the same gaps, bands and p-values.
    first = slice(300, 600)
    positive = [np.mean(s[first][g[first] == k] > threshold) for k in "abc"]
    assert np.argmax(positive) != np.argmax([1 - r for r in positive])
    columns = ["value", "low", "high", "p_value", "alert"]
    np.testing.assert_array_equal(kept[1][columns].to_numpy(), kept[0][columns].to_numpy())


@pytest.mark.parametrize("favorable", [1, 0])
def test_every_output_states_the_direction(tmp_path, favorable):
    s, g = _stream(600, 0, shift=0.2)
    monitor = FairnessMonitor(
        s[:200],
        g[:200],
        window=200,
        n_bootstrap=20,
        decision_threshold=0.4,
        favorable_outcome=favorable,
    )
    monitor.update(s[200:], g[200:])
    which = "positive decision (score > 0.4)" if favorable else "negative decision (score <= 0.4)"
    line = f"favourable outcome: the {which}"
    assert monitor.direction == line
    folder = monitor.write(tmp_path / "out", title="sdd of risk")
    record = json.loads((folder / "monitor.json").read_text())
    assert record["settings"]["favorable_outcome"] == favorable
    assert record["settings"]["direction"] == line
    assert escape_markdown(line) in (folder / "monitor.md").read_text()
    assert escape_html(line) in (folder / "monitor.html").read_text()
    assert escape_html(line) in monitor._repr_html_()
    title = monitor.plot(title="sdd of risk").axes[0].get_title()
    assert title == f"sdd of risk\n{line}"
