"""Scorers in scikit-learn's model selection, against hand-written loops, SciPy and fairlearn."""

import re

import numpy as np
import pytest
import scipy.stats
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, make_scorer, mean_squared_error
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fairot.metrics import (
    CHANCE_AUC,
    chance_ranking,
    degenerate_scorer,
    fair_accuracy_scorer,
    make_fairness_scorer,
    neg_fair_mse_scorer,
    neg_sdd_scorer,
    neg_spdd_scorer,
    neg_wass1_scorer,
    neg_wasserstein_gap_scorer,
    strong_demographic_disparity,
    wass1,
    within_fairness_budget,
)
from fairot.metrics.model_selection._budget import MSG_ALL_DEGENERATE, MSG_NO_CANDIDATE
from fairot.metrics.model_selection._scorers import (
    MSG_GREATER,
    MSG_NO_GROUPS,
    MSG_RESPONSE_METHOD,
)


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    g = rng.choice(["F", "M"], n)
    X = np.c_[rng.normal(size=n) + 0.8 * (g == "M"), rng.normal(size=n)]
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.4).astype(int)
    return X, y, g


def _prefix(message):
    """The longest literal part of a message template, as a regex."""
    return re.escape(max(re.split(r"\{[^}]*\}", message), key=len))


def test_grid_search_matches_hand_written_loop(routing):
    X, y, g = _data()
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    grid = [0.001, 0.01, 1.0]
    budget = 0.3
    search = GridSearchCV(
        LogisticRegression(),
        {"C": grid},
        cv=cv,
        scoring={
            "accuracy": fair_accuracy_scorer,
            "neg_wass1": neg_wass1_scorer,
            "neg_sdd": neg_sdd_scorer,
        },
        refit=within_fairness_budget(budget, score="accuracy", fairness="neg_wass1"),
    ).fit(X, y, sensitive_features=g)
    # The oracle: the same folds by hand, scikit-learn's accuracy and SciPy's W1. With two groups
    # the W1 barycenter is the midpoint of the quantiles, so Wass1 = W1(group a, group b).
    expected = {"accuracy": [], "neg_wass1": [], "neg_sdd": []}
    for c in grid:
        folds = {k: [] for k in expected}
        for train, test in cv.split(X, y):
            model = LogisticRegression(C=c).fit(X[train], y[train])
            s = model.predict_proba(X[test])[:, 1]
            gt = g[test]
            folds["accuracy"].append(accuracy_score(y[test], model.predict(X[test])))
            folds["neg_wass1"].append(-scipy.stats.wasserstein_distance(s[gt == "F"], s[gt == "M"]))
            folds["neg_sdd"].append(
                -sum(scipy.stats.wasserstein_distance(s[gt == a], s) for a in ("F", "M"))
            )
        for k in expected:
            expected[k].append(np.mean(folds[k]))
    for k, values in expected.items():
        np.testing.assert_allclose(search.cv_results_[f"mean_test_{k}"], values, rtol=1e-10)
    feasible = [i for i in range(3) if -expected["neg_wass1"][i] <= budget]
    assert feasible, "the test needs a feasible candidate"
    best = max(feasible, key=lambda i: expected["accuracy"][i])
    assert search.best_index_ == best


class GroupOffsetClassifier(ClassifierMixin, BaseEstimator):
    """A post-processor stand-in whose predictions need the groups (like DPP)."""

    def __init__(self, offset=0.2):
        self.offset = offset

    def fit(self, X, y, *, sensitive_features):
        self.classes_ = np.array([0, 1])
        self.groups_ = sorted(set(sensitive_features))
        return self

    def predict_proba(self, X, *, sensitive_features):
        base = 1 / (1 + np.exp(-np.asarray(X)[:, 0]))
        s = np.clip(base + self.offset * (np.asarray(sensitive_features) == "M"), 0, 1)
        return np.c_[1 - s, s]

    def predict(self, X, *, sensitive_features):
        return (self.predict_proba(X, sensitive_features=sensitive_features)[:, 1] > 0.5).astype(
            int
        )


@pytest.mark.parametrize("in_pipeline", [False, True])
def test_scorer_gives_groups_to_predict(routing, in_pipeline):
    X, y, g = _data(1)
    model = GroupOffsetClassifier().set_fit_request(sensitive_features=True)
    if in_pipeline:
        model.set_predict_proba_request(sensitive_features=True)
        model.set_predict_request(sensitive_features=True)
        model = make_pipeline(StandardScaler(), model)
    model = clone(model).fit(X, y, sensitive_features=g)
    s = model.predict_proba(X, sensitive_features=g)[:, 1]
    expected = -scipy.stats.wasserstein_distance(s[g == "F"], s[g == "M"])
    assert neg_wass1_scorer(model, X, y, sensitive_features=g) == pytest.approx(expected, rel=1e-12)
    pred = model.predict(X, sensitive_features=g)
    assert fair_accuracy_scorer(model, X, y, sensitive_features=g) == accuracy_score(y, pred)


def test_cross_validate_with_post_processor_and_weights(routing):
    X, y, g = _data(2)
    w = np.random.default_rng(0).integers(1, 4, size=len(y)).astype(float)
    model = GroupOffsetClassifier().set_fit_request(sensitive_features=True)
    scorer = make_fairness_scorer(
        strong_demographic_disparity, greater_is_better=False, response_method="predict_proba"
    ).set_score_request(sample_weight=True)
    result = cross_validate(
        model,
        X,
        y,
        cv=2,
        scoring={"neg_sdd": scorer, "neg_spdd": neg_spdd_scorer},
        params={"sensitive_features": g, "sample_weight": w},
    )
    # Oracle: replicated rows (integer weights) scored by SciPy on each test fold.
    for fold, (_, test) in enumerate(StratifiedKFold(2).split(X, y)):
        s = model.predict_proba(X[test], sensitive_features=g[test])[:, 1]
        reps = w[test].astype(int)
        sr, gr = np.repeat(s, reps), np.repeat(g[test], reps)
        sdd = sum(scipy.stats.wasserstein_distance(sr[gr == a], sr) for a in ("F", "M"))
        assert result["test_neg_sdd"][fold] == pytest.approx(-sdd, rel=1e-9)


def test_sklearn_make_scorer_accepts_fairot_metrics(routing):
    # fairlearn's calling convention is what scikit-learn's own factory calls.
    X, y, g = _data(3)
    model = LogisticRegression().fit(X, y)
    theirs = make_scorer(
        wass1, greater_is_better=False, response_method="predict_proba"
    ).set_score_request(sensitive_features=True)
    assert theirs(model, X, y, sensitive_features=g) == pytest.approx(
        neg_wass1_scorer(model, X, y, sensitive_features=g), rel=1e-12
    )


def test_regression_scorers():
    rng = np.random.default_rng(4)
    g = rng.choice(["a", "b", "c"], 200)
    X = rng.normal(size=(200, 2))
    y = X[:, 0] + (g == "a")
    from sklearn.linear_model import LinearRegression

    model = LinearRegression().fit(X, y)
    pred = model.predict(X)
    assert neg_fair_mse_scorer(model, X, y, sensitive_features=g) == pytest.approx(
        -mean_squared_error(y, pred)
    )
    gaps = [
        np.sqrt(
            np.mean(
                (
                    np.quantile(pred[g == a], u, method="inverted_cdf")
                    - np.quantile(pred[g == b], u, method="inverted_cdf")
                )
                ** 2
            )
        )
        for a, b in (("a", "b"), ("a", "c"), ("b", "c"))
        for u in [np.arange(0.5, 600_000) / 600_000]
    ]
    assert neg_wasserstein_gap_scorer(model, X, y, sensitive_features=g) == pytest.approx(
        -max(gaps), rel=1e-4
    )


def test_scorer_errors():
    X, y, g = _data(5, n=60)
    model = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match=_prefix(MSG_NO_GROUPS)):
        cross_validate(
            LogisticRegression(), X, y, cv=2, scoring=neg_wass1_scorer, error_score="raise"
        )
    with pytest.raises(ValueError, match=_prefix(MSG_NO_GROUPS)):
        neg_wass1_scorer(model, X, y)
    with pytest.raises(ValueError, match=_prefix(MSG_GREATER)):
        make_fairness_scorer(wass1, greater_is_better="no")
    with pytest.raises(ValueError, match=_prefix(MSG_RESPONSE_METHOD)):
        make_fairness_scorer(wass1, greater_is_better=False, response_method="transform")
    with pytest.raises(TypeError):
        make_fairness_scorer(wass1)  # greater_is_better is required
    assert "wass1" in repr(neg_wass1_scorer)


def test_within_fairness_budget_without_feasible_candidate(routing):
    X, y, g = _data(6, n=120)
    search = GridSearchCV(
        LogisticRegression(),
        {"C": [1.0, 10.0]},
        cv=2,
        scoring={"accuracy": fair_accuracy_scorer, "neg_wass1": neg_wass1_scorer},
        refit=within_fairness_budget(1e-6),
    )
    with pytest.raises(ValueError, match=_prefix(MSG_NO_CANDIDATE)):
        search.fit(X, y, sensitive_features=g)
    refit = within_fairness_budget(0.1, score="acc")
    with pytest.raises(ValueError, match="cv_results_ has no column 'mean_test_acc'"):
        refit({"mean_test_accuracy": [1.0], "mean_test_neg_wass1": [0.0]})


def test_scorers_on_quantile_parity_post_processor(routing):
    from fairot.classification import QuantileParityPostProcessor

    X, y, g = _data(7)
    dpp = QuantileParityPostProcessor(estimator=LogisticRegression()).set_fit_request(
        sensitive_features=True
    )
    result = cross_validate(
        dpp,
        X,
        y,
        cv=StratifiedKFold(2),
        scoring={"neg_wass1": neg_wass1_scorer, "accuracy": fair_accuracy_scorer},
        params={"sensitive_features": g},
        return_estimator=True,
    )
    for fold, (_, test) in enumerate(StratifiedKFold(2).split(X, y)):
        model = result["estimator"][fold]
        s = model.predict_proba(X[test], sensitive_features=g[test])[:, 1]
        gt = g[test]
        w1 = scipy.stats.wasserstein_distance(s[gt == "F"], s[gt == "M"])
        assert result["test_neg_wass1"][fold] == pytest.approx(-w1, rel=1e-12, abs=1e-15)
        pred = model.predict(X[test], sensitive_features=gt)
        assert result["test_accuracy"][fold] == accuracy_score(y[test], pred)


def test_lower_is_better_scorers_are_named_neg_and_return_minus_the_metric():
    # scikit-learn's convention: a scorer whose name starts with neg_ returns minus an error.
    import fairot.metrics as metrics
    from fairot.metrics import get_fairness_scorer, get_fairness_scorer_names

    X, y, g = _data(8)
    model = LogisticRegression().fit(X, y)
    s = model.predict_proba(X)[:, 1]
    oracle = {
        "neg_wass1": -scipy.stats.wasserstein_distance(s[g == "F"], s[g == "M"]),
        "neg_sdd": -sum(scipy.stats.wasserstein_distance(s[g == a], s) for a in ("F", "M")),
        "neg_spdd": -scipy.stats.wasserstein_distance(s[g == "F"], s[g == "M"]),
        "fair_accuracy": accuracy_score(y, model.predict(X)),
        "neg_fair_mse": -mean_squared_error(y, model.predict(X)),
    }
    names = get_fairness_scorer_names()
    assert names == sorted(names) and set(oracle) < set(names)
    for name in names:
        scorer = getattr(metrics, f"{name}_scorer")
        assert (scorer._sign < 0) == name.startswith("neg_"), name
        value = scorer(model, X, y, sensitive_features=g)
        if name.startswith("neg_"):
            assert value <= 0, name
        if name in oracle:
            assert value == pytest.approx(oracle[name], rel=1e-12, abs=1e-15), name
        copy = get_fairness_scorer(name)
        assert copy is not scorer and copy(model, X, y, sensitive_features=g) == value
    # The old names, whose values were negative under a positive name, are gone.
    for old in ("wass1_scorer", "sdd_scorer", "spdd_scorer", "fair_mse_scorer"):
        assert not hasattr(metrics, old) and old not in metrics.__all__
    assert "wasserstein_gap_scorer" not in metrics.__all__


def test_get_fairness_scorer_returns_a_private_copy(routing):
    from fairot.metrics import get_fairness_scorer
    from fairot.metrics.model_selection._scorers import MSG_UNKNOWN_SCORER

    X, y, g = _data(9)
    w = np.random.default_rng(1).integers(1, 4, size=len(y)).astype(float)
    model = LogisticRegression().fit(X, y)
    mine = get_fairness_scorer("neg_sdd").set_score_request(sample_weight=True)
    result = cross_validate(
        LogisticRegression().set_fit_request(sample_weight=False),
        X,
        y,
        cv=2,
        scoring={"mine": mine, "shared": neg_sdd_scorer},
        params={"sensitive_features": g, "sample_weight": w},
    )
    # Only the copy asked for the weights; the module's scorer is unchanged.
    assert not np.allclose(result["test_mine"], result["test_shared"])
    routing_of = neg_sdd_scorer.get_metadata_routing().score
    assert "sample_weight" not in routing_of.requests
    assert mine(model, X, y, sensitive_features=g, sample_weight=w) == pytest.approx(
        -strong_demographic_disparity(
            y, model.predict_proba(X)[:, 1], sensitive_features=g, sample_weight=w
        ),
        rel=1e-12,
    )
    for bad in ("wass1", "neg_mean_squared_error", None):
        with pytest.raises(ValueError, match=_prefix(MSG_UNKNOWN_SCORER)):
            get_fairness_scorer(bad)


def _imbalanced(seed=0, n=300):
    """12 % positives and an informative feature: a constant model is accurate, and useless."""
    rng = np.random.default_rng(seed)
    g = rng.choice(["F", "M"], n)
    y = (rng.random(n) < 0.12).astype(int)
    X = np.c_[rng.normal(1.0 * y, 1.0), rng.normal(size=n)]
    return X, y, g


def test_cv_results_flag_a_degenerate_candidate_and_refit_passes_it_over(routing):
    from sklearn.dummy import DummyClassifier
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import Pipeline

    X, y, g = _imbalanced()
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    grid = {"clf": [DummyClassifier(strategy="prior"), LogisticRegression(class_weight="balanced")]}
    scoring = {"accuracy": fair_accuracy_scorer, "neg_wass1": neg_wass1_scorer}
    blind = GridSearchCV(
        Pipeline([("clf", LogisticRegression())]), grid, cv=cv, scoring=scoring,
        refit=within_fairness_budget(0.5),
    ).fit(X, y, sensitive_features=g)  # fmt: skip
    # Without the flag the constant model wins: the most accurate (the base rate) and Wass1 0.
    assert blind.best_index_ == 0
    flagged = GridSearchCV(
        Pipeline([("clf", LogisticRegression())]), grid, cv=cv,
        scoring={**scoring, "degenerate": degenerate_scorer},
        refit=within_fairness_budget(0.5),
    ).fit(X, y, sensitive_features=g)  # fmt: skip
    # The oracle: scikit-learn's AUC of each candidate on the same folds, against 0.55.
    for i, candidate in enumerate(grid["clf"]):
        for k, (train, test) in enumerate(cv.split(X, y)):
            model = clone(candidate).fit(X[train], y[train])
            auc = roc_auc_score(y[test], model.predict_proba(X[test])[:, 1])
            assert flagged.cv_results_[f"split{k}_test_degenerate"][i] == float(auc <= 0.55)
    np.testing.assert_array_equal(flagged.cv_results_["mean_test_degenerate"], [1.0, 0.0])
    assert (
        flagged.cv_results_["mean_test_accuracy"][0] > flagged.cv_results_["mean_test_accuracy"][1]
    )
    assert flagged.best_index_ == 1


def test_refit_refuses_when_every_feasible_candidate_is_degenerate():
    refit = within_fairness_budget(0.1)
    with pytest.raises(ValueError, match=_prefix(MSG_ALL_DEGENERATE)):
        refit(
            {
                "mean_test_accuracy": [0.9, 0.7],
                "mean_test_neg_wass1": [0.0, -0.5],
                "mean_test_degenerate": [1 / 3, 0.0],
            }
        )
    # degenerate=None reads no flag.
    assert (
        within_fairness_budget(0.1, degenerate=None)(
            {
                "mean_test_accuracy": [0.9, 0.7],
                "mean_test_neg_wass1": [0.0, -0.5],
                "mean_test_degenerate": [1.0, 0.0],
            }
        )
        == 0
    )
    with pytest.raises(ValueError, match="degenerate must be a non-empty str"):
        within_fairness_budget(0.1, degenerate="")


@pytest.mark.parametrize("seed", range(4))
def test_chance_ranking_against_sklearn_auc(seed):
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 80)
    s = rng.random(80) + 0.1 * seed * y
    w = rng.uniform(0.5, 2.0, 80)
    auc = roc_auc_score(y, s, sample_weight=w)
    assert chance_ranking(y, s, sample_weight=w) == float(auc <= CHANCE_AUC)
    assert chance_ranking(y, s, sample_weight=w, chance=auc + 1e-9) == 1.0
    assert chance_ranking(y, s, sample_weight=w, chance=auc - 1e-9) == 0.0
    assert np.isnan(chance_ranking(np.ones(5, int), s[:5]))
