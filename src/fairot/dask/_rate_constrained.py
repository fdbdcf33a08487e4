r"""``RateConstrainedClassifier`` fitted on and applied to Dask collections.

The backend of the operations ``"RateConstrainedClassifier.fit"``, ``".cell_proba"``,
``".decision_function"``, ``".predict_proba"`` and ``".predict"`` (see
:mod:`fairot.utils.backends`).

The fit chooses the multipliers for a probability model trained already (wrapped in
:class:`~sklearn.frozen.FrozenEstimator`), without gathering the rows:

1. one pass reads each partition's length, distinct labels and distinct groups (and strata),
   which give ``classes_`` and the group encoding (the in-memory one: sorted labels);
2. one pass sums each cell's weight, :math:`\sum_{i:\ c_i = c} w_i`, over the cell codes
   :math:`c_i = (\text{stratum} \cdot K + a) \cdot 2 + y` of the rows; the estimator's seam
   :meth:`~fairot.classification.RateConstrainedClassifier.fit_cells` takes them;
3. the cell probabilities of every row, the codes and the weights become lazy Dask arrays (the
   estimator's own ``cell_proba`` on each partition), and the seam
   :meth:`~fairot.classification.RateConstrainedClassifier.fit_cell_proba` ends the fit: its
   program is :func:`~fairot.classification.solve_rate_program` on Dask arrays (a few more
   passes; only its working set is gathered), its rates two lazy sums computed together.

Nothing here reads or writes the estimator's private state. ``cv_proba_`` and
``cv_decisions_`` of such a fit are lazy Dask arrays in the partitions of ``X``: computing them
recomputes the model's probabilities, and they are never gathered unless the user asks.

An estimator that is not frozen is refused (:data:`MSG_DASK_RATE_ESTIMATOR`): training and
cross-fitting it would need the rows in one process. The predictions apply the fitted rule to
each partition with the in-memory methods, so they equal the in-memory ones row by row.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd
from sklearn.frozen import FrozenEstimator

from fairot.dask._collections import (
    aligned_blocks,
    check_block_lengths,
    compute,
    delayed,
    distinct_rows,
    encoding_from_distinct,
    predict_by_partition,
    sensitive_frame,
    share,
)
from fairot.dask._regression import _read_columns
from fairot.utils.arrays import check_array_1d, check_sample_weight
from fairot.utils.sensitive import check_sensitive_features
from fairot.utils.targets import check_binary_target

MSG_DASK_RATE_ESTIMATOR = (
    "on Dask collections RateConstrainedClassifier chooses the multipliers for a probability "
    "model trained already: fit the model of the cell codes (stratum * n_groups + group) * 2 + "
    "label in memory on a sample (better: on rows apart from X), wrap it in "
    "sklearn.frozen.FrozenEstimator and pass it as estimator; training and cross-fitting it "
    "would gather every row into one process. Got estimator={name}."
)


def _summary(i: int, X: Any, y: Any, sf: Any, cf: Any, w: Any) -> tuple:
    """A partition's rows, distinct labels, distinct groups and distinct strata."""
    check_block_lengths(i, X=X, y=y, sensitive_features=sf, control_features=cf, sample_weight=w)
    return (
        len(X),
        np.unique(np.asarray(y)),
        distinct_rows(sf),
        None if cf is None else distinct_rows(cf),
    )


def _strata_encoding(distinct: list[pd.DataFrame]):
    """The strata of the whole collection from each partition's distinct rows (sorted)."""
    frame = pd.concat(distinct, ignore_index=True).drop_duplicates().reset_index(drop=True)
    return check_sensitive_features(frame, name="control_features", min_groups=1)


def _cell_codes(y: Any, sf: Any, cf: Any, classes: np.ndarray, groups: Any, strata: Any):
    """The cell code of each row of a partition (the estimator's documented formula)."""
    label = (np.asarray(y) == classes[1]).astype(np.intp)
    group = groups.encode(sensitive_frame(sf))
    stratum = 0 if strata is None else strata.encode(sensitive_frame(cf), "control_features")
    return ((stratum * groups.n_groups + group) * 2 + label).astype(np.intp)


def _checked_weights(w: Any) -> np.ndarray:
    """A partition's weights, validated as the in-memory ``fit`` does.

    A partition may weigh 0 in all (its rows simply do not count); the total is checked on
    the whole collection, by the estimator's groups and labels.
    """
    w = check_array_1d(w, "sample_weight", allow_nan=True, allow_empty=True)
    if np.all(w == 0):
        return w
    return check_sample_weight(w, w.shape[0])


def _cell_totals(codes: np.ndarray, w: np.ndarray | None, n_cells: int) -> np.ndarray:
    return np.bincount(codes, weights=w, minlength=n_cells).astype(float)


def _cell_proba(model: Any, X: Any, n_cells: int) -> np.ndarray:
    # An empty partition (from a filter, say) has no rows; scikit-learn refuses 0 rows.
    if X.shape[0] == 0:
        return np.zeros((0, n_cells))
    return model.cell_proba(X)


def _stack(parts: list, lengths: list[int], tail: tuple, dtype: Any) -> Any:
    """One Dask array of the delayed per-partition ``parts`` (known row chunks)."""
    import dask.array as da

    return da.concatenate(
        [
            da.from_delayed(p, shape=(n, *tail), dtype=dtype)
            for p, n in zip(parts, lengths, strict=True)
        ]
    )


def fit_rate_constrained(
    model: Any,
    X: Any,
    y: Any,
    *,
    sensitive_features: Any,
    control_features: Any = None,
    sample_weight: Any = None,
) -> Any:
    """Fit ``model`` (a ``RateConstrainedClassifier`` with a frozen model) on Dask data.

    ``sensitive_features`` and ``control_features`` are Dask collections partitioned as ``X``,
    or names of columns of a Dask DataFrame ``X`` (which keeps them, as in memory).
    """
    base = model.estimator
    if not isinstance(base, FrozenEstimator):
        raise ValueError(MSG_DASK_RATE_ESTIMATOR.format(name=type(base).__name__))
    sensitive_features, _ = _read_columns(X, sensitive_features)
    if control_features is not None:
        control_features, _ = _read_columns(X, control_features)
    blocks = aligned_blocks(
        {
            "X": X,
            "y": y,
            "sensitive_features": sensitive_features,
            "control_features": control_features,
            "sample_weight": sample_weight,
        }
    )
    xs, ys, sfs = blocks["X"], blocks["y"], blocks["sensitive_features"]
    cfs = blocks.get("control_features", [None] * len(xs))
    ws = blocks.get("sample_weight", [None] * len(xs))
    summaries = compute(
        *[
            delayed(_summary)(i, *parts)
            for i, parts in enumerate(zip(xs, ys, sfs, cfs, ws, strict=True))
        ]
    )
    lengths = [s[0] for s in summaries]
    classes = check_binary_target(np.unique(np.concatenate([s[1] for s in summaries])))
    groups = encoding_from_distinct([s[2] for s in summaries], "intersection")
    strata = None if control_features is None else _strata_encoding([s[3] for s in summaries])
    n_cells = (1 if strata is None else strata.n_groups) * groups.n_groups * 2
    codes = [
        delayed(_cell_codes)(yb, sb, cb, classes, groups, strata)
        for yb, sb, cb in zip(ys, sfs, cfs, strict=True)
    ]
    weights = [None if wb is None else delayed(_checked_weights)(wb) for wb in ws]
    totals = compute(
        *[delayed(_cell_totals)(c, w, n_cells) for c, w in zip(codes, weights, strict=True)]
    )
    model.fit_cells(
        X,
        classes=classes,
        encoding=groups,
        strata=strata,
        cell_weights=np.sum(totals, axis=0),
        estimator=base,
    )
    # A snapshot: the lazy cv_proba_ must not follow a later refit of the same object.
    fitted = share(copy.copy(model))
    proba = [delayed(_cell_proba)(fitted, xb, n_cells) for xb in xs]
    return model.fit_cell_proba(
        _stack(proba, lengths, (n_cells,), float),
        _stack(codes, lengths, (), np.intp),
        sample_weight=None if sample_weight is None else _stack(weights, lengths, (), float),
    )


def _n_cells(model: Any) -> int:
    strata = 1 if model.strata_ is None else len(model.strata_)
    return strata * len(model.groups_) * 2


def cell_proba_rate_constrained(model: Any, X: Any) -> Any:
    """The cell probabilities, lazily per partition: a Dask array aligned with ``X``."""
    return predict_by_partition(model, "cell_proba", X, None, n_columns=_n_cells(model))


def decision_function_rate_constrained(model: Any, X: Any) -> Any:
    """The rule's scores, lazily per partition: a Dask array aligned with ``X``."""
    return predict_by_partition(model, "decision_function", X, None)


def predict_proba_rate_constrained(model: Any, X: Any) -> Any:
    """The constrained scores as probabilities, lazily per partition."""
    return predict_by_partition(model, "predict_proba", X, None, n_columns=2)


def predict_rate_constrained(model: Any, X: Any) -> Any:
    """Predicted classes, lazily per partition: a Dask array aligned with ``X``."""
    return predict_by_partition(model, "predict", X, None, dtype=model.classes_.dtype)
