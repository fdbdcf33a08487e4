"""``fairot reproduce torch-adult --quick``: structure and direction of the results."""

import pytest

from fairot.experiments import STUDIES, get_study
from fairot.experiments.cot import run_torch_adult

# Whole studies on small data: each runs a paper's pipeline end to end.
pytestmark = pytest.mark.integration


def test_torch_adult_quick(tmp_path):
    assert callable(get_study("torch-adult")) and "torch-adult" in STUDIES
    result = run_torch_adult(quick=True, progress=False)
    table = result.tables["table"].set_index(["dataset", "method"])
    mlp, fair = (
        table.loc[("German Credit", "MLP")],
        table.loc[("German Credit", "MLP+penalty (lam=10)")],
    )
    assert fair["Wass1 to target"] < mlp["Wass1 to target"]
    assert set(result.tables["frontier"]["lam"]) == {0.0, 10.0}
    out = result.write(tmp_path)
    assert (out / "results.json").exists() and (out / "frontier.png").exists()
