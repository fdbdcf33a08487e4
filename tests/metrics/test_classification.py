"""Err-.5, Wass1, SDD and SPDD against direct numerical definitions, SciPy and fairlearn."""

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from fairlearn.metrics import MetricFrame
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score

from fairot.metrics import (
    error_rate,
    strong_demographic_disparity,
    strong_pairwise_demographic_disparity,
    wass1,
)
from fairot.metrics.checks import MSG_GROUP_WEIGHTS


def _data(seed=0, n=600, k=4):
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, k, size=n)
    scores = np.clip(rng.beta(2, 5, size=n) + 0.08 * groups, 0, 1)
    y = (rng.random(n) < scores).astype(int)
    return y, scores, groups


def _fine_tau_integral(fn, n_tau=200_001):
    tau = np.linspace(0, 1, n_tau)
    return np.trapezoid(fn(tau), tau)


def _survival(s, tau):
    return (np.asarray(s)[None, :] > tau[:, None]).mean(axis=1)


def test_error_rate_is_one_minus_accuracy():
    y, s, _ = _data()
    assert error_rate(y, s) == pytest.approx(1 - accuracy_score(y, s > 0.5))
    assert error_rate(y, s, threshold=0.3) == pytest.approx(1 - accuracy_score(y, s > 0.3))


def test_error_rate_as_fairlearn_metricframe_metric():
    y, s, g = _data()
    frame = MetricFrame(metrics=error_rate, y_true=y, y_pred=s, sensitive_features=g)
    for group, value in frame.by_group.items():
        mask = g == group
        assert value == pytest.approx(np.mean((s[mask] > 0.5) != y[mask]))
    assert frame.overall == pytest.approx(error_rate(y, s))


def test_sdd_matches_definition_by_integration():
    _, s, g = _data(1, n=300)

    def integrand(tau):
        pooled = _survival(s, tau)
        return sum(np.abs(_survival(s[g == a], tau) - pooled) for a in np.unique(g))

    expected = _fine_tau_integral(integrand)
    assert strong_demographic_disparity(None, s, sensitive_features=g) == pytest.approx(
        expected, abs=2e-5
    )


def test_spdd_matches_definition_by_integration():
    _, s, g = _data(2, n=300)

    def integrand(tau):
        surv = {a: _survival(s[g == a], tau) for a in np.unique(g)}
        return 0.5 * sum(np.abs(surv[a] - surv[b]) for a in surv for b in surv)

    expected = _fine_tau_integral(integrand)
    assert strong_pairwise_demographic_disparity(None, s, sensitive_features=g) == pytest.approx(
        expected, abs=2e-5
    )


def test_sdd_and_spdd_match_scipy_sums():
    _, s, g = _data(3)
    labels = np.unique(g)
    sdd = sum(scipy.stats.wasserstein_distance(s[g == a], s) for a in labels)
    spdd = sum(
        scipy.stats.wasserstein_distance(s[g == a], s[g == b])
        for i, a in enumerate(labels)
        for b in labels[i + 1 :]
    )
    assert strong_demographic_disparity(None, s, sensitive_features=g) == pytest.approx(
        sdd, rel=1e-10
    )
    assert strong_pairwise_demographic_disparity(None, s, sensitive_features=g) == pytest.approx(
        spdd, rel=1e-10
    )


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 80))
def test_sdd_equals_spdd_for_two_groups(seed, n):
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    g = np.r_[0, 1, rng.integers(0, 2, size=n - 2)]
    assert strong_demographic_disparity(None, s, sensitive_features=g) == pytest.approx(
        strong_pairwise_demographic_disparity(None, s, sensitive_features=g), rel=1e-9, abs=1e-12
    )


def test_wass1_matches_fine_grid_barycenter():
    # Independent discretisation: quantiles on 400k ranks, equal-weight median, mean abs gap.
    _, s, g = _data(4)
    u = (np.arange(400_000) + 0.5) / 400_000
    q = np.stack([np.quantile(s[g == a], u, method="inverted_cdf") for a in np.unique(g)])
    expected = np.abs(q - np.median(q, axis=0)).mean(axis=1).sum()
    assert wass1(None, s, sensitive_features=g) == pytest.approx(expected, abs=1e-4)


def test_wass1_proportional_weights_use_weighted_median():
    _, s, g = _data(5)
    u = (np.arange(200_000) + 0.5) / 200_000
    labels, counts = np.unique(g, return_counts=True)
    q = np.stack([np.quantile(s[g == a], u, method="inverted_cdf") for a in labels])
    w = counts / counts.sum()
    order = np.argsort(q, axis=0)
    cum = np.cumsum(w[order], axis=0)
    med = np.take_along_axis(q, order, axis=0)[np.argmax(cum >= 0.5, axis=0), np.arange(len(u))]
    expected = np.abs(q - med).mean(axis=1).sum()
    assert wass1(None, s, sensitive_features=g, group_weights="proportional") == pytest.approx(
        expected, abs=1e-3
    )
    with pytest.raises(ValueError, match=MSG_GROUP_WEIGHTS.split("{")[0]):
        wass1(None, s, sensitive_features=g, group_weights="size")


def test_wass1_with_target_is_sum_of_scipy_distances():
    _, s, g = _data(6)
    target = np.random.default_rng(0).random(77)
    expected = sum(scipy.stats.wasserstein_distance(s[g == a], target) for a in np.unique(g))
    assert wass1(None, s, sensitive_features=g, reference=target) == pytest.approx(
        expected, rel=1e-10
    )


def test_metrics_are_zero_under_parity():
    s = np.tile(np.linspace(0, 1, 11), 3)
    g = np.repeat(["a", "b", "c"], 11)
    assert wass1(None, s, sensitive_features=g) == 0.0
    assert strong_demographic_disparity(None, s, sensitive_features=g) == 0.0
    assert strong_pairwise_demographic_disparity(None, s, sensitive_features=g) == 0.0


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.permutations(range(3)))
def test_invariant_to_group_relabelling_and_sample_order(seed, perm):
    rng = np.random.default_rng(seed)
    s = rng.random(60)
    g = np.r_[0, 1, 2, rng.integers(0, 3, size=57)]
    relabelled = np.asarray(perm)[g]
    order = rng.permutation(60)
    for metric in (wass1, strong_demographic_disparity, strong_pairwise_demographic_disparity):
        base = metric(None, s, sensitive_features=g)
        assert metric(None, s, sensitive_features=relabelled) == pytest.approx(
            base, rel=1e-12, abs=1e-15
        )
        assert metric(None, s[order], sensitive_features=g[order]) == pytest.approx(
            base, rel=1e-12, abs=1e-15
        )


def test_marginal_groups_overlap():
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"a": rng.integers(0, 2, 200), "b": rng.integers(0, 2, 200)})
    s = rng.random(200)
    expected = sum(
        scipy.stats.wasserstein_distance(s[frame[c] == v], s) for c in "ab" for v in (0, 1)
    )
    assert strong_demographic_disparity(
        None, s, sensitive_features=frame, group_mode="marginal"
    ) == pytest.approx(expected)


@pytest.mark.parametrize("container", [list, np.asarray, pd.Series])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_input_containers_and_dtypes(container, dtype):
    y, s, g = _data(8, n=100)
    s32 = s.astype(dtype)
    base = strong_demographic_disparity(None, s32.astype(np.float64), sensitive_features=g)
    assert strong_demographic_disparity(
        None, container(s32), sensitive_features=container(g)
    ) == pytest.approx(base)
    assert error_rate(container(y), container(s32)) == error_rate(y, s32.astype(np.float64))


def test_bad_inputs():
    y, s, g = _data(9, n=50)
    with pytest.raises(ValueError, match="y_true must be binary"):
        error_rate(y + 1, s)
    with pytest.raises(ValueError, match=r"scores must lie in \[0.0, 1.0\]"):
        wass1(None, s + 1, sensitive_features=g)
    with pytest.raises(ValueError, match="scores contains NaN"):
        strong_demographic_disparity(None, np.r_[np.nan, s[1:]], sensitive_features=g)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        strong_pairwise_demographic_disparity(None, s, sensitive_features=g[:-1])
    with pytest.raises(ValueError, match="single group"):
        wass1(None, s, sensitive_features=np.zeros(50))
    with pytest.raises(ValueError, match=r"threshold must be a number in \[0, 1\]"):
        error_rate(y, s, threshold=2)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 5))
def test_wass1_to_any_reference_is_at_least_to_the_barycenter(seed, k):
    # At every rank the median minimises the sum of absolute deviations from the group
    # quantiles, so no fixed target (Table 1's) gives a smaller Wass1 than the barycenter.
    rng = np.random.default_rng(seed)
    s = rng.random(80)
    g = np.r_[np.arange(k), rng.integers(0, k, size=80 - k)]
    reference = rng.random(rng.integers(1, 50))
    assert (
        wass1(None, s, sensitive_features=g, reference=reference)
        >= wass1(None, s, sensitive_features=g) - 1e-12
    )
