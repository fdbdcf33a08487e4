"""The bias-audit table of New York City Local Law 144: its worked examples, by hand."""

import math

import numpy as np
import pandas as pd
import pytest

from fairot.reporting import audit


def test_ll144_worked_example():
    # Selection: sex x race, 150 applicants. M-Z (2 rows, 1.3%) and race Z are under 2%.
    cells = {
        ("F", "X"): (40, 20),
        ("F", "Y"): (30, 9),
        ("M", "X"): (50, 30),
        ("M", "Y"): (28, 14),
        ("M", "Z"): (2, 1),
    }
    s, sex, race = [], [], []
    for (a, b), (n, k) in cells.items():
        s += [0.9] * k + [0.1] * (n - k)
        sex += [a] * n
        race += [b] * n
    sf = pd.DataFrame({"sex": sex, "race": race})
    result = audit(None, np.array(s), sf, plots=False, n_bootstrap=0, standards=("ll144",),
                   min_group_size=1)  # fmt: skip
    table = result.verdicts[0].table
    expected = {  # category: (n, selected, selection rate, impact ratio or NaN)
        "sex=F": (70, 29, 29 / 70, (29 / 70) / (45 / 80)),  # 0.7365
        "sex=M": (80, 45, 45 / 80, 1.0),
        "race=X": (90, 50, 50 / 90, 1.0),
        "race=Y": (58, 23, 23 / 58, (23 / 58) / (50 / 90)),  # 0.7138
        "race=Z": (2, 1, 0.5, math.nan),
        "sex=F, race=X": (40, 20, 0.5, 0.5 / 0.6),
        "sex=F, race=Y": (30, 9, 0.3, 0.5),
        "sex=M, race=X": (50, 30, 0.6, 1.0),
        "sex=M, race=Y": (28, 14, 0.5, 0.5 / 0.6),
        "sex=M, race=Z": (2, 1, 0.5, math.nan),
    }
    assert set(table.index) == set(expected)
    for name, (n, k, rate, ratio) in expected.items():
        row = table.loc[name]
        assert (row["n"], row["selected"]) == (n, k)
        assert row["selection_rate"] == pytest.approx(rate)
        if math.isnan(ratio):
            assert math.isnan(row["impact_ratio"]) and "under 2%" in row["note"]
        else:
            assert row["impact_ratio"] == pytest.approx(ratio) and row["note"] == ""
    assert table.loc["sex=F", "impact_ratio"] == pytest.approx(0.736508, abs=1e-6)
    assert result.verdicts[0].passed is None


def test_ll144_scoring_rate_worked_example():
    # Median of the 10 scores: (0.35 + 0.4) / 2 = 0.375. Above it: F 3 of 4, M 2 of 6.
    f = [0.2, 0.4, 0.6, 0.9]
    m = [0.3, 0.35, 0.7, 0.8, 0.1, 0.15]
    result = audit(None, np.array(f + m), np.array(["F"] * 4 + ["M"] * 6), plots=False,
                   n_bootstrap=0, standards=("ll144",), min_group_size=1)  # fmt: skip
    table = result.verdicts[0].table
    assert table.loc["group=F", "scoring_rate"] == 0.75
    row_m = table.loc["group=M"]
    assert row_m["above_median"] == 2 and row_m["scoring_rate"] == pytest.approx(1 / 3)
    assert row_m["scoring_impact_ratio"] == pytest.approx((1 / 3) / 0.75)  # 0.4444
