"""WassersteinFairRegressorCV: reproducible with random_state, validated like every estimator."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.utils import get_tags

from fairot.regression import WassersteinFairRegressor, WassersteinFairRegressorCV
from fairot.regression._cv import MSG_LENGTHS
from tests.helpers import linear_groups as _data

TAUS = [0.0, 0.5, 1.0]


def _search(**kwargs):
    return WassersteinFairRegressorCV(taus=TAUS, cv=3, **kwargs)


def test_random_state_gives_the_same_predictions_on_every_fit():
    # issue 36: the regressor's inner calibration split was unseeded (predictions moved ~.065)
    X, y, s = _data(n=600, k=2)
    first = _search(random_state=0).fit(X, y, sensitive_features=s)
    second = _search(random_state=0).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(
        first.predict(X, sensitive_features=s), second.predict(X, sensitive_features=s)
    )
    pd.testing.assert_frame_equal(first.cv_results_, second.cv_results_)
    # the seed reaches the refit's split: a regressor seeded by hand with it is the same model
    seed = first.best_estimator_.random_state
    assert isinstance(seed, int)
    by_hand = WassersteinFairRegressor(tau=first.best_tau_, random_state=seed)
    by_hand.fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(
        by_hand.predict(X, sensitive_features=s), first.predict(X, sensitive_features=s)
    )


def test_an_estimator_with_its_own_random_state_keeps_it():
    X, y, s = _data(n=600, k=2)
    search = _search(estimator=WassersteinFairRegressor(random_state=7), random_state=0)
    search.fit(X, y, sensitive_features=s)
    assert search.best_estimator_.random_state == 7


@pytest.mark.parametrize("name", ["y", "sample_weight"])
def test_mismatched_lengths_raise_a_clear_error(name):
    X, y, s = _data(n=300, k=2)
    args = {"y": y, "sample_weight": np.ones(y.size)}
    args[name] = args[name][:-1]
    message = MSG_LENGTHS.format(n_samples=300, name=name, n=299)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _search().fit(X, args["y"], sensitive_features=s, sample_weight=args["sample_weight"])


def test_mismatched_groups_raise_a_value_error():
    X, y, s = _data(n=300, k=2)
    with pytest.raises(ValueError, match="sensitive_features"):
        _search().fit(X, y, sensitive_features=s[:-1])


def test_records_the_width_and_names_of_x():
    X, y, s = _data(n=300, k=2)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    search = _search(random_state=0).fit(frame, y, sensitive_features=s)
    assert search.n_features_in_ == X.shape[1]
    assert list(search.feature_names_in_) == list(frame.columns)
    with pytest.raises(ValueError, match="[Ff]eature names"):
        search.predict(frame.iloc[:, :-1], sensitive_features=s)


def test_sparse_input_follows_the_tag_of_the_estimator():
    X, y, s = _data(n=300, k=2)
    accepting = _search(random_state=0)
    assert get_tags(accepting).input_tags.sparse  # LinearRegression takes sparse X
    dense = accepting.fit(X, y, sensitive_features=s).predict(X, sensitive_features=s)
    sparse = _search(random_state=0).fit(sp.csr_matrix(X), y, sensitive_features=s)
    np.testing.assert_allclose(
        sparse.predict(sp.csr_matrix(X), sensitive_features=s), dense, atol=1e-9
    )
    template = WassersteinFairRegressor(estimator=HistGradientBoostingRegressor(max_iter=5))
    refusing = _search(estimator=template, random_state=0)
    assert not get_tags(refusing).input_tags.sparse
    with pytest.raises(TypeError, match="[Ss]parse"):
        refusing.fit(sp.csr_matrix(X), y, sensitive_features=s)
