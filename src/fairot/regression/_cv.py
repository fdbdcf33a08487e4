r"""Choose the tolerance by cross-validation: the most accurate :math:`\tau` within a budget."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_y, _num_samples, check_is_fitted

from fairot.utils.arrays import check_array_1d, check_sample_weight
from fairot.utils.sensitive import check_sensitive_features, resolve_sensitive_features

from ._estimator import WassersteinFairRegressor
from ._inputs import InputTagsMixin, check_X
from ._path import fairness_accuracy_path
from .checks import validate_params

__all__ = ["WassersteinFairRegressorCV"]

MSG_LENGTHS = "X has {n_samples} rows but {name} has {n}; give one value per row of X."
MSG_NO_TAU_WITHIN_BUDGET = (
    "no tau keeps the mean held-out gap within max_gap={budget!r} (in the unit of y): the "
    "smallest mean held-out gap is {gap!r}, at tau={tau!r} (a fraction of the raw gap). {advice}"
)
# the advice never asks for a tau that the grid already holds
MSG_ADVICE_SMALLER = "Raise max_gap, or add taus below {smallest!r} (down to 0, strict parity)."
MSG_ADVICE_AT_ZERO = (
    "tau=0 (strict parity on the calibration grid) is already in taus, so no tau can do better: "
    "what remains is the held-out sampling noise of the groups' predictions. Raise max_gap, or "
    "calibrate on more rows (a larger calibration_size or more data)."
)


class WassersteinFairRegressorCV(InputTagsMixin, RegressorMixin, BaseEstimator):
    r"""A :class:`WassersteinFairRegressor` whose :math:`\tau` is chosen by cross-validation.

    For each fold, the whole path of ``taus`` is fitted at the cost of one fit
    (:func:`~fairot.regression.fairness_accuracy_path`) and scored on the held-out fold: R² and
    the largest pairwise :math:`W_p` between the groups' predictions (``p`` of the regressor).
    The chosen :math:`\tau` has the best mean R² among those whose mean held-out gap is at most
    ``max_gap`` (accuracy within a fairness budget); it is then refitted on all the data.

    Parameters
    ----------
    estimator : WassersteinFairRegressor, default=None
        Template; its ``tau`` and ``epsilon`` are replaced. ``None``: the default regressor.
    taus : array-like of float >= 0, default=None
        Candidate relative tolerances, fractions of the raw gap (1: the raw model);
        ``None``: 0, 0.1, ..., 1.
    max_gap : float >= 0, default=None
        Fairness budget on the mean held-out gap, in the unit of ``y``. ``None``: no budget
        (the most accurate :math:`\tau`).
    cv : int, cross-validation generator or iterable, default=5
        An int gives folds stratified by group (every group in every fold).
    random_state : int, RandomState instance or None, default=None
        Read by :func:`sklearn.utils.check_random_state`. With an int ``cv``, shuffles the rows
        before they are cut into folds (``None`` keeps them in order). It also seeds the
        regressor's own calibration split (in every fold and in the refit) when the
        ``estimator``'s ``random_state`` is ``None``; an ``estimator`` with its own
        ``random_state`` keeps it. So an int gives the same folds, splits and predictions on
        every fit.

    Attributes
    ----------
    cv_results_ : pandas.DataFrame
        One row per ``tau``: ``mean_r2``, ``std_r2``, ``mean_test_gap``, ``std_test_gap``,
        ``within_budget``.
    best_tau_ : float
    best_index_ : int
    best_estimator_ : WassersteinFairRegressor
        Refitted on all the data with ``tau=best_tau_``.
    groups_, group_names_ : list
        As in :class:`WassersteinFairRegressor`.
    n_features_in_ : int
        Number of columns of ``X`` seen in ``fit`` (when ``X`` has columns).
    feature_names_in_ : ndarray of str
        Only when ``X`` had column names.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.regression import WassersteinFairRegressor, WassersteinFairRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 900)
    >>> X = rng.normal(size=(900, 2)) + s[:, None]
    >>> y = X.sum(axis=1) + rng.normal(size=900)
    >>> search = WassersteinFairRegressorCV(
    ...     estimator=WassersteinFairRegressor(n_grid=100, random_state=0),
    ...     taus=[0.0, 0.5, 1.0], max_gap=0.5, cv=3,
    ... ).fit(X, y, sensitive_features=s)
    >>> bool(search.cv_results_.loc[search.best_index_, "mean_test_gap"] <= 0.5)
    True
    """

    _parameter_constraints: dict = {
        "estimator": [None, WassersteinFairRegressor],
        "taus": [None, "array-like"],
        "max_gap": [None, Interval(numbers.Real, 0, None, closed="left")],
        "cv": ["cv_object"],
        "random_state": ["random_state"],
    }

    __metadata_request__fit = {"sensitive_features": True}
    __metadata_request__predict = {"sensitive_features": True}
    __metadata_request__score = {"sensitive_features": True}

    def __init__(self, *, estimator=None, taus=None, max_gap=None, cv=5, random_state=None) -> None:
        self.estimator = estimator
        self.taus = taus
        self.max_gap = max_gap
        self.cv = cv
        self.random_state = random_state

    def fit(self, X, y, *, sensitive_features, sample_weight=None):
        """Cross-validate the path of ``taus``, choose one, refit it on all the data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sensitive_features : array-like, DataFrame, dict or column name(s) of X
            Column names are read from ``X`` again by ``predict`` and ``score``.
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights, as in :meth:`WassersteinFairRegressor.fit`: they train and
            calibrate each fold and the refit, and weigh the held-out R² and gap.

        Returns
        -------
        self : WassersteinFairRegressorCV
        """
        validate_params(self)
        template = WassersteinFairRegressor() if self.estimator is None else self.estimator
        taus = check_array_1d(np.linspace(0.0, 1.0, 11) if self.taus is None else self.taus, "taus")
        # the regressor's own checks, once, before any fold: width, names, one y per row
        X = check_X(self, X, reset=True)
        n_samples = _num_samples(X)
        y = np.asarray(_check_y(y, y_numeric=True, estimator=self), dtype=np.float64)
        if y.shape[0] != n_samples:
            raise ValueError(MSG_LENGTHS.format(n_samples=n_samples, name="y", n=y.shape[0]))
        if sample_weight is not None and _num_samples(sample_weight) != n_samples:
            n = _num_samples(sample_weight)
            raise ValueError(MSG_LENGTHS.format(n_samples=n_samples, name="sample_weight", n=n))
        weights = check_sample_weight(sample_weight, n_samples)
        sf, _ = resolve_sensitive_features(X, sensitive_features)
        codes = check_sensitive_features(sf, n_samples).codes
        if self.random_state is not None and template.get_params()["random_state"] is None:
            # one seed for every fold's calibration split and the refit's: reproducible fits
            # (drawn from a generator of its own, so an int gives the folds it always gave)
            seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
            template = clone(template).set_params(random_state=int(seed))
        # an int gives StratifiedKFold on the group codes: every group in every fold
        if isinstance(self.cv, numbers.Integral) and self.random_state is not None:
            rng = check_random_state(self.random_state)
            splitter = StratifiedKFold(int(self.cv), shuffle=True, random_state=rng)
        else:
            splitter = check_cv(self.cv, codes, classifier=True)
        r2, gaps = [], []
        sf_frame = pd.DataFrame(sf) if not isinstance(sf, pd.DataFrame) else sf
        for train, test in splitter.split(np.zeros((codes.size, 1)), codes):
            path = fairness_accuracy_path(
                template,
                _safe_indexing(X, train),
                y[train],
                sensitive_features=sf_frame.iloc[train],
                taus=taus,
                X_test=_safe_indexing(X, test),
                y_test=y[test],
                sensitive_features_test=sf_frame.iloc[test],
                sample_weight=None if weights is None else weights[train],
                sample_weight_test=None if weights is None else weights[test],
            )
            r2.append(path.table["r2"].to_numpy())
            gaps.append(path.table["test_gap"].to_numpy())
        r2, gaps = np.array(r2), np.array(gaps)
        mean_gap = gaps.mean(axis=0)
        within = np.ones(taus.size, bool) if self.max_gap is None else mean_gap <= self.max_gap
        self.cv_results_ = pd.DataFrame(
            {
                "tau": taus,
                "mean_r2": r2.mean(axis=0),
                "std_r2": r2.std(axis=0),
                "mean_test_gap": mean_gap,
                "std_test_gap": gaps.std(axis=0),
                "within_budget": within,
            }
        )
        if not within.any():
            best = int(np.argmin(mean_gap))
            smallest = float(taus.min())
            advice = (
                MSG_ADVICE_AT_ZERO
                if smallest == 0.0
                else MSG_ADVICE_SMALLER.format(smallest=smallest)
            )
            raise ValueError(
                MSG_NO_TAU_WITHIN_BUDGET.format(
                    budget=self.max_gap,
                    gap=float(mean_gap[best]),
                    tau=float(taus[best]),
                    advice=advice,
                )
            )
        self.best_index_ = int(np.argmax(np.where(within, r2.mean(axis=0), -np.inf)))
        self.best_tau_ = float(taus[self.best_index_])
        self.best_estimator_ = clone(template).set_params(tau=self.best_tau_, epsilon=None)
        # the groups as given: column names of X stay names, so that predict can read them
        self.best_estimator_.fit(
            X, y, sensitive_features=sensitive_features, sample_weight=sample_weight
        )
        self.groups_ = self.best_estimator_.groups_
        self.group_names_ = self.best_estimator_.group_names_
        return self

    def _check_X_predict(self, X):
        """``X`` checked against the width and names of ``fit``'s (the names of this class)."""
        check_is_fitted(self, "best_estimator_")
        return check_X(self, X, reset=False)

    def predict(self, X, *, sensitive_features=None) -> np.ndarray:
        """Predictions of :attr:`best_estimator_` (groups as in its ``predict``)."""
        X = self._check_X_predict(X)
        return self.best_estimator_.predict(X, sensitive_features=sensitive_features)

    def score(self, X, y, sample_weight=None, *, sensitive_features=None) -> float:
        """R² of :attr:`best_estimator_` (see :meth:`WassersteinFairRegressor.score`)."""
        X = self._check_X_predict(X)
        return self.best_estimator_.score(
            X, y, sample_weight, sensitive_features=sensitive_features
        )
