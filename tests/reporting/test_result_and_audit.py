"""StudyResult serialises what it holds."""

import json

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from fairot.experiments import STUDIES, StudyResult, get_study


def test_study_result_write(tmp_path):
    fig = Figure()
    fig.subplots().plot([0, 1], [0, 1])
    table = pd.DataFrame(
        {"err": [0.1, np.nan], "wass1": [0.3, 0.02]}, index=pd.Index(["LR", "COT"], name="method")
    )
    result = StudyResult(
        "demo-study",
        tables={"adult": table},
        figures={"line": fig},
        paper={"adult": table * 2},
        notes="Some *notes*.",
        config={"seeds": np.int64(3), "inf": float("inf")},
    )
    out = result.write(tmp_path / "r")
    payload = json.loads((out / "results.json").read_text())
    assert payload["tables"]["adult"][0] == {"method": "LR", "err": 0.1, "wass1": 0.3}
    assert payload["tables"]["adult"][1]["err"] is None
    assert payload["config"] == {"seeds": 3, "inf": "inf"}
    md = (out / "results.md").read_text()
    assert "| method | err | wass1 |" in md and "Paper (adult)" in md and "![line]" in md
    assert (out / "line.png").stat().st_size > 0


def test_unknown_study():
    with pytest.raises(ValueError, match="unknown study"):
        get_study("nope")
    assert "cot-table1" in STUDIES
