r"""Stage 1 of the regressor: the score models :math:`\hat f` and their raw scores.

A public module because the Dask backend (:mod:`fairot.dask`) scores each partition with the
same function as the in-memory fit, then hands the scores to the seam
:meth:`~fairot.regression.WassersteinFairRegressor.fit_from_group_statistics`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.frozen import FrozenEstimator
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples

from .checks import MSG_NAN_SCORES

__all__ = ["fit_score_model", "is_frozen", "predict_scores"]


def is_frozen(estimator: Any) -> bool:
    """Whether ``estimator`` is a user's trained model (a ``FrozenEstimator``), used as is."""
    return isinstance(estimator, FrozenEstimator)


def fit_score_model(model: Any, X: Any, y: np.ndarray, weights: np.ndarray | None, rows) -> Any:
    """Fit ``model`` on the ``rows`` of ``X, y`` (weighted when ``weights`` is not None)."""
    X_rows = _safe_indexing(X, rows)
    if weights is None:
        return model.fit(X_rows, y[rows])
    return model.fit(X_rows, y[rows], sample_weight=weights[rows])


def predict_scores(
    estimators: Sequence[Any], X: Any, codes: np.ndarray, *, with_precision: bool = False
) -> np.ndarray | tuple[np.ndarray, float]:
    """The raw scores of ``X``: one model for all rows, or the model of each row's group.

    Parameters
    ----------
    estimators : sequence of fitted regressors
        One model, or one per group (in the order of the group codes).
    X : array-like of shape (n_samples, n_features)
        Passed to the models as is (rows selected with scikit-learn's indexing).
    codes : ndarray of shape (n_samples,)
        Group code of each row.
    with_precision : bool, default=False
        Also return the models' precision: the machine epsilon of the floating dtype they
        predict in (float64's for any other dtype; 0 for integer scores), which sets the
        tolerance of near-ties when a new score is ranked.

    Returns
    -------
    scores : ndarray of shape (n_samples,)
    precision : float
        Only with ``with_precision``.
    """
    n = _num_samples(X)
    raw = []
    if len(estimators) == 1:
        raw.append(np.asarray(estimators[0].predict(X)))
        scores = np.asarray(raw[0], dtype=np.float64).ravel()
    else:
        scores = np.empty(n)
        for s, model in enumerate(estimators):
            member = np.flatnonzero(codes == s)
            if member.size:
                raw.append(np.asarray(model.predict(_safe_indexing(X, member))))
                scores[member] = np.asarray(raw[-1], dtype=np.float64).ravel()
    if scores.shape[0] != n or not np.all(np.isfinite(scores)):
        raise ValueError(MSG_NAN_SCORES)
    if not with_precision:
        return scores
    kinds = [r.dtype for r in raw if r.dtype.kind == "f"]
    precision = max((float(np.finfo(k).eps) for k in kinds), default=0.0)
    if any(r.dtype.kind not in "fiub" for r in raw):
        precision = float(np.finfo(np.float64).eps)
    return scores, precision
