"""COT and DOT say when the adjusted model is degenerate, and stay quiet on Adult.

The oracle of "degenerate" is scikit-learn's ``roc_auc_score`` and NumPy's standard deviation of
the returned model's scores, computed here, not the detector's own numbers.
"""

import warnings

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from fairot.classification import COTClassifier, DOTClassifier
from fairot.datasets import load_adult
from fairot.exceptions import DegenerateModelWarning

ESTIMATORS = [COTClassifier, DOTClassifier]


def attribute_only_data(n=1500, seed=0):
    """The label depends on the group alone; the other column is noise."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = np.column_stack([a, rng.normal(size=n)])
    y = (rng.uniform(size=n) < np.where(a == 1, 0.8, 0.2)).astype(int)
    return X, y, a


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_warns_when_the_attribute_is_the_only_signal(cls):
    X, y, a = attribute_only_data()
    with pytest.warns(DegenerateModelWarning, match="degenerate model") as record:
        model = cls(n_updates=20_000, random_state=0).fit(X, y, sensitive_features=a)
    # The warning points at this line, not inside fairot or scikit-learn.
    assert record[0].filename == __file__
    message = str(record[0].message)
    assert "only signal" in message
    assert "near-constant" in message
    scores = model.predict_proba(X)[:, 1]
    raw = model.estimator_.predict_proba(X)[:, 1]
    # It is right: the fitted model ranks at chance (or is constant) where the raw did not.
    assert roc_auc_score(y, raw) > 0.75
    assert abs(roc_auc_score(y, scores) - 0.5) < 0.05 or np.std(scores) < 0.1 * np.std(raw)


@pytest.fixture(scope="module")
def adult_subsample():
    """3,000 Adult rows, race and sex kept out of X (the setting of issue 22)."""
    adult = load_adult(include_sensitive=False)
    idx = np.random.default_rng(0).choice(adult.target.shape[0], 3000, replace=False)
    return adult.data.to_numpy()[idx], adult.target.to_numpy()[idx], adult.sensitive.iloc[idx]


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_quiet_on_adult(cls, adult_subsample):
    X, y, sf = adult_subsample
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        model = cls(n_updates=10_000, random_state=0).fit(X, y, sensitive_features=sf)
    assert roc_auc_score(y, model.predict_proba(X)[:, 1]) > 0.7


@pytest.mark.slow
@pytest.mark.parametrize("include_sensitive", [True, False])
@pytest.mark.parametrize("cls", ESTIMATORS)
def test_quiet_on_adult_defaults(cls, include_sensitive):
    adult = load_adult(include_sensitive=include_sensitive)
    idx = np.random.default_rng(0).choice(adult.target.shape[0], 3000, replace=False)
    X, y, sf = adult.data.to_numpy()[idx], adult.target.to_numpy()[idx], adult.sensitive.iloc[idx]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        model = cls(random_state=0).fit(X, y, sensitive_features=sf)
    assert roc_auc_score(y, model.predict_proba(X)[:, 1]) > 0.7


def test_saturated_share_counts_scores_at_the_ends():
    from fairot.classification._degenerate import SATURATION_MARGIN, saturated_share

    s = np.array([0.0, SATURATION_MARGIN / 2, 0.5, 1.0 - SATURATION_MARGIN / 2, 0.3, 1.0])
    # By hand: the ends (0, 1) and the two within the margin of them.
    assert saturated_share(s) == pytest.approx(4 / 6)
