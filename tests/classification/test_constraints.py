"""COT and DOT with ``constraint=``: strong equalized odds / equal opportunity in-processing.

The disparities are measured with :mod:`fairot.metrics` (checked against fairlearn and scipy in
``tests/metrics/test_odds.py``) on held-out rows, against the logistic start.
"""

import re
import warnings

import numpy as np
import pytest
import scipy.stats

from fairot.classification import COTClassifier, DOTClassifier
from fairot.classification._constraints import MSG_ARRAY_TARGET, MSG_EMPTY_CELL
from fairot.metrics import strong_equal_opportunity_disparity, strong_equalized_odds_disparity


def _data(seed=0, n=1600):
    # Scores depend on the group given the label: the start violates equalized odds.
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.3 + 0.3 * a).astype(int)
    X = np.column_stack([rng.normal(y + 0.8 * a, 1.0), a, rng.normal(size=n)])
    return X, y, a


def _fit(cls, constraint, X, y, a, **kwargs):
    step = {"COTClassifier": 1e-3, "DOTClassifier": 2e-2}[cls.__name__]
    return cls(constraint=constraint, n_updates=3000, step_size=step, random_state=0, **kwargs).fit(
        X, y, sensitive_features=a
    )


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier])
@pytest.mark.parametrize(
    ("constraint", "metric"),
    [
        ("equalized_odds", strong_equalized_odds_disparity),
        ("equal_opportunity", strong_equal_opportunity_disparity),
    ],
)
def test_constraint_reduces_its_disparity_on_held_out_rows(cls, constraint, metric):
    X, y, a = _data(0)
    Xt, yt, at = _data(1)
    model = _fit(cls, constraint, X, y, a)
    before = metric(yt, model.estimator_.predict_proba(Xt)[:, 1], sensitive_features=at)
    after = metric(yt, model.predict_proba(Xt)[:, 1], sensitive_features=at)
    assert after < 0.5 * before


def test_targets_are_the_barycenters_given_each_label():
    X, y, a = _data(2, n=400)
    model = COTClassifier(constraint="equalized_odds", n_updates=0).fit(X, y, sensitive_features=a)
    s0 = model.estimator_.predict_proba(X)[:, 1]
    assert sorted(model.target_samples_) == [0, 1]
    for label in (0, 1):
        target = model.target_samples_[label]
        groups = [s0[(a == g) & (y == label)] for g in (0, 1)]
        # Two groups: the W1 barycenter lies between them, W1(a, m) + W1(m, b) = W1(a, b).
        total = sum(scipy.stats.wasserstein_distance(g, target) for g in groups)
        assert total == pytest.approx(scipy.stats.wasserstein_distance(*groups), rel=1e-3)
    opportunity = COTClassifier(constraint="equal_opportunity", n_updates=0).fit(
        X, y, sensitive_features=a
    )
    assert list(opportunity.target_samples_) == [1]
    np.testing.assert_array_equal(opportunity.target_samples_[1], model.target_samples_[1])


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier])
def test_demographic_parity_is_the_default_and_unchanged(cls):
    X, y, a = _data(3, n=500)
    default = cls(n_updates=300, random_state=0).fit(X, y, sensitive_features=a)
    explicit = cls(n_updates=300, random_state=0, constraint="demographic_parity").fit(
        X, y, sensitive_features=a
    )
    np.testing.assert_array_equal(default.coef_, explicit.coef_)
    assert isinstance(default.target_samples_, np.ndarray)


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier])
def test_partial_fit_continues_and_prediction_needs_no_groups_or_labels(cls):
    X, y, a = _data(4, n=800)
    model = _fit(cls, "equalized_odds", X, y, a)
    whole = _fit(cls, "equalized_odds", X, y, a)
    model.partial_fit(X, y, sensitive_features=a, n_updates=500)
    assert model.n_updates_ == 3500
    assert not np.array_equal(model.coef_, whole.coef_)
    proba = model.predict_proba(X)  # no sensitive_features, no labels
    assert proba.shape == (800, 2)
    assert np.isfinite(model.history_["train_wass1"]).all()


def test_empty_cell_and_array_target_are_refused():
    X, y, a = _data(5, n=400)
    y = y.copy()
    y[a == 0] = 0
    message = MSG_EMPTY_CELL.format(
        group="0",
        label=1,
        method="fit",
        constraint="equal_opportunity",
        labels=[1],
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        COTClassifier(constraint="equal_opportunity", n_updates=10).fit(X, y, sensitive_features=a)
    X, y, a = _data(5, n=400)
    with pytest.raises(
        ValueError, match=re.escape(MSG_ARRAY_TARGET.format(constraint="equalized_odds"))
    ):
        DOTClassifier(constraint="equalized_odds", target=[0.2, 0.4], n_updates=10).fit(
            X, y, sensitive_features=a
        )
    with pytest.raises(ValueError, match="constraint"):
        DOTClassifier(constraint="odds", n_updates=10).fit(X, y, sensitive_features=a)


def test_dual_potentials_per_cell():
    X, y, a = _data(6, n=400)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = COTClassifier(constraint="equalized_odds", n_updates=200, random_state=0).fit(
            X, y, sensitive_features=a
        )
    assert model.duals_.shape == (4, model.n_fourier_features)
    s = np.linspace(0, 1, 5)
    np.testing.assert_allclose(
        model.dual_potentials_(1, label=1).group(s),
        _features(model, s) @ model.duals_[3],
    )
    with pytest.raises(ValueError, match="label="):
        model.dual_potentials_(1)


def _features(model, s):
    from fairot.transport import fourier_features

    return fourier_features(s, model.fourier_features_)


def _adult(n_train=None, n_test=None, include_sensitive=True):
    from fairot.datasets import load_baseline_split

    split = load_baseline_split("adult", include_sensitive=include_sensitive)
    rng = np.random.default_rng(0)
    # Without sizes: every row in file order (the order the measured runs used).
    tr = rng.permutation(len(split.y_train))[:n_train] if n_train else slice(None)
    te = rng.permutation(len(split.y_test))[:n_test] if n_test else slice(None)
    return (
        split.X_train.to_numpy(float)[tr],
        split.y_train.to_numpy()[tr],
        split.sensitive_train.iloc[tr],
        split.X_test.to_numpy(float)[te],
        split.y_test.to_numpy()[te],
        split.sensitive_test.iloc[te],
    )


def _removed(model, Xt, yt, sft):
    start = strong_equalized_odds_disparity(
        yt, model.estimator_.predict_proba(Xt)[:, 1], sensitive_features=sft
    )
    fair = strong_equalized_odds_disparity(
        yt, model.predict_proba(Xt)[:, 1], sensitive_features=sft
    )
    return 1.0 - fair / start


@pytest.mark.parametrize(
    ("cls", "params", "at_least"),
    [
        (COTClassifier, {"step_size": 3e-3, "n_updates": 3000}, 0.08),
        (DOTClassifier, {"step_size": 0.1, "n_updates": 8000, "batch_size": 100}, 0.2),
    ],
)
def test_adult_subsample_equalized_odds_on_held_out_rows(cls, params, at_least):
    # 4,000 training rows, 4,000 test rows, attributes not in X: the cells of Black women are
    # a few dozen rows, so the held-out disparity keeps a large sampling floor (measured:
    # COT removes 13 %, DOT 23 %; the full run below removes about 70 %).
    X, y, sf, Xt, yt, sft = _adult(4000, 4000, include_sensitive=False)
    model = cls(constraint="equalized_odds", random_state=0, **params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y, sensitive_features=sf)
    # The two small cells of positives are said to be drawn with replacement; nothing else.
    assert sorted(str(w.message).split(" has")[0] for w in caught) == [
        "group 'race=Black, sex=Female, y=1'",
        "group 'race=Black, sex=Male, y=1'",
    ]
    assert _removed(model, Xt, yt, sft) >= at_least


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cls", "params", "at_least"),
    [
        # Measured 0.682 (0.676 with 40,000 updates) before the merge with main's per-group
        # target rows: the 70 % is not reached by COT.
        (COTClassifier, {"step_size": 3e-3, "n_updates": 20_000}, 0.65),
        # Measured 0.721.
        (DOTClassifier, {"step_size": 0.1, "n_updates": 10_000, "batch_size": 500}, 0.70),
    ],
)
def test_adult_equalized_odds_removes_most_of_the_strong_eo_disparity(cls, params, at_least):
    # The paper's setup (attributes in X), the whole official split.
    X, y, sf, Xt, yt, sft = _adult()
    model = cls(constraint="equalized_odds", random_state=0, **params)
    with warnings.catch_warnings():
        # Black women with income > 50K: 90 rows, fewer than DOT's batch of 500 (said once).
        warnings.filterwarnings("ignore", message=".*fewer than batch_size.*")
        model.fit(X, y, sensitive_features=sf)
    assert _removed(model, Xt, yt, sft) >= at_least


def test_tau_is_for_demographic_parity_only():
    from fairot.classification._constraints import MSG_TAU

    X, y, a = _data(7, n=300)
    message = MSG_TAU.format(tau=0.5, constraint="equalized_odds")
    with pytest.raises(ValueError, match=re.escape(message)):
        COTClassifier(constraint="equalized_odds", tau=0.5, n_updates=5).fit(
            X, y, sensitive_features=a
        )
