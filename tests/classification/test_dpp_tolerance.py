"""DPP's tolerance tau, its policy for unseen groups, the small-group warning, multiclass errors."""

import re

import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import wasserstein_distance
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import InvalidParameterError

from fairot.classification import COTClassifier, DOTClassifier, QuantileParityPostProcessor
from fairot.transport import TAU_MEANING
from fairot.utils.groups import MSG_SMALL_GROUP, SMALL_GROUP_SIZE
from fairot.utils.targets import MSG_MULTICLASS_ADVICE
from tests.helpers import make_biased


def _w1(a, b):
    return float(ot.wasserstein_1d(np.asarray(a), np.asarray(b), p=1))


@pytest.mark.parametrize("tau", [0.1, 0.5, 0.8])
def test_held_out_distance_to_full_parity_is_tau_times_raw(split, full_parity, tau):
    (X, y, a), (Xt, _, at) = split
    model = QuantileParityPostProcessor(tau=tau).fit(X, y, sensitive_features=a)
    raw = model.base_scores(Xt)
    moved = model.predict_proba(Xt, sensitive_features=at)[:, 1]
    fair = full_parity.predict_proba(Xt, sensitive_features=at)[:, 1]
    for g in np.unique(at):
        rows = at == g
        assert _w1(moved[rows], fair[rows]) == pytest.approx(
            tau * _w1(raw[rows], fair[rows]), abs=1e-12
        )
        assert wasserstein_distance(moved[rows], fair[rows]) == pytest.approx(
            tau * wasserstein_distance(raw[rows], fair[rows]), abs=1e-12
        )


@pytest.mark.parametrize("tau", [0.0, 0.3, 0.7, 1.0])
def test_on_equal_groups_the_distance_to_the_barycenter_is_tau_times_raw(tau):
    # Equal group sizes: the barycenter has one level per row, so full parity is the target
    # itself and the W1 to the barycenter (POT's exact LP) keeps exactly the fraction tau.
    rng = np.random.default_rng(5)
    n = 150
    a = np.repeat([0, 1], n)
    X = np.column_stack([rng.normal(0.9 * a, 1.0), rng.normal(size=2 * n)])
    y = (X[:, 0] + rng.normal(0, 1, 2 * n) > 0.5).astype(int)
    model = QuantileParityPostProcessor(tau=tau).fit(X, y, sensitive_features=a)
    raw = model.base_scores(X)
    moved = model.predict_proba(X, sensitive_features=a)[:, 1]
    target = model.target_samples_
    uniform = np.full(n, 1.0 / n)
    for g in (0, 1):
        rows = a == g
        cost_moved = ot.dist(moved[rows][:, None], target[:, None], metric="cityblock")
        cost_raw = ot.dist(raw[rows][:, None], target[:, None], metric="cityblock")
        assert float(ot.emd2(uniform, uniform, cost_moved)) == pytest.approx(
            tau * float(ot.emd2(uniform, uniform, cost_raw)), abs=1e-9
        )
    # and the disparity between the groups is tau times the raw one (scipy)
    assert wasserstein_distance(moved[a == 0], moved[a == 1]) == pytest.approx(
        tau * wasserstein_distance(raw[a == 0], raw[a == 1]), abs=1e-12
    )


def test_tau_one_returns_the_raw_model(split):
    (X, y, a), (Xt, _, at) = split
    model = QuantileParityPostProcessor(tau=1.0).fit(X, y, sensitive_features=a)
    raw = LogisticRegression().fit(X, y).predict_proba(Xt)
    np.testing.assert_array_equal(model.predict_proba(Xt, sensitive_features=at)[:, 1], raw[:, 1])


def test_tau_zero_is_the_full_quantile_map(split, full_parity):
    # The map of the paper written out: the target's left-continuous quantile at the
    # right-continuous fit-time rank (plus the rounding tolerance) of each score.
    (X, y, a), (Xt, _, at) = split
    s_fit = full_parity.base_scores(X)
    s_new = full_parity.base_scores(Xt)
    target = full_parity.target_samples_
    expected = np.empty_like(s_new)
    for g in (0, 1):
        ref = np.sort(s_fit[a == g])
        rank = np.searchsorted(ref, s_new[at == g] + 1e-12, side="right") / ref.size
        level = np.clip(np.ceil(rank * target.size - 1e-9).astype(int) - 1, 0, None)
        expected[at == g] = target[level]
    got = QuantileParityPostProcessor(tau=0.0).fit(X, y, sensitive_features=a)
    np.testing.assert_array_equal(got.predict_proba(Xt, sensitive_features=at)[:, 1], expected)
    np.testing.assert_array_equal(
        full_parity.predict_proba(Xt, sensitive_features=at)[:, 1], expected
    )


@given(st.floats(0, 1), st.floats(0, 1))
@settings(max_examples=25, deadline=None)
def test_disparity_is_monotone_in_tau(t1, t2):
    X, y, a = make_biased(n=400, seed=11)
    lo, hi = sorted((t1, t2))
    gaps = []
    for tau in (lo, hi):
        s = QuantileParityPostProcessor(tau=tau).fit(X, y, sensitive_features=a)
        p = s.predict_proba(X, sensitive_features=a)[:, 1]
        gaps.append(wasserstein_distance(p[a == 0], p[a == 1]))
    assert gaps[0] <= gaps[1] + 1e-12


@pytest.mark.parametrize("bad", [-0.2, 1.5])
def test_tau_outside_the_unit_interval_says_what_tau_means(split, bad):
    (X, y, a), _ = split
    with pytest.raises(InvalidParameterError, match=re.escape(TAU_MEANING)):
        QuantileParityPostProcessor(tau=bad).fit(X, y, sensitive_features=a)


def test_a_one_row_group_warns(split):
    (X, y, a), _ = split
    sf = a.copy()
    sf[0] = 2
    message = MSG_SMALL_GROUP.format(group="2", count=1, size=SMALL_GROUP_SIZE)
    with pytest.warns(UserWarning, match=re.escape(message)):
        QuantileParityPostProcessor().fit(X, y, sensitive_features=sf)


def test_one_threshold_for_every_method(split):
    (X, y, a), _ = split
    sf = a.copy()
    sf[:3] = 2
    message = re.escape(MSG_SMALL_GROUP.format(group="2", count=3, size=SMALL_GROUP_SIZE))
    for model in (
        COTClassifier(n_updates=2, batch_size=2, random_state=0),
        DOTClassifier(n_updates=2, batch_size=2, random_state=0),
    ):
        with pytest.warns(UserWarning, match=message):
            model.fit(X, y, sensitive_features=sf)


def test_one_threshold_for_the_regressor_and_the_penalty_estimator(split):
    from fairot.regression import WassersteinFairRegressor

    (X, y, a), _ = split
    sf = a.copy()
    sf[:4] = 2
    message = re.escape(MSG_SMALL_GROUP.format(group="2", count=4, size=SMALL_GROUP_SIZE))
    with pytest.warns(UserWarning, match=message):
        WassersteinFairRegressor(n_grid=20, random_state=0).fit(
            X, X[:, 0] + y, sensitive_features=sf
        )
    pytest.importorskip("torch")
    from fairot.torch import FairMLPClassifier

    with pytest.warns(UserWarning, match=message):
        FairMLPClassifier(n_epochs=1, random_state=0).fit(X, y, sensitive_features=sf)


def _three_classes():
    X, _, a = make_biased(n=120, seed=0)
    return X, np.arange(120) % 3, a


@pytest.mark.parametrize(
    "model",
    [
        QuantileParityPostProcessor(),
        COTClassifier(n_updates=2, random_state=0),
        DOTClassifier(n_updates=2, random_state=0),
    ],
    ids=["DPP", "COT", "DOT"],
)
def test_multiclass_targets_are_refused_with_advice(model):
    X, y, a = _three_classes()
    with pytest.raises(ValueError, match=re.escape(MSG_MULTICLASS_ADVICE.format(n=3))):
        model.fit(X, y, sensitive_features=a)


def test_multiclass_targets_are_refused_by_the_mlp():
    pytest.importorskip("torch")
    from fairot.torch import FairMLPClassifier

    X, y, a = _three_classes()
    with pytest.raises(ValueError, match=re.escape(MSG_MULTICLASS_ADVICE.format(n=3))):
        FairMLPClassifier().fit(X.astype(np.float32), y, sensitive_features=a)
