"""The exact path: Dask W_p is overflow-safe as in memory (p = 1000, values near 1e200)."""

import numpy as np
import pandas as pd
import pytest
import scipy.stats

dd = pytest.importorskip("dask.dataframe")

import fairot.dask as fd  # noqa: E402
from fairot import metrics  # noqa: E402


def _samples(seed=0, n=60):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n), rng.normal(loc=0.5, size=n + 7)


@pytest.mark.parametrize("scale", [1.0, 1e200, 1e-200, 2.0**1000])
@pytest.mark.parametrize("p", [1, 2, 3.5, 1000, np.inf])
def test_wasserstein_distance_matches_memory_at_extreme_scale(scale, p):
    u, v = _samples()
    u, v = u * scale, v * scale
    du = dd.from_pandas(pd.Series(u), npartitions=3)
    dv = dd.from_pandas(pd.Series(v), npartitions=2)
    got = fd.wasserstein_distance(du, dv, p=p)
    expected = metrics.wasserstein_distance(u, v, p=p)
    assert np.isfinite(got)
    assert got == pytest.approx(expected, rel=1e-9)
    # Homogeneous of degree 1: the unscaled answer times the scale (scipy for p = 1).
    unscaled = metrics.wasserstein_distance(u / scale, v / scale, p=p)
    assert got == pytest.approx(unscaled * scale, rel=1e-9)
    if p == 1:
        assert got == pytest.approx(scipy.stats.wasserstein_distance(u, v), rel=1e-9)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_group_gaps_match_memory_at_extreme_scale(scale):
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"s": rng.normal(size=90) * scale, "g": rng.integers(0, 3, 90)})
    ddf = dd.from_pandas(df, npartitions=4)
    for p in (1, 2, np.inf):
        got = fd.max_pairwise_wasserstein(None, ddf.s, sensitive_features=ddf.g, p=p)
        expected = metrics.max_pairwise_wasserstein(
            None, df.s.to_numpy(), sensitive_features=df.g.to_numpy(), p=p
        )
        assert np.isfinite(got.distance)
        assert got.distance == pytest.approx(expected.distance, rel=1e-9)


def test_regression_report_matches_memory_at_1e300():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"s": rng.normal(size=90) * 1e300, "g": rng.integers(0, 3, 90)})
    ddf = dd.from_pandas(df, npartitions=4)
    got = fd.fairness_report(None, ddf.s, sensitive_features=ddf.g, task="regression")
    expected = metrics.fairness_report(
        None, df.s.to_numpy(), sensitive_features=df.g.to_numpy(), task="regression"
    )
    for key, value in expected.attrs["summary"].items():
        if isinstance(value, float):
            assert np.isfinite(got.attrs["summary"][key]), key
            assert got.attrs["summary"][key] == pytest.approx(value, rel=1e-9), key
        else:
            assert got.attrs["summary"][key] == value, key
