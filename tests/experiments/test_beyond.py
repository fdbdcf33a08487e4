"""``fairot reproduce beyond-dp``: the study's quick run on German Credit (the full run is slow)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairot.datasets import load_baseline_split
from fairot.experiments import STUDIES, get_study
from fairot.experiments.beyond._figure import beyond_figure
from fairot.experiments.beyond._study import METHODS, METRICS, _metrics


@pytest.fixture(scope="module")
def quick_result():
    return get_study("beyond-dp")(quick=True, datasets=("German Credit",), progress=False)


def test_quick_run_on_german_credit(quick_result):
    assert "beyond-dp" in STUDIES
    runs = quick_result.tables["runs"]
    assert list(runs["method"]) == list(METHODS)
    values = runs[list(METRICS)].to_numpy()
    assert np.isfinite(values).all() and (values >= 0).all()
    # The logistic start, refitted here with scikit-learn alone: same test error.
    split = load_baseline_split("german-credit", random_state=0, include_sensitive=False)
    lr = LogisticRegression(max_iter=1000).fit(split.X_train, split.y_train)
    error = 1 - lr.score(split.X_test, split.y_test)
    assert float(runs.loc[runs["method"] == "LR", "Err-.5"].iloc[0]) == pytest.approx(error)
    summary = quick_result.tables["summary"]
    assert {"strong EO disparity mean", "strong EO disparity sd"} <= set(summary.columns)
    # quick: no check on Adult with the attributes in X
    assert "adult_attributes_in_x" not in quick_result.tables


def test_quick_run_draws_one_non_empty_panel_per_data_set_and_axis(quick_result):
    fig = quick_result.figures["beyond-dp"]
    axes = fig.get_axes()
    assert len(axes) == 2
    for ax in axes:
        # one error-bar container per method, each with its point
        assert len(ax.containers) == len(METHODS)
        assert ax.get_xlabel() and ax.get_ylabel() == "accuracy at 0.5 (test)"


def test_figure_has_a_panel_per_data_set_with_sd_bars():
    rows = []
    for dataset in ("A", "B", "C"):
        for i, method in enumerate(("LR", "COT (EO)")):
            row = {"dataset": dataset, "method": method}
            for metric in METRICS:
                row[f"{metric} mean"] = 0.1 * (i + 1)
                row[f"{metric} sd"] = 0.01
            rows.append(row)
    fig = beyond_figure(pd.DataFrame(rows))
    axes = fig.get_axes()
    assert len(axes) == 6
    assert [ax.get_title() for ax in axes[:3]] == ["A", "B", "C"]
    for ax in axes:
        assert len(ax.containers) == 2
        # accuracy = 1 - Err-.5 on the y axis
        point = ax.containers[1].lines[0].get_xydata()[0]
        assert point == pytest.approx([0.2, 0.8])


def test_randomised_decisions_have_their_expected_rates():
    rng = np.random.default_rng(3)
    n = 400
    y = rng.integers(0, 2, n)
    group = pd.Series(rng.choice(["a", "b", "c"], n), name="g")
    p = rng.random(n)
    got = _metrics(y, p, p, group.to_frame())
    # Oracle by hand: expected decisions are p, so each rate is a mean of p over its cell.
    assert got["Err-.5"] == pytest.approx(np.mean(np.where(y == 1, 1 - p, p)))
    rates = {
        (a, label): p[(group.to_numpy() == a) & (y == label)].mean()
        for a in "abc"
        for label in (0, 1)
    }
    gaps = [
        max(rates[(a, label)] for a in "abc") - min(rates[(a, label)] for a in "abc")
        for label in (0, 1)
    ]
    assert got["EO difference at .5"] == pytest.approx(max(gaps))
    pooled = {label: p[y == label].mean() for label in (0, 1)}
    strong = sum(abs(rates[key] - pooled[key[1]]) for key in rates)
    assert got["strong EO disparity"] == pytest.approx(strong)


def test_deterministic_decisions_read_as_randomised_ones_give_the_same_metrics():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 300)
    group = pd.DataFrame({"g": rng.integers(0, 2, 300)})
    decisions = (rng.random(300) < 0.4).astype(float)
    assert _metrics(y, decisions, decisions, group) == pytest.approx(
        _metrics(y, decisions, None, group)
    )


@pytest.mark.slow
def test_full_study_runs():
    result = get_study("beyond-dp")(quick=False, progress=False)
    assert len(result.tables["runs"]) == 3 * 3 * len(METHODS)
    assert len(result.tables["adult_attributes_in_x"]) == 3 * 2
