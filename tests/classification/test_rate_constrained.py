"""RateConstrainedClassifier: the budget on the fitting rows, fairlearn's rates, the errors.

The oracles: fairlearn's ``demographic_parity_difference``, ``equal_opportunity_difference`` and
``equalized_odds_difference`` (and their ratios) of the decisions recomputed here from the
cross-fitted cell probabilities; the rule written out here from the cell codes.
"""

import pickle
import re

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    demographic_parity_difference,
    demographic_parity_ratio,
    equal_opportunity_difference,
    equal_opportunity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
)
from scipy.optimize import linprog
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import InvalidParameterError

from fairot.classification import RateConstrainedClassifier
from fairot.classification._rate_cells import (
    MSG_CONTROL_NEEDED,
    MSG_CONTROL_UNUSED,
    MSG_ONE_LABEL,
    MSG_PROBA_NAN,
)
from fairot.classification._rate_program import MSG_BUDGET, MSG_MAX_DIFFERENCE, MSG_MIN_RATIO
from fairot.utils.groups import MSG_ONE_GROUP
from tests.helpers import TrueCells as _TrueCells
from tests.helpers import hidden_groups as _data


def _cv_decisions(model, a, y):
    """The rule on the cross-fitted probabilities, written out from the cell codes."""
    P = model.cv_proba_
    n_groups = len(model.groups_)
    eta = P[:, 1::2].sum(axis=1)
    columns = {
        "demographic_parity": [[2 * g, 2 * g + 1] for g in range(n_groups)],
        "equal_opportunity": [[2 * g + 1] for g in range(n_groups)],
        "equalized_odds": [[2 * g + 1] for g in range(n_groups)]
        + [[2 * g] for g in range(n_groups)],
    }[model.constraint]
    q = np.column_stack([P[:, c].sum(axis=1) for c in columns])
    shares = q.mean(axis=0)
    s = 2 * eta - 1 - (q / shares) @ model.multipliers_
    return (s > 0).astype(int), s


CONSTRAINTS = ["demographic_parity", "equal_opportunity", "equalized_odds"]
FAIRLEARN = {
    ("demographic_parity", "difference"): lambda y, d, a: demographic_parity_difference(
        y, d, sensitive_features=a
    ),
    ("demographic_parity", "ratio"): lambda y, d, a: demographic_parity_ratio(
        y, d, sensitive_features=a
    ),
    ("equal_opportunity", "difference"): lambda y, d, a: equal_opportunity_difference(
        y, d, sensitive_features=a
    ),
    ("equal_opportunity", "ratio"): lambda y, d, a: equal_opportunity_ratio(
        y, d, sensitive_features=a
    ),
    ("equalized_odds", "difference"): lambda y, d, a: equalized_odds_difference(
        y, d, sensitive_features=a
    ),
    ("equalized_odds", "ratio"): lambda y, d, a: equalized_odds_ratio(y, d, sensitive_features=a),
}


@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("budget", [{"max_difference": 0.04}, {"min_ratio": 0.85}])
def test_the_budget_holds_on_the_fitting_rows(constraint, budget):
    X, y, a = _data(seed=1, n_groups=3)
    model = RateConstrainedClassifier(constraint=constraint, random_state=0, **budget)
    model.fit(X, y, sensitive_features=a)
    rates = model.rates_
    program = rates["program"].groupby(rates["family"])
    expected = rates["expected"].groupby(rates["family"])
    # The program's soft decisions: within the budget to solver precision.
    if "max_difference" in budget:
        assert (program.max() - program.min()).max() <= budget["max_difference"] + 1e-7
        # The deterministic rule: within a few rows (the tie set of the vertex) of it.
        assert model.expected_difference_ <= budget["max_difference"] + 8 * 3 / 500
    else:
        assert (program.min() / program.max()).min() >= budget["min_ratio"] - 1e-7
        assert model.expected_ratio_ >= budget["min_ratio"] - 8 * 3 / 500
    assert expected.size().min() >= 3
    # The empirical rates, from fairlearn on the decisions recomputed from cv_proba_.
    decisions, s = _cv_decisions(model, a, y)
    # A row of the vertex's tie set (|s| ~ 1e-17) may round either way here and in the model.
    ties = np.count_nonzero(np.abs(s) < 1e-9) / np.bincount(a).min()
    form = "difference" if "max_difference" in budget else "ratio"
    measured = model.cv_difference_ if form == "difference" else model.cv_ratio_
    oracle = FAIRLEARN.get((constraint, form))
    if oracle is not None:
        assert measured == pytest.approx(oracle(y, decisions, a), abs=1e-12 + 2 * ties)
    # The budget binds: the unconstrained rule of the same model breaks it.
    raw = (model.cv_proba_[:, 1::2].sum(axis=1) > 0.5).astype(int)
    if oracle is not None and form == "difference":
        assert oracle(y, raw, a) > budget["max_difference"]


def test_predictions_read_x_only_and_are_the_sign_of_the_score():
    X, y, a = _data()
    model = RateConstrainedClassifier(max_difference=0.02, random_state=0)
    model.fit(X, y, sensitive_features=a)
    s = model.decision_function(X)
    np.testing.assert_array_equal(model.predict(X), (s > 0).astype(int))
    proba = model.predict_proba(X)
    np.testing.assert_array_equal(proba.argmax(axis=1), model.predict(X))
    np.testing.assert_allclose(proba[:, 1], np.clip((1 + s) / 2, 0, 1))
    # s = 2 eta - 1 - sum_j mu_j q_j / Q_j, with the final model's cell probabilities.
    P = model.estimator_.predict_proba(X)
    q = np.column_stack([P[:, 0] + P[:, 1], P[:, 2] + P[:, 3]])
    np.testing.assert_allclose(
        s, 2 * (P[:, 1] + P[:, 3]) - 1 - (q / model.unit_shares_) @ model.multipliers_
    )
    np.testing.assert_allclose(model.base_scores(X), P[:, 1] + P[:, 3])


def test_deterministic_and_one_row_equals_the_batch():
    X, y, a = _data(seed=4)
    kwargs = {"constraint": "equalized_odds", "max_difference": 0.03, "random_state": 7}
    first = RateConstrainedClassifier(**kwargs).fit(X, y, sensitive_features=a)
    second = RateConstrainedClassifier(**kwargs).fit(X, y, sensitive_features=a)
    np.testing.assert_array_equal(first.multipliers_, second.multipliers_)
    np.testing.assert_array_equal(first.decision_function(X), second.decision_function(X))
    np.testing.assert_array_equal(first.predict(X), first.predict(X))
    batch = first.decision_function(X[:50])
    rows = np.array([first.decision_function(X[i : i + 1])[0] for i in range(50)])
    np.testing.assert_allclose(rows, batch, rtol=0, atol=1e-14)


def test_integer_weights_equal_repeated_rows():
    X, y, a = _data(n=600, seed=5)
    counts = np.random.default_rng(0).integers(1, 4, X.shape[0])
    # A model that ignores the weights' form: frozen, so only the program reads them.
    frozen = FrozenEstimator(
        LogisticRegression(max_iter=1000).fit(np.repeat(X, counts, 0), np.repeat(2 * a + y, counts))
    )
    weighted = RateConstrainedClassifier(estimator=frozen, max_difference=0.02).fit(
        X, y, sensitive_features=a, sample_weight=counts
    )
    repeated = RateConstrainedClassifier(estimator=frozen, max_difference=0.02).fit(
        np.repeat(X, counts, 0), np.repeat(y, counts), sensitive_features=np.repeat(a, counts)
    )
    np.testing.assert_allclose(weighted.multipliers_, repeated.multipliers_, atol=1e-7)
    np.testing.assert_allclose(weighted.program_.objective, repeated.program_.objective)
    np.testing.assert_allclose(weighted.rates_["program"], repeated.rates_["program"], atol=1e-7)
    # The rules agree on every row off the tie set (|s| ~ 0, which rounds either way).
    s = weighted.decision_function(X)
    off_ties = np.abs(s) > 1e-6
    assert off_ties.sum() >= X.shape[0] - 3
    np.testing.assert_array_equal(weighted.predict(X)[off_ties], repeated.predict(X)[off_ties])


def test_with_budget_solves_again_without_refitting():
    X, y, a = _data(seed=2)
    model = RateConstrainedClassifier(max_difference=0.1, random_state=0)
    model.fit(X, y, sensitive_features=a)
    tight = model.with_budget(max_difference=0.01)
    assert tight.estimator_ is model.estimator_ and tight.cv_proba_ is model.cv_proba_
    assert tight.get_params()["max_difference"] == 0.01 and model.max_difference == 0.1
    refit = clone(tight).fit(X, y, sensitive_features=a)
    np.testing.assert_allclose(tight.multipliers_, refit.multipliers_, atol=1e-9)
    np.testing.assert_array_equal(tight.predict(X), refit.predict(X))
    ratio = model.with_budget(min_ratio=0.9)
    assert ratio.budget_form_ == "ratio" and ratio.expected_ratio_ >= 0.9 - 0.01
    # Tighter budgets cost accuracy on the program (its optimum is monotone in the budget).
    objectives = [model.with_budget(max_difference=d).program_.objective for d in (0, 0.05, 0.2)]
    assert objectives == sorted(objectives)


def test_margin_tightens_the_budget():
    X, y, a = _data(seed=3)
    model = RateConstrainedClassifier(max_difference=0.05, margin=0.02, random_state=0)
    model.fit(X, y, sensitive_features=a)
    assert model.budget_ == pytest.approx(0.03)
    assert model.expected_difference_ <= 0.03 + 0.01
    ratio = (
        clone(model).set_params(max_difference=None, min_ratio=0.8).fit(X, y, sensitive_features=a)
    )
    assert ratio.budget_ == pytest.approx(0.82)


def test_conditional_parity_holds_within_each_stratum():
    X, y, a = _data(n=2000, seed=6)
    strata = np.where(X[:, 1] > 0, "high", "low")
    model = RateConstrainedClassifier(
        constraint="conditional_demographic_parity", max_difference=0.03, random_state=0
    ).fit(X, y, sensitive_features=a, control_features=strata)
    assert model.strata_ == ["high", "low"]
    assert list(model.rates_["family"]) == ["high", "high", "low", "low"]
    # fairlearn's DP difference within each stratum, of the cross-fitted decisions.
    P = model.cv_proba_
    q = np.column_stack(
        [P[:, 4 * s + 2 * g : 4 * s + 2 * g + 2].sum(1) for s in (0, 1) for g in (0, 1)]
    )
    scores = 2 * P[:, 1::2].sum(1) - 1 - (q / q.mean(0)) @ model.multipliers_
    d = (scores > 0).astype(int)
    within = [
        demographic_parity_difference(
            y[strata == s], d[strata == s], sensitive_features=a[strata == s]
        )
        for s in ("high", "low")
    ]
    assert model.cv_difference_ == pytest.approx(max(within), abs=1e-12)
    program = model.rates_["program"]
    assert abs(program.iloc[0] - program.iloc[1]) <= 0.03 + 1e-7
    assert abs(program.iloc[2] - program.iloc[3]) <= 0.03 + 1e-7


def test_pickle_and_clone_keep_the_rule():
    X, y, a = _data(n=500)
    model = RateConstrainedClassifier(min_ratio=0.8, random_state=0).fit(X, y, sensitive_features=a)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    assert clone(model).get_params() == model.get_params()


class _NaNModel(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        self.classes_ = np.arange(4)
        return self

    def predict_proba(self, X):
        out = np.full((len(X), 4), 0.25)
        out[0, 0] = np.nan
        return out


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, MSG_BUDGET.split("(")[0]),
        ({"max_difference": 0.1, "min_ratio": 0.8}, MSG_BUDGET.split("(")[0]),
        ({"max_difference": float("nan")}, MSG_MAX_DIFFERENCE.split("(")[0]),
        ({"max_difference": -0.01}, MSG_MAX_DIFFERENCE.split("(")[0]),
        ({"max_difference": 1.01}, MSG_MAX_DIFFERENCE.split("(")[0]),
        ({"min_ratio": 0.0}, MSG_MIN_RATIO.split("(")[0]),
        ({"min_ratio": 1.5}, MSG_MIN_RATIO.split("(")[0]),
    ],
)
def test_bad_budgets_raise_one_clear_error(kwargs, message):
    X, y, a = _data(n=200)
    model = RateConstrainedClassifier(**kwargs)
    with pytest.raises(ValueError, match=re.escape(message)):
        model.fit(X, y, sensitive_features=a)
    assert not hasattr(model, "multipliers_")


def test_other_errors_name_what_is_wrong():
    X, y, a = _data(n=300)
    model = RateConstrainedClassifier(max_difference=0.1)
    with pytest.raises(
        ValueError, match=re.escape(MSG_ONE_GROUP.split("(")[0].format(name="sensitive_features"))
    ):
        model.fit(X, y, sensitive_features=np.zeros(300))
    one_label = a.copy()
    one_label[(a == 1) & (y == 1)] = 2  # group 1 keeps only negatives
    for constraint in ("equal_opportunity", "equalized_odds"):
        with pytest.raises(
            ValueError, match=re.escape(MSG_ONE_LABEL.split(";")[0].format(group="1", label=1))
        ):
            RateConstrainedClassifier(constraint=constraint, max_difference=0.1).fit(
                X, y, sensitive_features=one_label
            )
    # Demographic parity needs no label in every group.
    RateConstrainedClassifier(max_difference=0.1, random_state=0).fit(
        X, y, sensitive_features=one_label
    )
    with pytest.raises(ValueError, match=re.escape(MSG_PROBA_NAN.format(name="FrozenEstimator"))):
        RateConstrainedClassifier(
            estimator=FrozenEstimator(_NaNModel().fit(X, y)), max_difference=0.1
        ).fit(X, y, sensitive_features=a)
    with pytest.raises(InvalidParameterError, match="predict_proba"):
        RateConstrainedClassifier(estimator=object(), max_difference=0.1).fit(
            X, y, sensitive_features=a
        )
    with pytest.raises(ValueError, match=re.escape(MSG_CONTROL_NEEDED)):
        RateConstrainedClassifier(
            constraint="conditional_demographic_parity", max_difference=0.1
        ).fit(X, y, sensitive_features=a)
    with pytest.raises(
        ValueError, match=re.escape(MSG_CONTROL_UNUSED.format(constraint="demographic_parity"))
    ):
        model.fit(X, y, sensitive_features=a, control_features=a)


def test_skops_round_trip_through_fairot_load_model(tmp_path):
    import skops.io as sio

    from fairot import load_model

    X, y, a = _data(n=500)
    model = RateConstrainedClassifier(constraint="equalized_odds", min_ratio=0.8, random_state=0)
    model.fit(X, y, sensitive_features=a)
    path = tmp_path / "rate.skops"
    sio.dump(model, path)
    back = load_model(path)
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(back.rates_.to_numpy(), model.rates_.to_numpy())


def _population_rule(truth, constraint, max_difference):
    """The population-optimal rule on a fine grid, by linprog on the grid's cells of x."""
    grid = np.linspace(-6, 7, 4001)
    joint = truth.joint(grid) * (grid[1] - grid[0])  # p(x, a, y) dx
    mass = joint.sum(axis=1)
    eta = (joint[:, 1] + joint[:, 3]) / mass
    units = (
        np.column_stack([joint[:, 0] + joint[:, 1], joint[:, 2] + joint[:, 3]])
        if constraint == "demographic_parity"
        else joint[:, [1, 3]]
    )
    rates = (units / units.sum(axis=0)).T  # rate_j = rates[j] @ t
    # max over t of mass (2 eta - 1) t, with |rate_0 - rate_1| <= delta.
    diff = rates[0] - rates[1]
    res = linprog(
        -mass * (2 * eta - 1),
        A_ub=np.vstack([diff, -diff]),
        b_ub=[max_difference, max_difference],
        bounds=(0, 1),
        method="highs",
    )
    assert res.status == 0
    # Its multipliers in the rule's form: s = 2 eta - 1 - sum_j mu_j g_j / pi_j.
    mu = res.ineqlin.marginals[1] - res.ineqlin.marginals[0]
    score = (
        2 * eta
        - 1
        - mu * (units[:, 0] / units[:, 0].sum() - units[:, 1] / units[:, 1].sum()) / mass
    )
    return grid, res.x, mass, np.array([mu, -mu]), score


@pytest.mark.parametrize("constraint", ["demographic_parity", "equal_opportunity"])
def test_the_population_optimal_rule_is_recovered_from_the_true_posteriors(constraint):
    """Sampled rows with the exact posteriors: the population's multipliers and rule.

    50 000 rows (the program's working-set path): the multipliers within sampling error of
    the population's, and the decisions on a fine grid of x equal to the population-optimal
    rule wherever its score is not within that error of 0.
    """
    truth = _TrueCells().fit(None)
    X, y, a = truth.sample(50_000, seed=0)
    model = RateConstrainedClassifier(
        estimator=FrozenEstimator(truth), constraint=constraint, max_difference=0.05
    )
    model.fit(X, y, sensitive_features=a)
    grid, optimal, mass, mu, score = _population_rule(truth, constraint, 0.05)
    assert np.abs(mu).min() > 0.1  # the budget binds in the population
    np.testing.assert_allclose(model.multipliers_, mu, atol=0.02)
    decided = model.predict(grid[:, None])
    # Off the sliver |s| <= 0.02, and where a grid cell weighs enough for HiGHS to decide it
    # (its reduced cost, mass * s, above the solver's 1e-7 tolerance).
    clear = (np.abs(score) > 0.02) & (mass > 1e-5)
    np.testing.assert_array_equal(decided[clear], optimal[clear].round())
    assert mass[clear].sum() > 0.8  # most of x: the check is not vacuous


def test_the_path_traces_the_frontier_from_one_fit(monkeypatch):
    from sklearn.metrics import accuracy_score, roc_auc_score

    from fairot.classification import fairness_accuracy_path, plot_path
    from fairot.classification._path import MSG_TAUS_OR_BUDGETS

    X, y, a = _data(n=1600, seed=8)
    fits = []
    original = RateConstrainedClassifier.fit

    def counting(self, *args, **kwargs):
        fits.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(RateConstrainedClassifier, "fit", counting)
    budgets = [0.0, 0.02, 0.05, 0.1, 0.3]
    path = fairness_accuracy_path(
        RateConstrainedClassifier(max_difference=0.5, random_state=0),
        X[:1000],
        y[:1000],
        sensitive_features=a[:1000],
        budgets=budgets,
        X_test=X[1000:],
        y_test=y[1000:],
        sensitive_features_test=a[1000:],
    )
    assert len(fits) == 1  # one probability model for the whole frontier
    table = path.table
    assert table["max_difference"].tolist() == budgets
    for row, model in zip(table.itertuples(), path.estimators, strict=True):
        assert model.max_difference == row.max_difference
        assert model.estimator_ is path.estimators[0].estimator_
        d = model.predict(X[1000:])
        assert row.accuracy == pytest.approx(accuracy_score(y[1000:], d))
        assert row.dp_difference == pytest.approx(
            demographic_parity_difference(y[1000:], d, sensitive_features=a[1000:])
        )
        assert row.roc_auc == pytest.approx(
            roc_auc_score(y[1000:], model.decision_function(X[1000:]))
        )
    # The held-out disparity grows with the budget, and so does accuracy, broadly.
    assert table["dp_difference"].iloc[0] < table["dp_difference"].iloc[-1]
    assert table["accuracy"].iloc[0] < table["accuracy"].iloc[-1]
    plot_path(path, label="rate")
    ratio = fairness_accuracy_path(
        RateConstrainedClassifier(min_ratio=0.5, random_state=0),
        X,
        y,
        sensitive_features=a,
        budgets=[0.8, 0.9],
    )
    assert ratio.table.columns[0] == "min_ratio"
    message = MSG_TAUS_OR_BUDGETS.format(
        name="RateConstrainedClassifier",
        wanted="budgets",
        other="taus",
        why="its tolerance is its budget, max_difference or min_ratio",
    )
    with pytest.raises(TypeError, match=re.escape(message)):
        fairness_accuracy_path(
            RateConstrainedClassifier(max_difference=0.1), X, y, sensitive_features=a, taus=[0.5]
        )
    with pytest.raises(ValueError, match=re.escape(MSG_MIN_RATIO.split("(")[0])):
        fairness_accuracy_path(
            RateConstrainedClassifier(min_ratio=0.8), X, y, sensitive_features=a, budgets=[0.0]
        )


def test_grid_search_over_the_budget_with_within_fairness_budget():
    import sklearn
    from sklearn.model_selection import GridSearchCV

    from fairot.metrics import (
        demographic_parity_difference as fairot_dp,
    )
    from fairot.metrics import (
        fair_accuracy_scorer,
        make_fairness_scorer,
        within_fairness_budget,
    )

    X, y, a = _data(n=1200, seed=9)
    budgets = [0.0, 0.03, 0.1, 0.3, 1.0]
    scoring = {
        "accuracy": fair_accuracy_scorer,
        "neg_dp": make_fairness_scorer(fairot_dp, greater_is_better=False),
    }
    sklearn.set_config(enable_metadata_routing=True)
    try:
        search = GridSearchCV(
            RateConstrainedClassifier(random_state=0),
            {"max_difference": budgets},
            scoring=scoring,
            refit=within_fairness_budget(0.06, score="accuracy", fairness="neg_dp"),
            cv=3,
        ).fit(X, y, sensitive_features=a)
    finally:
        sklearn.set_config(enable_metadata_routing=False)
    results = search.cv_results_
    dp = -np.asarray(results["mean_test_neg_dp"])
    accuracy = np.asarray(results["mean_test_accuracy"])
    feasible = np.flatnonzero(dp <= 0.06)
    assert 0 < feasible.size < len(budgets)
    assert search.best_index_ == feasible[np.argmax(accuracy[feasible])]
    assert search.best_estimator_.max_difference == budgets[search.best_index_]


def test_row_order_and_group_labels_do_not_change_the_rule():
    """Permuting the rows, or renaming the groups, leaves the rule as it was (frozen model)."""
    X, y, a = _data(n=800, seed=10)
    frozen = FrozenEstimator(LogisticRegression(max_iter=1000).fit(X, 2 * a + y))
    base = RateConstrainedClassifier(
        estimator=frozen, constraint="equalized_odds", max_difference=0.03
    )
    model = clone(base).fit(X, y, sensitive_features=a)
    order = np.random.default_rng(1).permutation(len(y))
    permuted = clone(base).fit(X[order], y[order], sensitive_features=a[order])
    np.testing.assert_allclose(permuted.multipliers_, model.multipliers_, atol=1e-8)
    renamed = clone(base).fit(X, y, sensitive_features=np.where(a == 0, "first", "second"))
    np.testing.assert_allclose(renamed.multipliers_, model.multipliers_, atol=1e-8)
    assert renamed.groups_ == ["first", "second"]


def test_a_dataframe_with_named_group_columns():
    """Named columns stay inputs: the rule may then read the attribute (attribute-aware)."""
    X, y, a = _data(n=800, seed=11)
    frame = pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "group": a})
    model = RateConstrainedClassifier(max_difference=0.02, random_state=0)
    model.fit(frame, y, sensitive_features="group")
    assert list(model.feature_names_in_) == ["x0", "x1", "group"]
    decided = model.predict(frame)
    assert demographic_parity_difference(y, decided, sensitive_features=a) < 0.06
    with pytest.raises(ValueError, match="feature names"):
        model.predict(frame.rename(columns={"x0": "other"}))


class _NoGroupOne(ClassifierMixin, BaseEstimator):
    """A cell model that never predicts group 1 (codes 2 and 3)."""

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict_proba(self, X):
        return np.full((len(X), 2), 0.5)


def test_a_model_that_never_predicts_a_group_is_named():
    from fairot.classification._rate_constrained import MSG_NO_SHARE

    X, y, a = _data(n=300)
    model = RateConstrainedClassifier(
        estimator=FrozenEstimator(_NoGroupOne().fit(X, y)), max_difference=0.1
    )
    with pytest.raises(ValueError, match=re.escape(MSG_NO_SHARE.format(unit="1"))):
        model.fit(X, y, sensitive_features=a)
