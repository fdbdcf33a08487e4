"""diagnose_collapse against scikit-learn's AUC, NumPy's spread and hand-built cases."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from fairot.metrics import degenerate_model_message, diagnose_collapse
from fairot.metrics._collapse import MSG_START_LENGTH


def labelled(n=400, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    start = np.clip(0.5 + 0.3 * (y - 0.5) + rng.normal(0, 0.15, n), 0, 1)
    return y, start


def test_numbers_equal_sklearn_and_numpy():
    y, start = labelled()
    rng = np.random.default_rng(1)
    fitted = rng.uniform(0.4, 0.6, y.size)
    w = rng.uniform(0.5, 2.0, y.size)
    d = diagnose_collapse(y, fitted, start_scores=start, sample_weight=w)
    assert d.auc == pytest.approx(roc_auc_score(y, fitted, sample_weight=w), abs=1e-12)
    assert d.start_auc == pytest.approx(roc_auc_score(y, start, sample_weight=w), abs=1e-12)
    mean = np.average(fitted, weights=w)
    assert d.spread == pytest.approx(np.sqrt(np.average((fitted - mean) ** 2, weights=w)))
    n1, n0 = int(y.sum()), int((1 - y).sum())
    assert d.chance_band == pytest.approx(2 * np.sqrt((n1 + n0 + 1) / (12 * n1 * n0)))


def test_constant_scores_collapse():
    y, start = labelled()
    d = diagnose_collapse(y, np.full(y.size, 0.4695), start_scores=start)
    assert d.spread_collapsed and d.auc_collapsed and d.collapsed
    message = degenerate_model_message("the loop", d, "a smaller lam")
    assert "standard deviation of its scores is 0" in message
    assert "a smaller lam" in message


def test_random_ranking_collapses_but_a_shrunk_model_does_not():
    y, start = labelled()
    noise = np.random.default_rng(2).permutation(start)  # same spread, no ranking
    d = diagnose_collapse(y, noise, start_scores=start)
    assert d.auc_collapsed and not d.spread_collapsed
    shrunk = 0.5 + 0.3 * (start - 0.5)  # a fair model keeps the ranking at a smaller spread
    assert not diagnose_collapse(y, shrunk, start_scores=start).collapsed


def test_uninformative_start_never_fires():
    y, _ = labelled()
    start = np.random.default_rng(3).uniform(size=y.size)
    assert not diagnose_collapse(y, np.full(y.size, 0.5), start_scores=start).auc_collapsed


def test_without_labels_spread_only_and_any_reference_length():
    d = diagnose_collapse(None, np.full(10, 0.3), start_scores=np.linspace(0, 1, 50))
    assert d.spread_collapsed and np.isnan(d.auc)
    with pytest.raises(ValueError, match=MSG_START_LENGTH.format(n=10, m=50)[:40]):
        diagnose_collapse(np.arange(10) % 2, np.full(10, 0.3), start_scores=np.ones(50))
