"""Fuzz of fairot.dask's exact path: any values, groups and partitions give in-memory numbers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

da = pytest.importorskip("dask.array")

import dask  # noqa: E402

import fairot.dask as fd  # noqa: E402
from fairot import metrics  # noqa: E402

pytestmark = pytest.mark.fuzz


@st.composite
def partitioned(draw):
    n = draw(st.integers(4, 60))
    # Few distinct values: ties inside and across partitions and groups.
    values = np.array(
        draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 0.3]), min_size=n, max_size=n))
    )
    groups = np.array(draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n)))
    if len(set(groups)) < 2:
        groups[0], groups[-1] = "a", "b"
    # At most 5 partitions: with one-row partitions the sort has n² tasks, slow and no harder.
    chunk = draw(st.integers(max(1, n // 5), n))
    return values, groups, chunk


# Each example runs a whole distributed sort (a few hundred tasks): a small budget here.
@settings(max_examples=6)
@given(partitioned())
def test_exact_metrics_equal_in_memory(case):
    values, groups, chunk = case
    with dask.config.set(scheduler="sync"):
        s, g = da.from_array(values, chunks=chunk), da.from_array(groups, chunks=chunk)
        got = fd.fairness_report(None, s, sensitive_features=g, task="regression")
    expected = metrics.fairness_report(None, values, sensitive_features=groups, task="regression")
    keys = ["wass1", "max_pairwise_w1", "max_pairwise_w2", "max_pairwise_winf"]
    for key in keys:
        assert abs(got.attrs["summary"][key] - expected.attrs["summary"][key]) <= 1e-12
    np.testing.assert_allclose(got["w1_to_pooled"], expected["w1_to_pooled"], rtol=0, atol=1e-12)


# A handful of small tasks per example (synchronous scheduler): the profile's budget.
@given(
    u=st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=30),
    v=st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=30),
    k=st.sampled_from([-996, -200, 0, 200, 660, 1000]),
    p=st.sampled_from([1, 2, 7.5, 1000, np.inf]),
    chunk=st.integers(1, 12),
    empty_front=st.booleans(),
)
def test_wasserstein_distance_equals_memory_at_any_scale(u, v, k, p, chunk, empty_front):
    # Values scaled by 2^k (exact), with an empty leading partition in u when drawn.
    u, v = np.ldexp(np.array(u), k), np.ldexp(np.array(v), k)
    du = da.from_array(u, chunks=chunk)
    if empty_front:
        du = da.concatenate([da.from_array(np.empty(0), chunks=1), du])
    with dask.config.set(scheduler="sync"):
        got = fd.wasserstein_distance(du, da.from_array(v, chunks=chunk), p=p)
    expected = metrics.wasserstein_distance(u, v, p=p)
    assert got == pytest.approx(expected, rel=1e-9, abs=0)
