"""The frontier study (issue 22): its metrics against hand computations, its quick run, the CLI."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss, roc_auc_score

from fairot.experiments import STUDIES, get_study
from fairot.experiments.frontier import BUDGETS, frontier_at, point_metrics, unaware_split


class _Split:
    def __init__(self, y, groups):
        self.y_test = np.asarray(y)
        self.sensitive_test = pd.DataFrame({"g": groups})
        self.group_mode = "intersection"


def test_point_metrics_of_a_randomised_classifier_are_expected_values():
    y = [1, 0, 1, 0, 1, 0]
    groups = ["a", "a", "a", "b", "b", "b"]
    p = np.array([0.9, 0.2, 0.6, 0.5, 0.3, 0.0])
    m = point_metrics(_Split(y, groups), p, p)
    # by hand: P(correct) = p where y = 1, 1 - p where y = 0
    assert m["accuracy"] == pytest.approx((0.9 + 0.8 + 0.6 + 0.5 + 0.3 + 1.0) / 6)
    # selection rates: a = (0.9 + 0.2 + 0.6) / 3, b = (0.5 + 0.3 + 0.0) / 3
    assert m["dp_difference"] == pytest.approx(1.7 / 3 - 0.8 / 3)
    assert m["auc"] == pytest.approx(roc_auc_score(y, p))
    assert m["log_loss"] == pytest.approx(log_loss(y, np.clip(p, 1e-6, 1 - 1e-6)))


def test_point_metrics_of_a_deterministic_classifier_threshold_at_one_half():
    y = [1, 0, 1, 0]
    s = np.array([0.7, 0.6, 0.4, 0.1])
    m = point_metrics(_Split(y, ["a", "a", "b", "b"]), s)
    assert m["accuracy"] == pytest.approx(0.5)  # 0.7 right, 0.6 wrong, 0.4 wrong, 0.1 right
    assert m["dp_difference"] == pytest.approx(1.0)  # a selects both, b none


def test_frontier_takes_the_best_accuracy_within_each_budget_then_averages_seeds():
    points = pd.DataFrame(
        {
            "dataset": ["D"] * 5,
            "method": ["M"] * 5,
            "seed": [0, 0, 0, 1, 1],
            "dp_difference": [0.01, 0.05, 0.09, 0.03, 0.2],
            "accuracy": [0.70, 0.80, 0.75, 0.72, 0.90],
        }
    )
    table = frontier_at(points, budgets=(0.02, 0.06, 0.1))
    row = table.iloc[0]
    assert np.isnan(row["acc@DP≤0.02"])  # seed 1 has no point within .02
    assert row["acc@DP≤0.06"] == pytest.approx((0.80 + 0.72) / 2)
    assert row["acc@DP≤0.1"] == pytest.approx((0.80 + 0.72) / 2)


def test_unaware_split_removes_the_attribute_columns():
    split = unaware_split("german-credit", 0, max_train=200, max_test=100)
    assert split.removed == ["age"]
    assert list(split.sensitive_train.columns) == ["age_group"]
    assert split.X_train.shape[0] == pytest.approx(200, abs=5)
    # both labels in each group of the subsample (its strata are label x group)
    for group in ("<30", ">=30"):
        assert set(split.y_train[split.sensitive_train["age_group"] == group]) == {0, 1}


def test_quick_frontier_run_has_every_method_and_a_figure():
    assert "frontier" in STUDIES
    result = get_study("frontier")(quick=True, progress=False)
    methods = set(result.tables["points"]["method"])
    assert {
        "LR (unaware)",
        "DPP",
        "COT",
        "COT (paper)",
        "COT (tau)",
        "DOT",
        "DOT (paper)",
        "DOT (tau)",
        "ExponentiatedGradient",
        "GridSearch",
        "ThresholdOptimizer",
        "FairMLPClassifier",
    } <= methods
    points = result.curves["points"]
    assert points[["accuracy", "auc", "dp_difference", "wass1", "sdd"]].notna().all().all()
    assert points["accuracy"].between(0, 1).all()
    with_attribute = set(points.loc[points["attribute_at_prediction"], "method"])
    assert with_attribute == {"DPP", "ThresholdOptimizer"}
    assert list(result.figures) == ["frontier-german-credit"]
    assert [f"acc@DP≤{b:g}" for b in BUDGETS] == list(result.tables["frontier"].columns[2:])
    assert "Quick run" in result.config["notice"]


@pytest.mark.slow
def test_full_frontier_study_covers_the_three_data_sets():
    result = get_study("frontier")(progress=False)
    frontier = result.tables["frontier"]
    assert set(frontier["dataset"]) == {"Adult", "German Credit", "Communities & Crime"}
    assert len(result.figures) == 3
    assert (frontier["method"] == "ExponentiatedGradient").sum() == 3


@pytest.mark.parametrize("n_jobs", [0, -1, 1.5, True])
def test_frontier_rejects_a_bad_number_of_jobs(n_jobs):
    with pytest.raises(ValueError, match="n_jobs must be a positive integer"):
        get_study("frontier")(quick=True, progress=False, n_jobs=n_jobs)


@pytest.mark.slow  # four quick runs and a process pool: about 100 s on the shared machine
def test_frontier_points_do_not_depend_on_the_number_of_processes():
    # every (data set, seed) cell seeds all it uses, so spawned processes give the same points
    run = get_study("frontier")
    alone = run(quick=True, n_seeds=2, progress=False).curves["points"]
    shared = run(quick=True, n_seeds=2, progress=False, n_jobs=2).curves["points"]
    pd.testing.assert_frame_equal(alone, shared)
