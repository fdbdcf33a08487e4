"""fairot on Dask: fairness metrics and quantile post-processing beyond one machine's memory.

Every function takes Dask arrays, Series or DataFrames (partitioned alike) and computes on the
active scheduler, a ``distributed.Client`` when one is running (``Client("tcp://host:8786")``
points fairot at an existing cluster). ``quantiles="exact"`` sorts each group across the
cluster and returns the in-memory numbers; ``quantiles="sketch"`` merges KLL sketches, with the
error bound of :func:`fairot.dask.w1_error_bound`. ``import fairot`` does not import dask; this
package does.
"""

from importlib import import_module
from typing import Any

# Loaded on first use: importing fairot.dask imports dask, which a user may not have asked for.
_PUBLIC = {
    "fairness_report": "_report",
    "max_pairwise_wasserstein": "_metrics",
    "rank_error": "_sketch",
    "strong_demographic_disparity": "_metrics",
    "strong_pairwise_demographic_disparity": "_metrics",
    "w1_error_bound": "_sketch",
    "wass1": "_metrics",
    "wasserstein_distance": "_metrics",
}
__all__ = sorted(_PUBLIC)


def _metric(*args: Any, **kwargs: Any) -> Any:
    from fairot.dask._dispatch import dispatch_metric

    return dispatch_metric(*args, **kwargs)


#: The backend protocol of :mod:`fairot.utils.backends`: operation name -> implementation.
IMPLEMENTATIONS = {"metric": _metric}


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(import_module(f"fairot.dask.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module 'fairot.dask' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__


def _lazy(module: str, name: str) -> Any:
    """``fairot.dask.<module>.<name>``, imported when first called (the module imports dask)."""

    def implementation(*args: Any, **kwargs: Any) -> Any:
        return getattr(import_module(f"fairot.dask.{module}"), name)(*args, **kwargs)

    implementation.__name__ = name
    return implementation


# The estimators' entries: each public method of QuantileParityPostProcessor and
# WassersteinFairRegressor called with Dask collections (fairot.utils.backends.dispatch) runs
# the function of the same role here.
IMPLEMENTATIONS.update(
    {
        "QuantileParityPostProcessor.fit": _lazy("_postprocessing", "fit_quantile_parity"),
        "QuantileParityPostProcessor.predict": _lazy("_postprocessing", "predict_quantile_parity"),
        "QuantileParityPostProcessor.predict_proba": _lazy(
            "_postprocessing", "predict_proba_quantile_parity"
        ),
        "WassersteinFairRegressor.fit": _lazy("_regression", "fit_wasserstein_regressor"),
        "WassersteinFairRegressor.predict": _lazy("_regression", "predict_wasserstein_regressor"),
        # solve_rate_program on Dask arrays: its rows, as partitions (the loop stays in memory).
        "solve_rate_program.rows": _lazy("_rate_program", "rate_program_rows"),
        "RateConstrainedClassifier.fit": _lazy("_rate_constrained", "fit_rate_constrained"),
        "RateConstrainedClassifier.cell_proba": _lazy(
            "_rate_constrained", "cell_proba_rate_constrained"
        ),
        "RateConstrainedClassifier.decision_function": _lazy(
            "_rate_constrained", "decision_function_rate_constrained"
        ),
        "RateConstrainedClassifier.predict_proba": _lazy(
            "_rate_constrained", "predict_proba_rate_constrained"
        ),
        "RateConstrainedClassifier.predict": _lazy("_rate_constrained", "predict_rate_constrained"),
        # Lazy results of a fit on Dask rows (a few sums), computed together in one pass.
        "compute": _lazy("_collections", "compute"),
    }
)
