"""Quick runs of the regression paper's studies (the full runs are marked slow)."""

import numpy as np
import pytest

from fairot.experiments import STUDIES, get_study
from fairot.experiments.afr import run_afr_acs
from fairot.experiments.afr._acs import MSG_SOURCE

# Whole studies on small data: each runs a paper's pipeline end to end.
pytestmark = pytest.mark.integration

AFR = [
    "afr-simulation",
    "afr-multigroup",
    "afr-crime",
    "afr-acs",
    "afr-acs-folktables",
    "afr-classification",
]


def test_registered():
    for name in AFR:
        assert name in STUDIES
        assert callable(get_study(name))


def test_simulation_quick_meets_the_constraint_and_writes(tmp_path):
    result = get_study("afr-simulation")(quick=True, progress=False)
    path = result.curves["path"]
    assert set(path["p"]) == {"W1", "W2", "Winf"} and set(path["dgp"]) == {"DGP1", "DGP2"}
    assert path["max_grid_violation"].max() <= 1e-12
    # tau = 0 is strict parity on the grid; tau = 1 leaves two-group curves unchanged
    assert path.loc[path["tau"] == 0.0, "grid_gap"].max() <= 1e-12
    unchanged = result.tables["unchanged_ranks_winf"]
    assert np.allclose(unchanged.loc[unchanged["tau"] == 1.0, "unchanged_ranks"], 1.0)
    # the tighter the tolerance, the smaller the held-out gap, on average
    w2 = path[(path["p"] == "W2") & (path["dgp"] == "DGP1")].set_index("tau")
    assert w2.loc[0.0, "test_gap"] < w2.loc[0.5, "test_gap"] < w2.loc[1.0, "test_gap"]
    assert w2.loc[0.0, "mse"] > w2.loc[1.0, "mse"]
    out = result.write(tmp_path)
    assert (out / "results.md").exists() and (out / "path_dgp1.png").exists()


def test_multigroup_quick_both_costs():
    result = get_study("afr-multigroup")(quick=True, progress=False)
    table = result.tables["mse"].set_index("cost")
    assert set(table.index) == {"squared", "observed_squared"}
    assert (table["max grid violation"] <= 1e-10).all()
    assert (table["MSE tau=0"] > table["MSE tau=.5"]).all()
    assert (table["MSE tau=.5"] > table["MSE tau=1"]).all()


def test_crime_quick_gap_shrinks():
    result = get_study("afr-crime")(quick=True, progress=False)
    summary = result.tables["summary"]
    assert list(summary["K"]) == [2, 3]
    assert (summary["gap tau=0"] < 0.5 * summary["gap raw"]).all()


def test_acs_folktables_without_the_file_reports_expected_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIROT_DATA_HOME", str(tmp_path))
    result = get_study("afr-acs-folktables")(quick=True, progress=False)
    assert "not available" in result.notes
    assert "summary" in result.paper and not result.tables


def test_acs_source_is_checked():
    with pytest.raises(ValueError, match=MSG_SOURCE.split("{")[0]):
        run_afr_acs(source="census")


def test_acs_excerpts_quick_runs_offline(tmp_path, monkeypatch):
    # the shipped NIST excerpt: no file in the data home is needed
    monkeypatch.setenv("FAIROT_DATA_HOME", str(tmp_path))
    result = get_study("afr-acs")(quick=True, progress=False)
    summary = result.tables["summary"]
    keys = [tuple(r) for r in summary[["weights", "K", "p"]].to_numpy()]
    assert keys == [
        ("none", 2, "W1"),
        ("none", 2, "W2"),
        ("PWGTP", 2, "W1"),
        ("PWGTP", 2, "W2"),
        ("none", 3, "W2"),
        ("PWGTP", 3, "W2"),
    ]
    # 15,168 rows pass the paper's filter (tests/datasets); 40/30/30 of them, and of the
    # 13,791 White, Black or Asian ones
    assert summary["n aux/cal/test"].tolist()[:4] == ["6067/4550/4551"] * 4
    assert summary["n aux/cal/test"].tolist()[4:] == ["5516/4137/4138"] * 2
    assert (summary["max grid violation"] <= 1e-10).all()
    assert (summary["gap tau=0"] < 0.5 * summary["gap raw"]).all()
    assert (summary["R2 tau=0"] < summary["R2 raw"]).all()
    assert np.allclose(summary.loc[summary["K"] == 2, "tau mid"], 14 / 29)
    for _, row in summary.iterrows():
        curve = result.curves[f"K{row['K']}_{row['p']}_{row['weights']}"].set_index("tau")
        r2_zero, r2_mid = curve["r2"].iloc[0], curve["r2"].iloc[1]
        recovered = 100 * (r2_mid - r2_zero) / (row["R2 raw"] - r2_zero)
        assert row["R2 recovered at tau mid (%)"] == pytest.approx(recovered)
        assert set(curve["largest_pair"]) <= {
            "White-non-White",
            "Asian-Black",
            "Asian-White",
            "Black-White",
        }
    # K = 2 keeps the raw predictions at tau = 1 (the paper's identity convention, Section 6.1)
    k2 = result.curves["K2_W1_none"].set_index("tau")
    assert k2.loc[1.0, "r2"] == pytest.approx(summary.loc[0, "R2 raw"], abs=1e-12)
    # the weighted run is another fit, not the unweighted one relabelled
    assert summary.loc[0, "R2 raw"] != summary.loc[2, "R2 raw"]
    assert set(result.figures) == {"fig7_K2", "fig8_K3"}
    assert "Not the paper's sample" in result.notes and "notice" in result.config
    out = result.write(tmp_path / "out")
    assert (out / "fig7_K2.png").exists() and (out / "results.md").exists()


def test_classification_quick():
    result = get_study("afr-classification")(quick=True, progress=False)
    path = result.curves["path"]
    assert path["grid_gap"].iloc[0] <= 1e-12
    assert (path["grid_violation"] <= 1e-12).all()
    assert path["accuracy"].between(0.5, 1.0).all()


def _write_synthetic_pums(folder, n=3000, seed=0):
    """A PUMS person file in the real layout, with incomes that depend on the predictors."""
    rng = np.random.default_rng(seed)
    header = "RT,SERIALNO,ST,PWGTP,RAC1P,AGEP,COW,SCHL,MAR,OCCP,POBP,RELP,WKHP,SEX,PINCP"
    race = rng.choice([1, 2, 6, 8], size=n, p=[0.6, 0.1, 0.2, 0.1])
    age = rng.integers(19, 80, n)
    # race is not a predictor (paper §6.1): it acts through schooling, so that the raw gap
    # between groups stands well above sampling noise
    school = np.minimum(rng.integers(1, 15, n) + 10 * (race == 1), 24)
    hours = rng.integers(1, 80, n)
    income = np.exp(7 + 0.15 * school + 0.02 * hours + rng.normal(size=n))
    lines = [header]
    for i in range(n):
        lines.append(
            f"P,2018GQ{i:07d},06,10,{race[i]},{age[i]},{rng.integers(1, 9)},{school[i]},"
            f"{rng.integers(1, 6)},{rng.integers(10, 9900)},{rng.integers(1, 400)},"
            f"{rng.integers(0, 18)},{hours[i]},{rng.integers(1, 3)},{int(income[i]) + 1}"
        )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "psam_p06.csv").write_text("\n".join(lines) + "\n")


def test_acs_runs_where_the_file_is_present(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIROT_DATA_HOME", str(tmp_path))
    _write_synthetic_pums(tmp_path / "acs" / "2018" / "1-Year")
    result = get_study("afr-acs-folktables")(quick=True, progress=False)
    summary = result.tables["summary"]
    assert [tuple(r) for r in summary[["K", "p"]].to_numpy()] == [(2, "W1"), (2, "W2"), (3, "W2")]
    assert set(summary["weights"]) == {"none"}
    assert (summary["max grid violation"] <= 1e-10).all()
    assert (summary["gap tau=0"] < summary["gap raw"]).all()
    assert set(result.figures) == {"fig7_K2", "fig8_K3"}


@pytest.mark.slow
@pytest.mark.parametrize("name", AFR)
def test_full_studies(name, tmp_path):
    result = get_study(name)(quick=False, progress=False)
    result.write(tmp_path / name)
    if name == "afr-simulation":
        returns = result.tables["diminishing_returns"].set_index(["dgp", "p"])
        row = returns.loc[("DGP1", "W2")]
        assert 45 <= row["gap removed at tau=.5 (%)"] <= 55
        assert 20 <= row["MSE increase at .5 / at 0 (%)"] <= 30
        assert result.curves["path"]["max_grid_violation"].max() <= 1e-12
    if name == "afr-acs":
        # the paper (Section 6.2): about 61 % of the parity cost recovered at tau = 14/29 and the
        # K = 2 held-out gap cut by about 90 % at tau = 0; on the excerpt (docs/results.md) 64-66 %
        # and 88-93 % unweighted
        summary = result.tables["summary"].set_index(["weights", "K", "p"])
        for p in ("W1", "W2"):
            row = summary.loc[("none", 2, p)]
            assert 55 <= row["R2 recovered at tau mid (%)"] <= 75
            assert row["gap cut at tau=0 (%)"] >= 85
        assert summary.loc[("none", 3, "W2"), "largest pair raw"] == "Asian-Black"
        assert (summary["max grid violation"] <= 1e-12).all()
