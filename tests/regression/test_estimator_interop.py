"""WassersteinFairRegressor where scikit-learn users put it (issue 9).

Model selection with metadata routing, raw-data pipelines, sample weights against replicated
rows, persistence, one API with the classifiers.
"""

import pickle
import re
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import fairot
from fairot.datasets import load_adult
from fairot.regression import WassersteinFairRegressor
from fairot.regression.checks import MSG_MARGINAL, MSG_SCORE_GROUPS
from tests.helpers import linear_groups as _data


# ------------------------------------------------------------------------- model selection
def _hand_cv(X, y, s, taus, splitter):
    means = []
    for tau in taus:
        scores = []
        for train, test in splitter.split(X):
            model = WassersteinFairRegressor(tau=tau, n_grid=100, random_state=0)
            model.fit(X[train], y[train], sensitive_features=s[train])
            pred = model.predict(X[test], sensitive_features=s[test])
            scores.append(r2_score(y[test], pred))
        means.append(np.mean(scores))
    return np.array(means)


def test_grid_search_with_routing_matches_a_hand_written_loop():
    X, y, s = _data(n=900)
    taus = [0.0, 0.3, 0.7, 1.0]
    splitter = KFold(3, shuffle=True, random_state=1)
    expected = _hand_cv(X, y, s, taus, splitter)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            WassersteinFairRegressor(n_grid=100, random_state=0), {"tau": taus}, cv=splitter
        )
        search.fit(X, y, sensitive_features=s)
        scores = cross_val_score(
            WassersteinFairRegressor(tau=0.3, n_grid=100, random_state=0),
            X,
            y,
            cv=splitter,
            params={"sensitive_features": s},
        )
    got = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert search.best_params_["tau"] == taus[int(np.argmax(expected))]
    np.testing.assert_allclose(scores.mean(), expected[1], rtol=0, atol=1e-12)


def test_score_without_groups_is_a_clear_error_not_nan():
    X, y, s = _data()
    model = WassersteinFairRegressor(tau=0.5, random_state=0).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match=re.escape(MSG_SCORE_GROUPS[:60])):
        model.score(X, y)
    # without routing, scikit-learn cannot pass the groups to score: our error, not a NaN
    with pytest.raises(ValueError, match="enable_metadata_routing"):
        cross_val_score(
            WassersteinFairRegressor(tau=0.5),
            X,
            y,
            params={"sensitive_features": s},
            error_score="raise",
        )


def test_weighted_score_is_weighted_r2_and_scale_free():
    X, y, s = _data()
    model = WassersteinFairRegressor(tau=0.5, random_state=0).fit(X, y, sensitive_features=s)
    w = np.random.default_rng(0).integers(1, 4, y.size)
    pred = model.predict(X, sensitive_features=s)
    assert model.score(X, y, w, sensitive_features=s) == pytest.approx(
        r2_score(y, pred, sample_weight=w), abs=1e-12
    )


# ------------------------------------------------------------------------ one API
def test_the_estimator_is_keyword_only():
    # Every parameter is keyword-only, as in scikit-learn; a positional model is Python's
    # TypeError (the shim that accepted it with a FutureWarning is gone: nothing was released).
    assert isinstance(
        WassersteinFairRegressor(estimator=LinearRegression()).estimator, LinearRegression
    )
    assert "estimator" in WassersteinFairRegressor().get_params()
    with pytest.raises(TypeError, match="positional argument"):
        WassersteinFairRegressor(LinearRegression(), tau=0.5)


def test_groups_attributes_are_public_lists_and_marginal_is_a_clear_error():
    X, y, _ = _data(n=800)
    rng = np.random.default_rng(3)
    sf = pd.DataFrame({"a": rng.integers(0, 2, 800), "b": rng.choice(["x", "y"], 800)})
    model = WassersteinFairRegressor(tau=0.5, random_state=0, n_grid=50)
    model.fit(X, y, sensitive_features=sf)
    assert model.groups_ == [(0, "x"), (0, "y"), (1, "x"), (1, "y")]
    assert model.group_names_ == ["a=0, b=x", "a=0, b=y", "a=1, b=x", "a=1, b=y"]
    with pytest.raises(ValueError, match=re.escape(MSG_MARGINAL[:50])):
        WassersteinFairRegressor(group_mode="marginal").fit(X, y, sensitive_features=sf)


def test_groups_as_a_dict_or_column_names_equal_groups_as_a_frame():
    X, y, _ = _data(n=600)
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, 2, 600), rng.choice(["x", "y"], 600)
    frame = pd.DataFrame(X, columns=["u", "v", "w"]).assign(a=a, b=b)
    model = make_pipeline(
        ColumnTransformer([("num", "passthrough", ["u", "v", "w"])]), LinearRegression()
    )
    kwargs = {"estimator": model, "tau": 0.4, "n_grid": 50, "random_state": 0}
    expected = (
        WassersteinFairRegressor(**kwargs)
        .fit(frame, y, sensitive_features=pd.DataFrame({"a": a, "b": b}))
        .predict(frame, sensitive_features=pd.DataFrame({"a": a, "b": b}))
    )
    by_dict = WassersteinFairRegressor(**kwargs).fit(frame, y, sensitive_features={"a": a, "b": b})
    by_name = WassersteinFairRegressor(**kwargs).fit(frame, y, sensitive_features=["a", "b"])
    np.testing.assert_array_equal(
        by_dict.predict(frame, sensitive_features={"a": a, "b": b}), expected
    )
    np.testing.assert_array_equal(by_name.predict(frame, sensitive_features=["a", "b"]), expected)
    assert (
        by_name.group_names_
        == by_dict.group_names_
        == ["a=0, b=x", "a=0, b=y", "a=1, b=x", "a=1, b=y"]
    )


# ---------------------------------------------------------------------- X untouched
def test_raw_string_pipeline_on_adult_with_groups_named_by_column():
    bunch = load_adult(preprocess=False)
    frame = bunch.data.iloc[:3000].reset_index(drop=True)
    y = frame.pop("hours_per_week").to_numpy(dtype=float)
    pipeline = make_pipeline(
        ColumnTransformer(
            [
                (
                    "cat",
                    OneHotEncoder(handle_unknown="ignore"),
                    make_column_selector(dtype_exclude="number"),
                ),
                ("num", StandardScaler(), make_column_selector(dtype_include="number")),
            ]
        ),
        Ridge(),
    )
    model = WassersteinFairRegressor(estimator=pipeline, tau=0.2, n_grid=200, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(frame, y, sensitive_features="sex")
        pred = model.predict(frame, sensitive_features="sex")
    assert np.all(np.isfinite(pred))
    assert model.group_names_ == ["Female", "Male"]
    assert list(model.feature_names_in_) == list(frame.columns)
    assert model.grid_gap_ <= model.epsilon_ + 1e-10


def test_nan_reaches_a_model_that_handles_it_and_feature_names_give_no_warning():
    X, y, s = _data(n=800)
    X = X.copy()
    X[::7, 1] = np.nan
    frame = pd.DataFrame(X, columns=["u", "v", "w"])
    model = WassersteinFairRegressor(
        estimator=HistGradientBoostingRegressor(max_iter=20, random_state=0),
        tau=0.3,
        n_grid=100,
        random_state=0,
    )
    assert model.__sklearn_tags__().input_tags.allow_nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(frame, y, sensitive_features=s)
        pred = model.predict(frame, sensitive_features=s)
    assert np.all(np.isfinite(pred))
    np.testing.assert_array_equal(frame.to_numpy(), X)


# ----------------------------------------------------------------------- sample_weight
@pytest.mark.parametrize("setup", ["frozen", "explicit_calibration"])
def test_integer_weights_equal_replicated_rows(setup):
    X, y, s = _data(n=400, k=3)
    w = np.random.default_rng(1).integers(0, 4, y.size)
    w[:6] = 1  # every group keeps rows
    rep = np.repeat(np.arange(y.size), w)
    X_test, _, s_test = _data(n=300, seed=9, k=3)
    kwargs = {"tau": 0.4, "p": 2, "n_grid": 60}
    if setup == "frozen":
        frozen = FrozenEstimator(LinearRegression().fit(X, y))
        weighted = WassersteinFairRegressor(estimator=frozen, **kwargs)
        weighted.fit(X, y, sample_weight=w, sensitive_features=s)
        replicated = WassersteinFairRegressor(estimator=frozen, **kwargs)
        replicated.fit(X[rep], y[rep], sensitive_features=s[rep])
    else:
        half = y.size // 2
        cal = np.arange(half, y.size)
        rep_train = rep[rep < half]
        rep_cal = rep[rep >= half]
        weighted = WassersteinFairRegressor(**kwargs).fit(
            X[:half],
            y[:half],
            sample_weight=w[:half],
            sensitive_features=s[:half],
            calibration=(X[cal], y[cal], s[cal], w[cal]),
        )
        replicated = WassersteinFairRegressor(**kwargs).fit(
            X[rep_train],
            y[rep_train],
            sensitive_features=s[rep_train],
            calibration=(X[rep_cal], y[rep_cal], s[rep_cal]),
        )
    np.testing.assert_allclose(weighted.group_weights_, replicated.group_weights_, atol=1e-15)
    np.testing.assert_allclose(weighted.latent_curves_, replicated.latent_curves_, atol=1e-9)
    np.testing.assert_allclose(
        weighted.predict(X_test, sensitive_features=s_test),
        replicated.predict(X_test, sensitive_features=s_test),
        rtol=0,
        atol=1e-9,
    )
    assert weighted.score(X, y, w, sensitive_features=s) == pytest.approx(
        replicated.score(X[rep], y[rep], sensitive_features=s[rep]), abs=1e-9
    )


@pytest.mark.parametrize("groupwise", [False, True])
def test_integer_weights_equal_replicated_rows_with_the_default_split(groupwise):
    # The calibration split is drawn over the copies of the rows (numpy.repeat's order), so
    # the same random_state splits the weighted rows exactly as the repeated ones (issue 36:
    # a whole-row split differed by up to .29).
    X, y, s = _data(n=400, k=3)
    w = np.random.default_rng(1).integers(0, 4, y.size)
    w[:6] = 1
    rep = np.repeat(np.arange(y.size), w)
    X_test, _, s_test = _data(n=300, seed=9, k=3)
    kwargs = {"tau": 0.4, "n_grid": 60, "groupwise": groupwise, "random_state": 3}
    weighted = WassersteinFairRegressor(**kwargs).fit(X, y, sample_weight=w, sensitive_features=s)
    replicated = WassersteinFairRegressor(**kwargs).fit(X[rep], y[rep], sensitive_features=s[rep])
    np.testing.assert_allclose(weighted.group_weights_, replicated.group_weights_, atol=1e-15)
    np.testing.assert_allclose(weighted.latent_curves_, replicated.latent_curves_, atol=1e-9)
    np.testing.assert_allclose(
        weighted.predict(X_test, sensitive_features=s_test),
        replicated.predict(X_test, sensitive_features=s_test),
        rtol=0,
        atol=1e-9,
    )
    # weights of ones are no weights: the split of the rows themselves
    ones = WassersteinFairRegressor(**kwargs).fit(X, y, sample_weight=np.ones(y.size),
                                                  sensitive_features=s)  # fmt: skip
    plain = WassersteinFairRegressor(**kwargs).fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(
        ones.predict(X_test, sensitive_features=s_test),
        plain.predict(X_test, sensitive_features=s_test),
        rtol=0,
        atol=1e-12,
    )


def test_sample_weight_errors():
    X, y, s = _data()
    with pytest.raises(ValueError, match="sample_weight"):
        WassersteinFairRegressor(cost="observed_squared").fit(
            X, y, sample_weight=np.ones(y.size), sensitive_features=s
        )
    with pytest.raises(ValueError, match="sample_weight"):
        WassersteinFairRegressor().fit(X, y, sample_weight=-np.ones(y.size), sensitive_features=s)
    # weights normalised to sum to 1 are not frequency weights: a clear error, not a curve
    # squeezed onto the smallest score
    frozen = FrozenEstimator(LinearRegression().fit(X, y))
    with pytest.raises(ValueError, match="frequency weights"):
        WassersteinFairRegressor(estimator=frozen).fit(
            X, y, sample_weight=np.full(y.size, 1 / y.size), sensitive_features=s
        )


# -------------------------------------------------------------------------- persistence
def test_pickle_joblib_and_skops_round_trips(tmp_path):
    skops_io = pytest.importorskip("skops.io")
    X, y, s = _data()
    model = WassersteinFairRegressor(tau=0.4, random_state=0, n_grid=80)
    model.fit(X, y, sensitive_features=s)
    expected = model.predict(X, sensitive_features=s)
    copies = [pickle.loads(pickle.dumps(model))]
    joblib.dump(model, tmp_path / "model.joblib")
    copies.append(joblib.load(tmp_path / "model.joblib"))
    path = tmp_path / "model.skops"
    skops_io.dump(model, path)
    untrusted = skops_io.get_untrusted_types(file=path)
    # only fairot's own types need trusting (numpy, scipy and sklearn are trusted by skops)
    assert all(t.startswith("fairot.") for t in untrusted), untrusted
    copies.append(skops_io.load(path, trusted=untrusted))
    copies.append(fairot.load_model(path))
    for copy in copies:
        np.testing.assert_array_equal(copy.predict(X, sensitive_features=s), expected)
        assert copy.epsilon_ == model.epsilon_


# ------------------------------------------------------------- choosing tau by CV (recipe)
def test_cv_chooses_the_most_accurate_tau_within_the_budget_like_a_hand_loop():
    from sklearn.model_selection import StratifiedKFold

    from fairot.metrics import max_pairwise_wasserstein
    from fairot.regression import WassersteinFairRegressorCV

    X, y, s = _data(n=900)
    taus = [0.0, 0.25, 0.5, 1.0]
    template = WassersteinFairRegressor(n_grid=100, random_state=0)
    r2, gap = np.zeros((3, 4)), np.zeros((3, 4))
    folds = StratifiedKFold(3).split(X, s)
    for f, (train, test) in enumerate(folds):
        for t, tau in enumerate(taus):
            model = WassersteinFairRegressor(n_grid=100, random_state=0, tau=tau)
            model.fit(X[train], y[train], sensitive_features=s[train])
            pred = model.predict(X[test], sensitive_features=s[test])
            r2[f, t] = r2_score(y[test], pred)
            gap[f, t] = max_pairwise_wasserstein(
                None, pred, sensitive_features=s[test], p=2
            ).distance
    budget = float(np.sort(gap.mean(axis=0))[1]) + 1e-9  # two taus within the budget
    within = gap.mean(axis=0) <= budget
    expected = taus[int(np.argmax(np.where(within, r2.mean(axis=0), -np.inf)))]
    search = WassersteinFairRegressorCV(estimator=template, taus=taus, max_gap=budget, cv=3)
    search.fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(search.cv_results_["mean_r2"], r2.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(search.cv_results_["mean_test_gap"], gap.mean(axis=0), atol=1e-12)
    assert search.best_tau_ == expected
    assert search.best_estimator_.tau == expected
    with pytest.raises(ValueError, match="no tau keeps"):
        WassersteinFairRegressorCV(estimator=template, taus=taus, max_gap=0.0, cv=3).fit(
            X, y, sensitive_features=s
        )
