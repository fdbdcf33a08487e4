r"""The estimator: the paper's four stages as one scikit-learn regressor (Section 3 of [1]_).

1. Fit the unconstrained score (group-wise clones of ``estimator`` on an auxiliary split, one
   model on all of it, or a user's frozen model).
2. Estimate each group's latent quantile curve :math:`\hat Q^*_s` of the scores on a separate
   calibration sample (exact inverse ECDF on the midpoint grid).
3. Adjust the curves to the tolerance with :func:`~fairot.regression.adjust_quantiles`.
4. Predict: the rank of a new score within its group (right-continuous calibration ECDF), then
   the adjusted curve at that rank, linearly interpolated and constant beyond the end nodes.

References
----------
.. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).
"""

from __future__ import annotations

import copy
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from fairot._validation import check_array_1d, check_sensitive_features
from fairot.dask._collections import is_dask_collection
from fairot.metrics import max_pairwise_wasserstein
from fairot.transport import ecdf_rank, midpoint_grid, quantile_function

from ._adjust import QuantileAdjustment, adjust_quantiles, check_bounds, check_p
from ._costs import InducedCost, ObservedLossCost, resolve_cost
from ._projections import pairwise_grid_distances
from ._readout import read_curves

__all__ = ["FairnessAccuracyPath", "WassersteinFairRegressor", "fairness_accuracy_path"]

MSG_BOTH_TOLERANCES = "Give either epsilon or tau, not both; got epsilon={eps!r} and tau={tau!r}."
MSG_TAU_ABOVE_ONE = (
    "tau={tau!r} > 1 asks for a tolerance above the unadjusted gap: the constraint is inactive "
    "for two groups and only loosens the observed-loss variant."
)
MSG_SMALL_GROUP = (
    "group {group!r} has {count} calibration sample(s); at least 2 are needed to estimate its "
    "quantile curve. Use a larger calibration_size or merge small groups."
)
MSG_MISSING_GROUP = (
    "group {group!r} is absent from the calibration set; every group seen in fit needs "
    "calibration samples."
)
MSG_NAN_SCORES = (
    "the estimator's predictions (scores) contain NaN or infinite values; check the model "
    "and its inputs."
)
MSG_FROZEN_CALIBRATION = (
    "calibration is for a model that fit trains; with a FrozenEstimator all of fit's data is "
    "calibration data: pass the calibration set as X, y and sensitive_features."
)
MSG_CALIBRATION = "calibration must be a tuple (X, y, sensitive_features); got {value!r}."

CostName = Literal[
    "squared", "absolute", "pinball", "logistic", "observed_squared", "observed_absolute"
]


def _is_frozen(estimator: Any) -> bool:
    return isinstance(estimator, FrozenEstimator)


class WassersteinFairRegressor(RegressorMixin, BaseEstimator):
    r"""Regression under approximate demographic parity: every pair of groups within ε in W_p.

    Adjusts each group's quantile curve of a fitted score so that
    :math:`\max_{i<j} W_p(\hat Y \mid S=i, \hat Y \mid S=j) \le \epsilon` on the calibration grid
    at the least cost (problem (6) of [1]_), then predicts by rank within the group (Section 3).

    Parameters
    ----------
    estimator : regressor, default=None
        Unconstrained model of the score :math:`\hat f`. Cloned and fitted (per group when
        ``groupwise=True``) on an auxiliary split of ``fit``'s data. A model wrapped in
        :class:`sklearn.frozen.FrozenEstimator` is used as is, and then all of ``fit``'s data is
        calibration data (the score-level post-processor). ``None``: ``LinearRegression()``.
    p : {1, 2, numpy.inf, "inf"}, default=2
        Order of the Wasserstein distance in the constraint.
    epsilon : float >= 0, default=None
        Absolute tolerance :math:`\epsilon`. Give ``epsilon`` or ``tau``; neither means strict
        demographic parity (:math:`\epsilon = 0`).
    tau : float >= 0, default=None
        Relative tolerance: :math:`\epsilon = \tau D_{\max}`, with :math:`D_{\max}` the unadjusted
        grid gap (Section 5.1 of [1]_). Above 1 is allowed with a warning.
    n_grid : int, default=2000
        Number :math:`M` of midpoint ranks :math:`u_k = (k - 1/2)/M`.
    bounds : (float, float), default=None
        Prediction range :math:`[a, b]`; the calibration scores must lie inside. ``None``:
        unbounded.
    cost : str or InducedCost, default="squared"
        Induced cost (see :func:`~fairot.regression.adjust_quantiles`). ``"observed_squared"`` /
        ``"observed_absolute"`` use the observed-loss proxy on the calibration responses
        (Remark 1 of [1]_).
    method : str, default="auto"
        Solver passed to :func:`~fairot.regression.adjust_quantiles`.
    groupwise : bool, default=True
        Fit one clone of ``estimator`` per group (the paper's Stage 1) or one on all groups.
    calibration_size : float in (0, 1), default=0.5
        Share of ``fit``'s data held out, stratified by group, for calibration (unused with a
        frozen estimator or an explicit ``calibration`` set).
    random_state : int, RandomState or None, default=None
        Seed of the auxiliary/calibration split.

    Attributes
    ----------
    estimators_ : list of regressors
        One fitted model per group (``groupwise``) or a single one.
    groups_ : GroupEncoding
        The groups seen in ``fit``.
    group_weights_ : ndarray of shape (n_groups,)
        Calibration shares :math:`\hat r_s`.
    calibration_scores_ : list of ndarray
        Sorted calibration scores of each group (the rank map of Stage 4).
    latent_curves_ : ndarray of shape (n_groups, n_grid)
        :math:`\hat Q^*_s(u_k)`, the exact empirical quantiles of the calibration scores.
    adjusted_curves_ : ndarray of shape (n_groups, n_grid)
        :math:`\hat Q_s(u_k)` after the fairness adjustment.
    grid_ : ndarray of shape (n_grid,)
        The midpoint grid.
    unadjusted_grid_gap_ : float
        :math:`D_{\max}`, the largest pairwise grid distance of the latent curves.
    epsilon_ : float
        The tolerance used.
    grid_gap_ : float
        Largest pairwise grid distance of the adjusted curves.
    grid_violation_ : float
        Excess of ``grid_gap_`` over ``epsilon_``.
    adjustment_ : QuantileAdjustment
        The solver's full result.
    n_features_in_ : int

    References
    ----------
    .. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.regression import WassersteinFairRegressor
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 400)
    >>> X = rng.normal(size=(400, 2)) + s[:, None]
    >>> y = X.sum(axis=1) + rng.normal(size=400)
    >>> model = WassersteinFairRegressor(tau=0.5, random_state=0).fit(X, y, sensitive_features=s)
    >>> bool(model.grid_gap_ <= model.epsilon_ + 1e-12)
    True
    """

    _parameter_constraints: dict = {
        "estimator": [None, HasMethods(["fit", "predict"])],
        "p": "no_validation",  # checked by check_p: 1, 2, inf or "inf"
        "epsilon": [None, Interval(numbers.Real, 0, None, closed="left")],
        "tau": [None, Interval(numbers.Real, 0, None, closed="left")],
        "n_grid": [Interval(numbers.Integral, 1, None, closed="left")],
        "bounds": [None, tuple, list],
        "cost": [
            StrOptions(
                {
                    "squared",
                    "absolute",
                    "pinball",
                    "logistic",
                    "observed_squared",
                    "observed_absolute",
                }
            ),
            InducedCost,
        ],
        "method": [
            StrOptions(
                {
                    "auto",
                    "closed_form",
                    "projection",
                    "pointwise",
                    "projected_gradient",
                    "barycenter_ball",
                }
            )
        ],
        "groupwise": ["boolean"],
        "calibration_size": [Interval(numbers.Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        p: float | str = 2,
        epsilon: float | None = None,
        tau: float | None = None,
        n_grid: int = 2000,
        bounds: tuple[float, float] | None = None,
        cost: CostName | InducedCost = "squared",
        method: str = "auto",
        groupwise: bool = True,
        calibration_size: float = 0.5,
        random_state=None,
    ) -> None:
        self.estimator = estimator
        self.p = p
        self.epsilon = epsilon
        self.tau = tau
        self.n_grid = n_grid
        self.bounds = bounds
        self.cost = cost
        self.method = method
        self.groupwise = groupwise
        self.calibration_size = calibration_size
        self.random_state = random_state

    # ----------------------------------------------------------------------------- fitting
    def fit(self, X, y, *, sensitive_features, calibration=None):
        """Fit the score model, the latent curves and their fairness adjustment.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sensitive_features : array-like of shape (n_samples,) or DataFrame
            Group of each sample; several columns form intersectional groups.
        calibration : tuple (X_cal, y_cal, sensitive_features_cal), optional
            An explicit calibration set; then all of ``X, y`` trains the score model.

        Returns
        -------
        self : WassersteinFairRegressor
        """
        if is_dask_collection(X):
            from fairot.dask._regression import fit_wasserstein_regressor

            return fit_wasserstein_regressor(self, X, y, sensitive_features, calibration)
        self._validate_params()
        p_value = check_p(self.p)
        if self.epsilon is not None and self.tau is not None:
            raise ValueError(MSG_BOTH_TOLERANCES.format(eps=self.epsilon, tau=self.tau))
        if self.tau is not None and self.tau > 1:
            warnings.warn(MSG_TAU_ABOVE_ONE.format(tau=self.tau), UserWarning, stacklevel=2)
        X, y = validate_data(self, X, y, y_numeric=True, reset=True)
        y = check_array_1d(y, "y")
        groups = check_sensitive_features(sensitive_features, X.shape[0])
        if groups.codes is None:  # pragma: no cover - intersection groups always have codes
            raise ValueError("sensitive_features must define disjoint groups.")
        self.groups_ = groups
        codes = groups.codes
        n_groups = groups.n_groups
        base = LinearRegression() if self.estimator is None else self.estimator

        if _is_frozen(base) and calibration is not None:
            raise ValueError(MSG_FROZEN_CALIBRATION)
        if _is_frozen(base):
            train = None
            X_cal, y_cal, codes_cal = X, y, codes
        elif calibration is not None:
            train = np.arange(X.shape[0])
            X_cal, y_cal, codes_cal = self._check_calibration(calibration)
        else:
            self._check_group_sizes(np.bincount(codes, minlength=n_groups), "")
            train, cal = train_test_split(
                np.arange(X.shape[0]),
                test_size=self.calibration_size,
                stratify=codes,
                random_state=self.random_state,
            )
            X_cal, y_cal, codes_cal = X[cal], y[cal], codes[cal]

        if _is_frozen(base):
            self.estimators_ = [base]
        elif self.groupwise:
            self.estimators_ = [
                clone(base).fit(X[train][codes[train] == s], y[train][codes[train] == s])
                for s in range(n_groups)
            ]
        else:
            self.estimators_ = [clone(base).fit(X[train], y[train])]

        counts = np.bincount(codes_cal, minlength=n_groups)
        self._check_group_sizes(counts, "calibration ")
        scores = self._scores(X_cal, codes_cal)
        # one sort per group costs about one sort of all scores (a lexsort costs twice that)
        self.calibration_scores_ = [np.sort(scores[codes_cal == s]) for s in range(n_groups)]
        self.grid_ = midpoint_grid(self.n_grid)
        self.latent_curves_ = np.stack(
            [quantile_function(g, self.grid_, assume_sorted=True) for g in self.calibration_scores_]
        )
        self.group_weights_ = counts / counts.sum()
        self._bounds = check_bounds(self.bounds, scores.min(), scores.max())
        self.unadjusted_grid_gap_ = float(
            pairwise_grid_distances(self.latent_curves_, p_value).max()
        )
        if isinstance(self.cost, str) and self.cost.startswith("observed_"):
            self._cost = ObservedLossCost.from_samples(
                scores, y_cal, codes_cal, n_groups, self.n_grid, loss=self.cost.split("_", 1)[1]
            )
        else:
            self._cost = resolve_cost(self.cost)
        self._adjust(self.epsilon, self.tau)
        return self

    def _check_group_sizes(self, counts: np.ndarray, where: str) -> None:
        for s, count in enumerate(counts):
            label = self.groups_.names[s]
            if count == 0 and where:
                raise ValueError(MSG_MISSING_GROUP.format(group=label))
            if count < 2:
                raise ValueError(MSG_SMALL_GROUP.format(group=label, count=int(count)))

    def _check_calibration(self, calibration):
        if not isinstance(calibration, (tuple, list)) or len(calibration) != 3:
            raise ValueError(MSG_CALIBRATION.format(value=type(calibration).__name__))
        X_cal, y_cal, sf_cal = calibration
        X_cal = validate_data(self, X_cal, reset=False)
        y_cal = check_array_1d(y_cal, "calibration y")
        if y_cal.shape[0] != X_cal.shape[0]:
            raise ValueError(
                f"calibration X has {X_cal.shape[0]} rows but calibration y has {y_cal.shape[0]}."
            )
        codes_cal = self.groups_.encode(sf_cal, name="calibration sensitive_features")
        if codes_cal.shape[0] != X_cal.shape[0]:
            raise ValueError("calibration sensitive_features and X have different lengths.")
        return X_cal, y_cal, codes_cal

    def _scores(self, X: np.ndarray, codes: np.ndarray) -> np.ndarray:
        if len(self.estimators_) == 1:
            scores = np.asarray(self.estimators_[0].predict(X), dtype=np.float64).ravel()
        else:
            scores = np.empty(X.shape[0])
            for s, model in enumerate(self.estimators_):
                member = codes == s
                if member.any():
                    scores[member] = np.asarray(model.predict(X[member]), dtype=np.float64).ravel()
        if not np.all(np.isfinite(scores)):
            raise ValueError(MSG_NAN_SCORES)
        return scores

    def _adjust(self, epsilon: float | None, tau: float | None) -> None:
        """Stage 3 from the stored latent curves (reused along a tolerance path)."""
        if epsilon is None:
            epsilon = (0.0 if tau is None else tau) * self.unadjusted_grid_gap_
        self.epsilon_ = float(epsilon)
        self.adjustment_: QuantileAdjustment = adjust_quantiles(
            self.latent_curves_,
            self.group_weights_,
            p=self.p,
            epsilon=self.epsilon_,
            bounds=self._bounds,
            cost=self._cost,
            method=self.method,
        )
        self.adjusted_curves_ = self.adjustment_.curves
        self.grid_gap_ = self.adjustment_.grid_gap
        self.grid_violation_ = self.adjustment_.violation
        # The paper's identity convention (Section 3.3, K = 2 with W1/W2): if no curve moved, keep
        # the raw scores instead of a lossy ECDF/quantile round trip.
        self._identity = (
            len(self.adjusted_curves_) == 2
            and check_p(self.p) in (1.0, 2.0)
            and np.array_equal(self.adjusted_curves_, self.latent_curves_)
        )

    # ---------------------------------------------------------------------------- predicting
    def _ranks(self, scores: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Right-continuous ECDF rank of each score among its group's calibration scores.

        :func:`fairot.transport.ecdf_rank` sorts many queries once and scatters the ranks back,
        which is several times faster than searching them in data order.
        """
        ranks = np.empty(scores.shape[0])
        for s, reference in enumerate(self.calibration_scores_):
            index = np.flatnonzero(codes == s)
            if index.size == 0:
                continue
            ranks[index] = ecdf_rank(reference, scores[index], assume_sorted=True)
        return ranks

    def _map(self, ranks: np.ndarray, codes: np.ndarray, curves: np.ndarray) -> np.ndarray:
        """Stage 4: the adjusted curve at the rank (see :func:`._readout.read_curves`)."""
        return read_curves(ranks, codes, curves)

    def _encode(self, X, sensitive_features):
        X = validate_data(self, X, reset=False)
        codes = self.groups_.encode(sensitive_features)
        if codes.shape[0] != X.shape[0]:
            raise ValueError(
                f"sensitive_features has {codes.shape[0]} rows but X has {X.shape[0]}."
            )
        return X, codes

    def predict(self, X, *, sensitive_features) -> np.ndarray:
        """Fair predictions: the adjusted quantile of each score's rank within its group.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sensitive_features : array-like of shape (n_samples,) or DataFrame
            Groups, in the same form as in ``fit``; an unseen group is an error.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "adjusted_curves_")
        if is_dask_collection(X):
            from fairot.dask._regression import predict_wasserstein_regressor

            return predict_wasserstein_regressor(self, X, sensitive_features)
        X, codes = self._encode(X, sensitive_features)
        scores = self._scores(X, codes)
        if self._identity:
            return scores
        return self._map(self._ranks(scores, codes), codes, self.adjusted_curves_)

    def score_unadjusted(self, X, *, sensitive_features) -> np.ndarray:
        """Raw scores of the fitted model (before the fairness adjustment)."""
        check_is_fitted(self, "adjusted_curves_")
        X, codes = self._encode(X, sensitive_features)
        return self._scores(X, codes)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


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
) -> FairnessAccuracyPath:
    r"""Fit a whole path of relative tolerances, reusing the calibration work.

    Stages 1 and 2 (score models, calibration ranks and latent curves) run once; only the
    adjustment (Stage 3) runs per tolerance, and test scores and ranks are computed once.

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

    Returns
    -------
    FairnessAccuracyPath
    """
    if not isinstance(estimator, WassersteinFairRegressor):
        raise TypeError(
            f"estimator must be a WassersteinFairRegressor; got {type(estimator).__name__}."
        )
    taus = check_array_1d(taus, "taus")
    if np.any(taus < 0):
        raise ValueError(f"taus must be non-negative; got {taus.min()!r}.")
    if np.any(taus > 1):
        warnings.warn(MSG_TAU_ABOVE_ONE.format(tau=float(taus.max())), UserWarning, stacklevel=2)
    template = clone(estimator).set_params(tau=0.0, epsilon=None)
    fitted = template.fit(X, y, sensitive_features=sensitive_features, calibration=calibration)
    p_value = check_p(fitted.p)
    evaluate = X_test is not None
    unadjusted: dict = {}
    if evaluate:
        if y_test is None or sensitive_features_test is None:
            raise ValueError("X_test needs y_test and sensitive_features_test.")
        X_t, codes_t = fitted._encode(X_test, sensitive_features_test)
        y_t = check_array_1d(y_test, "y_test")
        scores_t = fitted._scores(X_t, codes_t)
        ranks_t = fitted._ranks(scores_t, codes_t)
        unadjusted = {
            "mse": mean_squared_error(y_t, scores_t),
            "r2": r2_score(y_t, scores_t),
            "test_gap": max_pairwise_wasserstein(scores_t, codes_t, p=p_value).distance,
        }
    rows, estimators = [], []
    for tau in taus:
        est = copy.copy(fitted)
        est.tau = float(tau)
        est._adjust(None, float(tau))
        estimators.append(est)
        row = {
            "tau": float(tau),
            "epsilon": est.epsilon_,
            "grid_gap": est.grid_gap_,
            "grid_violation": est.grid_violation_,
            "n_iter": est.adjustment_.n_iter,
        }
        if evaluate:
            pred = scores_t if est._identity else est._map(ranks_t, codes_t, est.adjusted_curves_)
            row["mse"] = mean_squared_error(y_t, pred)
            row["r2"] = r2_score(y_t, pred)
            row["test_gap"] = max_pairwise_wasserstein(pred, codes_t, p=p_value).distance
        rows.append(row)
    return FairnessAccuracyPath(pd.DataFrame(rows), estimators, unadjusted)
