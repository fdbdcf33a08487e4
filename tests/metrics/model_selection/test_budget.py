"""within_fairness_budget in real scikit-learn searches, against sklearn's own scorers and refit."""

import pickle
import re

import numpy as np
import pytest
import scipy.stats
import sklearn
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, get_scorer
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV, StratifiedKFold

from fairot.metrics import (
    FairnessBudgetRefit,
    fair_accuracy_scorer,
    neg_sdd_scorer,
    neg_wass1_scorer,
    within_fairness_budget,
)
from fairot.metrics.model_selection._budget import (
    MSG_ALL_NAN,
    MSG_BUDGET,
    MSG_CV_KEYS,
    MSG_KEY,
    MSG_NO_CANDIDATE,
    MSG_POSITIVE,
)
from tests.helpers import make_biased

GRID = {"C": [1e-3, 1e-2, 1e-1, 1.0]}


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _prefix(message):
    """The longest literal part of a message template, as a regex."""
    return re.escape(max(re.split(r"\{[^}]*\}", message), key=len))


def _search(refit, scoring=None, **kwargs):
    scoring = scoring or {"accuracy": fair_accuracy_scorer, "neg_wass1": neg_wass1_scorer}
    return GridSearchCV(
        LogisticRegression(),
        GRID,
        cv=StratifiedKFold(3, shuffle=True, random_state=0),
        scoring=scoring,
        refit=refit,
        **kwargs,
    )


def _chosen(results, budget, score="accuracy", fairness="neg_wass1"):
    """The oracle: the most accurate candidate whose mean W1 is within the budget, by hand."""
    feasible = [
        i for i, v in enumerate(results[f"mean_test_{fairness}"]) if -v <= budget and v == v
    ]
    return max(feasible, key=lambda i: (results[f"mean_test_{score}"][i], -i))


@pytest.mark.parametrize("budget", [0.1, 0.2, np.inf])
def test_search_score_after_budget_refit_is_the_primary_scorer(routing, budget):
    X, y, g = make_biased(300)
    Xt, yt, gt = make_biased(200, seed=1)
    search = _search(within_fairness_budget(budget)).fit(X, y, sensitive_features=g)
    results = search.cv_results_
    assert search.best_index_ == _chosen(results, budget)
    # The refit model is scikit-learn's own fit of the chosen parameters on all the data.
    model = LogisticRegression(**results["params"][search.best_index_]).fit(X, y)
    np.testing.assert_array_equal(search.best_estimator_.coef_, model.coef_)
    # The oracle for search.score: scikit-learn's accuracy on the refit best estimator.
    expected = accuracy_score(yt, model.predict(Xt))
    assert search.score(Xt, yt) == expected
    assert search.score(Xt, yt, sensitive_features=gt) == expected
    assert search.predict(Xt).tolist() == model.predict(Xt).tolist()


def test_a_loose_budget_chooses_what_sklearns_string_refit_chooses(routing):
    X, y, g = make_biased(300, seed=2)
    ours = _search(within_fairness_budget(np.inf)).fit(X, y, sensitive_features=g)
    theirs = _search("accuracy").fit(X, y, sensitive_features=g)
    assert ours.best_index_ == theirs.best_index_
    assert ours.score(X, y) == theirs.score(X, y)


def test_search_score_with_sklearn_scorer_as_the_primary(routing):
    # score= may name any scorer of scoring, scikit-learn's own included.
    X, y, g = make_biased(300, seed=3)
    Xt, yt, _ = make_biased(150, seed=4)
    scoring = {"neg_log_loss": "neg_log_loss", "neg_wass1": neg_wass1_scorer}
    refit = within_fairness_budget(0.2, score="neg_log_loss")
    search = _search(refit, scoring).fit(X, y, sensitive_features=g)
    assert search.best_index_ == _chosen(search.cv_results_, 0.2, score="neg_log_loss")
    expected = get_scorer("neg_log_loss")(search.best_estimator_, Xt, yt)
    assert search.score(Xt, yt) == pytest.approx(expected, rel=1e-12)
    assert search.score(Xt, yt) < 0


@pytest.mark.parametrize("budget", [0.01, 0.1])
def test_search_score_on_a_post_processor_takes_the_groups(routing, budget):
    from fairot.classification import QuantileParityPostProcessor

    X, y, g = make_biased(300, seed=5)
    Xt, yt, gt = make_biased(200, seed=6)
    search = GridSearchCV(
        QuantileParityPostProcessor(estimator=LogisticRegression()).set_fit_request(
            sensitive_features=True
        ),
        {"estimator__C": [1e-3, 1.0], "target": ["barycenter", 0, 1]},
        cv=StratifiedKFold(2),
        scoring={"accuracy": fair_accuracy_scorer, "neg_wass1": neg_wass1_scorer},
        refit=within_fairness_budget(budget),
    ).fit(X, y, sensitive_features=g)
    assert search.best_index_ == _chosen(search.cv_results_, budget)
    best = search.best_estimator_
    expected = accuracy_score(yt, best.predict(Xt, sensitive_features=gt))
    assert search.score(Xt, yt, sensitive_features=gt) == expected
    s = best.predict_proba(Xt, sensitive_features=gt)[:, 1]
    w1 = scipy.stats.wasserstein_distance(s[gt == 0], s[gt == 1])
    assert neg_wass1_scorer(best, Xt, yt, sensitive_features=gt) == pytest.approx(
        -w1, rel=1e-12, abs=1e-15
    )


def test_randomized_search_with_several_fairness_keys(routing):
    X, y, g = make_biased(300, seed=7)
    search = RandomizedSearchCV(
        LogisticRegression(),
        {"C": np.logspace(-3, 1, 9)},
        n_iter=4,
        random_state=0,
        cv=2,
        scoring={
            "accuracy": fair_accuracy_scorer,
            "neg_wass1": neg_wass1_scorer,
            "neg_sdd": neg_sdd_scorer,
        },
        refit=within_fairness_budget(0.3, fairness="neg_sdd"),
    ).fit(X, y, sensitive_features=g)
    assert search.best_index_ == _chosen(search.cv_results_, 0.3, fairness="neg_sdd")
    assert search.score(X, y) == accuracy_score(y, search.best_estimator_.predict(X))


def test_refit_survives_clone_and_pickle(routing):
    X, y, g = make_biased(300, seed=8)
    search = _search(within_fairness_budget(0.2))
    again = clone(search)
    assert again.refit == search.refit and again.refit is not search.refit
    again.fit(X, y, sensitive_features=g)
    restored = pickle.loads(pickle.dumps(again))  # a closure could not be pickled
    assert restored.best_index_ == again.best_index_
    assert restored.score(X, y) == again.score(X, y)


def test_refit_stands_for_its_score_key():
    refit = within_fairness_budget(0.05, score="acc", fairness="neg_sdd")
    assert isinstance(refit, FairnessBudgetRefit)
    assert refit == "acc" and "acc" == refit and refit != "neg_sdd"  # noqa: SIM300 - both sides
    assert {"acc": 1, "neg_sdd": 2}[refit] == 1
    assert refit == within_fairness_budget(0.05, score="acc", fairness="neg_sdd")
    assert refit != within_fairness_budget(0.06, score="acc", fairness="neg_sdd")
    assert refit != 0.05
    assert repr(refit) == (
        "within_fairness_budget(0.05, score='acc', fairness='neg_sdd', degenerate='degenerate')"
    )
    assert refit != within_fairness_budget(0.05, score="acc", fairness="neg_sdd", degenerate=None)
    assert refit.__name__ == repr(refit)


def test_refit_choice_and_ties():
    refit = within_fairness_budget(0.05)
    results = {
        "mean_test_accuracy": [0.9, 0.8, 0.85, 0.85, np.nan],
        "mean_test_neg_wass1": [-0.2, -0.01, -0.05, -0.04, -0.0],
    }
    assert refit(results) == 2  # first of the tied best feasible candidates; 0.05 is within
    # A failed fit (NaN disparity) is never within the budget, even if it scored.
    results = {"mean_test_accuracy": [0.9, 0.7], "mean_test_neg_wass1": [np.nan, -0.01]}
    assert refit(results) == 1


def test_refit_errors():
    refit = within_fairness_budget(0.05)
    with pytest.raises(ValueError, match=_prefix(MSG_NO_CANDIDATE)):
        refit({"mean_test_accuracy": [0.9], "mean_test_neg_wass1": [-0.2]})
    with pytest.raises(ValueError, match=_prefix(MSG_NO_CANDIDATE)):
        refit({"mean_test_accuracy": [0.9], "mean_test_neg_wass1": [np.nan]})
    with pytest.raises(ValueError, match=_prefix(MSG_ALL_NAN)):
        refit({"mean_test_accuracy": [np.nan], "mean_test_neg_wass1": [-0.01]})
    # A scorer that returns the disparity itself would make every candidate look fair.
    with pytest.raises(ValueError, match=_prefix(MSG_POSITIVE)):
        refit({"mean_test_accuracy": [0.9, 0.8], "mean_test_neg_wass1": [0.2, 0.01]})
    with pytest.raises(ValueError, match=re.escape("no column 'mean_test_neg_wass1'")):
        refit({"mean_test_accuracy": [0.9], "mean_test_wass1": [-0.01]})
    with pytest.raises(ValueError, match=_prefix(MSG_CV_KEYS)):
        within_fairness_budget(0.1, score="acc")({"mean_test_neg_wass1": [0.0]})
    for budget in (-0.1, np.nan, -np.inf, "0.1", None, True):
        with pytest.raises(ValueError, match=_prefix(MSG_BUDGET)):
            within_fairness_budget(budget)
    for key in ("", None, 3):
        with pytest.raises(ValueError, match=_prefix(MSG_KEY)):
            within_fairness_budget(0.1, fairness=key)
    # The class checks what the factory checks.
    with pytest.raises(ValueError, match=_prefix(MSG_BUDGET)):
        FairnessBudgetRefit(-1.0, score="accuracy", fairness="neg_wass1")
    with pytest.raises(ValueError, match=_prefix(MSG_KEY)):
        FairnessBudgetRefit(0.1, score="", fairness="neg_wass1")
    assert within_fairness_budget(np.float32(0.5)).budget == 0.5
    assert (
        within_fairness_budget(np.inf)(
            {"mean_test_accuracy": [0.1, 0.2], "mean_test_neg_wass1": [-9.0, -1e300]}
        )
        == 1
    )
    with pytest.raises(TypeError):
        within_fairness_budget(0.1, "accuracy")  # the keys are keyword-only


def test_search_names_the_fairest_when_no_candidate_fits(routing):
    X, y, g = make_biased(120, seed=9)
    with pytest.raises(ValueError, match=_prefix(MSG_NO_CANDIDATE)):
        _search(within_fairness_budget(1e-9)).fit(X, y, sensitive_features=g)
