"""The KLL sketches of Dask data: sketched metrics within their rank-error bound, against SciPy."""

import pytest
import scipy.stats

pytest.importorskip("dask.array")

import fairot.dask as fd  # noqa: E402
from fairot import metrics  # noqa: E402
from tests.dask.helpers import arr  # noqa: E402


def test_sketch_within_its_bound(client, data):
    s, race = data["scores"], data["race"]
    ds, dr = arr(s), arr(race)
    names = ["b", "o", "w"]
    groups = [s[race == name] for name in names]
    ranges = [g.max() - g.min() for g in groups]
    k = 200  # a small sketch, so that it really compacts (2·10^4 >> k)
    gap = fd.max_pairwise_wasserstein(
        None, ds, sensitive_features=dr, p=1, quantiles="sketch", sketch_k=k
    )
    for i in range(3):
        for j in range(i + 1, 3):
            exact = scipy.stats.wasserstein_distance(groups[i], groups[j])
            bound = fd.w1_error_bound(k, ranges[i], ranges[j])
            assert abs(gap.matrix.iloc[i, j] - exact) <= bound
    sdd = fd.strong_demographic_disparity(
        None, ds, sensitive_features=dr, quantiles="sketch", sketch_k=k
    )
    bound = sum(fd.w1_error_bound(k, r, s.max() - s.min()) for r in ranges)
    assert (
        abs(sdd - metrics.strong_demographic_disparity(None, s, sensitive_features=race)) <= bound
    )
