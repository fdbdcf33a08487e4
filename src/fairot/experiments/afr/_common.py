"""What the regression paper's studies share: W_p orders, group-wise scores, the split, the path.

Internal surface (for the study modules of :mod:`fairot.experiments.afr`): :data:`P_VALUES`,
:class:`GroupwiseModel`, :func:`split_403030`, :func:`gradient_boosting` and :func:`path_for`.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split

from fairot.regression import (
    WassersteinFairRegressor,
    fairness_accuracy_path,
)

P_VALUES = {"W1": 1.0, "W2": 2.0, "Winf": np.inf}


class GroupwiseModel(RegressorMixin, BaseEstimator):
    """One clone of ``estimator`` per group; the group index is the last column of ``X``.

    Lets a group-wise score (the paper's Stage 1) be frozen and reused across Wasserstein orders
    and tolerances without refitting.
    """

    def __init__(self, estimator=None):
        self.estimator = estimator

    def fit(self, X, y):
        """Fit one model per group (group index in the last column)."""
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        groups = X[:, -1].astype(int)
        self.models_ = {
            g: clone(self.estimator).fit(X[groups == g, :-1], y[groups == g])
            for g in np.unique(groups)
        }
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        """Route each row to its group's model."""
        X = np.asarray(X, dtype=float)
        groups = X[:, -1].astype(int)
        out = np.empty(X.shape[0])
        for g, model in self.models_.items():
            member = groups == g
            if member.any():
                out[member] = model.predict(X[member, :-1])
        return out


def split_403030(codes: np.ndarray, seed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stratified 40/30/30 auxiliary / calibration / test split (Section 5.1)."""
    index = np.arange(codes.shape[0])
    aux, rest = train_test_split(index, train_size=0.4, stratify=codes, random_state=seed)
    cal, test = train_test_split(rest, train_size=0.5, stratify=codes[rest], random_state=seed)
    return aux, cal, test


def gradient_boosting(quick: bool, seed: int) -> GradientBoostingRegressor:
    """Section 6.1's score model: 200 trees (30 quick), depth 6, learning rate .1, subsample .8."""
    return GradientBoostingRegressor(
        n_estimators=30 if quick else 200,
        max_depth=6,
        learning_rate=0.1,
        subsample=0.8,
        random_state=seed,
    )


def path_for(
    model,
    X_cal,
    y_cal,
    s_cal,
    X_test,
    y_test,
    s_test,
    taus,
    *,
    sample_weight=None,
    sample_weight_test=None,
    **params,
):
    """The tolerance path of a frozen score model, calibrated and evaluated on the given parts."""
    template = WassersteinFairRegressor(estimator=FrozenEstimator(model), **params)
    with warnings.catch_warnings():
        # tau > 1 (the classification plot's last points) is intended here
        warnings.filterwarnings("ignore", message="tau=", category=UserWarning)
        return fairness_accuracy_path(
            template,
            X_cal,
            y_cal,
            sensitive_features=s_cal,
            taus=taus,
            X_test=X_test,
            y_test=y_test,
            sensitive_features_test=s_test,
            sample_weight=sample_weight,
            sample_weight_test=sample_weight_test,
        )
