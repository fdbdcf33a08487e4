"""One-dimensional optimal transport: the math the three seed papers share.

Quantile functions and ECDF ranks, group quantile curves on the midpoint grid, exact couplings and
Wasserstein distances between empirical distributions, and W1/W2 barycenters. Everything is exact
(no grid approximation unless a grid is asked for) and vectorised NumPy.
"""

from fairot.transport._barycenter import (
    barycenter_distribution,
    barycenter_quantiles,
    weighted_median,
)
from fairot.transport._coupling import check_p, optimal_coupling_1d, wasserstein_1d
from fairot.transport._quantiles import (
    ecdf_rank,
    midpoint_grid,
    quantile_curves,
    quantile_function,
)

__all__ = [
    "barycenter_distribution",
    "barycenter_quantiles",
    "check_p",
    "ecdf_rank",
    "midpoint_grid",
    "optimal_coupling_1d",
    "quantile_curves",
    "quantile_function",
    "wasserstein_1d",
    "weighted_median",
]
