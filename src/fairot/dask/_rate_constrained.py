r"""``RateConstrainedClassifier`` fitted on and applied to Dask collections.

The backend of the operations ``"RateConstrainedClassifier.fit"``, ``".cell_proba"``,
``".decision_function"``, ``".predict_proba"`` and ``".predict"`` (see
:mod:`fairot.utils.backends`). The fit never gathers the rows:

1. one pass reads each partition's length, distinct labels and distinct groups (and strata),
   which give ``classes_`` and the group encoding (the in-memory one: sorted labels);
2. one pass sums each cell's weight, :math:`\sum_{i:\ c_i = c} w_i`, over the cell codes
   :math:`c_i = (\text{stratum} \cdot K + a) \cdot 2 + y` of the rows, which the estimator's
   seam :meth:`~fairot.classification.RateConstrainedClassifier.fit_cells` takes with the
   trained probability model;
3. the cell probabilities of every row, the codes and the weights become lazy Dask arrays, and
   the seam :meth:`~fairot.classification.RateConstrainedClassifier.fit_cell_proba` ends the
   fit: its program is :func:`~fairot.classification.solve_rate_program` on Dask arrays (a few
   more passes; only its working set is gathered), its rates two lazy sums computed together.

**The probability model.** A model in :class:`~sklearn.frozen.FrozenEstimator` scores every
row as it is (its ``cell_proba`` per partition), as in memory. Any other is trained in memory
on a *sample*, the only rows ever gathered: each row is drawn with probability
:math:`\min(1, m / n)`, :math:`m` = ``dask.config`` ``fairot.train_sample_rows`` (100,000 by
default), and assigned to one of ``cv`` folds, both by a hash of its global index keyed by
``random_state`` (:func:`row_draws`), so the fit is deterministic and the same however the
rows are partitioned. Fold :math:`k`'s model is trained on the sampled rows outside fold
:math:`k` and gives the cross-fitted probabilities of *every* row of fold :math:`k`, sampled or
not, so no row's probabilities come from a model that saw it; ``estimator_`` is trained on the
whole sample. With :math:`m \ge n` this is the in-memory fit with these folds (``cv`` as an
iterable of splits); the folds are not stratified on the cells, which matters only for cells
of a handful of rows.

Nothing here reads or writes the estimator's private state. ``cv_proba_`` and
``cv_decisions_`` of such a fit are lazy Dask arrays in the partitions of ``X``: computing them
recomputes the model's probabilities (persist ``X`` to avoid it), and they are never gathered
unless the user asks. The predictions apply the fitted rule to each partition with the
in-memory methods, so they equal the in-memory ones row by row.
"""

from __future__ import annotations

import copy
import dataclasses
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state

from fairot.classification.rate_rows import row_hash
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
from fairot.dask._options import train_rows_option
from fairot.dask._regression import _read_columns
from fairot.utils.arrays import check_array_1d, check_sample_weight
from fairot.utils.sensitive import check_sensitive_features
from fairot.utils.targets import MSG_Y_NAN, check_binary_target

MSG_DASK_CV = (
    "on Dask collections RateConstrainedClassifier draws its cross-fitting folds per row from "
    "random_state: cv must be an integer (at least 2); got a {cv}."
)
MSG_SAMPLE = (
    "the training sample of {n} rows leaves no rows of two cells outside fold {fold}; raise "
    "dask.config 'fairot.train_sample_rows' or lower cv."
)


def _summary(i: int, X: Any, y: Any, sf: Any, cf: Any, w: Any) -> tuple:
    """A partition's rows, distinct labels, distinct groups and distinct strata."""
    check_block_lengths(i, X=X, y=y, sensitive_features=sf, control_features=cf, sample_weight=w)
    labels = np.asarray(y)
    missing = pd.isna(labels)
    if labels.dtype.kind == "f":
        missing |= ~np.isfinite(labels)
    if np.any(missing):  # here, where the row is known (the labels are merged below)
        row = f"{int(np.flatnonzero(missing)[0])} of partition {i}"
        raise ValueError(MSG_Y_NAN.format(name="y", row=row))
    return (
        len(X),
        np.unique(labels),
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


def row_draws(
    offset: int, n: int, seed: int, fraction: float, n_folds: int
) -> tuple[np.ndarray, np.ndarray]:
    """Whether each row of ``offset .. offset + n - 1`` is in the training sample, and its fold.

    The sample takes each row with probability ``fraction`` (the top 53 bits of its hash as a
    uniform number), the fold is the hash modulo ``n_folds`` (its low bits).
    """
    u = row_hash(offset, offset + n, seed)
    sampled = (u >> np.uint64(11)).astype(float) * 2.0**-53 < fraction
    return sampled, (u % np.uint64(n_folds)).astype(np.intp)


def _rows(X: Any, index: np.ndarray) -> Any:
    return X.iloc[index] if hasattr(X, "iloc") else X[index]


def _sample(X: Any, codes: np.ndarray, w: Any, offset: int, seed: int, fraction, n_folds):
    """The partition's rows of the training sample: features, codes, weights, folds."""
    sampled, fold = row_draws(offset, codes.shape[0], seed, fraction, n_folds)
    index = np.flatnonzero(sampled)
    return _rows(X, index), codes[index], None if w is None else w[index], fold[index]


def _placed(model: Any, X: Any, n_cells: int) -> np.ndarray:
    """``model.predict_proba`` in the columns of the cell codes (a cell it never saw: 0).

    As ``RateConstrainedClassifier.cell_proba`` places them; the model was fitted here on
    cell codes, so its classes are codes, and non-finite values meet the solver's check.
    """
    out = np.zeros((X.shape[0], n_cells))
    out[:, np.asarray(model.classes_, dtype=np.intp)] = model.predict_proba(X)
    return out


def _cross_fitted(models: list, X: Any, offset: int, seed: int, n_cells: int) -> np.ndarray:
    """Each row's cell probabilities from the model of the folds that did not hold it."""
    out = np.zeros((X.shape[0], n_cells))
    _, fold = row_draws(offset, X.shape[0], seed, 0.0, len(models))
    for k, fold_model in enumerate(models):
        index = np.flatnonzero(fold == k)
        if index.size:
            out[index] = _placed(fold_model, _rows(X, index), n_cells)
    return out


def _train(base: Any, samples: list, n_folds: int) -> tuple[list, Any]:
    """The fold models and the final model, each fitted in memory on the gathered sample."""
    X = (
        pd.concat([s[0] for s in samples])
        if hasattr(samples[0][0], "iloc")
        else np.concatenate([s[0] for s in samples])
    )
    codes = np.concatenate([s[1] for s in samples])
    w = None if samples[0][2] is None else np.concatenate([s[2] for s in samples])
    fold = np.concatenate([s[3] for s in samples])

    def fitted(rows):
        weights = {} if w is None else {"sample_weight": w[rows]}
        return clone(base).fit(_rows(X, rows), codes[rows], **weights)

    models = []
    for k in range(n_folds):
        train = np.flatnonzero(fold != k)
        if np.unique(codes[train]).shape[0] < 2:
            raise ValueError(MSG_SAMPLE.format(n=codes.shape[0], fold=k))
        models.append(fitted(train))
    return models, fitted(np.arange(codes.shape[0]))


def fit_rate_constrained(
    model: Any,
    X: Any,
    y: Any,
    *,
    sensitive_features: Any,
    control_features: Any = None,
    sample_weight: Any = None,
) -> Any:
    """Fit ``model`` (a ``RateConstrainedClassifier``) on Dask data.

    ``sensitive_features`` and ``control_features`` are Dask collections partitioned as ``X``,
    or names of columns of a Dask DataFrame ``X`` (which keeps them, as in memory). A model
    in ``FrozenEstimator`` scores every row as it is; another is trained in memory on a sample
    of about ``fairot.train_sample_rows`` rows (``dask.config``), cross-fitted over ``cv`` folds
    drawn per row by ``random_state``.
    """
    base = LogisticRegression(max_iter=1000) if model.estimator is None else model.estimator
    frozen = isinstance(base, FrozenEstimator)
    if not frozen and not isinstance(model.cv, Integral):
        raise ValueError(MSG_DASK_CV.format(cv=type(model.cv).__name__))
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
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(int)[:-1].tolist()
    classes = check_binary_target(np.unique(np.concatenate([s[1] for s in summaries])))
    groups = encoding_from_distinct([s[2] for s in summaries], "intersection")
    strata = None if control_features is None else _strata_encoding([s[3] for s in summaries])
    n_cells = (1 if strata is None else strata.n_groups) * groups.n_groups * 2
    codes = [
        delayed(_cell_codes)(yb, sb, cb, classes, groups, strata)
        for yb, sb, cb in zip(ys, sfs, cfs, strict=True)
    ]
    weights = [None if wb is None else delayed(_checked_weights)(wb) for wb in ws]
    totals = [delayed(_cell_totals)(c, w, n_cells) for c, w in zip(codes, weights, strict=True)]
    if frozen:
        totals = compute(*totals)
        estimator = base
    else:
        seed = int(check_random_state(model.random_state).randint(np.iinfo(np.int32).max))
        fraction = min(1.0, train_rows_option() / max(1, sum(lengths)))
        samples = [
            delayed(_sample)(xb, c, w, offset, seed, fraction, model.cv)
            for xb, c, w, offset in zip(xs, codes, weights, offsets, strict=True)
        ]
        totals, samples = compute(totals, samples)  # one pass for both
        fold_models, estimator = _train(base, samples, model.cv)
    model.fit_cells(
        X,
        classes=classes,
        encoding=groups,
        strata=strata,
        cell_weights=np.sum(totals, axis=0),
        estimator=estimator,
    )
    if frozen:
        # A snapshot: the lazy cv_proba_ must not follow a later refit of the same object.
        fitted = share(copy.copy(model))
        proba = [delayed(_cell_proba)(fitted, xb, n_cells) for xb in xs]
    else:
        models = share(fold_models)
        proba = [
            delayed(_cross_fitted)(models, xb, offset, seed, n_cells)
            for xb, offset in zip(xs, offsets, strict=True)
        ]
    return model.fit_cell_proba(
        _stack(proba, lengths, (n_cells,), float),
        _stack(codes, lengths, (), np.intp),
        sample_weight=None if sample_weight is None else _stack(weights, lengths, (), float),
    )


def _n_cells(model: Any) -> int:
    strata = 1 if model.strata_ is None else len(model.strata_)
    return strata * len(model.groups_) * 2


def _predictor(model: Any) -> Any:
    """The fitted model as the workers need it: without its lazy per-row attributes.

    A fit on Dask collections keeps ``cv_proba_`` and ``cv_decisions_`` lazy; their task graphs
    reach back to the training rows (the rows themselves when ``X`` came from an in-memory
    array), and prediction reads neither, so sending them with every prediction would ship the
    training data to the workers for nothing.
    """
    from dask import is_dask_collection

    light = copy.copy(model)
    for name, value in vars(model).items():
        if is_dask_collection(value):
            delattr(light, name)
    # program_ keeps the soft decisions of the fitting rows (lazy too); prediction reads its
    # multipliers only, which the model holds as multipliers_.
    light.program_ = dataclasses.replace(model.program_, decisions=None)
    return light


def cell_proba_rate_constrained(model: Any, X: Any) -> Any:
    """The cell probabilities, lazily per partition: a Dask array aligned with ``X``."""
    return predict_by_partition(_predictor(model), "cell_proba", X, None, n_columns=_n_cells(model))


def decision_function_rate_constrained(model: Any, X: Any) -> Any:
    """The rule's scores, lazily per partition: a Dask array aligned with ``X``."""
    return predict_by_partition(_predictor(model), "decision_function", X, None)


def predict_proba_rate_constrained(model: Any, X: Any) -> Any:
    """The constrained scores as probabilities, lazily per partition."""
    return predict_by_partition(_predictor(model), "predict_proba", X, None, n_columns=2)


def predict_rate_constrained(model: Any, X: Any) -> Any:
    """Predicted classes, lazily per partition: a Dask array aligned with ``X``."""
    return predict_by_partition(_predictor(model), "predict", X, None, dtype=model.classes_.dtype)
