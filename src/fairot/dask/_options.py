"""The options of the Dask backend: which quantiles, and the in-memory options it refuses.

``quantiles`` and ``sketch_k`` are keywords of the functions of :mod:`fairot.dask`; a public
``fairot.metrics`` function or estimator called with Dask collections reads them from
``dask.config`` (``fairot.quantiles``, ``fairot.sketch_k``), since their signatures are the
in-memory ones. The in-memory options that have no Dask path yet (sample weights, a fixed
reference, ...) are refused by :func:`refuse_options`, the one guard every entry point calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairot.dask._sketch import DEFAULT_K, check_sketch_k

MSG_QUANTILES = "quantiles must be 'exact' or 'sketch'; got {value!r}."
MSG_DASK_OPTION = (
    "{option} is not supported on Dask collections yet; got {option} of type {value}. Compute "
    "the collections (small data) or leave {option} at its default."
)
CONFIG_QUANTILES = "fairot.quantiles"
CONFIG_SKETCH_K = "fairot.sketch_k"
CONFIG_TRAIN_ROWS = "fairot.train_sample_rows"
#: Rows of a Dask collection an estimator trains its model on in memory, by default.
DEFAULT_TRAIN_ROWS = 100_000
MSG_TRAIN_ROWS = (
    "dask.config 'fairot.train_sample_rows' must be a positive integer (the rows an estimator "
    "trains its model on in memory); got {value!r}."
)


def check_quantiles(quantiles: str) -> str:
    """Validate the ``quantiles`` option."""
    if quantiles not in ("exact", "sketch"):
        raise ValueError(MSG_QUANTILES.format(value=quantiles))
    return quantiles


def quantiles_option() -> tuple[str, int]:
    """``quantiles`` and ``sketch_k`` for the public functions and estimators, from ``dask.config``.

    ``dask.config.set({"fairot.quantiles": "sketch", "fairot.sketch_k": 2000})`` switches their
    Dask path (their signatures are unchanged); the defaults are ``"exact"`` and 1000.
    """
    import dask

    quantiles = check_quantiles(dask.config.get(CONFIG_QUANTILES, "exact"))
    return quantiles, check_sketch_k(dask.config.get(CONFIG_SKETCH_K, DEFAULT_K))


def refuse_options(**options: tuple[Any, Any]) -> None:
    """Raise naming the first option given a value other than its default.

    Parameters
    ----------
    **options : tuple of (value, default)
        Each option's value as passed and its default (``None``, or a string default that an
        equal string leaves at the default).
    """
    for option, (value, default) in options.items():
        if value is not default and not (isinstance(value, str) and value == default):
            raise ValueError(MSG_DASK_OPTION.format(option=option, value=type(value).__name__))


def train_rows_option() -> int:
    """``dask.config`` ``fairot.train_sample_rows``: the size of the in-memory training sample.

    An estimator that trains a model on Dask rows (``RateConstrainedClassifier`` with an
    unfrozen ``estimator``) trains it on a random sample of about this many rows, gathered
    into one process; the default is 100,000.
    """
    import dask

    value = dask.config.get(CONFIG_TRAIN_ROWS, DEFAULT_TRAIN_ROWS)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(MSG_TRAIN_ROWS.format(value=value))
    return int(value)
