import pandas as pd
from matplotlib.figure import Figure

from fairot.experiments import get_study
from fairot.experiments.mbn import METHOD_LABELS, run_mbn_synthetic


def test_quick_study_has_every_scenario_and_writes(tmp_path):
    assert get_study("mbn-synthetic") is run_mbn_synthetic
    result = run_mbn_synthetic(quick=True, progress=False)
    table = result.tables["accuracy"]
    assert set(table["scenario"]) == {"representation", "noise", "mixed"}
    assert set(table["method"]) == set(result.config["methods"]) <= set(METHOD_LABELS)
    runs = result.tables["runs"]
    # the summary is the mean of the runs (one seed here)
    merged = table.merge(runs, on=["scenario", "method"], suffixes=("", "_run"))
    pd.testing.assert_series_equal(merged["ser"], merged["ser_run"], check_names=False, atol=1e-3)
    assert ((table["ser"] >= 1.0) & (table["mean"] > 25.0)).all()
    margins = result.tables["margins"]
    assert (margins["method"] == "mbn-soft").all() and (margins["final_margin_g0"] == 0.0).all()
    traj = result.curves["trajectories"]
    assert {"step", "margin_1", "bias_1", "scenario", "method"} <= set(traj.columns)
    assert all(isinstance(f, Figure) for f in result.figures.values())
    assert {"margins", "skewness"} <= set(result.figures)
    assert "representation" in result.notes
    out = result.write(tmp_path / "mbn")
    assert (out / "results.json").exists() and (out / "margins.png").exists()
