"""The COT paper's studies in their quick form: structure and direction of the results."""

import numpy as np
import pytest

from fairot.experiments import STUDIES, get_study
from fairot.experiments.cot import (
    DRIFT_FEMALE_POSITIVE_RATES,
    resample_positive_rate,
    run_cot_batch_size,
    run_cot_drift,
    run_cot_duals,
    run_cot_table1,
    run_demo_comparison,
)

# Whole studies on small data: each runs a paper's pipeline end to end.
pytestmark = pytest.mark.integration


def test_studies_are_registered():
    for name in ("cot-table1", "cot-batch-size", "cot-drift", "cot-duals"):
        assert name in STUDIES
        assert callable(get_study(name))


def test_table1_quick(tmp_path):
    result = run_cot_table1(quick=True, progress=False)
    table = result.tables["table1"].set_index(["dataset", "method"])
    lr, cot, dot = (table.loc[("Adult", m)] for m in ("LR", "COT", "DOT"))
    to_bary = "Wass1 (test barycenter)"
    assert cot[to_bary] < 0.6 * lr[to_bary] and dot[to_bary] < 0.6 * lr[to_bary]
    # 2,000 updates move the groups towards each other faster than onto the fixed target.
    assert cot["Wass1"] < 0.6 * lr["Wass1"] and dot["Wass1"] < 0.8 * lr["Wass1"]
    assert table.loc[("Adult", "DPP"), "Wass1"] < 0.1
    assert set(table.index.get_level_values("dataset")) == {"Adult", "German Credit"}
    # Wass1 is to the fixed target at theta*; to any target it is at least the distance to the
    # test barycenter (the median minimises the sum of absolute deviations at every rank), which
    # for two groups is SDD.
    assert (table["Wass1"] >= table["Wass1 (test barycenter)"] - 1e-12).all()
    german = table.loc["German Credit"]
    np.testing.assert_allclose(german["Wass1 (test barycenter)"], german["SDD"], rtol=1e-10)
    out = result.write(tmp_path)
    assert (out / "results.json").exists() and (out / "adult_histograms.png").exists()


def test_resample_positive_rate_hits_the_rate():
    rng = np.random.default_rng(0)
    y = (rng.uniform(size=1000) < 0.3).astype(int)
    female = rng.uniform(size=1000) < 0.4
    rows = resample_positive_rate(y, female, 0.4, rng)
    assert abs(y[rows][female[rows]].mean() - 0.4) < 0.01
    np.testing.assert_array_equal(np.flatnonzero(~female), rows[~female[rows]])
    assert female[rows].sum() == female.sum()
    assert len(DRIFT_FEMALE_POSITIVE_RATES) == 20


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_drift_quick():
    result = run_cot_drift(quick=True, progress=False)
    curve = result.curves["wass1"]
    assert set(curve["method"]) == {"COT", "DOT"}
    assert curve.groupby("method")["update"].max().tolist() == [2000, 2000]
    assert {"figure3", "figure4"} <= set(result.figures)


def test_batch_size_quick():
    result = run_cot_batch_size(quick=True, progress=False)
    table = result.tables["batch_size"]
    assert set(table["batch_size"]) == {0, 10, 50}
    assert np.isfinite(table["Wass1"]).all()


def test_duals_quick():
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    open_before = plt.get_fignums()
    result = run_cot_duals(quick=True)
    # Figures are plain Figure objects: nothing is left open in pyplot's registry.
    assert all(isinstance(fig, Figure) for fig in result.figures.values())
    assert plt.get_fignums() == open_before
    table = result.tables["dual_value"]
    free = table[~table["constrained"]]["dual value"].to_numpy()
    # Closer to W1 as lambda decreases (the quick run is too short for lambda = .03 to converge).
    assert free[0] < free[1] < free[2]
    assert abs(free[2] - table["exact W1 (scipy)"].iloc[0]) < 0.2


def test_demo_comparison_small(tmp_path):
    result = run_demo_comparison(n_updates=500, progress=False)
    table = result.tables["adult"].set_index("method")
    assert list(table.index) == ["LR", "DOT", "DPP", "COT"]
    assert table.loc["DPP", "Wass1"] < 0.1 < table.loc["LR", "Wass1"]
    result.write(tmp_path)
    assert (tmp_path / "histograms.png").exists()
