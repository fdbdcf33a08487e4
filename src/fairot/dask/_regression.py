"""``WassersteinFairRegressor`` calibrated on and applied to Dask collections."""

from __future__ import annotations

import warnings
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
    share,
)
from fairot.dask._exact import sort_labels
from fairot.dask._postprocessing import quantiles_option
from fairot.dask._sketch import sketch_curves
from fairot.regression._adjust import check_p
from fairot.regression._estimator import (
    MSG_BOTH_TOLERANCES,
    MSG_MARGINAL,
    MSG_TAU_ABOVE_ONE,
    _is_frozen,
)
from fairot.utils.groups import group_attributes

MSG_DASK_REGRESSOR = (
    "on Dask collections WassersteinFairRegressor calibrates an already trained model: wrap it "
    "in sklearn.frozen.FrozenEstimator and pass the calibration data as X, y and "
    "sensitive_features (training the score model and the random train/calibration split stay "
    "in memory); got estimator={name} and calibration={calibration}."
)
MSG_DASK_OBSERVED = (
    "cost={cost!r} needs every calibration response in memory; on Dask collections use an "
    "induced cost ('squared', ...) or fit in memory."
)


def _scores(i: int, model: Any, X: Any, sf: Any, encoding: Any) -> tuple[list, float]:
    check_block_lengths(i, X=X, sensitive_features=sf)
    codes = encoding.encode(sf)
    scores, precision = model._scores(X, codes, with_precision=True)
    return label_arrays(scores, sf, encoding), precision


def fit_wasserstein_regressor(
    model: Any, X: Any, y: Any, sensitive_features: Any, calibration: Any
) -> Any:
    """Fit ``model`` (a ``WassersteinFairRegressor`` with a frozen score model) on Dask data.

    Stage 2 (each group's latent quantile curve) reads the exact sorted calibration scores of
    every group (``quantiles="exact"``: then the in-memory calibration runs on them, so the fit
    equals the in-memory one) or the quantile curves of merged KLL sketches (``"sketch"``, with
    the true group sizes as group weights); stages 3 and 4 are the in-memory code, unchanged.
    """
    model._validate_params()
    p_value = check_p(model.p)
    base = model.estimator
    if not _is_frozen(base) or calibration is not None:
        raise ValueError(
            MSG_DASK_REGRESSOR.format(
                name=type(base).__name__, calibration=type(calibration).__name__
            )
        )
    if model.groups == "marginal":
        raise ValueError(MSG_MARGINAL)
    if isinstance(model.cost, str) and model.cost.startswith("observed_"):
        raise ValueError(MSG_DASK_OBSERVED.format(cost=model.cost))
    if model.epsilon is not None and model.tau is not None:
        raise ValueError(MSG_BOTH_TOLERANCES.format(eps=model.epsilon, tau=model.tau))
    if model.tau is not None and model.tau > 1:
        warnings.warn(MSG_TAU_ABOVE_ONE.format(tau=model.tau), UserWarning, stacklevel=3)
    quantiles, sketch_k = quantiles_option()
    blocks = aligned_blocks({"X": X, "y": y, "sensitive_features": sensitive_features})
    info = compute(*[delayed(distinct_rows)(b) for b in blocks["sensitive_features"]])
    encoding = encoding_from_distinct(list(info), "intersection")
    model._groups = encoding
    model.groups_, model.group_names_ = group_attributes(encoding)
    model.estimators_ = [base]
    model.n_features_in_ = int(X.shape[1])
    if hasattr(X, "columns"):
        model.feature_names_in_ = np.asarray(X.columns, dtype=object)
    lengths = compute(*[delayed(len)(b) for b in blocks["X"]])
    model_d = share(model)
    scored = [
        delayed(_scores, nout=2)(i, model_d, xb, sb, encoding)
        for i, (xb, sb) in enumerate(zip(blocks["X"], blocks["sensitive_features"], strict=True))
    ]
    labelled = [labels for labels, _ in scored]
    precision = max(compute(*[p for _, p in scored]))
    k = encoding.n_groups
    if quantiles == "exact":
        sorted_labels = sort_labels(labelled, max(1, max(lengths)))
        counts = np.array(sorted_labels.sizes[:k])
        model._check_group_sizes(counts, "calibration ")
        samples = [sorted_labels.gather(g) for g in range(k)]
    else:
        curves, _, sizes = sketch_curves(labelled, sketch_k)
        counts = np.asarray(sizes[:k])
        model._check_group_sizes(counts, "calibration ")
        samples = list(curves[:k])
    codes = np.repeat(np.arange(k), [s.shape[0] for s in samples])
    model._calibrate(
        np.concatenate(samples), None, codes, None, counts.astype(np.float64), precision, p_value
    )
    model._adjust(model.epsilon, model.tau)
    return model


def _block_predict(model: Any, X: Any, sf: Any) -> np.ndarray:
    return model.predict(X, sensitive_features=sf)


def predict_wasserstein_regressor(model: Any, X: Any, sensitive_features: Any) -> Any:
    """Fair predictions, lazily per partition: a Dask array aligned with ``X``."""
    import dask.array as da

    blocks = aligned_blocks({"X": X, "sensitive_features": sensitive_features})
    model_d = share(model)
    lengths = X.chunks[0] if hasattr(X, "chunks") else [np.nan] * len(blocks["X"])
    parts = [
        da.from_delayed(delayed(_block_predict)(model_d, xb, sb), shape=(n,), dtype=np.float64)
        for xb, sb, n in zip(blocks["X"], blocks["sensitive_features"], lengths, strict=True)
    ]
    return da.concatenate(parts, axis=0)
