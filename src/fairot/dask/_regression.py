"""``WassersteinFairRegressor`` calibrated on and applied to Dask collections.

The backend of the operations ``"WassersteinFairRegressor.fit"`` and
``"WassersteinFairRegressor.predict"`` (see :mod:`fairot.utils.backends`). The fit gathers the
groups' calibration scores across the cluster and hands them to the estimator's public seam
:meth:`~fairot.regression.WassersteinFairRegressor.fit_from_group_statistics`, the code that
the in-memory fit runs too; nothing here reads or writes the estimator's private state.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairot.dask._collections import (
    aligned_blocks,
    check_block_lengths,
    compute,
    delayed,
    distinct_rows,
    encoding_from_distinct,
    label_arrays,
    predict_by_partition,
    share,
)
from fairot.dask._exact import sort_labels
from fairot.dask._options import quantiles_option, refuse_options
from fairot.dask._sketch import sketch_curves
from fairot.regression.checks import check_fit_parameters, is_observed_cost
from fairot.regression.scores import is_frozen, predict_scores

MSG_DASK_REGRESSOR = (
    "on Dask collections WassersteinFairRegressor calibrates an already trained model: wrap it "
    "in sklearn.frozen.FrozenEstimator and pass the calibration data as X, y and "
    "sensitive_features (training the score model and the random train/calibration split stay "
    "in memory); got estimator={name} and calibration={calibration}."
)
MSG_DASK_COLUMNS = (
    "sensitive_features={value!r} names columns of X, but {problem}; pass the groups as a "
    "Dask collection aligned with X, or name columns of a Dask DataFrame X."
)
MSG_DASK_OBSERVED = (
    "cost={cost!r} needs every calibration response in memory; on Dask collections use an "
    "induced cost ('squared', ...) or fit in memory."
)

# Frames from fit_wasserstein_regressor up to the user's call of fit (fit -> dispatch -> the
# IMPLEMENTATIONS entry -> here), so that the tau > 1 warning points at the user's line.
_FIT_STACKLEVEL = 5


def _read_columns(X: Any, sensitive_features: Any) -> tuple[Any, list[str] | None]:
    """Groups given as column name(s) of a Dask DataFrame ``X``: those columns, and the names.

    The same reading as :func:`fairot.utils.sensitive.resolve_sensitive_features` in memory (a
    string, or a list of strings that are all columns of ``X``); ``X`` keeps the columns, as the
    score model receives ``X`` whole.
    """
    names = [sensitive_features] if isinstance(sensitive_features, str) else sensitive_features
    columns = getattr(X, "columns", None)
    if (
        isinstance(names, (list, tuple))
        and len(names) > 0
        and all(isinstance(c, str) for c in names)
        and (columns is not None or isinstance(sensitive_features, str))
    ):
        missing = [c for c in names if columns is None or c not in columns]
        if missing:
            what = (
                "X is not a Dask DataFrame"
                if columns is None
                else f"X has no column {missing[0]!r}"
            )
            raise ValueError(MSG_DASK_COLUMNS.format(value=sensitive_features, problem=what))
        return X[list(names)], list(names)
    return sensitive_features, None


def _scores(i: int, base: Any, X: Any, sf: Any, encoding: Any) -> tuple[list, float]:
    check_block_lengths(i, X=X, sensitive_features=sf)
    scores, precision = predict_scores([base], X, encoding.encode(sf), with_precision=True)
    return label_arrays(scores, sf, encoding), precision


def fit_wasserstein_regressor(
    model: Any,
    X: Any,
    y: Any,
    sensitive_features: Any,
    calibration: Any = None,
    sample_weight: Any = None,
) -> Any:
    """Fit ``model`` (a ``WassersteinFairRegressor`` with a frozen score model) on Dask data.

    Stage 2 (each group's latent quantile curve) reads the exact sorted calibration scores of
    every group (``quantiles="exact"``: then the in-memory calibration runs on them, so the fit
    equals the in-memory one) or the quantile curves of merged KLL sketches (``"sketch"``, with
    the true group sizes as group weights); stages 3 and 4 are the in-memory code, unchanged.
    """
    check_fit_parameters(model, stacklevel=_FIT_STACKLEVEL + 1)
    refuse_options(sample_weight=(sample_weight, None))
    base = model.estimator
    if not is_frozen(base) or calibration is not None:
        raise ValueError(
            MSG_DASK_REGRESSOR.format(
                name=type(base).__name__, calibration=type(calibration).__name__
            )
        )
    if is_observed_cost(model.cost):
        raise ValueError(MSG_DASK_OBSERVED.format(cost=model.cost))
    quantiles, sketch_k = quantiles_option()
    sensitive_features, columns = _read_columns(X, sensitive_features)
    blocks = aligned_blocks({"X": X, "y": y, "sensitive_features": sensitive_features})
    info = compute(*[delayed(distinct_rows)(b) for b in blocks["sensitive_features"]])
    encoding = encoding_from_distinct(list(info), "intersection")
    lengths = compute(*[delayed(len)(b) for b in blocks["X"]])
    base_d = share(base)
    scored = [
        delayed(_scores, nout=2)(i, base_d, xb, sb, encoding)
        for i, (xb, sb) in enumerate(zip(blocks["X"], blocks["sensitive_features"], strict=True))
    ]
    labelled = [labels for labels, _ in scored]
    precision = max(compute(*[p for _, p in scored]))
    k = encoding.n_groups
    if quantiles == "exact":
        sorted_labels = sort_labels(labelled, max(1, max(lengths)))
        samples = [sorted_labels.gather(g) for g in range(k)]
        group_sizes = None
    else:
        curves, _, sizes = sketch_curves(labelled, sketch_k)
        samples = list(curves[:k])
        group_sizes = np.asarray(sizes[:k])
    codes = np.repeat(np.arange(k), [s.shape[0] for s in samples])
    return model.fit_from_group_statistics(
        np.concatenate(samples),
        codes,
        encoding=encoding,
        estimators=[base],
        group_sizes=group_sizes,
        precision=precision,
        n_features_in=int(X.shape[1]),
        feature_names_in=np.asarray(X.columns, dtype=object) if hasattr(X, "columns") else None,
        sensitive_columns=columns,
    )


def predict_wasserstein_regressor(model: Any, X: Any, sensitive_features: Any) -> Any:
    """Fair predictions, lazily per partition: a Dask array aligned with ``X``.

    ``sensitive_features`` may name columns of a Dask DataFrame ``X`` (the estimator passes the
    columns that ``fit`` read when the caller gives none).
    """
    sensitive_features, _ = _read_columns(X, sensitive_features)
    return predict_by_partition(model, "predict", X, sensitive_features)
