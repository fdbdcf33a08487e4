r"""The estimator: the paper's four stages as one scikit-learn regressor (Section 3 of [1]_).

1. Fit the unconstrained score (group-wise clones of ``estimator`` on an auxiliary split, one
   model on all of it, or a user's frozen model).
2. Estimate each group's latent quantile curve :math:`\hat Q^*_s` of the scores on a separate
   calibration sample (exact linear-interpolation quantiles on the midpoint grid).
3. Adjust the curves to the tolerance with :func:`~fairot.regression.adjust_quantiles`.
4. Predict: the rank of a new score within its group (right-continuous calibration ECDF), then
   the adjusted map at that rank: the exact calibration quantiles of the group and of the
   barycenter plus the grid's correction (:mod:`._readout`), so that the tails are exact and
   :math:`\tau = 0` is the exact barycenter map.

Everything between ranks and predictions runs in a scaled unit of the scores (centred, and
divided by a power of two near their half range): :math:`W_p` is homogeneous, so the problem is
the same, and scores near 1e300 or 1e-300 neither overflow nor vanish below the solver's
absolute tolerances.

References
----------
.. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import numbers
import warnings
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.model_selection import train_test_split
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import (
    _check_feature_names,
    _check_n_features,
    _check_y,
    _num_samples,
    check_is_fitted,
    has_fit_parameter,
    indexable,
)

from fairot.metrics import max_pairwise_wasserstein
from fairot.transport import midpoint_grid
from fairot.utils.arrays import check_array_1d, check_sample_weight
from fairot.utils.backends import is_dask_collection
from fairot.utils.groups import group_attributes
from fairot.utils.sensitive import check_sensitive_features, resolve_sensitive_features

from ._adjust import QuantileAdjustment, adjust_quantiles, check_bounds, check_p
from ._costs import (
    AbsoluteGaussianCost,
    InducedCost,
    ObservedLossCost,
    PinballGaussianCost,
    SquaredCost,
    resolve_cost,
)
from ._projections import pairwise_grid_distances
from ._readout import frequency_quantiles, prediction_tables, read_tables

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
MSG_SMALL_WEIGHT = (
    "group {group!r} has calibration weight {mass!r}: sample_weight are frequency weights (a row "
    "of weight w counts as w rows, so that integer weights equal repeated rows), and a quantile "
    "curve needs the weight of at least 2 rows. Pass counts or survey weights, not weights "
    "normalised to sum to 1 (multiply those by the number of rows)."
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
MSG_CALIBRATION = (
    "calibration must be a tuple (X, y, sensitive_features) or (X, y, sensitive_features, "
    "sample_weight); got {value!r}."
)
MSG_SCORE_GROUPS = (
    "score needs sensitive_features: WassersteinFairRegressor predicts by rank within each "
    "sample's group. Call score(X, y, sensitive_features=...). In cross_val_score or "
    "GridSearchCV, enable metadata routing (sklearn.set_config(enable_metadata_routing=True)) "
    "and pass sensitive_features=... to their fit or params: the regressor requests it for "
    "fit, predict and score by default."
)
MSG_MARGINAL = (
    "groups='marginal' is not supported by WassersteinFairRegressor: a prediction reads the "
    "quantile map of the one group its sample belongs to, and marginal groups overlap (a "
    "sample is in one group per sensitive column). Use groups='intersection' (the default), "
    "whose groups partition the samples."
)
MSG_POSITIONAL = (
    "Pass the model as WassersteinFairRegressor(estimator=...): the estimator is keyword-only "
    "like every other parameter, and a positional estimator will be an error in a future "
    "release."
)
MSG_WEIGHTS_OBSERVED = (
    "sample_weight is not supported with cost={cost!r}: the observed-loss proxy averages "
    "unweighted calibration responses. Use a known cost ('squared', 'absolute', 'pinball') or "
    "drop sample_weight."
)
MSG_WEIGHTS_ESTIMATOR = (
    "sample_weight was given but {name}.fit does not accept sample_weight; pass a model that "
    "does, or a FrozenEstimator of a model you fitted yourself (its calibration is weighted)."
)
MSG_X_1D = (
    "X must be 2-D like the X seen in fit ({n_features} features); got a 1-D X. Reshape your "
    "data with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single sample."
)
MSG_OVERFLOW = (
    "the scores' quantile curves overflow (unadjusted gap {gap!r}) with cost={cost!r}, which "
    "cannot be rescaled internally; rescale the scores (or y) to a moderate range first."
)

# A calibration score within this many units in the last place of the model's precision (of
# the largest calibration score) above a new score counts as tied with it. The same row scored
# alone or in a batch differs by a few ulps (BLAS kernels sum in another order: at most 2 ulps of
# the largest score for LinearRegression with 3 to 100 features, float32 or float64), and a rank
# decided on that difference made a prediction depend on the other rows of the call (issue 14).
# Mid-ranks of tied calibration scores would not help: the re-scored row is one ulp off, not
# tied. Counting near-ties as ties moves each jump of the rank from a calibration score c to
# c - tolerance, where no re-scored row lands; the ECDF shifts by far less than the model's noise.
TIE_ULPS = 64

CostName = Literal[
    "squared", "absolute", "pinball", "logistic", "observed_squared", "observed_absolute"
]


def _is_frozen(estimator: Any) -> bool:
    return isinstance(estimator, FrozenEstimator)


def _estimator_keyword(init):
    """Accept a positional ``estimator`` for now, with a FutureWarning that names the fix."""

    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        if args:
            if len(args) > 1 or "estimator" in kwargs:
                raise TypeError(MSG_POSITIONAL)
            warnings.warn(MSG_POSITIONAL, FutureWarning, stacklevel=2)
            kwargs["estimator"] = args[0]
        init(self, **kwargs)

    return wrapper


@dataclass(frozen=True)
class _Unit:
    r"""The scaled unit :math:`z = x 2^{-e} - c 2^{-e}` of the scores and back.

    Scaling by a power of two is exact; only the centring rounds (by less than one ulp of the
    scores).
    """

    centre: float = 0.0
    exponent: int = 0

    @classmethod
    def of(cls, low: float, high: float, *, rescale: bool) -> _Unit:
        """The unit of scores in ``[low, high]`` (the identity when not ``rescale``)."""
        if not rescale:
            return cls()
        # halves first: (high - low) overflows for scores near +-1e308
        centre = low / 2 + high / 2
        half_range = high / 2 - low / 2
        if not half_range > 0:
            return cls(centre=centre, exponent=0)
        return cls(centre=centre, exponent=int(np.frexp(half_range)[1]))

    @property
    def inv_scale(self) -> float:
        return float(np.ldexp(1.0, -self.exponent))

    @property
    def scale(self) -> float:
        return float(np.ldexp(1.0, self.exponent))

    @property
    def shift(self) -> float:
        return float(np.ldexp(self.centre, -self.exponent))

    def to_unit(self, x):
        return np.ldexp(x, -self.exponent) - self.shift

    def from_unit(self, z):
        return self.centre + np.ldexp(z, self.exponent)

    def length_to_unit(self, d: float) -> float:
        return float(np.ldexp(d, -self.exponent))

    def length_from_unit(self, d: float) -> float:
        return float(np.ldexp(d, self.exponent))


def _cost_in_unit(cost: InducedCost, unit_scale: float) -> InducedCost | None:
    """The same cost in the scaled unit, or None when it cannot be rescaled (logistic, custom).

    The squared cost is homogeneous; the Gaussian-noise costs are when their noise scale is
    rescaled too. A logit (the logistic cost) has an absolute meaning.
    """
    if type(cost) is SquaredCost:
        return cost
    if type(cost) is AbsoluteGaussianCost:
        return AbsoluteGaussianCost(noise_scale=cost.noise_scale / unit_scale)
    if type(cost) is PinballGaussianCost:
        return PinballGaussianCost(alpha=cost.alpha, noise_scale=cost.noise_scale / unit_scale)
    return None


def _r2(y: np.ndarray, pred: np.ndarray, sample_weight) -> float:
    """R² after scaling both by one power of two (it is scale-free; squares of 1e300 are not)."""
    largest = max(float(np.max(np.abs(y))), float(np.max(np.abs(pred))))
    exponent = int(np.frexp(largest)[1]) if largest > 0 else 0
    return float(
        r2_score(np.ldexp(y, -exponent), np.ldexp(pred, -exponent), sample_weight=sample_weight)
    )


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
        It receives ``X`` exactly as given (strings, NaN, DataFrames with feature names), so a
        ``Pipeline`` with its own preprocessing works.
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
    groups : {"intersection"}, default="intersection"
        Several sensitive columns form intersectional groups. ``"marginal"`` (overlapping
        groups, one per column value) raises: a prediction needs the one group of its sample.
    random_state : int, RandomState or None, default=None
        Seed of the auxiliary/calibration split.

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

    **Identity convention** (Section 3.3 of [1]_, two groups with :math:`W_1`/:math:`W_2`): when
    no curve moved, ``predict`` returns the raw scores.

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
    0.65
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
        "groups": [StrOptions({"intersection", "marginal"})],
        "random_state": ["random_state"],
    }

    # Groups are needed by every method that predicts: meta-estimators route them by default
    # once metadata routing is enabled (no set_*_request call needed).
    __metadata_request__fit = {"sensitive_features": True}
    __metadata_request__predict = {"sensitive_features": True}
    __metadata_request__score = {"sensitive_features": True}

    @_estimator_keyword
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
        method: str = "auto",
        groupwise: bool = True,
        calibration_size: float = 0.5,
        groups: Literal["intersection", "marginal"] = "intersection",
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
        self.groups = groups
        self.random_state = random_state

    # ----------------------------------------------------------------------------- fitting
    def fit(self, X, y, sample_weight=None, *, sensitive_features, calibration=None):
        """Fit the score model, the latent curves and their fairness adjustment.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Passed to the wrapped estimator unchanged.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights: a row of integer weight ``w`` counts as ``w`` rows, in the score
            model's fit (which must accept ``sample_weight``), the groups' shares and the
            calibration quantiles and ranks.
        sensitive_features : array-like of shape (n_samples,), DataFrame, dict or str
            Group of each sample; several columns form intersectional groups. Column name(s)
            of a DataFrame ``X`` read the groups from ``X`` (which the model still receives
            whole).
        calibration : tuple (X_cal, y_cal, sensitive_features_cal[, sample_weight_cal])
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
        if self.groups == "marginal":
            raise ValueError(MSG_MARGINAL)
        if self.epsilon is not None and self.tau is not None:
            raise ValueError(MSG_BOTH_TOLERANCES.format(eps=self.epsilon, tau=self.tau))
        if self.tau is not None and self.tau > 1:
            warnings.warn(MSG_TAU_ABOVE_ONE.format(tau=self.tau), UserWarning, stacklevel=2)
        X = self._check_X(X, reset=True)
        n_samples = _num_samples(X)
        y = np.asarray(_check_y(y, y_numeric=True, estimator=self), dtype=np.float64)
        if y.shape[0] != n_samples:
            raise ValueError(f"X has {n_samples} rows but y has {y.shape[0]}.")
        weights = check_sample_weight(sample_weight, y.shape[0])
        sensitive_features, _ = resolve_sensitive_features(X, sensitive_features)
        groups = check_sensitive_features(sensitive_features, n_samples)
        cost_name = self.cost if isinstance(self.cost, str) else None
        observed = cost_name is not None and cost_name.startswith("observed_")
        if observed and weights is not None:
            raise ValueError(MSG_WEIGHTS_OBSERVED.format(cost=self.cost))
        self._groups = groups
        self.groups_, self.group_names_ = group_attributes(groups)
        codes = groups.codes
        n_groups = groups.n_groups
        base = LinearRegression() if self.estimator is None else self.estimator
        if (
            weights is not None
            and not _is_frozen(base)
            and not has_fit_parameter(base, "sample_weight")
        ):
            raise ValueError(MSG_WEIGHTS_ESTIMATOR.format(name=type(base).__name__))

        if _is_frozen(base) and calibration is not None:
            raise ValueError(MSG_FROZEN_CALIBRATION)
        if _is_frozen(base):
            train = None
            X_cal, y_cal, codes_cal, w_cal = X, y, codes, weights
        elif calibration is not None:
            train = np.arange(n_samples)
            X_cal, y_cal, codes_cal, w_cal = self._check_calibration(calibration)
        else:
            self._check_group_sizes(np.bincount(codes, minlength=n_groups), "")
            train, cal = train_test_split(
                np.arange(n_samples),
                test_size=self.calibration_size,
                stratify=codes,
                random_state=self.random_state,
            )
            X_cal, y_cal, codes_cal = _safe_indexing(X, cal), y[cal], codes[cal]
            w_cal = None if weights is None else weights[cal]

        if _is_frozen(base):
            self.estimators_ = [base]
        else:
            members = (
                [train[codes[train] == s] for s in range(n_groups)] if self.groupwise else [train]
            )
            self.estimators_ = [self._fit_one(clone(base), X, y, weights, rows) for rows in members]

        if w_cal is not None:
            counts = np.bincount(codes_cal, weights=w_cal > 0, minlength=n_groups)
            mass = np.bincount(codes_cal, weights=w_cal, minlength=n_groups)
        else:
            counts = np.bincount(codes_cal, minlength=n_groups)
            mass = counts.astype(np.float64)
        self._check_group_sizes(counts, "calibration ")
        if w_cal is not None:
            for s, group_mass in enumerate(mass):
                if group_mass < 2:
                    group = self.group_names_[s]
                    raise ValueError(MSG_SMALL_WEIGHT.format(group=group, mass=float(group_mass)))
        scores, precision = self._scores(X_cal, codes_cal, with_precision=True)
        self._calibrate(scores, y_cal, codes_cal, w_cal, mass, precision, p_value)
        self._adjust(self.epsilon, self.tau)
        return self

    @staticmethod
    def _fit_one(model, X, y, weights, rows):
        X_rows = _safe_indexing(X, rows)
        if weights is None:
            return model.fit(X_rows, y[rows])
        return model.fit(X_rows, y[rows], sample_weight=weights[rows])

    def _calibrate(self, scores, y_cal, codes_cal, w_cal, mass, precision, p_value) -> None:
        """Stages 2 and the fixed part of 4: sorted scores, unit, latent curves, tie tolerance."""
        n_groups = len(mass)
        # one sort per group costs about one sort of all scores (a lexsort costs ten times that)
        members = [np.flatnonzero(codes_cal == s) for s in range(n_groups)]
        if w_cal is None:
            self._samples = np.concatenate([np.sort(scores[m]) for m in members])
            self._cum_weights = None
        else:
            # the weights travel with their scores (a plain sort is faster without them)
            orders = [m[np.argsort(scores[m])] for m in members]
            self._samples = np.concatenate([scores[o] for o in orders])
            self._cum_weights = [np.cumsum(w_cal[o]) for o in orders]
        sizes = [m.size for m in members]
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        self.group_weights_ = mass / mass.sum()
        cost = resolve_cost(self.cost) if not str(self.cost).startswith("observed_") else None
        rescale = cost is None or _cost_in_unit(cost, 1.0) is not None
        low, high = float(scores.min()), float(scores.max())
        self._unit = _Unit.of(low, high, rescale=rescale)
        unit = self._unit
        self.grid_ = midpoint_grid(self.n_grid)
        self._latent = np.stack(
            [
                frequency_quantiles(
                    x,
                    self.grid_,
                    None if self._cum_weights is None else self._cum_weights[s],
                    shift=unit.shift,
                    inv_scale=unit.inv_scale,
                )
                for s, x in enumerate(self.calibration_scores_)
            ]
        )
        self.latent_curves_ = unit.from_unit(self._latent)
        bound_low, bound_high = check_bounds(self.bounds, low, high)
        self._bounds = (float(unit.to_unit(bound_low)), float(unit.to_unit(bound_high)))
        if cost is None:
            self._cost = ObservedLossCost.from_samples(
                unit.to_unit(scores),
                unit.to_unit(y_cal),
                codes_cal,
                n_groups,
                self.n_grid,
                loss=str(self.cost).split("_", 1)[1],
            )
        else:
            self._cost = _cost_in_unit(cost, unit.scale) if rescale else cost
        # an unscaled cost can overflow here: the clear error below replaces numpy's warning
        with np.errstate(over="ignore", invalid="ignore"):
            gap = float(pairwise_grid_distances(self._latent, p_value).max())
        if not np.isfinite(gap):
            raise ValueError(MSG_OVERFLOW.format(gap=gap, cost=self.cost))
        self._unadjusted_gap = gap
        self.unadjusted_grid_gap_ = unit.length_from_unit(gap)
        self._tie_tolerance = TIE_ULPS * precision * max(abs(low), abs(high))

    def _check_group_sizes(self, counts: np.ndarray, where: str) -> None:
        for s, count in enumerate(counts):
            label = self.group_names_[s]
            if count == 0 and where:
                raise ValueError(MSG_MISSING_GROUP.format(group=label))
            if count < 2:
                raise ValueError(MSG_SMALL_GROUP.format(group=label, count=int(count)))

    def _check_calibration(self, calibration):
        if not isinstance(calibration, (tuple, list)) or len(calibration) not in (3, 4):
            raise ValueError(MSG_CALIBRATION.format(value=type(calibration).__name__))
        X_cal, y_cal, sf_cal = calibration[:3]
        X_cal = self._check_X(X_cal, reset=False)
        n_cal = _num_samples(X_cal)
        y_cal = np.asarray(_check_y(y_cal, y_numeric=True, estimator=self), dtype=np.float64)
        if y_cal.shape[0] != n_cal:
            raise ValueError(
                f"calibration X has {n_cal} rows but calibration y has {y_cal.shape[0]}."
            )
        sf_cal, _ = resolve_sensitive_features(X_cal, sf_cal, name="calibration sensitive_features")
        codes_cal = self._groups.encode(sf_cal, name="calibration sensitive_features")
        if codes_cal.shape[0] != n_cal:
            raise ValueError("calibration sensitive_features and X have different lengths.")
        w_cal = None
        if len(calibration) == 4 and calibration[3] is not None:
            if str(self.cost).startswith("observed_"):
                raise ValueError(MSG_WEIGHTS_OBSERVED.format(cost=self.cost))
            w_cal = check_sample_weight(calibration[3], y_cal.shape[0], "calibration sample_weight")
        return X_cal, y_cal, codes_cal, w_cal

    def _scores(self, X, codes: np.ndarray, *, with_precision: bool = False):
        n = _num_samples(X)
        raw = []
        if len(self.estimators_) == 1:
            raw.append(np.asarray(self.estimators_[0].predict(X)))
            scores = np.asarray(raw[0], dtype=np.float64).ravel()
        else:
            scores = np.empty(n)
            for s, model in enumerate(self.estimators_):
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

    @property
    def calibration_scores_(self) -> list[np.ndarray]:
        """Sorted calibration scores of each group."""
        return [self._samples[a:b] for a, b in self._bounds_of_groups()]

    def _bounds_of_groups(self):
        return zip(self._offsets[:-1], self._offsets[1:], strict=True)

    def _adjust(self, epsilon: float | None, tau: float | None) -> None:
        """Stage 3 and the prediction tables, from the stored latent curves (reused by the path)."""
        unit = self._unit
        if epsilon is None:
            epsilon_unit = (0.0 if tau is None else tau) * self._unadjusted_gap
            self.epsilon_ = unit.length_from_unit(epsilon_unit)
        else:
            epsilon_unit = unit.length_to_unit(float(epsilon))
            self.epsilon_ = float(epsilon)
        adjustment = adjust_quantiles(
            self._latent,
            self.group_weights_,
            p=self.p,
            epsilon=epsilon_unit,
            bounds=self._bounds,
            cost=self._cost,
            method=self.method,
        )
        adjusted = adjustment.curves
        self.adjusted_curves_ = unit.from_unit(adjusted)
        self.grid_gap_ = unit.length_from_unit(adjustment.grid_gap)
        self.grid_violation_ = unit.length_from_unit(adjustment.violation)
        self.adjustment_: QuantileAdjustment = replace(
            adjustment,
            curves=self.adjusted_curves_,
            grid_gap=self.grid_gap_,
            violation=self.grid_violation_,
            epsilon=self.epsilon_,
        )
        # The paper's identity convention (Section 3.3, K = 2 with W1/W2): if no curve moved, keep
        # the raw scores instead of a lossy ECDF/quantile round trip.
        self._identity = (
            len(adjusted) == 2
            and check_p(self.p) in (1.0, 2.0)
            and np.array_equal(adjusted, self._latent)
        )
        barycenter = self.group_weights_ @ self._latent
        own = self._latent - barycenter
        moved = adjusted - barycenter
        norms = np.einsum("km,km->k", own, own)
        safe = np.where(norms > 0, norms, 1.0)
        self._own_shares = np.where(
            norms > 0, np.clip(np.einsum("km,km->k", moved, own) / safe, 0.0, 1.0), 0.0
        )
        residuals = moved - self._own_shares[:, None] * own
        self._tables = prediction_tables(
            self.calibration_scores_,
            self._cum_weights,
            self.group_weights_,
            self._own_shares,
            residuals,
            shift=unit.shift,
            inv_scale=unit.inv_scale,
            centre=unit.centre,
            scale=unit.scale,
        )

    # ---------------------------------------------------------------------------- predicting
    def _read_tables(self, scores: np.ndarray, codes: np.ndarray, tables=None) -> np.ndarray:
        return read_tables(scores, codes, self._samples, self._offsets, self._tie_tolerance, tables)

    def _check_X(self, X, *, reset: bool):
        """Only what fairot reads of X: rows, width and column names; the model gets X as is."""
        X = indexable(X)[0]
        _check_feature_names(self, X, reset=reset)
        if reset:
            # a 1-D X (texts for a vectorizer pipeline) has no width; its model checks it
            with contextlib.suppress(TypeError):
                _check_n_features(self, X, reset=True)
        elif hasattr(self, "n_features_in_"):
            if np.ndim(X) == 1:
                raise ValueError(MSG_X_1D.format(n_features=self.n_features_in_))
            _check_n_features(self, X, reset=False)
        return X

    def _encode(self, X, sensitive_features):
        X = self._check_X(X, reset=False)
        sensitive_features, _ = resolve_sensitive_features(X, sensitive_features)
        codes = self._groups.encode(sensitive_features)
        n = _num_samples(X)
        if codes.shape[0] != n:
            raise ValueError(f"sensitive_features has {codes.shape[0]} rows but X has {n}.")
        return X, codes

    def predict(self, X, *, sensitive_features) -> np.ndarray:
        """Fair predictions: the adjusted map at each score's rank within its group.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Passed to the wrapped estimator unchanged.
        sensitive_features : array-like of shape (n_samples,), DataFrame, dict or str
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
        return self._read_tables(scores, codes, self._tables)

    def score(self, X, y, sample_weight=None, *, sensitive_features=None) -> float:
        """R² of the fair predictions (weighted by ``sample_weight``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        sensitive_features : array-like of shape (n_samples,), DataFrame, dict or str
            Required (the default ``None`` only exists for scikit-learn's signature): without
            groups there is no fair prediction, and the error says how to route them.

        Returns
        -------
        float
        """
        if sensitive_features is None:
            raise ValueError(MSG_SCORE_GROUPS)
        pred = self.predict(X, sensitive_features=sensitive_features)
        y = np.asarray(_check_y(y, y_numeric=True, estimator=self), dtype=np.float64)
        if y.shape[0] != pred.shape[0]:
            raise ValueError(f"X has {pred.shape[0]} rows but y has {y.shape[0]}.")
        weights = check_sample_weight(sample_weight, y.shape[0])
        return _r2(y, pred, weights)

    def score_unadjusted(self, X, *, sensitive_features) -> np.ndarray:
        """Raw scores of the fitted model (before the fairness adjustment)."""
        check_is_fitted(self, "adjusted_curves_")
        X, codes = self._encode(X, sensitive_features)
        return self._scores(X, codes)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        base = LinearRegression() if self.estimator is None else self.estimator
        inner = get_tags(base).input_tags
        tags.input_tags.allow_nan = inner.allow_nan
        tags.input_tags.string = inner.string
        tags.input_tags.sparse = inner.sparse
        tags.input_tags.categorical = inner.categorical
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
        raise ValueError(f"taus must be non-negative; got {taus.min()!r}.")
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
        X_test, codes_t = fitted._encode(X_test, sensitive_features_test)
        y_t = check_array_1d(y_test, "y_test")
        scores_t = fitted._scores(X_test, codes_t)
        index_t = fitted._read_tables(scores_t, codes_t)
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
            pred = scores_t if est._identity else est._tables[index_t]
            row["mse"] = mean_squared_error(y_t, pred)
            row["r2"] = r2_score(y_t, pred)
            row["test_gap"] = max_pairwise_wasserstein(pred, codes_t, p=p_value).distance
        rows.append(row)
    return FairnessAccuracyPath(pd.DataFrame(rows), estimators, unadjusted)
