r"""The estimator: the paper's four stages as one scikit-learn regressor (Section 3 of [1]_).

1. Fit the unconstrained score (group-wise clones of ``estimator`` on an auxiliary split, one
   model on all of it, or a user's frozen model): :mod:`.scores`.
2. Estimate each group's latent quantile curve :math:`\hat Q^*_s` of the scores on a separate
   calibration sample (exact linear-interpolation quantiles on the midpoint grid).
3. Adjust the curves to the tolerance with :func:`~fairot.regression.adjust_quantiles`.
4. Predict: the rank of a new score within its group (right-continuous calibration ECDF), then
   the adjusted map at that rank: the exact calibration quantiles of the group and of the
   barycenter plus the grid's correction (:mod:`._readout`), so that the tails are exact and
   :math:`\tau = 0` is the exact barycenter map.

Stages 2 to 4 run in :meth:`WassersteinFairRegressor.fit_from_group_statistics`, the seam that
the in-memory :meth:`~WassersteinFairRegressor.fit` and the Dask backend both call; their
state is a :class:`._calibration.Calibration` in the scaled unit of :mod:`._units`.

References
----------
.. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).
"""

from __future__ import annotations

import copy
import numbers
from typing import Literal, get_args

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import _check_y, check_is_fitted

from fairot.utils.arrays import check_sample_weight
from fairot.utils.backends import any_dask, dispatch
from fairot.utils.groups import GroupEncoding, group_attributes
from fairot.utils.strata import POOLED, SMALL_STRATA

from ._adjust import Method, QuantileAdjustment, check_p
from ._calibration import Calibration
from ._costs import InducedCost
from ._fit import fit_in_memory
from ._inputs import InputTagsMixin, encode_groups, groups_or_columns
from ._strata import MSG_DASK_CONTROL, strata_of_rows
from ._units import scaled_r2
from .checks import MSG_SCORE_GROUPS, check_calibration_groups, check_fit_parameters
from .scores import predict_scores

__all__ = ["WassersteinFairRegressor"]

CostName = Literal[
    "squared", "absolute", "pinball", "logistic", "observed_squared", "observed_absolute"
]


class WassersteinFairRegressor(InputTagsMixin, RegressorMixin, BaseEstimator):
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
        It receives ``X`` exactly as given (strings, NaN, DataFrames with feature names), so a
        ``Pipeline`` with its own preprocessing works.
    p : {1, 2, numpy.inf, "inf"}, default=2
        Order of the Wasserstein distance in the constraint.
    epsilon : float >= 0, default=None
        Absolute tolerance :math:`\epsilon`, in the unit of the target ``y``. Give ``epsilon``
        or ``tau``; neither means strict demographic parity (:math:`\epsilon = 0`).
    tau : float >= 0, default=None
        Relative tolerance, a fraction of the raw gap: :math:`\epsilon = \tau D_{\max}`, with
        :math:`D_{\max}` the unadjusted grid gap (Section 5.1 of [1]_). ``tau=1`` returns the
        score model's own predictions (see Notes); above 1 is allowed with a warning.
    n_grid : int, default=2000
        Number :math:`M` of midpoint ranks :math:`u_k = (k - 1/2)/M`.
    bounds : (float, float), default=None
        Prediction range :math:`[a, b]`: every prediction is clipped to it; the scores may
        leave it. Clipping never widens a Wasserstein gap between groups and, for a target in
        :math:`[a, b]`, never adds error; ``adjusted_curves_`` and ``grid_gap_`` are before
        clipping. ``None``: unbounded.
    cost : str or InducedCost, default="squared"
        Induced cost (see :func:`~fairot.regression.adjust_quantiles`). ``"observed_squared"`` /
        ``"observed_absolute"`` use the observed-loss proxy on the calibration responses
        (Remark 1 of [1]_).
    method : str, default="auto"
        Solver passed to :func:`~fairot.regression.adjust_quantiles`.
    groupwise : bool, default=False
        Fit one clone of ``estimator`` on all groups, or one per group (``True``: the paper's
        Stage 1). Group-wise models are other models than the one given (each sees one group,
        as if the group were a feature interacting with every other), often less fair: with
        ``groupwise=True``, ``tau=1`` returns their predictions, not the given model's.
    calibration_size : float in (0, 1), default=0.5
        Share of ``fit``'s data held out, stratified by group, for calibration (unused with a
        frozen estimator or an explicit ``calibration`` set).
    group_mode : {"intersection"}, default="intersection"
        Several sensitive columns form intersectional groups. ``"marginal"`` (overlapping
        groups, one per column value) raises: a prediction needs the one group of its sample.
    small_strata : {"pooled", "error"}, default="pooled"
        With ``control_features``, a stratum where a group is missing or has fewer than
        ``fairot.utils.groups.SMALL_GROUP_SIZE`` calibration rows: ``"pooled"`` maps it with
        the adjustment of all strata together (one warning names the strata), ``"error"``
        raises, naming them and their cells' sizes. Strata unseen at fit: the same in predict.
    random_state : int, RandomState instance or None, default=None
        Seed of the auxiliary/calibration split, read by
        :func:`sklearn.utils.check_random_state`.

    Attributes
    ----------
    estimators_ : list of regressors
        One fitted model per group (``groupwise``) or a single one.
    groups_ : list
        Group labels seen in ``fit``, in the order of the rows of the curves (a scalar per
        group for one sensitive column, a tuple of values for intersections).
    group_names_ : list of str
        Readable group names, e.g. ``"race=White, sex=Male"``.
    group_weights_ : ndarray of shape (n_groups,)
        Calibration shares :math:`\hat r_s` (weighted by ``sample_weight``).
    calibration_scores_ : list of ndarray
        Sorted calibration scores of each group (the rank map of Stage 4).
    latent_curves_ : ndarray of shape (n_groups, n_grid)
        :math:`\hat Q^*_s(u_k)`, the linear-interpolation quantiles of the calibration scores
        (``numpy.quantile(..., method="linear")``; frequency-weighted with ``sample_weight``).
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
        The solver's full result, in the unit of the scores.
    strata_, pooled_strata_ : list
        With ``control_features``: the strata seen at fit, and the names of those mapped with
        the adjustment of all strata together (``small_strata``).
    stratum_maps_ : list of (WassersteinFairRegressor or None)
        Each stratum's own adjustment (its curves, ``epsilon_``, ``grid_gap_``), fitted on its
        calibration rows alone and sharing ``estimators_``; ``None`` for ``pooled_strata_``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` had column names.

    Notes
    -----
    **Prediction.** A new score :math:`x` of group :math:`s` gets the rank
    :math:`u = \hat F_s(x)` among the group's calibration scores, and the prediction

    .. math:: \alpha_s \hat Q^*_s(u) + (1 - \alpha_s) \sum_{s'} \hat r_{s'} \hat Q^*_{s'}(u)
              + C_s(u),

    with :math:`\hat Q^*` the exact calibration quantile functions, :math:`\alpha_s \in [0, 1]`
    the least-squares mix of the group's own curve and the barycenter closest to its adjusted
    curve, and :math:`C_s` the rest of the adjustment on the grid (linear between nodes, held
    beyond the end nodes). At the grid nodes this is the adjusted curve; at :math:`\tau = 0`
    (squared cost) it is the exact barycenter map of Chzhen et al. (2020) at every rank, tails
    included; for two groups and :math:`W_2` the closed form of Table 1 of [1]_ at every rank.
    Predictions are nondecreasing in the score within a group.

    **Ties.** A calibration score within ``TIE_ULPS`` units of the model's precision above a new
    score counts as tied with it (below it in the ECDF), so that a row gets the same prediction
    whatever other rows share the call.

    **Identity convention** (Section 3.3 of [1]_, here for any number of groups and any
    :math:`p`): when no curve moved, ``predict`` returns the raw scores (clipped to ``bounds``).
    With the squared cost nothing moves at :math:`\tau \ge 1`, so ``tau=1`` is the score model:
    with a :class:`~sklearn.frozen.FrozenEstimator` its predictions exactly (held-out gap and R²
    equal the raw model's); otherwise a clone of ``estimator`` fitted on the auxiliary split
    (``1 - calibration_size`` of the rows), equal to the model fitted on all rows up to sampling
    noise. Costs not minimised by the latent curves (``pinball``, the observed-loss proxy) move
    them at any :math:`\tau`.

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
    >>> round(model.score(X, y, sensitive_features=s), 2)
    0.64
    """

    _parameter_constraints: dict = {
        "estimator": [None, HasMethods(["fit", "predict"])],
        "p": "no_validation",  # checked by check_p: 1, 2, inf or "inf"
        "epsilon": [None, Interval(numbers.Real, 0, None, closed="left")],
        "tau": [None, Interval(numbers.Real, 0, None, closed="left")],
        "n_grid": [Interval(numbers.Integral, 1, None, closed="left")],
        "bounds": [None, tuple, list],
        # the names that the type hints list, so that the two cannot drift apart
        "cost": [StrOptions(set(get_args(CostName))), InducedCost],
        "method": [StrOptions(set(get_args(Method)))],
        "groupwise": ["boolean"],
        "calibration_size": [Interval(numbers.Real, 0, 1, closed="neither")],
        "group_mode": [StrOptions({"intersection", "marginal"})],
        "small_strata": [StrOptions(set(SMALL_STRATA))],
        "random_state": ["random_state"],
    }

    # Groups are needed by every method that predicts: meta-estimators route them by default
    # once metadata routing is enabled (no set_*_request call needed).
    __metadata_request__fit = {"sensitive_features": True, "control_features": True}
    __metadata_request__predict = {"sensitive_features": True, "control_features": True}
    __metadata_request__score = {"sensitive_features": True, "control_features": True}

    def __init__(
        self,
        *,
        estimator=None,
        p: float | str = 2,
        epsilon: float | None = None,
        tau: float | None = None,
        n_grid: int = 2000,
        bounds: tuple[float, float] | None = None,
        cost: CostName | InducedCost = "squared",
        method: Method = "auto",
        groupwise: bool = False,
        calibration_size: float = 0.5,
        group_mode: Literal["intersection", "marginal"] = "intersection",
        small_strata: Literal["pooled", "error"] = "pooled",
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
        self.group_mode = group_mode
        self.small_strata = small_strata
        self.random_state = random_state

    # ----------------------------------------------------------------------------- fitting
    def fit(
        self,
        X,
        y,
        *,
        sensitive_features,
        control_features=None,
        sample_weight=None,
        calibration=None,
    ):
        """Fit the score model, the latent curves and their fairness adjustment.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Passed to the wrapped estimator unchanged. A Dask collection is fitted by
            :mod:`fairot.dask` (a frozen score model calibrated on the collections).
        y : array-like of shape (n_samples,)
        sensitive_features : array-like of shape (n_samples,), DataFrame, dict or str
            Group of each sample; several columns form intersectional groups. Column name(s)
            of a DataFrame ``X`` read the groups from ``X`` (which the model still receives
            whole), and then ``predict`` and ``score`` read them from the same columns.
        control_features : array-like, DataFrame, dict, str or list of str, optional
            Strata (legitimate factors) within which parity is asked for, in the forms of
            ``sensitive_features``: one adjustment per stratum, fitted on the stratum's
            calibration rows alone, with ``tau`` / ``epsilon`` applying within each stratum;
            the score model is fitted once on all strata. Strata too small to fit follow
            ``small_strata``. Not with an explicit ``calibration`` set.
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights: a row of integer weight ``w`` counts as ``w`` rows, in the score
            model's fit (which must accept ``sample_weight``), the groups' shares and the
            calibration quantiles and ranks.
        calibration : tuple (X_cal, y_cal, sensitive_features_cal[, sample_weight_cal])
            An explicit calibration set; then all of ``X, y`` trains the score model.

        Returns
        -------
        self : WassersteinFairRegressor
        """
        if any_dask(X):
            if control_features is not None:
                raise NotImplementedError(MSG_DASK_CONTROL)
            args = (self, X, y, sensitive_features, calibration)
            return dispatch("WassersteinFairRegressor.fit", *args, sample_weight=sample_weight)
        check_fit_parameters(self, stacklevel=3)
        strata = fit_in_memory(
            self,
            X,
            y,
            sensitive_features,
            control_features,
            weights=sample_weight,
            calibration=calibration,
        )
        if strata is not None:
            self._strata = strata
        return self

    def fit_from_group_statistics(
        self,
        scores: np.ndarray,
        codes: np.ndarray,
        *,
        encoding: GroupEncoding,
        estimators: list,
        sample_weight: np.ndarray | None = None,
        responses: np.ndarray | None = None,
        group_sizes: np.ndarray | None = None,
        precision: float = 0.0,
        n_features_in: int | None = None,
        feature_names_in: np.ndarray | None = None,
        sensitive_columns: list[str] | None = None,
    ) -> WassersteinFairRegressor:
        r"""Stages 2 to 4 from the groups' calibration scores: the seam every backend calls.

        :meth:`fit` trains the score models, scores the calibration set and calls this; the
        Dask backend (:mod:`fairot.dask`) gathers each group's sorted scores (or a sketch's
        quantiles of them) across a cluster and calls it too, so that both fits are one code
        path from here on. The options (``p``, ``epsilon``, ``tau``, ...) are the estimator's
        parameters; call :func:`fairot.regression.checks.check_fit_parameters` before
        gathering the statistics to refuse bad options before any work.

        Parameters
        ----------
        scores : ndarray of shape (n_scores,)
            Calibration scores :math:`\hat f(x)` of all groups, in any order.
        codes : ndarray of int of shape (n_scores,)
            Group code of each score, in ``encoding``.
        encoding : GroupEncoding
            The groups (:class:`fairot.utils.groups.GroupEncoding`); ``predict`` encodes new
            groups with it.
        estimators : list of fitted regressors
            The score models: one, or one per group in the order of ``encoding``.
        sample_weight : ndarray of shape (n_scores,), default=None
            Frequency weights of the scores.
        responses : ndarray of shape (n_scores,), default=None
            Calibration responses; needed by the observed-loss costs only.
        group_sizes : ndarray of shape (n_groups,), default=None
            Rows of each group when ``scores`` summarise more rows (a sketch's quantiles); they
            are then the groups' masses. ``None``: counted from ``codes``.
        precision : float, default=0.0
            Machine epsilon of the models' scores
            (:func:`fairot.regression.scores.predict_scores`): the tolerance of near-ties.
        n_features_in, feature_names_in : optional
            The width and column names of ``X`` (``fit`` records them itself).
        sensitive_columns : list of str, default=None
            The columns of ``X`` that held the groups, when ``fit`` was given their names:
            ``predict`` and ``score`` then read the groups from them by default.

        Returns
        -------
        self : WassersteinFairRegressor
        """
        self._groups = encoding
        self.groups_, self.group_names_ = group_attributes(encoding)
        self.estimators_ = list(estimators)
        # a fit without control_features (here, or from a backend) leaves no strata behind
        self._strata = None
        for name in ("stratum_maps_", "strata_", "pooled_strata_"):
            self.__dict__.pop(name, None)
        self._sensitive_columns = None if sensitive_columns is None else list(sensitive_columns)
        if n_features_in is not None:
            self.n_features_in_ = int(n_features_in)
        if feature_names_in is not None:
            self.feature_names_in_ = np.asarray(feature_names_in, dtype=object)
        mass = check_calibration_groups(
            codes, self.group_names_, sample_weight=sample_weight, group_sizes=group_sizes
        )
        self._calibration = Calibration.from_scores(
            scores,
            codes,
            mass,
            sample_weight=sample_weight,
            responses=responses,
            precision=precision,
            cost=self.cost,
            bounds=self.bounds,
            n_grid=self.n_grid,
            p=check_p(self.p),
        )
        calibration = self._calibration
        self.group_weights_ = calibration.group_weights
        self.grid_ = calibration.grid
        self.latent_curves_ = calibration.unit.from_unit(calibration.latent)
        self.unadjusted_grid_gap_ = calibration.unit.length_from_unit(calibration.unadjusted_gap)
        self._adjust(self.epsilon, self.tau)
        return self

    @property
    def calibration_scores_(self) -> list[np.ndarray]:
        """Sorted calibration scores of each group."""
        return self._calibration.group_samples

    def with_tolerance(
        self, *, epsilon: float | None = None, tau: float | None = None
    ) -> WassersteinFairRegressor:
        r"""A copy adjusted at another tolerance, without fitting the score models again.

        Stages 1 and 2 (the score models and the calibration) are shared with this regressor;
        only the adjustment (Stage 3) runs again, at :math:`\varepsilon` = ``epsilon`` or at
        ``tau`` times the calibration's raw gap, as the parameters of the same names in
        ``fit``. With strata, each stratum's adjustment runs again the same way. This is what
        :func:`~fairot.regression.fairness_accuracy_path` traces.

        Parameters
        ----------
        epsilon : float, default=None
        tau : float, default=None

        Returns
        -------
        WassersteinFairRegressor
            A fitted regressor; this one is unchanged.
        """
        check_is_fitted(self, "adjusted_curves_")
        adjusted = copy.copy(self)
        adjusted.epsilon, adjusted.tau = epsilon, tau
        adjusted._adjust(epsilon, tau)
        if getattr(self, "stratum_maps_", None) is not None:
            adjusted.stratum_maps_ = [
                None if m is None else m.with_tolerance(epsilon=epsilon, tau=tau)
                for m in self.stratum_maps_
            ]
        return adjusted

    def _adjust(self, epsilon: float | None, tau: float | None) -> None:
        """Stage 3 and the prediction tables, from the stored calibration (reused by the path)."""
        fair = self._calibration.adjust(epsilon, tau, p=self.p, method=self.method)
        self.adjustment_: QuantileAdjustment = fair.adjustment
        self.epsilon_ = fair.adjustment.epsilon
        self.adjusted_curves_ = fair.adjustment.curves
        self.grid_gap_ = fair.adjustment.grid_gap
        self.grid_violation_ = fair.adjustment.violation
        self._identity = fair.identity
        self._tables = fair.tables

    # ---------------------------------------------------------------------------- predicting
    def predict(self, X, *, sensitive_features=None, control_features=None) -> np.ndarray:
        """Fair predictions: the adjusted map at each score's rank within its group.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Passed to the wrapped estimator unchanged.
        sensitive_features : array-like of shape (n_samples,), DataFrame, dict or str
            Groups, in the same form as in ``fit``; an unseen group is an error. ``None``: the
            columns of ``X`` named in ``fit`` (required when ``fit`` was given data).
        control_features : array-like, DataFrame, dict, str or list of str, optional
            The strata of the rows, required when (and only when) ``fit`` was given them
            (``None``: the columns of ``X`` named in ``fit``). A stratum unseen at fit follows
            ``small_strata``.

        Returns
        -------
        ndarray of shape (n_samples,)
            Clipped to ``bounds`` when given.
        """
        check_is_fitted(self, "adjusted_curves_")
        sensitive_features = groups_or_columns(sensitive_features, self._fitted_columns())
        if any_dask(X):
            if control_features is not None or getattr(self, "_strata", None) is not None:
                raise NotImplementedError(MSG_DASK_CONTROL)
            return dispatch("WassersteinFairRegressor.predict", self, X, sensitive_features)
        X, codes = encode_groups(self, X, sensitive_features, self._groups)
        stratum = strata_of_rows(
            self,
            getattr(self, "_strata", None),
            X,
            codes.shape[0],
            control_features,
            stacklevel=2,
        )
        scores = predict_scores(self.estimators_, X, codes)
        if stratum is None:
            return self._fair_map(scores, codes)
        out = np.empty_like(scores)
        for s in np.unique(stratum):
            rows = np.flatnonzero(stratum == s)
            fitted = self if s == POOLED else self.stratum_maps_[s]
            out[rows] = fitted._fair_map(scores[rows], codes[rows])
        return out

    def _fair_map(self, scores: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """The fitted adjustment applied to scores of the given groups (clipped to ``bounds``)."""
        if self._identity:
            return self._calibration.clip(scores)
        return self._calibration.clip(self._calibration.read(scores, codes, self._tables))

    def _fitted_columns(self) -> list[str] | None:
        # a model pickled before the columns were recorded has no record of them
        return getattr(self, "_sensitive_columns", None)

    def score(
        self, X, y, sample_weight=None, *, sensitive_features=None, control_features=None
    ) -> float:
        """R² of the fair predictions (weighted by ``sample_weight``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        sensitive_features : array-like of shape (n_samples,), DataFrame, dict or str
            ``None``: the columns of ``X`` named in ``fit``; when ``fit`` was given data, the
            groups are required (without them there is no fair prediction), and the error
            says how to route them.
        control_features : array-like, DataFrame, dict, str or list of str, optional
            As in :meth:`predict`.

        Returns
        -------
        float
        """
        check_is_fitted(self, "adjusted_curves_")
        sensitive_features = groups_or_columns(sensitive_features, self._fitted_columns())
        if sensitive_features is None:
            raise ValueError(MSG_SCORE_GROUPS)
        strata = {} if control_features is None else {"control_features": control_features}
        pred = self.predict(X, sensitive_features=sensitive_features, **strata)
        y = np.asarray(_check_y(y, y_numeric=True, estimator=self), dtype=np.float64)
        if y.shape[0] != pred.shape[0]:
            raise ValueError(f"X has {pred.shape[0]} rows but y has {y.shape[0]}.")
        weights = check_sample_weight(sample_weight, y.shape[0])
        return scaled_r2(y, pred, weights)

    def score_unadjusted(self, X, *, sensitive_features=None) -> np.ndarray:
        """Raw scores of the fitted model (before the fairness adjustment and ``bounds``)."""
        check_is_fitted(self, "adjusted_curves_")
        sensitive_features = groups_or_columns(sensitive_features, self._fitted_columns())
        X, codes = encode_groups(self, X, sensitive_features, self._groups)
        return predict_scores(self.estimators_, X, codes)
