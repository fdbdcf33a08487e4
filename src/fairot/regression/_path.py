r"""The tolerance path: a regressor per tolerance at the cost of one calibration.

Stages 1 and 2 run once; :meth:`WassersteinFairRegressor.with_tolerance` runs the adjustment
per tolerance on the shared calibration, and the held-out raw scores are computed once.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.metrics import mean_squared_error, r2_score

from fairot.metrics import max_pairwise_wasserstein
from fairot.utils.arrays import check_array_1d, check_sample_weight
from fairot.utils.sensitive import resolve_sensitive_features

from ._adjust import check_p
from ._estimator import WassersteinFairRegressor
from .checks import MSG_TAU_ABOVE_ONE

__all__ = ["FairnessAccuracyPath", "fairness_accuracy_path"]


@dataclass
class FairnessAccuracyPath:
    """A tolerance path fitted by :func:`fairness_accuracy_path`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per tolerance: ``tau``, ``epsilon``, ``grid_gap``, ``grid_violation``,
        ``n_iter`` and, when test data were given, ``mse``, ``r2`` and ``test_gap`` (largest
        pairwise held-out :math:`W_p` of the predictions).
    estimators : list of WassersteinFairRegressor
        A fitted regressor per tolerance; they share the fitted score models.
    unadjusted : dict
        Test ``mse``, ``r2`` and ``test_gap`` of the raw scores (empty without test data).

    Examples
    --------
    :func:`fairness_accuracy_path` returns one, a row and a fitted regressor per tolerance:

    >>> import numpy as np
    >>> from fairot.regression import WassersteinFairRegressor, fairness_accuracy_path
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 300)
    >>> X = rng.normal(size=(300, 1)) + s[:, None]
    >>> y = X[:, 0] + rng.normal(size=300)
    >>> path = fairness_accuracy_path(
    ...     WassersteinFairRegressor(random_state=0, n_grid=50),
    ...     X[:200], y[:200], sensitive_features=s[:200], taus=[0.0, 1.0],
    ...     X_test=X[200:], y_test=y[200:], sensitive_features_test=s[200:],
    ... )
    >>> path.table["tau"].tolist(), len(path.estimators), sorted(path.unadjusted)
    ([0.0, 1.0], 2, ['mse', 'r2', 'test_gap'])
    """

    table: pd.DataFrame
    estimators: list
    unadjusted: dict


def fairness_accuracy_path(
    estimator: WassersteinFairRegressor,
    X,
    y,
    *,
    sensitive_features,
    taus,
    X_test=None,
    y_test=None,
    sensitive_features_test=None,
    calibration=None,
    sample_weight=None,
    sample_weight_test=None,
) -> FairnessAccuracyPath:
    r"""Fit a whole path of relative tolerances, reusing the calibration work.

    Stages 1 and 2 (score models, calibration ranks and latent curves) run once; only the
    adjustment (Stage 3) and the prediction tables run per tolerance, and test scores and
    ranks are computed once.

    Parameters
    ----------
    estimator : WassersteinFairRegressor
        Template (cloned); its ``tau`` and ``epsilon`` are replaced along the path.
    X, y, sensitive_features
        Training (and calibration) data, as in :meth:`WassersteinFairRegressor.fit`.
    taus : array-like of float >= 0
        Relative tolerances :math:`\tau` (:math:`\epsilon = \tau D_{\max}`).
    X_test, y_test, sensitive_features_test : optional
        Held-out data to evaluate MSE, R² and the held-out gap along the path.
    calibration : tuple, optional
        Explicit calibration set.
    sample_weight : array-like of shape (n_samples,), optional
        As in :meth:`WassersteinFairRegressor.fit`.
    sample_weight_test : array-like of shape (n_test,), optional
        Weights of the held-out rows in their MSE, R² and gap.

    Returns
    -------
    FairnessAccuracyPath

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.regression import WassersteinFairRegressor, fairness_accuracy_path
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 600)
    >>> X = rng.normal(size=(600, 2)) + s[:, None]
    >>> y = X.sum(axis=1) + rng.normal(size=600)
    >>> path = fairness_accuracy_path(
    ...     WassersteinFairRegressor(random_state=0, n_grid=100),
    ...     X[:400], y[:400], sensitive_features=s[:400], taus=[0.0, 0.5, 1.0],
    ...     X_test=X[400:], y_test=y[400:], sensitive_features_test=s[400:],
    ... )
    >>> bool(path.table["mse"].is_monotonic_decreasing)
    True
    """
    if not isinstance(estimator, WassersteinFairRegressor):
        raise TypeError(
            f"estimator must be a WassersteinFairRegressor; got {type(estimator).__name__}."
        )
    taus = check_array_1d(taus, "taus")
    if np.any(taus < 0):
        raise ValueError(f"taus must be non-negative fractions of the raw gap; got {taus.min()!r}.")
    if np.any(taus > 1):
        warnings.warn(MSG_TAU_ABOVE_ONE.format(tau=float(taus.max())), UserWarning, stacklevel=2)
    template = clone(estimator).set_params(tau=0.0, epsilon=None)
    fitted = template.fit(
        X,
        y,
        sample_weight=sample_weight,
        sensitive_features=sensitive_features,
        calibration=calibration,
    )
    p_value = check_p(fitted.p)
    evaluate = X_test is not None
    unadjusted: dict = {}
    if evaluate:
        if y_test is None or sensitive_features_test is None:
            raise ValueError("X_test needs y_test and sensitive_features_test.")
        scores_t = fitted.score_unadjusted(X_test, sensitive_features=sensitive_features_test)
        groups_t, _ = resolve_sensitive_features(X_test, sensitive_features_test)
        y_t = check_array_1d(y_test, "y_test")
        w_t = check_sample_weight(sample_weight_test, y_t.shape[0], "sample_weight_test")
        unadjusted = {
            "mse": mean_squared_error(y_t, scores_t, sample_weight=w_t),
            "r2": r2_score(y_t, scores_t, sample_weight=w_t),
            "test_gap": max_pairwise_wasserstein(
                None, scores_t, sensitive_features=groups_t, p=p_value, sample_weight=w_t
            ).distance,
        }
    rows, estimators = [], []
    for tau in taus:
        est = fitted.with_tolerance(tau=float(tau))
        estimators.append(est)
        row = {
            "tau": float(tau),
            "epsilon": est.epsilon_,
            "grid_gap": est.grid_gap_,
            "grid_violation": est.grid_violation_,
            "n_iter": est.adjustment_.n_iter,
        }
        if evaluate:
            pred = est.predict(X_test, sensitive_features=sensitive_features_test)
            row["mse"] = mean_squared_error(y_t, pred, sample_weight=w_t)
            row["r2"] = r2_score(y_t, pred, sample_weight=w_t)
            row["test_gap"] = max_pairwise_wasserstein(
                None, pred, sensitive_features=groups_t, p=p_value, sample_weight=w_t
            ).distance
        rows.append(row)
    return FairnessAccuracyPath(pd.DataFrame(rows), estimators, unadjusted)
