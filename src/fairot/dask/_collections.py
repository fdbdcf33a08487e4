"""Dask collections in, NumPy blocks out: partitions, validation and group encoding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from fairot.utils.arrays import check_array_1d
from fairot.utils.backends import is_dask_collection
from fairot.utils.groups import GroupEncoding, GroupsMode
from fairot.utils.groups import sensitive_frame as _as_frame
from fairot.utils.sensitive import check_sensitive_features

MSG_PARTITIONS = (
    "{name} has {got} partitions but {reference} has {expected}; give every Dask argument the "
    "same partitioning (dask.array: rechunk to the same row chunks; DataFrame: repartition)."
)
MSG_BLOCK_LENGTH = (
    "partition {i}: {name} has {got} rows but {reference} has {expected}; the Dask arguments "
    "must be aligned row for row."
)
MSG_NOT_DASK = "{name} must be a Dask array, Series or DataFrame; got {type}."
MSG_COLUMNS = "{name} must have its columns in one chunk; got column chunks {chunks}."


def to_blocks(x: Any, name: str) -> list:
    """One ``dask.delayed`` object per row partition of a Dask array, Series or DataFrame."""
    if not is_dask_collection(x):
        raise TypeError(MSG_NOT_DASK.format(name=name, type=type(x).__name__))
    if hasattr(x, "chunks"):
        if x.ndim == 2 and len(x.chunks[1]) != 1:
            raise ValueError(MSG_COLUMNS.format(name=name, chunks=x.chunks[1]))
        return list(np.asarray(x.to_delayed()).ravel())
    return list(x.to_delayed())


def aligned_blocks(named: dict[str, Any]) -> dict[str, list]:
    """Blocks of several Dask arguments, checked to have the same number of partitions."""
    blocks = {name: to_blocks(x, name) for name, x in named.items() if x is not None}
    reference, first = next(iter(blocks.items()))
    for name, parts in blocks.items():
        if len(parts) != len(first):
            raise ValueError(
                MSG_PARTITIONS.format(
                    name=name, got=len(parts), reference=reference, expected=len(first)
                )
            )
    return blocks


def check_block_lengths(i: int, **arrays: Any) -> None:
    """Raise when the blocks of partition ``i`` differ in length."""
    items = [(k, len(v)) for k, v in arrays.items() if v is not None]
    reference, expected = items[0]
    for name, got in items[1:]:
        if got != expected:
            raise ValueError(
                MSG_BLOCK_LENGTH.format(
                    i=i, name=name, got=got, reference=reference, expected=expected
                )
            )


def sensitive_frame(block: Any) -> pd.DataFrame:
    """A partition of sensitive features as a DataFrame (the in-memory accepted forms)."""
    return _as_frame(block, "sensitive_features")


def distinct_rows(block: Any) -> pd.DataFrame:
    """The distinct rows of a partition's sensitive features (all a group encoding needs)."""
    return sensitive_frame(block).drop_duplicates()


def encoding_from_distinct(
    distinct: list[pd.DataFrame], group_mode: GroupsMode, min_groups: int = 2
) -> GroupEncoding:
    """The groups of the whole collection, built from each partition's distinct rows.

    Labels are the sorted distinct values, so the encoding (order, names) is the one the
    in-memory functions build from the full data.
    """
    frame = pd.concat(distinct, ignore_index=True).drop_duplicates().reset_index(drop=True)
    return check_sensitive_features(frame, group_mode=group_mode, min_groups=min_groups)


def label_arrays(values: np.ndarray, sf_block: Any, encoding: GroupEncoding) -> list[np.ndarray]:
    """The values of each group (overlapping for marginal groups), then all values (pooled)."""
    codes = encoding.encode(sensitive_frame(sf_block))
    if codes.ndim == 1:
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(encoding.n_groups + 1))
        grouped = [values[order[bounds[g] : bounds[g + 1]]] for g in range(encoding.n_groups)]
    else:
        grouped = [values[codes[:, g]] for g in range(encoding.n_groups)]
    return [*grouped, values]


def checked_values(block: Any, name: str, bounds: tuple[float, float] | None) -> np.ndarray:
    """A partition of scores or predictions, validated as the in-memory functions do.

    A partition may be empty (a filter or ``from_delayed`` leaves such partitions); only an
    entirely empty collection is an error, and that is checked on the merged result.
    """
    return check_array_1d(block, name, bounds=bounds, allow_empty=True)


def compute(*tasks: Any) -> tuple:
    """``dask.compute`` on the active scheduler (a ``distributed.Client`` when one is running)."""
    import dask

    return dask.compute(*tasks)


def delayed(fn: Callable, **kwargs: Any) -> Callable:
    """``dask.delayed(fn)`` with a pure task (same inputs, same key)."""
    import dask

    return dask.delayed(fn, pure=True, **kwargs)


def share(obj: Any) -> Any:
    """``obj`` for many tasks: scattered once to every worker when a distributed client runs.

    A fitted estimator holding every group's sorted scores (exact path) would otherwise be
    embedded in the task graph and sent through the scheduler.
    """
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        return dask_delayed_object(obj)
    return client.scatter(obj, broadcast=True, hash=False)


def dask_delayed_object(obj: Any) -> Any:
    """``dask.delayed(obj)``: one graph key holding ``obj``."""
    import dask

    return dask.delayed(obj)


def _apply_method(model: Any, method: str, X: Any, sf: Any, empty: np.ndarray) -> np.ndarray:
    # An empty partition (from a filter, say) has no rows; scikit-learn refuses 0 rows.
    if X.shape[0] == 0:
        return empty
    if sf is None:  # a method that reads X only
        return getattr(model, method)(X)
    return getattr(model, method)(X, sensitive_features=sf)


def predict_by_partition(
    model: Any,
    method: str,
    X: Any,
    sensitive_features: Any,
    *,
    n_columns: int | None = None,
    dtype: Any = np.float64,
) -> Any:
    """``model.<method>(X, sensitive_features=...)`` (or ``(X)``) lazily, partition by partition.

    The fitted model is shared once (:func:`share`) and applied to each aligned pair of
    partitions on the workers.

    Parameters
    ----------
    model : estimator
        A fitted estimator whose ``method`` takes ``sensitive_features``.
    method : str
        ``"predict"``, ``"predict_proba"``, ...
    X, sensitive_features : Dask collections
        Partitioned alike; ``sensitive_features`` ``None`` for a method that reads ``X`` only.
    n_columns : int, optional
        Columns of the method's output (``None``: one value per row).
    dtype : numpy dtype, default=float64
        Of the method's output (a classifier's ``predict`` returns its ``classes_``).

    Returns
    -------
    dask.array.Array
        Row chunks aligned with ``X`` (unknown lengths for a DataFrame's partitions).
    """
    import dask.array as da

    blocks = aligned_blocks({"X": X, "sensitive_features": sensitive_features})
    model_d = share(model)
    lengths = X.chunks[0] if hasattr(X, "chunks") else [np.nan] * len(blocks["X"])
    tail = () if n_columns is None else (n_columns,)
    empty = np.empty((0, *tail), dtype=dtype)
    parts = [
        da.from_delayed(
            delayed(_apply_method)(model_d, method, xb, sb, empty),
            shape=(n, *tail),
            dtype=dtype,
        )
        for xb, sb, n in zip(
            blocks["X"],
            blocks.get("sensitive_features", [None] * len(blocks["X"])),
            lengths,
            strict=True,
        )
    ]
    return da.concatenate(parts, axis=0)
