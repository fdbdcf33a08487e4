"""sample_weight: weighted rows against the oracle of repeated rows."""

import re

import numpy as np
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from fairot.classification import COTClassifier, DOTClassifier, QuantileParityPostProcessor
from fairot.classification._common import MSG_NO_WEIGHTS, MSG_ZERO_WEIGHT_GROUP
from fairot.transport import build_target
from fairot.utils.sensitive import check_sensitive_features
from tests.helpers import make_biased


def _weights_and_repeats(n, seed=0):
    w = np.random.default_rng(seed).integers(0, 4, n)  # zeros: rows dropped
    return w, np.repeat(np.arange(n), w)


@pytest.mark.parametrize("target", ["barycenter", 1, "array"])
def test_dpp_integer_weights_equal_repeated_rows(target):
    X, y, a = make_biased(n=500, seed=3)
    w, rep = _weights_and_repeats(500)
    if target == "array":
        target = np.random.default_rng(1).beta(2, 3, 200)
    # One trained model for both fits isolates DPP's own weighting (a solver refitted on
    # repeated rows agrees only to its tolerance).
    base = FrozenEstimator(LogisticRegression().fit(X, y))
    weighted = QuantileParityPostProcessor(estimator=base, target=target)
    weighted.fit(X, y, sensitive_features=a, sample_weight=w)
    repeated = QuantileParityPostProcessor(estimator=base, target=target)
    repeated.fit(X[rep], y[rep], sensitive_features=a[rep])
    np.testing.assert_allclose(
        weighted.target_samples_, repeated.target_samples_, rtol=0, atol=1e-9
    )
    X_new, _, a_new = make_biased(n=300, seed=4)
    for data, groups in ((X, a), (X_new, a_new)):
        np.testing.assert_allclose(
            weighted.predict_proba(data, sensitive_features=groups),
            repeated.predict_proba(data, sensitive_features=groups),
            rtol=0,
            atol=1e-9,
        )
    assert weighted.score(X, y, w, sensitive_features=a) == pytest.approx(
        repeated.score(X[rep], y[rep], sensitive_features=a[rep]), abs=1e-12
    )


def test_dpp_weights_reach_the_wrapped_estimator():
    X, y, a = make_biased(n=400, seed=5)
    w, rep = _weights_and_repeats(400, seed=2)
    tree = DecisionTreeClassifier(max_depth=3, random_state=0)
    weighted = QuantileParityPostProcessor(estimator=tree).fit(
        X, y, sensitive_features=a, sample_weight=w
    )
    repeated = QuantileParityPostProcessor(estimator=tree).fit(
        X[rep], y[rep], sensitive_features=a[rep]
    )
    np.testing.assert_allclose(
        weighted.predict_proba(X, sensitive_features=a),
        repeated.predict_proba(X, sensitive_features=a),
        rtol=0,
        atol=1e-9,
    )


def test_weighted_target_matches_repeated_rows_for_non_integer_scale():
    scores = np.random.default_rng(0).random(60)
    enc = check_sensitive_features(np.arange(60) % 3)
    w = np.random.default_rng(1).integers(1, 4, 60).astype(float)
    rep = np.repeat(np.arange(60), w.astype(int))
    expected = build_target(
        "barycenter", scores[rep], check_sensitive_features(np.arange(60)[rep] % 3)
    )
    # Integer weights count rows; the same weights scaled by 0.5 keep the shape of the
    # quantile functions, and a group's size becomes its weight in units of its lightest row.
    np.testing.assert_array_equal(build_target("barycenter", scores, enc, w), expected)
    halved = build_target("barycenter", scores, enc, w / 2)
    assert halved.shape == expected.shape


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier])
def test_in_processing_weights(cls):
    X, y, a = make_biased(n=400, seed=6)
    kw = {"n_updates": 200, "batch_size": 20, "random_state": 0}
    plain = cls(**kw).fit(X, y, sensitive_features=a)
    ones = cls(**kw).fit(X, y, sensitive_features=a, sample_weight=np.ones(400))
    np.testing.assert_array_equal(plain.coef_, ones.coef_)  # equal weights: the same draws
    w, rep = _weights_and_repeats(400, seed=3)
    base = FrozenEstimator(LogisticRegression().fit(X, y))
    weighted = cls(estimator=base, **kw).fit(X, y, sensitive_features=a, sample_weight=w)
    repeated = cls(estimator=base, **kw).fit(X[rep], y[rep], sensitive_features=a[rep])
    # The deterministic parts agree exactly with repeated rows; the draws agree in distribution.
    np.testing.assert_allclose(weighted.target_samples_, repeated.target_samples_, atol=1e-12)
    assert np.isfinite(weighted.coef_).all()
    # The weights reach LogisticRegression's fit.
    lr = cls(**kw).fit(X, y, sensitive_features=a, sample_weight=w)
    np.testing.assert_allclose(
        lr.initial_coef_,
        LogisticRegression().fit(X, y, sample_weight=w).coef_,
        rtol=1e-10,
    )


def test_weight_errors():
    X, y, a = make_biased(n=200)
    w = np.ones(200)
    w[a == 1] = 0
    with pytest.raises(ValueError, match=MSG_ZERO_WEIGHT_GROUP.split("{group!r}")[1]):
        COTClassifier(n_updates=10).fit(X, y, sensitive_features=a, sample_weight=w)
    with pytest.raises(ValueError, match="got -1.0 at row 3"):
        QuantileParityPostProcessor().fit(
            X, y, sensitive_features=a, sample_weight=np.r_[1, 1, 1, -1, np.ones(196)]
        )
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        DOTClassifier(n_updates=10).fit(X, y, sensitive_features=a, sample_weight=np.ones(5))

    class NoWeights(LogisticRegression):
        def fit(self, X, y):
            return super().fit(X, y)

    with pytest.raises(TypeError, match=re.escape(MSG_NO_WEIGHTS.split("{name}")[1])):
        QuantileParityPostProcessor(estimator=NoWeights()).fit(
            X, y, sensitive_features=a, sample_weight=np.ones(200)
        )
