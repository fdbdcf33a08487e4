"""One-dimensional optimal transport: the math the three seed papers share.

Quantile functions and ECDF ranks, group quantile curves on the midpoint grid, exact couplings and
Wasserstein distances between empirical distributions, W1/W2 barycenters, and points on the
geodesic between a group and its target (partial transport to a tolerance tau). Everything is exact
(no grid approximation unless a grid is asked for) and vectorised NumPy.
"""

from fairot.transport._barycenter import (
    barycenter_distribution,
    barycenter_quantiles,
    weighted_median,
)
from fairot.transport._coupling import (
    SortedCoupling,
    check_p,
    joint_quantile_cells,
    optimal_coupling_1d,
    wasserstein_1d,
    wasserstein_sorted,
    wasserstein_sorted_orders,
)
from fairot.transport._fourier import (
    DEFAULT_GRID_SIZE,
    FeatureTable,
    FourierFeatures,
    draw_fourier_features,
    fourier_features,
    fourier_features_derivative,
    interpolate_features,
    tabulate_features,
)
from fairot.transport._geodesic import (
    MSG_TAU,
    TAU_MEANING,
    check_tau,
    geodesic_map,
    geodesic_quantiles,
    geodesic_targets,
)
from fairot.transport._quantiles import (
    MASS_TOLERANCE,
    ecdf_rank,
    midpoint_grid,
    quantile_curves,
    quantile_function,
)
from fairot.transport._targets import MAX_TARGET_LEVELS, build_target
from fairot.transport._to_reference import w1_to_reference

__all__ = [
    "MASS_TOLERANCE",
    "MSG_TAU",
    "TAU_MEANING",
    "SortedCoupling",
    "joint_quantile_cells",
    "wasserstein_sorted",
    "wasserstein_sorted_orders",
    "w1_to_reference",
    "DEFAULT_GRID_SIZE",
    "MAX_TARGET_LEVELS",
    "FeatureTable",
    "FourierFeatures",
    "build_target",
    "draw_fourier_features",
    "fourier_features",
    "fourier_features_derivative",
    "interpolate_features",
    "tabulate_features",
    "barycenter_distribution",
    "barycenter_quantiles",
    "check_p",
    "check_tau",
    "geodesic_map",
    "geodesic_quantiles",
    "geodesic_targets",
    "ecdf_rank",
    "midpoint_grid",
    "optimal_coupling_1d",
    "quantile_curves",
    "quantile_function",
    "wasserstein_1d",
    "weighted_median",
]
