"""Dask collections in, NumPy blocks: empty partitions skipped, an entirely empty one an error."""

import dask
import numpy as np
import pandas as pd
import pytest
import scipy.stats

dd = pytest.importorskip("dask.dataframe")

import fairot.dask as fd  # noqa: E402
from fairot import metrics  # noqa: E402


def _frame(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": np.arange(float(n)), "s": rng.random(n), "g": rng.integers(0, 2, n)})


def test_filter_leaving_empty_partitions_matches_memory():
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=4)
    sub, mem = ddf[ddf.x > 25], df[df.x > 25]
    got = fd.max_pairwise_wasserstein(None, sub.s, sensitive_features=sub.g, p=1)
    expected = metrics.max_pairwise_wasserstein(
        None, mem.s.to_numpy(), sensitive_features=mem.g.to_numpy(), p=1
    )
    assert got.distance == pytest.approx(expected.distance, rel=1e-12, abs=1e-15)
    a = mem.s[mem.g == 0].to_numpy()
    b = mem.s[mem.g == 1].to_numpy()
    assert got.distance == pytest.approx(scipy.stats.wasserstein_distance(a, b), rel=1e-12)


def test_from_delayed_with_an_empty_frame_matches_memory():
    df = _frame()
    parts = [df.iloc[:20], df.iloc[:0], df.iloc[20:]]
    ddf = dd.from_delayed([dask.delayed(p) for p in parts], meta=df.iloc[:0])
    got = fd.max_pairwise_wasserstein(None, ddf.s, sensitive_features=ddf.g, p=1)
    a = df.s[df.g == 0].to_numpy()
    b = df.s[df.g == 1].to_numpy()
    assert got.distance == pytest.approx(scipy.stats.wasserstein_distance(a, b), rel=1e-12)


def test_entirely_empty_collection_is_an_error():
    ddf = dd.from_pandas(_frame(), npartitions=4)
    empty = ddf[ddf.x > 1000]
    with pytest.raises(ValueError, match="is empty; at least one sample is needed"):
        fd.max_pairwise_wasserstein(None, empty.s, sensitive_features=empty.g)


def test_quantile_parity_fit_predict_with_empty_partitions_matches_memory():
    from fairot.classification import QuantileParityPostProcessor

    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    df["g"] = rng.integers(0, 2, n)
    df["y"] = (df.a + rng.normal(size=n) > 0).astype(int)
    ddf = dd.from_pandas(df, npartitions=4)
    sub = ddf[ddf.a > 0]
    early = sub.b.map_partitions(lambda s: pd.Series(s.index < 150, index=s.index))
    sub = sub[early]  # the last partitions: empty
    X = sub[["a", "b"]].to_dask_array(lengths=True)
    assert 0 in X.chunks[0]
    y, g = sub.y.to_dask_array(lengths=True), sub.g.to_dask_array(lengths=True)
    model = QuantileParityPostProcessor().fit(X, y, sensitive_features=g)
    got = model.predict_proba(X, sensitive_features=g).compute()
    mem = sub.compute()
    Xm, gm = mem[["a", "b"]].to_numpy(), mem.g.to_numpy()
    expected = QuantileParityPostProcessor().fit(Xm, mem.y.to_numpy(), sensitive_features=gm)
    np.testing.assert_allclose(got, expected.predict_proba(Xm, sensitive_features=gm), atol=1e-12)
