"""``QuantileParityPostProcessor`` (DPP) fitted from and applied to Dask collections.

Only the estimator's public seams are used: ``fit_estimator`` (the base classifier),
``base_scores`` (per partition), ``fit_group_scores`` (the fitted groups) and
``predict_proba`` (per partition).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.frozen import FrozenEstimator

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
from fairot.utils.targets import check_binary_target

MSG_DASK_MARGINAL = (
    "group_mode='marginal' is not supported on Dask collections by QuantileParityPostProcessor; "
    "pass the intersection of the sensitive columns (group_mode='intersection')."
)


def _unique(block: Any) -> np.ndarray:
    return np.unique(np.asarray(block))


def _scores(i: int, model: Any, X: Any, sf: Any, encoding: Any) -> list[np.ndarray]:
    check_block_lengths(i, X=X, sensitive_features=sf)
    # An empty partition (from a filter, say) has no scores; scikit-learn refuses 0 rows.
    scores = model.base_scores(X) if X.shape[0] else np.empty(0)
    return label_arrays(scores, sf, encoding)


def fit_quantile_parity(
    model: Any, X: Any, y: Any, sensitive_features: Any, sample_weight: Any = None
) -> Any:
    """Fit ``model`` (a ``QuantileParityPostProcessor``) on Dask collections.

    The base classifier is fitted in memory on the computed ``X, y`` unless it is wrapped in
    :class:`sklearn.frozen.FrozenEstimator` (the way to post-process a model trained elsewhere
    without collecting the data); its scores are computed partition by partition on the cluster.
    With ``quantiles="exact"`` each group's sorted scores (the ECDF :math:`F_a`) come back to the
    client, so the fitted model equals the in-memory one; with ``"sketch"`` they are the group
    quantile curves of merged KLL sketches, a few thousand numbers each. Both stages are the
    estimator's own seams, ``fit_estimator`` and ``fit_group_scores``.
    """
    refuse_options(sample_weight=(sample_weight, None))
    if model.group_mode == "marginal":
        raise ValueError(MSG_DASK_MARGINAL)
    quantiles, sketch_k = quantiles_option()
    blocks = aligned_blocks({"X": X, "y": y, "sensitive_features": sensitive_features})
    uniques = compute(*[delayed(_unique)(b) for b in blocks["y"]])
    classes = check_binary_target(np.unique(np.concatenate(uniques)))
    if isinstance(model.estimator, FrozenEstimator):
        # A frozen model reads no data: the collections stay on the cluster.
        model.fit_estimator(X, y, classes=classes)
    else:
        X_mem, y_mem = compute(X, y)
        model.fit_estimator(X_mem, y_mem, classes=classes)
    info = compute(*[delayed(distinct_rows)(b) for b in blocks["sensitive_features"]])
    encoding = encoding_from_distinct(list(info), "intersection")
    lengths = compute(*[delayed(len)(b) for b in blocks["X"]])
    model_d = share(model)
    labelled = [
        delayed(_scores)(i, model_d, xb, sb, encoding)
        for i, (xb, sb) in enumerate(zip(blocks["X"], blocks["sensitive_features"], strict=True))
    ]
    k = encoding.n_groups
    if quantiles == "exact":
        sorted_labels = sort_labels(labelled, max(1, max(lengths)))
        group_scores = [sorted_labels.gather(g) for g in range(k)]
    else:
        curves, _, _ = sketch_curves(labelled, sketch_k)
        group_scores = list(curves[:k])
    return model.fit_group_scores(group_scores, encoding)


def predict_proba_quantile_parity(model: Any, X: Any, sensitive_features: Any) -> Any:
    """Post-processed probabilities, lazily per partition: a Dask array aligned with ``X``."""
    return predict_by_partition(model, "predict_proba", X, sensitive_features, n_columns=2)


def predict_quantile_parity(model: Any, X: Any, sensitive_features: Any) -> Any:
    """Predicted classes, lazily per partition: a Dask array aligned with ``X``."""
    return predict_by_partition(model, "predict", X, sensitive_features, dtype=model.classes_.dtype)
