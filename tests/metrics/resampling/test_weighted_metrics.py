"""bootstrap_intervals(sample_weight=...): the weighted bootstrap, against hand-written oracles.

Each replicate redraws rows within the sensitive cells and carries their weights; its value is
the weighted statistic of the drawn rows. The oracle below draws the same rows from the same seed
by its own code (a stable sort of the cells, then one ``integers`` call per cell, in cell order)
and computes each weighted statistic with SciPy, POT and scikit-learn.
"""

import itertools
import re

import numpy as np
import ot
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance
from sklearn.metrics import r2_score

from fairot.metrics import bootstrap_intervals, fairness_report
from fairot.metrics._calling import MSG_EMPTY_WEIGHT
from tests.metrics.resampling.bootstrap_draws import reference_rows

B = 25
SEED = 7


def _data(task, n=120, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["a", "b", "c"]), n, p=[0.5, 0.3, 0.2])
    w = rng.integers(1, 4, n).astype(float)
    if task == "classification":
        s = np.clip(rng.beta(2, 4, n) + 0.2 * (g == "b"), 0, 1)
        y = (rng.uniform(size=n) < s).astype(int)
    else:
        y = rng.normal(2.0 * (g == "b"), 1.0)
        s = y + rng.normal(0, 0.5, n)
    return y, s, g, w


def _oracle_replicate(task, y, s, g, w, threshold=0.5):
    """The weighted summary of one replicate, from SciPy, POT and scikit-learn."""
    names = sorted(set(g))
    parts = {a: (s[g == a], w[g == a]) for a in names}
    pairs = list(itertools.combinations(names, 2))
    w1 = {
        (a, b): wasserstein_distance(parts[a][0], parts[b][0], parts[a][1], parts[b][1])
        for a, b in pairs
    }
    # POT takes probability weights (normalised here) and returns W_p to the power p.
    prob = {a: v / v.sum() for a, (_, v) in parts.items()}
    w2 = {
        (a, b): ot.wasserstein_1d(parts[a][0], parts[b][0], prob[a], prob[b], p=2) ** 0.5
        for a, b in pairs
    }
    out = {"max_pairwise_w2": max(w2.values())}
    if task == "classification":
        out["sdd"] = sum(wasserstein_distance(parts[a][0], s, parts[a][1], w) for a in names)
        out["spdd"] = sum(w1.values())
        selection = [np.average(parts[a][0] > threshold, weights=parts[a][1]) for a in names]
        out["demographic_parity_difference"] = max(selection) - min(selection)
        correct = (s > threshold) == (y == 1)
        out["err"] = 1 - np.average(correct, weights=w)
        accuracy = [np.average(correct[g == a], weights=w[g == a]) for a in names]
        out["accuracy_std"] = np.std(accuracy)
    else:
        out["max_pairwise_w1"] = max(w1.values())
        out["mse"] = np.average((y - s) ** 2, weights=w)
        out["r2"] = r2_score(y, s, sample_weight=w)
    return out


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("weighted", [True, False])
def test_every_replicate_is_the_weighted_statistic_of_the_rows_it_draws(task, weighted):
    y, s, g, w = _data(task)
    weights = w if weighted else None
    ci = bootstrap_intervals(
        y,
        s,
        sensitive_features=g,
        task=task,
        sample_weight=weights,
        n_bootstrap=B,
        random_state=SEED,
    )
    take = reference_rows(s, np.unique(g, return_inverse=True)[1], B, SEED)
    ones = np.ones_like(s)
    expected = pd.DataFrame(
        [_oracle_replicate(task, y[t], s[t], g, (w if weighted else ones)[t]) for t in take]
    )
    got = ci.replicates[expected.columns]
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-10, atol=1e-12)
    # The interval is the central 95 % of the replicates (linear interpolation, as numpy).
    low, high = np.quantile(expected.to_numpy(), [0.025, 0.975], axis=0)
    np.testing.assert_allclose(ci.summary.loc[expected.columns, "low"], low, rtol=1e-10)
    np.testing.assert_allclose(ci.summary.loc[expected.columns, "high"], high, rtol=1e-10)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_integer_weights_equal_the_replicate_with_duplicated_rows(task):
    # A row of weight k counts as k copies: the weighted replicate equals the unweighted report
    # of its rows duplicated by their weights (the point estimate, checked against SciPy).
    y, s, g, w = _data(task, n=90, seed=3)
    ci = bootstrap_intervals(
        y, s, sensitive_features=g, task=task, sample_weight=w, n_bootstrap=10, random_state=1
    )
    for b, t in enumerate(reference_rows(s, np.unique(g, return_inverse=True)[1], 10, 1)[:4]):
        copies = np.repeat(t, w[t].astype(int))
        summary = fairness_report(y[copies], s[copies], sensitive_features=g[copies], task=task)
        expected = summary.attrs["summary"]
        shared = [key for key in ci.replicates.columns if key in expected]
        assert len(shared) >= 5
        for key in shared:
            assert ci.replicates[key][b] == pytest.approx(expected[key], rel=1e-9, abs=1e-12), key


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("labels", [True, False])
def test_constant_weights_give_the_unweighted_intervals(task, labels):
    y, s, g, _ = _data(task, seed=5)
    y = y if labels else None
    options = dict(sensitive_features=g, task=task, n_bootstrap=B, random_state=SEED)
    plain = bootstrap_intervals(y, s, **options)
    weighted = bootstrap_intervals(y, s, sample_weight=np.full(s.shape, 2.5), **options)
    assert list(weighted.replicates.columns) == list(plain.replicates.columns)
    np.testing.assert_allclose(weighted.replicates, plain.replicates, rtol=1e-12, atol=1e-15)
    assert weighted.groups.keys() == plain.groups.keys()
    for key, frame in plain.groups.items():
        np.testing.assert_allclose(weighted.groups[key], frame, rtol=1e-12, atol=1e-15)


def test_zero_weight_rows_are_left_out():
    y, s, g, w = _data("classification", seed=8)
    w[::7] = 0.0
    keep = w > 0
    options = dict(n_bootstrap=B, random_state=SEED)
    with_zeros = bootstrap_intervals(y, s, sensitive_features=g, sample_weight=w, **options)
    without = bootstrap_intervals(
        y[keep], s[keep], sensitive_features=g[keep], sample_weight=w[keep], **options
    )
    pd.testing.assert_frame_equal(with_zeros.replicates, without.replicates)


def test_a_group_without_weight_is_an_error():
    y, s, g, w = _data("classification", seed=9)
    w[g == "c"] = 0.0
    with pytest.raises(ValueError, match=re.escape(MSG_EMPTY_WEIGHT.format(group="c"))):
        bootstrap_intervals(y, s, sensitive_features=g, sample_weight=w, n_bootstrap=10)
