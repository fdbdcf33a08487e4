"""QuantileParityPostProcessor's seam: the fit from group statistics that every backend calls."""

import numpy as np
import pytest

from fairot.classification import QuantileParityPostProcessor
from fairot.utils.sensitive import check_sensitive_features
from tests.helpers import make_biased


def _by_seam(X, y, a, target, sample_weight=None):
    """A model fitted through its two public stages, from sorted group scores."""
    model = QuantileParityPostProcessor(target=target)
    model.fit_estimator(X, y, sample_weight=sample_weight)
    encoding = check_sensitive_features(a, X.shape[0])
    scores = model.base_scores(X)
    group_scores, group_weights = [], []
    for rows in encoding.indices():
        order = np.argsort(scores[rows], kind="stable")
        group_scores.append(scores[rows][order])
        group_weights.append(None if sample_weight is None else sample_weight[rows][order])
    weights = None if sample_weight is None else group_weights
    return model.fit_group_scores(group_scores, encoding, group_weights=weights)


@pytest.mark.parametrize("target", ["barycenter", 1])
@pytest.mark.parametrize("weighted", [False, True])
def test_seam_gives_the_fitted_model(target, weighted):
    X, y, a = make_biased(n=500, seed=4, n_groups=3)
    w = np.random.default_rng(0).integers(1, 4, X.shape[0]).astype(float) if weighted else None
    expected = QuantileParityPostProcessor(target=target).fit(
        X, y, sensitive_features=a, sample_weight=w
    )
    model = _by_seam(X, y, a, target, w)
    np.testing.assert_array_equal(model.target_samples_, expected.target_samples_)
    for got, want in zip(model.group_scores_, expected.group_scores_, strict=True):
        np.testing.assert_array_equal(got, want)
    assert model.groups_ == expected.groups_ and model.group_names_ == expected.group_names_
    np.testing.assert_array_equal(
        model.predict_proba(X, sensitive_features=a),
        expected.predict_proba(X, sensitive_features=a),
    )


def test_seam_takes_a_given_target():
    X, y, a = make_biased(n=300, seed=5)
    model = _by_seam(X, y, a, "barycenter")
    encoding = check_sensitive_features(a, X.shape[0])
    fixed = np.linspace(0.2, 0.8, 7)
    model.fit_group_scores(model.group_scores_, encoding, target_samples=fixed)
    np.testing.assert_array_equal(model.target_samples_, fixed)
    out = model.predict_proba(X, sensitive_features=a)[:, 1]
    assert set(np.round(out, 12)) <= set(np.round(fixed, 12))
