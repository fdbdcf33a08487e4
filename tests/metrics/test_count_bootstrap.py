"""Bootstrap replicates as counts equal the replicates as resampled copies of the rows.

The same drawn indices drive both: the copy-based computation (``y[take]``, ``pred[take]``, one
sort per replicate) and the count-based one (each row's count in the replicate, presorted groups).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from fairot.metrics._count_kernels import count_distances
from fairot.metrics._count_replicates import SortedGroups, replicate_counts
from fairot.metrics._rates import check_rate_inputs
from fairot.metrics.resampling import _count_summary, _replicate_summary, stratified_indices
from fairot.utils.sensitive import check_sensitive_features


def _data(task, seed=0, n=300):
    rng = np.random.default_rng(seed)
    groups = np.column_stack(
        [rng.choice(["f", "m"], n, p=[0.4, 0.6]), rng.choice(["x", "y", "z"], n)]
    )
    if task == "classification":
        y = rng.integers(0, 2, n)
        pred = np.clip(rng.beta(2, 3, n) + 0.2 * y, 0, 1)
        pred[:10] = pred[10]  # ties
    else:
        y = rng.normal(3.0, 2.0, n)
        pred = y + rng.normal(0.5 * (groups[:, 0] == "f"), 1.0)
    weight = rng.uniform(0.2, 3.0, n)
    return y, pred, groups, weight


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("group_mode", ["intersection", "marginal"])
@pytest.mark.parametrize("labels", [True, False])
def test_counts_equal_copies(task, weighted, group_mode, labels):
    y_raw, p_raw, g, w_raw = _data(task)
    y, pred, enc, threshold = check_rate_inputs(
        y_raw if labels else None, p_raw, g, task, group_mode, 0.5
    )
    weight = w_raw if weighted else None
    cells = check_sensitive_features(g, len(pred), group_mode="intersection", min_groups=1).codes
    member, rows = enc.membership.astype(float), enc.indices()
    take = stratified_indices(cells, 25, np.random.default_rng(3))
    old_rates, old = _replicate_summary(
        None if y is None else y[take],
        pred[take],
        member,
        rows,
        task,
        threshold,
        None if weight is None else weight[take],
        enc.names,
    )
    counts = replicate_counts(take)
    new_rates, new = _count_summary(
        y, pred, member, SortedGroups(pred, rows), counts, task, threshold, weight,
        take=take, rows=rows, names=enc.names,
    )  # fmt: skip
    assert sorted(new) == sorted(old)
    assert sorted(new_rates) == sorted(old_rates)
    expected_keys = {"wass1", "max_pairwise_w2"}
    if task == "classification":
        expected_keys |= {"sdd", "spdd", "demographic_parity_difference"}
    else:
        expected_keys |= {"max_pairwise_w1", "max_pairwise_winf"}
    if labels:
        expected_keys |= {"err"} if task == "classification" else {"mse", "r2"}
    assert expected_keys <= set(new)
    for key, value in old.items():
        np.testing.assert_allclose(new[key], value, rtol=1e-12, atol=1e-12, err_msg=key)
    for key, value in old_rates.items():
        np.testing.assert_allclose(new_rates[key], value, rtol=1e-12, atol=1e-12, err_msg=key)


def test_counts_are_the_draws():
    take = np.array([[0, 0, 2, 4, 4], [1, 1, 1, 3, 3]])
    expected = np.array([[2, 0, 1, 0, 2], [0, 3, 0, 2, 0]], dtype=float)
    np.testing.assert_array_equal(replicate_counts(take), expected)


def test_count_distances_against_scipy_and_by_hand():
    # Group a: values [3, 1, 2, 5] drawn 2, 0, 1, 1 times (the sample [2, 3, 3, 5]); group b:
    # [0, 4, 6, 1] drawn 1, 2, 0, 1 times ([0, 1, 4, 4]); pooled: all eight rows.
    values = np.array([3.0, 1.0, 2.0, 5.0, 0.0, 4.0, 6.0, 1.0])
    counts = np.array([[2.0, 0.0, 1.0, 1.0, 1.0, 2.0, 0.0, 1.0]])
    presorted = SortedGroups(values, [np.arange(4), np.arange(4, 8)])
    wass1, w1, w2, winf, sdd = count_distances(
        presorted.values, counts[:, presorted.positions(True)], presorted.starts, True
    )
    a, b = np.array([2.0, 3.0, 3.0, 5.0]), np.array([0.0, 1.0, 4.0, 4.0])
    scale = presorted.scale
    assert w1[0, 0] * scale == pytest.approx(wasserstein_distance(a, b), abs=1e-12)
    # Equal sizes: the sorted samples are matched in order.
    assert w2[0, 0] * scale == pytest.approx(np.sqrt(np.mean((a - b) ** 2)), abs=1e-12)
    assert winf[0, 0] * scale == pytest.approx(np.max(np.abs(a - b)), abs=1e-12)
    pooled = np.r_[a, b]
    sdd_expected = wasserstein_distance(a, pooled) + wasserstein_distance(b, pooled)
    assert sdd[0] * scale == pytest.approx(sdd_expected, abs=1e-12)
    # Two groups: every median is between them, the sum of the W1 to it is W1(a, b).
    assert wass1[0] * scale == pytest.approx(wasserstein_distance(a, b), abs=1e-12)
