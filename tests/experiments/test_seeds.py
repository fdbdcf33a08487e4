"""Summaries over seeds: scipy's t intervals and paired t tests, and what one seed means."""

import numpy as np
import pandas as pd
from scipy import stats

from fairot.experiments._seeds import CONFIDENCE, mean_and_sd, paired_differences, seed_intervals


def _scipy_interval(values):
    values = np.asarray(values, dtype=float)
    return stats.t.interval(CONFIDENCE, len(values) - 1, loc=values.mean(), scale=stats.sem(values))


def test_seed_intervals_match_scipy_t_interval():
    rng = np.random.default_rng(0)
    sizes = {"a": 2, "b": 5, "c": 12}
    runs = pd.DataFrame(
        [
            {"key": key, "x": rng.normal(3, 2), "y": rng.exponential()}
            for key, n in sizes.items()
            for _ in range(n)
        ]
    )
    table = seed_intervals(runs, ["key"], ["x", "y"]).set_index("key")
    for key, part in runs.groupby("key"):
        assert table.loc[key, "n_seeds"] == sizes[key]
        for col in ("x", "y"):
            lo, hi = _scipy_interval(part[col])
            np.testing.assert_allclose(table.loc[key, col], part[col].mean(), rtol=1e-12)
            np.testing.assert_allclose(
                table.loc[key, [f"{col}_lo", f"{col}_hi"]].to_numpy(float), [lo, hi], rtol=1e-12
            )


def test_one_seed_has_no_interval():
    table = seed_intervals(pd.DataFrame({"key": ["a"], "x": [1.5]}), ["key"], ["x"])
    assert table.loc[0, "x"] == 1.5 and table.loc[0, "n_seeds"] == 1
    assert np.isnan(table.loc[0, "x_lo"]) and np.isnan(table.loc[0, "x_hi"])


def test_paired_differences_match_ttest_rel():
    rng = np.random.default_rng(1)
    rows = []
    for scenario, effect in (("s1", 0.5), ("s2", 0.0)):
        for seed in range(8):
            common = rng.normal(0, 3)  # the seed's draw, shared by both methods
            for method, shift in (("treated", effect), ("control", 0.0)):
                rows.append(
                    {
                        "scenario": scenario,
                        "seed": seed,
                        "method": method,
                        "ser": common + shift + rng.normal(0, 0.2),
                    }
                )
    # pairing must follow the seed, not the row order
    runs = pd.DataFrame(rows).sample(frac=1.0, random_state=2)
    paired = paired_differences(runs, ["scenario"], "method", [("treated", "control")], ["ser"])
    assert len(paired) == 2
    for _, row in paired.iterrows():
        part = runs[runs["scenario"] == row["scenario"]]
        a = part[part["method"] == "treated"].sort_values("seed")["ser"].to_numpy()
        b = part[part["method"] == "control"].sort_values("seed")["ser"].to_numpy()
        lo, hi = _scipy_interval(a - b)
        np.testing.assert_allclose(row["difference"], (a - b).mean(), rtol=1e-12)
        np.testing.assert_allclose([row["ci_lo"], row["ci_hi"]], [lo, hi], rtol=1e-12)
        np.testing.assert_allclose(row["p_value"], stats.ttest_rel(a, b).pvalue, rtol=1e-10)
        assert row["n_seeds"] == 8
    # the shared seed effect (sd 3) would swamp an unpaired interval; paired, 0.5 is detected
    s1 = paired.set_index("scenario").loc["s1"]
    assert s1["ci_lo"] > 0


def test_paired_constant_difference():
    runs = pd.DataFrame(
        {
            "scenario": "s",
            "seed": [0, 1, 2, 0, 1, 2],
            "method": ["t"] * 3 + ["c"] * 3,
            "ser": [2.0, 3.0, 4.0, 1.5, 2.5, 3.5],
        }
    )
    row = paired_differences(runs, ["scenario"], "method", [("t", "c")], ["ser"]).iloc[0]
    assert (row["difference"], row["ci_lo"], row["ci_hi"], row["p_value"]) == (0.5, 0.5, 0.5, 0.0)


def test_infinite_difference_has_no_interval():
    runs = pd.DataFrame(
        {
            "scenario": "s",
            "seed": [0, 1, 2, 0, 1, 2],
            "method": ["t"] * 3 + ["c"] * 3,
            "ser": [np.inf, 3.0, 4.0, 1.5, 2.5, 3.5],
        }
    )
    with np.errstate(invalid="ignore"):
        row = paired_differences(runs, ["scenario"], "method", [("t", "c")], ["ser"]).iloc[0]
    assert row["difference"] == np.inf and np.isnan(row["ci_lo"]) and np.isnan(row["ci_hi"])


def test_mean_and_sd_is_the_population_sd_over_seeds():
    rows = pd.DataFrame({"method": ["a", "a", "b"], "err": [0.1, 0.3, 0.5], "w": [1.0, 2.0, 3.0]})
    table = mean_and_sd(rows, ["method"], ["err", "w"], sd_of=["err"]).set_index("method")
    assert list(table.columns) == ["err", "w", "err sd", "seeds"]
    np.testing.assert_allclose(table.loc["a", ["err", "err sd"]].to_numpy(float), [0.2, 0.1])
    assert table.loc["b", "err sd"] == 0.0 and table.loc["b", "seeds"] == 1
