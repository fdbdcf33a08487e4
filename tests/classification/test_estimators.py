"""COT, DOT and DPP as estimators: fairness gained, determinism, continuation, bad input."""

import pickle

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from fairot.classification import (
    COTClassifier,
    DOTClassifier,
    QuantileParityPostProcessor,
)
from fairot.classification._postprocessing import MSG_MARGINAL_CELLS
from tests.helpers import FAST_IN_PROCESSING as FAST
from tests.helpers import make_biased


def _gap(scores, a):
    return wasserstein_distance(scores[a == 0], scores[a == 1])


@pytest.mark.parametrize("name", ["COT", "DOT"])
def test_in_processing_reduces_score_gap(name, biased):
    X, y, a = biased
    lr = LogisticRegression().fit(X, y)
    model = FAST[name]().fit(X, y, sensitive_features=a)
    before = _gap(lr.predict_proba(X)[:, 1], a)
    after = _gap(model.predict_proba(X)[:, 1], a)
    assert after < 0.4 * before
    np.testing.assert_allclose(model.initial_coef_, lr.coef_)
    assert model.history_["train_wass1"].iloc[-1] < model.history_["train_wass1"].iloc[0]
    assert model.n_updates_ == 3000
    assert np.isfinite(model.coef_).all()


def test_dpp_matches_target_on_fit_data(biased):
    X, y, a = biased
    dpp = QuantileParityPostProcessor().fit(X, y, sensitive_features=a)
    s = dpp.predict_proba(X, sensitive_features=a)[:, 1]
    for g in (0, 1):
        # Each group's ranks k/n_g map to target quantiles: W1 within the rank resolution.
        assert wasserstein_distance(s[a == g], dpp.target_samples_) < 2.0 / (a == g).sum()
    assert _gap(s, a) < 0.1 * _gap(dpp.estimator_.predict_proba(X)[:, 1], a)


def test_dpp_maps_to_named_group_target(biased):
    X, y, a = biased
    dpp = QuantileParityPostProcessor(target=1).fit(X, y, sensitive_features=a)
    base = dpp.estimator_.predict_proba(X)[:, 1]
    s = dpp.predict_proba(X, sensitive_features=a)[:, 1]
    # The target group is mapped onto itself.
    np.testing.assert_allclose(s[a == 1], base[a == 1])


def test_dpp_marginal_groups_use_cells_and_say_so():
    X, y, a = make_biased(n=400)
    b = np.random.default_rng(3).integers(0, 2, 400)
    sf = pd.DataFrame({"a": a, "b": b})
    with pytest.warns(UserWarning, match="intersectional cells"):
        dpp = QuantileParityPostProcessor(group_mode="marginal").fit(X, y, sensitive_features=sf)
    assert len(dpp.groups_) == 4
    assert (
        MSG_MARGINAL_CELLS.split(":")[0]
        in "overlapping (marginal) groups cannot be post-processed one person at a time"
    )


@pytest.mark.parametrize("name", ["COT", "DOT"])
def test_same_seed_same_model_and_partial_fit_continues_the_run(name, biased):
    X, y, a = biased
    full = FAST[name](n_updates=400, history_every=100).fit(X, y, sensitive_features=a)
    again = FAST[name](n_updates=400, history_every=100).fit(X, y, sensitive_features=a)
    np.testing.assert_array_equal(full.coef_, again.coef_)
    split = FAST[name](n_updates=200, history_every=100).fit(X, y, sensitive_features=a)
    split.partial_fit(X, y, sensitive_features=a, n_updates=200)
    assert split.n_updates_ == 400
    np.testing.assert_allclose(split.coef_, full.coef_, rtol=1e-12)
    assert split.history_["update"].tolist() == [100, 200, 300, 400]  # one curve across calls
    # The iterates do not depend on how the run is cut into blocks (history records).
    other = FAST[name](n_updates=150, history_every=7).fit(X, y, sensitive_features=a)
    other.partial_fit(X, y, sensitive_features=a, n_updates=250)
    np.testing.assert_allclose(other.coef_, full.coef_, rtol=1e-12)


def test_partial_fit_on_unfitted_estimator_fits(biased):
    X, y, a = biased
    model = FAST["DOT"]().partial_fit(X, y, sensitive_features=a, n_updates=50)
    assert model.n_updates_ == 50


@pytest.mark.parametrize("name", ["COT", "DOT"])
def test_frozen_estimator_is_used_as_is(name, biased):
    X, y, a = biased
    lr = LogisticRegression(C=0.01).fit(X, y)
    model = FAST[name](estimator=FrozenEstimator(lr), n_updates=10).fit(X, y, sensitive_features=a)
    np.testing.assert_array_equal(model.initial_coef_, lr.coef_)


@pytest.mark.parametrize("name", ["COT", "DOT", "DPP"])
def test_pickle_round_trip_gives_identical_predictions(name, biased):
    X, y, a = biased
    if name == "DPP":
        model = QuantileParityPostProcessor().fit(X, y, sensitive_features=a)
        kw = {"sensitive_features": a}
    else:
        model = FAST[name](n_updates=100).fit(X, y, sensitive_features=a)
        kw = {}
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.predict_proba(X, **kw), model.predict_proba(X, **kw))
    np.testing.assert_array_equal(clone.predict(X, **kw), model.predict(X, **kw))


def test_pandas_inputs_and_string_labels(biased_frame):
    X, y, sf = biased_frame
    y = y.map({0: "no", 1: "yes"})
    model = FAST["COT"](n_updates=200, target="B").fit(X, y, sensitive_features=sf)
    assert set(model.predict(X)) <= {"no", "yes"}
    assert model.group_names_ == ["A", "B"]
    assert list(model.feature_names_in_) == ["x1", "x2", "a"]
    pot = model.dual_potentials_("B")
    grid = np.linspace(0, 1, 5)
    np.testing.assert_allclose(pot.target(grid), -pot.group(grid))  # constraint on by default
    assert model.history_.columns.tolist()[:4] == [
        "update",
        "objective",
        "train_wass1",
        "train_error",
    ]


def test_eval_set_recorded(biased):
    X, y, a = biased
    model = FAST["DOT"](n_updates=300, history_every=100).fit(
        X[:400], y[:400], sensitive_features=a[:400], eval_set=(X[400:], y[400:], a[400:])
    )
    assert len(model.history_) == 3
    assert {"eval_wass1", "eval_error"} <= set(model.history_.columns)


@pytest.mark.parametrize("name", ["COT", "DOT"])
@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_history_wass1_is_scipys_sum_to_the_target(name, constraint, biased):
    # The last record is taken at the final coefficients: its Wass1 is the sum over groups (or
    # (group, label) cells) of SciPy's W1 between their scores and their target, on the training
    # rows and on eval_set. The coupling's cells are cut once per run and reused at each record.
    X, y, a = biased
    tr, ev = slice(0, 500), slice(500, None)
    model = FAST[name](n_updates=300, history_every=100, constraint=constraint).fit(
        X[tr], y[tr], sensitive_features=a[tr], eval_set=(X[ev], y[ev], a[ev])
    )
    targets = model.target_samples_
    last = model.history_.iloc[-1]
    for part, column in ((tr, "train_wass1"), (ev, "eval_wass1")):
        s, g, labels = model.predict_proba(X[part])[:, 1], a[part], y[part]
        if constraint == "demographic_parity":
            cells = [(g == k, targets) for k in (0, 1)]
        else:
            cells = [((g == k) & (labels == c), targets[c]) for c in (0, 1) for k in (0, 1)]
        expected = sum(wasserstein_distance(s[rows], target) for rows, target in cells)
        assert last[column] == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier, QuantileParityPostProcessor])
def test_bad_input(cls, biased):
    X, y, a = biased
    kw = {} if cls is QuantileParityPostProcessor else {"n_updates": 10}
    with pytest.raises(ValueError, match="two classes"):
        cls(**kw).fit(X, np.arange(len(y)) % 3, sensitive_features=a)
    with pytest.raises(ValueError, match="single group"):
        cls(**kw).fit(X, y, sensitive_features=np.zeros(len(y)))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cls(**kw).fit(Xn, y, sensitive_features=a)
    with pytest.raises(ValueError, match="inconsistent|rows"):
        cls(**kw).fit(X, y, sensitive_features=a[:-1])


def test_unseen_group_errors(biased):
    X, y, a = biased
    model = FAST["COT"](n_updates=10).fit(X, y, sensitive_features=a)
    with pytest.raises(ValueError, match="not seen at fit time"):
        model.partial_fit(X, y, sensitive_features=a + 5, n_updates=10)
    dpp = QuantileParityPostProcessor().fit(X, y, sensitive_features=a)
    with pytest.raises(ValueError, match="not seen at fit time"):
        dpp.predict(X, sensitive_features=np.full(len(y), 7))


def test_array_target_within_rounding_of_the_unit_interval_is_clipped(biased):
    X, y, a = biased
    target = np.array([-5e-10, 0.3, 1 + 5e-10])
    model = FAST["DOT"](target=target, n_updates=10).fit(X, y, sensitive_features=a)
    np.testing.assert_array_equal(model.target_samples_, [0.0, 0.3, 1.0])
    with pytest.raises(ValueError, match=r"got 1.5 at row 1"):
        FAST["DOT"](target=np.array([0.2, 1.5]), n_updates=10).fit(X, y, sensitive_features=a)


@pytest.mark.parametrize("target", ["nobody", np.array([0.2, 1.5]), 7, np.array([])])
def test_invalid_target_is_named(target, biased):
    X, y, a = biased
    with pytest.raises(ValueError, match="target must be"):
        FAST["DOT"](target=target, n_updates=10).fit(X, y, sensitive_features=a)
