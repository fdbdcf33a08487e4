"""fairot.metrics functions called with Dask collections hand them to fairot.dask."""

import numpy as np
import pytest

pytest.importorskip("dask.array")

from fairot import metrics  # noqa: E402
from tests.dask.helpers import TOL, arr  # noqa: E402


def test_fairot_metrics_dispatch_dask_inputs(client, data):
    from fairot.dask._options import MSG_DASK_OPTION

    s, race = data["scores"][:8_000], data["race"][:8_000]
    ds, dr = arr(s, 2_000), arr(race, 2_000)
    # The public in-memory names hand Dask collections to fairot.dask (fairlearn's call form too).
    assert (
        abs(
            metrics.wass1(None, ds, sensitive_features=dr)
            - metrics.wass1(None, s, sensitive_features=race)
        )
        <= TOL
    )
    assert (
        abs(
            metrics.wasserstein_distance(ds, ds[:3_000] + 0.1, p=2)
            - metrics.wasserstein_distance(s, s[:3_000] + 0.1, p=2)
        )
        <= TOL
    )
    with pytest.raises(
        ValueError, match=MSG_DASK_OPTION.format(option="sample_weight", value=1)[:30]
    ):
        metrics.strong_demographic_disparity(
            None, ds, sensitive_features=dr, sample_weight=np.ones(8_000)
        )
