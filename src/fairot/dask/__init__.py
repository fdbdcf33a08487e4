"""fairot on Dask: fairness metrics and quantile post-processing beyond one machine's memory.

Every function takes Dask arrays, Series or DataFrames (partitioned alike) and computes on the
active scheduler, a ``distributed.Client`` when one is running (``Client("tcp://host:8786")``
points fairot at an existing cluster). ``quantiles="exact"`` sorts each group across the
cluster and returns the in-memory numbers; ``quantiles="sketch"`` merges KLL sketches, with the
error bound of :func:`fairot.dask.w1_error_bound`. ``import fairot`` does not import dask; this
package does.
"""

from fairot.dask._metrics import (
    fairness_report,
    max_pairwise_wasserstein,
    strong_demographic_disparity,
    strong_pairwise_demographic_disparity,
    wass1,
    wasserstein_distance,
)
from fairot.dask._sketch import rank_error, w1_error_bound

__all__ = [
    "fairness_report",
    "max_pairwise_wasserstein",
    "rank_error",
    "strong_demographic_disparity",
    "strong_pairwise_demographic_disparity",
    "w1_error_bound",
    "wass1",
    "wasserstein_distance",
]
