"""Fuzz of the classification estimators' public boundary (COT, DOT, DPP).

Hostile inputs — NaN, inf, huge or tiny X and scores, empty data, wrong lengths, one group, an
unseen group, non-binary labels, NaN, negative, zero or short sample weights — must give either
a sound model (finite probabilities in [0, 1], one row per input row) or a clear
ValueError/TypeError (or a DivergenceError with advice): never a silent NaN and never an error
from deep inside.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning

from fairot.classification import (
    COTClassifier,
    DivergenceError,
    DOTClassifier,
    QuantileParityPostProcessor,
)
from tests.helpers import IGNORE_SMALL_GROUPS

pytestmark = pytest.mark.fuzz

# Every message a user may see names the argument at fault (or what to change).
CLEAR = (
    "NaN",
    "infinity",
    "inf,",
    "sensitive_features",
    "sample_weight",
    "inconsistent numbers of samples",
    "classes",
    "class",
    "label",
    "group",
    "minimum of 2 is required",
    "predict_proba",
    "Lower step_size",
    "dual_step_size",
    "features",
)

VALUES = st.one_of(
    st.floats(-3, 3),
    st.sampled_from([np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-300, 0.0]),
)


@st.composite
def data(draw):
    n = draw(st.integers(0, 40))
    d = draw(st.integers(1, 3))
    base = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(base)
    X = rng.normal(size=(n, d))
    for _ in range(draw(st.integers(0, 3))):
        if n:
            X[draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))] = draw(VALUES)
    scale = draw(st.sampled_from([1.0, 1.0, 1e-200, 1e150]))
    with np.errstate(over="ignore", invalid="ignore"):
        X = X * scale
    n_classes = draw(st.sampled_from([2, 2, 2, 1, 3]))
    y = rng.integers(0, n_classes, n)
    if draw(st.booleans()) and n:
        y = y.astype(float)
        y[0] = draw(st.sampled_from([np.nan, 0.0, 1.0]))
    n_groups = draw(st.sampled_from([2, 2, 1, 3]))
    a = rng.integers(0, n_groups, n)
    if draw(st.booleans()):
        a = a[: max(n - draw(st.integers(0, 2)), 0)]  # sometimes a wrong length
    w = draw(st.sampled_from([None, "ones", "integers", "nan", "negative", "zeros", "short"]))
    if w == "ones":
        w = np.ones(n)
    elif w == "integers":
        w = rng.integers(0, 4, n).astype(float)
    elif w in ("nan", "negative", "zeros"):
        w = np.full(n, {"nan": np.nan, "negative": -1.0, "zeros": 0.0}[w])
    elif w == "short":
        w = np.ones(max(n - 1, 0))
    return X, y, a, w


def _check_sound(model, X, a):
    proba = model.predict_proba(X, sensitive_features=a)
    assert proba.shape == (X.shape[0], 2)
    assert np.all(np.isfinite(proba)), "silent NaN"
    assert np.all((proba >= 0) & (proba <= 1))


def _fit_or_clear_error(model, X, y, a, w=None, *, wrapped_noise=False):
    try:
        with warnings.catch_warnings():
            # Solver noise on degenerate data is the base model's, not a fairot failure.
            warnings.simplefilter("ignore", ConvergenceWarning)
            if wrapped_noise:
                # DPP hands X untouched to the wrapped model, whose own arithmetic warnings
                # (scikit-learn sums X before its NaN error) are its business.
                warnings.simplefilter("ignore", RuntimeWarning)
            warnings.filterwarnings("ignore", "group .* has .* rows, fewer than batch_size")
            # the fuzzed groups are tiny by design; the small-group warning is tested elsewhere
            warnings.filterwarnings("ignore", "group .* row\\(s\\) at fit, fewer than")
            model.fit(X, y, sensitive_features=a, sample_weight=w)
    except DivergenceError as exc:
        assert "Lower" in str(exc)
        return None
    except (ValueError, TypeError) as exc:
        message = str(exc)
        assert any(word in message for word in CLEAR), message
        return None
    return model


@given(data(), st.sampled_from(["COT", "DOT"]))
def test_in_processing_boundary(args, name):
    X, y, a, w = args
    cls = COTClassifier if name == "COT" else DOTClassifier
    model = _fit_or_clear_error(cls(n_updates=20, batch_size=5, random_state=0), X, y, a, w)
    if model is not None:
        _check_sound(model, X, a)


@given(data())
def test_post_processing_boundary(args):
    X, y, a, w = args
    model = _fit_or_clear_error(QuantileParityPostProcessor(), X, y, a, w, wrapped_noise=True)
    if model is not None:
        _check_sound(model, X, a)
        with pytest.raises(ValueError, match="not seen at fit time"):
            model.predict(X, sensitive_features=np.full(X.shape[0], 99))


class _GivenScores(ClassifierMixin, BaseEstimator):
    """A model whose positive-class score is the first column of X (to fuzz the scores)."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        s = np.asarray(X, dtype=float)[:, 0]
        return np.column_stack([1 - s, s])


@given(
    st.lists(
        st.one_of(
            st.floats(0, 1),
            st.sampled_from([np.nan, np.inf, -1e-10, 1 + 1e-10, -0.5, 1.5, 1e-300]),
        ),
        min_size=4,
        max_size=30,
    )
)
@pytest.mark.filterwarnings(IGNORE_SMALL_GROUPS)
def test_scores_are_clipped_or_rejected_with_their_row(scores):
    s = np.array(scores)
    n = s.shape[0]
    X = s[:, None]
    y = np.arange(n) % 2
    a = (np.arange(n) // 2) % 2
    model = QuantileParityPostProcessor(estimator=_GivenScores())
    tolerated = np.isfinite(s) & (s >= -1e-9) & (s <= 1 + 1e-9)
    if tolerated.all():
        model.fit(X, y, sensitive_features=a)
        _check_sound(model, X, a)
    else:
        row = int(np.flatnonzero(~tolerated)[0])
        with pytest.raises(ValueError, match=f"at row {row}"):
            model.fit(X, y, sensitive_features=a)
