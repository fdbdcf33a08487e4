"""``fairot reproduce beyond-dp``: the study's quick run on German Credit (the full run is slow)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from fairot.datasets import load_baseline_split
from fairot.experiments import STUDIES, get_study
from fairot.experiments.beyond._study import METHODS


def test_quick_run_on_german_credit():
    assert "beyond-dp" in STUDIES
    result = get_study("beyond-dp")(quick=True, datasets=("German Credit",), progress=False)
    runs = result.tables["runs"]
    assert list(runs["method"]) == list(METHODS)
    values = runs[["Err-.5", "EO difference at .5", "strong EO disparity"]].to_numpy()
    assert np.isfinite(values).all() and (values >= 0).all()
    # The logistic start, refitted here with scikit-learn alone: same test error.
    split = load_baseline_split("german-credit", random_state=0, include_sensitive=False)
    lr = LogisticRegression(max_iter=1000).fit(split.X_train, split.y_train)
    error = 1 - lr.score(split.X_test, split.y_test)
    assert float(runs.loc[runs["method"] == "LR", "Err-.5"].iloc[0]) == pytest.approx(error)
    summary = result.tables["summary"]
    assert "strong EO disparity mean" in summary.columns


@pytest.mark.slow
def test_full_study_runs():
    result = get_study("beyond-dp")(quick=False, progress=False)
    assert len(result.tables["runs"]) == 3 * 3 * len(METHODS)
