"""The seam of the rate program: selections that do not depend on how rows are partitioned."""

import numpy as np
import pytest

from fairot.classification.rate_rows import (
    SUBSAMPLE,
    ArrayRows,
    smallest_rows,
    subsample_mask,
)


def test_the_subsample_is_a_function_of_the_index_alone():
    whole = subsample_mask(0, 10_000)
    cuts = [0, 7, 2500, 2501, 9000, 10_000]
    parts = np.concatenate(
        [subsample_mask(lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]
    )
    np.testing.assert_array_equal(parts, whole)
    # About one row in SUBSAMPLE (5 binomial standard deviations on 10^5 rows), and not a
    # stride (rows ordered by group must not bias it).
    assert abs(subsample_mask(0, 100_000).mean() - 1 / SUBSAMPLE) < 0.005
    assert len(set(np.diff(np.flatnonzero(whole)).tolist())) > 5


@pytest.mark.parametrize("size", [0, 1, 5, 13, 40, 60])
def test_smallest_rows_orders_by_value_then_index(size):
    rng = np.random.default_rng(2)
    values = rng.integers(0, 6, 50).astype(float)  # many ties
    # Oracle: a stable sort by value keeps the lower index first among equals.
    expected = np.sort(np.argsort(values, kind="stable")[:size])
    np.testing.assert_array_equal(smallest_rows(values, size), expected)
    # The smallest of partitions' own smallest: the same rows (what a partitioned backend does).
    parts = [smallest_rows(values[lo : lo + 20], size) + lo for lo in (0, 20, 40)]
    candidates = np.concatenate(parts)
    merged = candidates[smallest_rows(values[candidates], size)]
    np.testing.assert_array_equal(merged, expected)


def test_the_fixed_sums_add_up_over_partitions():
    rng = np.random.default_rng(3)
    a, V, w = rng.normal(size=30), rng.uniform(size=(30, 2)), rng.uniform(size=30)
    centre, work = np.array([0.1, -0.2]), np.array([3, 17, 25])
    whole = ArrayRows(a, V, w).fixed_sums(centre, work)
    left = ArrayRows(a[:20], V[:20], w[:20]).fixed_sums(centre, work[work < 20])
    right = ArrayRows(a[20:], V[20:], w[20:]).fixed_sums(centre, work[work >= 20] - 20)
    # Oracle: the sums written out.
    t = (a - V @ centre > 0).astype(float)
    t[work] = 0
    np.testing.assert_allclose(whole[0], (w * t) @ V)
    np.testing.assert_allclose(whole[1], (w * t) @ a)
    np.testing.assert_allclose(left[0] + right[0], whole[0])
    np.testing.assert_allclose(left[1] + right[1], whole[1])
