"""Fuzz of WassersteinFairRegressor's public boundary (issue 14).

Any valid input fits and predicts finite, monotone, batch-independent values within the tolerance;
any invalid input raises a ValueError that names the problem, never another exception, a NaN or
a silent answer.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.frozen import FrozenEstimator

from fairot.regression import WassersteinFairRegressor
from tests.helpers import IGNORE_SMALL_GROUPS

pytestmark = [pytest.mark.fuzz, pytest.mark.filterwarnings(IGNORE_SMALL_GROUPS)]


class _Column(RegressorMixin, BaseEstimator):
    def fit(self, X, y=None):
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict(self, X):
        return np.asarray(X, dtype=float)[:, 0]


def _frozen():
    return FrozenEstimator(_Column().fit(np.zeros((1, 1))))


@st.composite
def problems(draw):
    k = draw(st.integers(2, 4))
    sizes = draw(st.lists(st.integers(2, 30), min_size=k, max_size=k))
    seed = draw(st.integers(0, 2**31 - 1))
    scale = draw(st.sampled_from([1e-300, 1e-8, 1.0, 1e8, 1e154, 1e300]))
    ties = draw(st.booleans())
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(k), sizes)
    scores = rng.normal(size=codes.size) + rng.normal(size=k)[codes]
    if ties:  # a handful of distinct values: many exact ties
        scores = np.round(scores)
    scores = scores * (scale / 8)  # / 8: far from the largest float even at 1e300
    new = rng.normal(size=25) * 2 * (scale / 8)
    new_codes = rng.integers(0, k, 25)
    params = {
        "p": draw(st.sampled_from([1, 2, np.inf])),
        "tau": draw(st.sampled_from([0.0, 0.05, 0.3, 0.8, 1.0])),
        "n_grid": draw(st.integers(1, 40)),
    }
    return scores, codes, new, new_codes, params


@given(problems())
def test_valid_inputs_give_finite_monotone_batch_independent_predictions(problem):
    scores, codes, new, new_codes, params = problem
    model = WassersteinFairRegressor(estimator=_frozen(), **params)
    model.fit(scores[:, None], scores, sensitive_features=codes)
    assert np.isfinite(model.epsilon_) and np.isfinite(model.grid_violation_)
    assert model.grid_gap_ <= model.epsilon_ * (1 + 1e-9) + 1e-300
    pred = model.predict(new[:, None], sensitive_features=new_codes)
    assert np.all(np.isfinite(pred))
    for i in range(3):
        alone = model.predict(new[i : i + 1, None], sensitive_features=new_codes[i : i + 1])
        assert alone[0] == pred[i]
    for g in np.unique(new_codes):
        member = new_codes == g
        order = np.argsort(new[member])
        assert np.all(np.diff(pred[member][order]) >= 0)


@given(
    problems(),
    st.sampled_from(["nan_y", "inf_x", "short_groups", "unseen_group", "negative_weight"]),
)
def test_invalid_inputs_raise_a_value_error(problem, defect):
    scores, codes, new, new_codes, params = problem
    X, y, groups, weights = scores[:, None].copy(), scores.copy(), codes, None
    if defect == "nan_y":
        y[0] = np.nan
    elif defect == "inf_x":
        X[0, 0] = np.inf
    elif defect == "short_groups":
        groups = codes[:-1]
    elif defect == "negative_weight":
        weights = np.ones(y.size)
        weights[0] = -1.0
    model = WassersteinFairRegressor(estimator=_frozen(), **params)
    if defect == "unseen_group":
        model.fit(X, y, sensitive_features=groups)
        with pytest.raises(ValueError, match="not seen at fit time"):
            model.predict(new[:, None], sensitive_features=np.full(new.size, 99))
        return
    with pytest.raises(ValueError):
        model.fit(X, y, sample_weight=weights, sensitive_features=groups)
