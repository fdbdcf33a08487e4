"""The frontier study (issue 22): its metrics against hand computations, its quick run, the CLI."""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss, roc_auc_score

from fairot.experiments import STUDIES, get_study
from fairot.experiments.frontier import (
    BUDGETS,
    FAMILIES,
    LIMIT,
    distance_to_limit,
    four_fifths,
    frontier_at,
    point_metrics,
    unaware_split,
)
from fairot.experiments.frontier._study import MSG_FAMILIES, MSG_OVERRIDES, QUICK


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


def test_point_metrics_rate_disparities_equal_fairlearns():
    from fairlearn.metrics import (
        MetricFrame,
        demographic_parity_difference,
        demographic_parity_ratio,
        equalized_odds_difference,
        true_positive_rate,
    )

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    groups = rng.choice(["a", "b", "c"], 300)
    s = np.clip(0.3 * y + 0.2 * (groups == "a") + rng.uniform(0, 0.6, 300), 0, 1)
    m = point_metrics(_Split(y, groups), s)
    decided = (s > 0.5).astype(int)
    assert m["dp_difference"] == pytest.approx(
        demographic_parity_difference(y, decided, sensitive_features=groups)
    )
    assert m["dp_ratio"] == pytest.approx(
        demographic_parity_ratio(y, decided, sensitive_features=groups)
    )
    assert m["equalized_odds_difference"] == pytest.approx(
        equalized_odds_difference(y, decided, sensitive_features=groups)
    )
    tpr = MetricFrame(
        metrics=true_positive_rate, y_true=y, y_pred=decided, sensitive_features=groups
    )
    assert m["eo_difference"] == pytest.approx(tpr.difference())


def test_point_metrics_rate_disparities_of_a_randomised_classifier_by_hand():
    y = [1, 0, 1, 0, 1, 0]
    groups = ["a", "a", "a", "b", "b", "b"]
    p = np.array([0.9, 0.2, 0.6, 0.5, 0.3, 0.0])
    m = point_metrics(_Split(y, groups), p, p)
    # expected TPR: a (0.9 + 0.6) / 2, b 0.3; FPR: a 0.2, b (0.5 + 0.0) / 2
    assert m["eo_difference"] == pytest.approx(0.75 - 0.3)
    assert m["equalized_odds_difference"] == pytest.approx(max(0.45, 0.25 - 0.2))
    assert m["dp_ratio"] == pytest.approx((0.8 / 3) / (1.7 / 3))


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


def test_frontier_of_a_criterion_selects_by_its_own_disparity():
    points = pd.DataFrame(
        {
            "dataset": ["D"] * 4,
            "method": ["M", "M", "M", "N"],
            "criterion": ["equal_opportunity"] * 3 + ["demographic_parity"],
            "seed": [0, 0, 0, 0],
            "dp_difference": [0.30, 0.01, 0.01, 0.0],
            "eo_difference": [0.01, 0.05, 0.2, 0.0],
            "accuracy": [0.70, 0.80, 0.90, 0.99],
        }
    )
    table = frontier_at(points, budgets=(0.02, 0.06), criterion="equal_opportunity")
    assert list(table["method"]) == ["M"]  # N is fitted for demographic parity
    assert list(table.columns[2:]) == ["acc@EO≤0.02", "acc@EO≤0.06"]
    assert table.iloc[0, 2:].tolist() == pytest.approx([0.70, 0.80])
    dp = frontier_at(points, budgets=(0.02,))
    assert list(dp["method"]) == ["N"]


def test_distance_to_limit_subtracts_the_boosted_frontier_of_the_same_data_set():
    frontier = pd.DataFrame(
        {
            "dataset": ["D", "D", "E", "E"],
            "method": [LIMIT, "M", "M", LIMIT],
            "acc@DP≤0.02": [0.80, 0.75, 0.60, np.nan],
            "acc@DP≤0.1": [0.85, 0.86, 0.70, 0.72],
        }
    )
    table = distance_to_limit(frontier)
    assert list(table["method"]) == ["M", "M"] and list(table["dataset"]) == ["D", "E"]
    np.testing.assert_allclose(table["acc@DP≤0.02"], [-0.05, np.nan])
    np.testing.assert_allclose(table["acc@DP≤0.1"], [0.01, -0.02])


def test_four_fifths_table_counts_the_seeds_that_pass():
    points = pd.DataFrame(
        {
            "dataset": ["D"] * 4,
            "method": ["M", "M", "M", "M"],
            "criterion": ["demographic_parity_ratio"] * 3 + ["demographic_parity"],
            "knob": ["min_ratio"] * 3 + ["max_difference"],
            "value": [0.8, 0.8, 0.8, 0.1],
            "seed": [0, 1, 2, 0],
            "dp_ratio": [0.85, 0.79, 0.9, 0.1],
            "accuracy": [0.7, 0.8, 0.9, 0.99],
        }
    )
    row = four_fifths(points).iloc[0]
    assert row["accuracy"] == pytest.approx(0.8)
    assert row["dp_ratio"] == pytest.approx((0.85 + 0.79 + 0.9) / 3)
    assert row["lowest_dp_ratio"] == pytest.approx(0.79)
    assert (row["seeds_passing"], row["n_seeds"]) == (2, 3)


@pytest.mark.parametrize("families", [(), ["cot"], "nope", [1]])
def test_frontier_rejects_unknown_families(families):
    message = MSG_FAMILIES.format(allowed=FAMILIES, value=families)
    with pytest.raises(ValueError, match=re.escape(message)):
        get_study("frontier")(quick=True, progress=False, families=families)


@pytest.mark.parametrize("overrides", [{"nope": 1}, ["max_train"]])
def test_frontier_rejects_unknown_overrides(overrides):
    message = MSG_OVERRIDES.format(allowed=sorted(QUICK), value=overrides)
    with pytest.raises(ValueError, match=re.escape(message)):
        get_study("frontier")(quick=True, progress=False, overrides=overrides)


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
        "Rate-constrained (logistic)",
        LIMIT,
    } <= methods
    points = result.curves["points"]
    metrics = ["accuracy", "auc", "log_loss", "dp_difference", "dp_ratio", "eo_difference"]
    metrics += ["equalized_odds_difference", "wass1", "sdd"]
    assert points[metrics].notna().all().all()
    assert points["accuracy"].between(0, 1).all()
    with_attribute = set(points.loc[points["attribute_at_prediction"], "method"])
    assert with_attribute == {"DPP", "ThresholdOptimizer"}
    assert list(result.figures) == ["frontier-german-credit"]
    assert [f"acc@DP≤{b:g}" for b in BUDGETS] == list(result.tables["frontier"].columns[2:])
    # the other criteria: ExponentiatedGradient and the logistic rule, each under its own
    for criterion, axis in [("equal-opportunity", "EO"), ("equalized-odds", "EqOdds")]:
        table = result.tables[f"frontier-{criterion}"]
        assert list(table["method"]) == ["ExponentiatedGradient", "Rate-constrained (logistic)"]
        assert [f"acc@{axis}≤{b:g}" for b in BUDGETS] == list(table.columns[2:])
    ratio = result.tables["four-fifths"]
    assert list(ratio["method"]) == ["ExponentiatedGradient", "Rate-constrained (logistic)", LIMIT]
    assert list(ratio["knob"]) == ["ratio_bound", "min_ratio", "min_ratio"]
    assert LIMIT not in set(result.tables["distance-to-limit"]["method"])
    assert "Quick run" in result.config["notice"]


def test_rate_points_trace_the_budgets_from_one_fit_and_decide_as_the_classifier():
    from sklearn.linear_model import LogisticRegression

    from fairot.classification import RateConstrainedClassifier
    from fairot.experiments.frontier._methods import rate_points

    split = unaware_split("german-credit", 0, max_train=300, max_test=200)
    points = rate_points(split, seed=0, kind="logistic", budgets=[0.02, 0.1], min_ratios=[0.8])
    assert [(p["knob"], p["value"]) for p in points] == [
        ("max_difference", 0.02),
        ("max_difference", 0.1),
        ("min_ratio", 0.8),
    ]
    # an independent fit at the point's own budget decides the same on the test rows
    clf = RateConstrainedClassifier(
        estimator=LogisticRegression(max_iter=1000), max_difference=0.02, random_state=0
    ).fit(split.X_train, split.y_train, sensitive_features=split.sensitive_train)
    X = split.X_test
    expected = point_metrics(
        split,
        clf.predict_proba(X)[:, 1],
        clf.predict(X).astype(float),
        ranking=clf.decision_function(X),
        probabilities=clf.base_scores(X),
    )
    assert points[0]["accuracy"] == pytest.approx(expected["accuracy"])
    assert points[0]["dp_difference"] == pytest.approx(expected["dp_difference"])
    assert points[0]["auc"] == pytest.approx(roc_auc_score(split.y_test, clf.decision_function(X)))
    assert points[0]["log_loss"] == pytest.approx(
        log_loss(split.y_test, np.clip(clf.base_scores(X), 1e-6, 1 - 1e-6))
    )
    assert points[0]["sdd"] == pytest.approx(expected["sdd"])


@pytest.mark.parametrize("kind", ["logistic", "boosted"])
def test_rate_points_are_deterministic_for_a_seed(kind):
    from fairot.experiments.frontier._methods import rate_points

    split = unaware_split("german-credit", 1, max_train=200, max_test=100)
    first, again = (
        pd.DataFrame(rate_points(split, seed=1, kind=kind, budgets=[0.05], cv=2)) for _ in range(2)
    )
    pd.testing.assert_frame_equal(first, again)


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
