"""The entry of ``fairot.metrics`` functions called with Dask collections.

Each public metric hands its arguments here through :func:`fairot.utils.backends.dispatch`
(operation ``"metric"``) when one of its data arguments is a Dask collection. The in-memory
options that have no Dask path yet (sample weights, a fixed reference, ``group_index="multi"``)
raise a clear error rather than being ignored; ``quantiles`` and ``sketch_k`` come from
``dask.config`` (``fairot.quantiles``, ``fairot.sketch_k``), as for the estimators.
"""

from __future__ import annotations

from typing import Any

from fairot.dask._options import quantiles_option, refuse_options


def dispatch_metric(name: str, args: tuple, sensitive_features: Any, **options: Any) -> Any:
    """Run the Dask version of metric ``name`` on ``fairot.metrics``-style arguments."""
    from fairot.dask import _metrics, _report

    quantiles, sketch_k = quantiles_option()
    refuse_options(
        sample_weight=(options.pop("sample_weight", None), None),
        reference=(options.pop("reference", None), None),
        group_index=(options.pop("group_index", "names"), "names"),
        u_weights=(options.pop("u_weights", None), None),
        v_weights=(options.pop("v_weights", None), None),
    )
    if name == "wasserstein_distance":
        return _metrics.wasserstein_distance(
            *args, quantiles=quantiles, sketch_k=sketch_k, **options
        )
    if name == "fairness_report":
        return _report.fairness_report(
            *args,
            sensitive_features=sensitive_features,
            quantiles=quantiles,
            sketch_k=sketch_k,
            **options,
        )
    # The group metrics reach here in fairlearn's form: args is (y_true, y_pred).
    function = getattr(_metrics, name)
    return function(
        *args,
        sensitive_features=sensitive_features,
        quantiles=quantiles,
        sketch_k=sketch_k,
        **options,
    )
