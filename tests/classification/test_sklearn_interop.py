"""COT, DOT and DPP where scikit-learn users put them: routing, model selection, raw pipelines.

Every test runs the user's code path (``cross_val_score``, ``GridSearchCV``, ``Pipeline``) and
compares with a hand-written loop over the same splits, or with the dense/array form of the
same data.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from scipy.stats import wasserstein_distance
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from fairot.classification import COTClassifier, DOTClassifier, QuantileParityPostProcessor
from fairot.datasets import load_adult
from fairot.utils.sensitive import MSG_SF_REQUIRED

REQUIRED = MSG_SF_REQUIRED.format(name="sensitive_features").split(":")[0]


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _routed(estimator):
    return estimator.set_fit_request(sensitive_features=True).set_score_request(
        sensitive_features=True
    )


def _hand_cv_scores(make, X, y, a, cv):
    scores = []
    for train, test in cv.split(X, y):
        model = make().fit(X[train], y[train], sensitive_features=a[train])
        scores.append(model.score(X[test], y[test], sensitive_features=a[test]))
    return np.array(scores)


def test_cross_val_score_routes_groups_to_fit_and_score(routing, biased):
    X, y, a = biased
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    got = cross_val_score(
        _routed(QuantileParityPostProcessor()),
        X,
        y,
        cv=cv,
        params={"sensitive_features": a},
        error_score="raise",
    )
    expected = _hand_cv_scores(QuantileParityPostProcessor, X, y, a, cv)
    assert np.all(np.isfinite(got))
    np.testing.assert_array_equal(got, expected)


def test_grid_search_picks_the_hand_loop_parameters(routing, biased):
    X, y, a = biased
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    grid = {"estimator__C": [1e-3, 10.0], "target": ["barycenter", 1]}
    search = GridSearchCV(
        _routed(QuantileParityPostProcessor(estimator=LogisticRegression())),
        grid,
        cv=cv,
        error_score="raise",
    ).fit(X, y, sensitive_features=a)
    means = {}
    for C in grid["estimator__C"]:
        for target in grid["target"]:
            scores = _hand_cv_scores(
                lambda C=C, target=target: QuantileParityPostProcessor(
                    estimator=LogisticRegression(C=C), target=target
                ),
                X,
                y,
                a,
                cv,
            )
            means[(C, target)] = scores.mean()
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    best = max(means, key=means.get)  # first maximum, in grid order as GridSearchCV ranks
    assert (search.best_params_["estimator__C"], search.best_params_["target"]) == best
    np.testing.assert_allclose(search.best_score_, means[best], rtol=0, atol=1e-15)


def test_grid_search_over_cot_with_routing(routing, biased):
    X, y, a = biased
    cv = StratifiedKFold(2, shuffle=True, random_state=2)
    base = COTClassifier(n_updates=100, step_size=1e-3, batch_size=20, random_state=0)
    search = GridSearchCV(
        _routed(base), {"step_size": [1e-4, 1e-3]}, cv=cv, error_score="raise"
    ).fit(X, y, sensitive_features=a)
    means = [
        _hand_cv_scores(
            lambda s=s: base.__class__(**{**base.get_params(), "step_size": s}), X, y, a, cv
        ).mean()
        for s in (1e-4, 1e-3)
    ]
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"], means)
    assert search.best_params_["step_size"] == [1e-4, 1e-3][int(np.argmax(means))]


def test_pipeline_score_routes_groups(routing, biased):
    X, y, a = biased
    pipe = Pipeline([("scale", StandardScaler()), ("dpp", _routed(QuantileParityPostProcessor()))])
    pipe.fit(X, y, sensitive_features=a)
    dpp = QuantileParityPostProcessor().fit(
        StandardScaler().fit_transform(X), y, sensitive_features=a
    )
    expected = np.mean(dpp.predict(StandardScaler().fit_transform(X), sensitive_features=a) == y)
    assert pipe.score(X, y, sensitive_features=a) == expected
    pipe.named_steps["dpp"].set_predict_request(sensitive_features=True)
    np.testing.assert_array_equal(
        pipe.predict(X, sensitive_features=a),
        dpp.predict(StandardScaler().fit_transform(X), sensitive_features=a),
    )


def test_score_without_groups_raises_not_nan(routing, biased):
    X, y, a = biased
    dpp = QuantileParityPostProcessor().set_fit_request(sensitive_features=True)
    dpp.set_score_request(sensitive_features=False)
    with pytest.raises(ValueError, match=REQUIRED):
        cross_val_score(dpp, X, y, cv=3, params={"sensitive_features": a}, error_score="raise")
    fitted = QuantileParityPostProcessor().fit(X, y, sensitive_features=a)
    with pytest.raises(ValueError, match=REQUIRED):
        fitted.score(X, y)


def test_column_names_work_without_routing(biased_frame):
    X, y, sf = biased_frame
    X = X.assign(group=sf)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    dpp = QuantileParityPostProcessor(
        estimator=Pipeline(
            [
                (
                    "prep",
                    ColumnTransformer([("num", StandardScaler(), ["x1", "x2", "a"])]),
                ),
                ("lr", LogisticRegression()),
            ]
        )
    )
    # Groups named by a column are read from X at fit and again at score.
    got = cross_val_score(dpp, X, y, cv=cv, params={"sensitive_features": "group"})
    expected = []
    for train, test in cv.split(X, y):
        model = clone(dpp).fit(X.iloc[train], y.iloc[train], sensitive_features=sf.iloc[train])
        expected.append(model.score(X.iloc[test], y.iloc[test], sensitive_features=sf.iloc[test]))
    np.testing.assert_array_equal(got, expected)


def test_every_predict_method_accepts_sensitive_features(biased):
    X, y, a = biased
    for model in (
        COTClassifier(n_updates=50, random_state=0),
        DOTClassifier(n_updates=50, batch_size=20, random_state=0),
    ):
        model.fit(X, y, sensitive_features=a)
        for method in ("predict", "predict_proba", "decision_function"):
            np.testing.assert_array_equal(
                getattr(model, method)(X, sensitive_features=a), getattr(model, method)(X)
            )
        assert model.score(X, y, sensitive_features=a) == model.score(X, y)


@pytest.mark.parametrize("name", ["COT", "DOT"])
def test_sparse_adult_gives_the_dense_metrics(name):
    bunch = load_adult()
    rows = np.random.default_rng(1).choice(bunch.data.shape[0], 4000, replace=False)
    X = bunch.data.to_numpy()[rows]
    y = np.asarray(bunch.target)[rows]
    a = (bunch.sensitive["race"] + "/" + bunch.sensitive["sex"]).to_numpy()[rows]
    cls = COTClassifier if name == "COT" else DOTClassifier
    kw = {"n_updates": 2000, "step_size": 1e-3 if name == "COT" else 1e-2, "random_state": 0}
    metrics = {}
    for form, data in [("dense", X), ("csr", sp.csr_matrix(X))]:
        model = cls(estimator=LogisticRegression(max_iter=2000), **kw)
        model.fit(data, y, sensitive_features=a)
        s = model.predict_proba(data)[:, 1]
        target = model.target_samples_
        metrics[form] = (
            np.mean((s > 0.5) != y),
            sum(wasserstein_distance(s[a == g], target) for g in np.unique(a)),
        )
    np.testing.assert_allclose(metrics["csr"], metrics["dense"], atol=0.005)


def test_choosing_dpp_within_a_fairness_budget_with_fairot_scorers(routing, biased):
    from fairot.metrics import fair_accuracy_scorer, neg_wass1_scorer, wass1, within_fairness_budget

    X, y, a = biased
    cv = StratifiedKFold(3, shuffle=True, random_state=3)
    grid = {"estimator__C": [1e-3, 1.0], "target": ["barycenter", 0, 1]}
    budget = 0.03
    search = GridSearchCV(
        QuantileParityPostProcessor(estimator=LogisticRegression()).set_fit_request(
            sensitive_features=True
        ),
        grid,
        cv=cv,
        scoring={"accuracy": fair_accuracy_scorer, "neg_wass1": neg_wass1_scorer},
        refit=within_fairness_budget(budget),
        error_score="raise",
    ).fit(X, y, sensitive_features=a)
    candidates = []
    for C in grid["estimator__C"]:
        for target in grid["target"]:
            accuracy, disparity = [], []
            for train, test in cv.split(X, y):
                model = QuantileParityPostProcessor(
                    estimator=LogisticRegression(C=C), target=target
                ).fit(X[train], y[train], sensitive_features=a[train])
                accuracy.append(model.score(X[test], y[test], sensitive_features=a[test]))
                s = model.predict_proba(X[test], sensitive_features=a[test])[:, 1]
                disparity.append(wass1(None, s, sensitive_features=a[test]))
            candidates.append((np.mean(accuracy), np.mean(disparity), C, target))
    feasible = [c for c in candidates if c[1] <= budget]
    assert 0 < len(feasible) < len(candidates)  # the budget binds
    best = max(feasible, key=lambda c: c[0])
    assert (search.best_params_["estimator__C"], search.best_params_["target"]) == best[2:]


@pytest.mark.parametrize("name", ["COT", "DOT", "DPP"])
def test_groups_are_routed_by_default_without_set_requests(routing, biased, name):
    """One default with the regressors: every method taking the groups requests them, so a
    Pipeline in cross_val_score needs no set_*_request call (compared with a hand loop)."""
    X, y, a = biased
    make = {
        "COT": lambda: COTClassifier(n_updates=200, random_state=0),
        "DOT": lambda: DOTClassifier(n_updates=200, random_state=0),
        "DPP": QuantileParityPostProcessor,
    }[name]
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    pipe = Pipeline([("scale", StandardScaler()), ("model", make())])
    got = cross_val_score(pipe, X, y, cv=cv, params={"sensitive_features": a})
    expected = []
    for train, test in cv.split(X, y):
        scaler = StandardScaler().fit(X[train])
        model = make().fit(scaler.transform(X[train]), y[train], sensitive_features=a[train])
        expected.append(model.score(scaler.transform(X[test]), y[test], sensitive_features=a[test]))
    np.testing.assert_array_equal(got, expected)
