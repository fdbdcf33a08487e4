"""fairot.dask metrics against the in-memory fairot.metrics, SciPy and POT."""

import numpy as np
import ot
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

import fairot.dask as fd  # noqa: E402
from fairot import metrics  # noqa: E402
from fairot.dask._collections import MSG_PARTITIONS  # noqa: E402
from fairot.dask._options import MSG_QUANTILES  # noqa: E402
from tests.dask.helpers import TOL, arr  # noqa: E402


@pytest.mark.parametrize("p", [1, 3, np.inf])
def test_wasserstein_distance_any_sizes_and_partitions(client, data, p):
    u = data["scores"][:13_001]
    v = data["r"][:7_777]
    got = fd.wasserstein_distance(arr(u, 3_000), arr(v, 2_000), p=p)
    if p == np.inf:
        # W-infinity: the largest gap between the sorted samples' quantile functions.
        assert abs(got - metrics.wasserstein_distance(u, v, p="inf")) <= TOL
    else:
        # POT's exact 1-D solver is the oracle for every finite order.
        expected = ot.wasserstein_1d(u, v, p=p) ** (1.0 / p)
        assert abs(got - expected) <= 1e-10


def test_score_metrics_marginal_and_proportional(client, data):
    s, sf = data["scores"], pd.DataFrame({"race": data["race"], "sex": data["sex"]})
    ds, dsf = arr(s), dd.from_pandas(sf, npartitions=4)
    # Overlapping groups: each row is sorted once per group it belongs to.
    assert (
        abs(
            fd.strong_demographic_disparity(None, ds, sensitive_features=dsf, group_mode="marginal")
            - metrics.strong_demographic_disparity(
                None, s, sensitive_features=sf, group_mode="marginal"
            )
        )
        <= TOL
    )
    assert (
        abs(
            fd.strong_pairwise_demographic_disparity(
                None, ds, sensitive_features=dsf, group_mode="marginal"
            )
            - metrics.strong_pairwise_demographic_disparity(
                None, s, sensitive_features=sf, group_mode="marginal"
            )
        )
        <= TOL
    )
    assert (
        abs(
            fd.wass1(None, ds, sensitive_features=dsf, group_weights="proportional")
            - metrics.wass1(None, s, sensitive_features=sf, group_weights="proportional")
        )
        <= TOL
    )
    gap = fd.max_pairwise_wasserstein(None, ds, sensitive_features=dsf, p="inf")
    expected = metrics.max_pairwise_wasserstein(None, s, sensitive_features=sf, p="inf")
    assert gap.pair == expected.pair
    np.testing.assert_allclose(gap.matrix, expected.matrix, rtol=0, atol=TOL)


def test_errors(client, data):
    s, race = arr(data["scores"]), arr(data["race"])
    with pytest.raises(ValueError, match=MSG_QUANTILES.format(value="approx")[:30]):
        fd.wass1(None, s, sensitive_features=race, quantiles="approx")
    with pytest.raises(ValueError, match="sensitive_features has 2 partitions"):
        fd.strong_demographic_disparity(None, s, sensitive_features=arr(data["race"], 10_000))
    assert MSG_PARTITIONS.startswith("{name} has")
    bad = data["scores"].copy()
    bad[17_000] = 1.5
    with pytest.raises(ValueError, match="scores"):
        fd.strong_demographic_disparity(None, arr(bad), sensitive_features=race)
    with pytest.raises(ValueError, match="sketch_k"):
        fd.wass1(None, s, sensitive_features=race, quantiles="sketch", sketch_k=3)


@pytest.mark.integration
def test_import_fairot_does_not_import_dask():
    import subprocess
    import sys

    code = "import sys, fairot, fairot.metrics, fairot.classification; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "name",
    [
        "fairness_report",
        "max_pairwise_wasserstein",
        "strong_demographic_disparity",
        "strong_pairwise_demographic_disparity",
        "wass1",
    ],
)
def test_dask_metrics_take_fairlearns_form(name):
    import inspect

    parameters = inspect.signature(getattr(fd, name)).parameters
    assert list(parameters)[:3] == ["y_true", "y_pred", "sensitive_features"]
    assert parameters["sensitive_features"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["sensitive_features"].default is inspect.Parameter.empty
    s = arr([0.1, 0.3, 0.6, 0.8], chunk=2)
    g = arr(["a", "a", "b", "b"], chunk=2)
    form = f"{name} takes fairlearn's form"
    with pytest.raises(TypeError, match=form):
        getattr(fd, name)(None, s, g)  # a positional third argument
    with pytest.raises(TypeError, match=form):
        getattr(fd, name)(s, g)  # the old score-only form: no groups
    # Through fairot.metrics, the same call is refused with the same message.
    with pytest.raises(TypeError, match=form):
        getattr(metrics, name)(None, s, g)
