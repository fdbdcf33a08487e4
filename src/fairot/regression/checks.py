"""The regressor's messages and the checks of its options, shared by every backend.

A public module because the Dask backend (:mod:`fairot.dask`) fits a
:class:`~fairot.regression.WassersteinFairRegressor` on collections and must refuse and warn
exactly as the in-memory fit does: both call :func:`check_fit_parameters` before any work, and
:meth:`~fairot.regression.WassersteinFairRegressor.fit_from_group_statistics` calls
:func:`check_calibration_groups` on the statistics it is given, whoever gathered them. The
messages are constants so that tests match them (``pytest.raises(..., match=...)``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.utils._param_validation import InvalidParameterError

from ._adjust import check_p

__all__ = [
    "MSG_BOTH_TOLERANCES",
    "MSG_CALIBRATION",
    "MSG_FROZEN_CALIBRATION",
    "MSG_MARGINAL",
    "MSG_MISSING_GROUP",
    "MSG_NAN_SCORES",
    "MSG_OVERFLOW",
    "MSG_RESPONSES",
    "MSG_SCORE_GROUPS",
    "MSG_SMALL_GROUP",
    "MSG_SMALL_WEIGHT",
    "MSG_TAU_ABOVE_ONE",
    "MSG_WEIGHTS_ESTIMATOR",
    "MSG_WEIGHTS_OBSERVED",
    "MSG_X_1D",
    "TOLERANCE_UNITS",
    "check_calibration_groups",
    "check_fit_parameters",
    "check_group_sizes",
    "is_observed_cost",
    "validate_params",
]

MSG_BOTH_TOLERANCES = (
    "Give either epsilon (an absolute tolerance, in the unit of the target y) or tau (a "
    "fraction of the raw gap: epsilon = tau * unadjusted_grid_gap_), not both; got "
    "epsilon={eps!r} and tau={tau!r}."
)
MSG_TAU_ABOVE_ONE = (
    "tau={tau!r} > 1 asks for a tolerance above the unadjusted gap (tau is a fraction of the "
    "raw gap; tau=1 already keeps the model's own predictions): the constraint is inactive and "
    "only loosens the observed-loss variant."
)
# what sklearn's message on a bad epsilon or tau gains: the unit of the number
TOLERANCE_UNITS = {
    "epsilon": "epsilon is an absolute tolerance, in the unit of the target y",
    "tau": "tau is a fraction of the raw gap: epsilon = tau * unadjusted_grid_gap_, and tau=1 "
    "keeps the model's own predictions",
    "max_gap": "max_gap is a budget on the mean held-out gap, in the unit of the target y",
}
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
    "fit, predict and score by default. Or fit with column names of a DataFrame X as "
    "sensitive_features: score then reads the groups from those columns."
)
MSG_MARGINAL = (
    "group_mode='marginal' is not supported by WassersteinFairRegressor: a prediction reads the "
    "quantile map of the one group its sample belongs to, and marginal groups overlap (a "
    "sample is in one group per sensitive column). Use group_mode='intersection' (the default), "
    "whose groups partition the samples."
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
MSG_RESPONSES = (
    "cost={cost!r} needs the calibration responses: pass responses= (one per score) to "
    "fit_from_group_statistics."
)
MSG_X_1D = (
    "X must be 2-D like the X seen in fit ({n_features} features); got a 1-D X. Reshape your "
    "data with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single sample."
)
MSG_OVERFLOW = (
    "the scores' quantile curves overflow (unadjusted gap {gap!r}) with cost={cost!r}, which "
    "cannot be rescaled internally; rescale the scores (or y) to a moderate range first."
)


def is_observed_cost(cost: Any) -> bool:
    """Whether ``cost`` names the observed-loss proxy (it needs the calibration responses)."""
    return isinstance(cost, str) and cost.startswith("observed_")


def validate_params(model: Any) -> None:
    """scikit-learn's parameter validation, with the unit of a bad tolerance or budget named."""
    try:
        model._validate_params()
    except InvalidParameterError as error:
        notes = [
            note for name, note in TOLERANCE_UNITS.items() if f"'{name}' parameter" in str(error)
        ]
        if not notes:
            raise
        raise InvalidParameterError(f"{error} {notes[0]}.") from None


def check_fit_parameters(model: Any, *, stacklevel: int = 2) -> float:
    """Validate the options of a ``WassersteinFairRegressor`` before any data is read.

    Parameters
    ----------
    model : WassersteinFairRegressor
        The estimator about to be fitted (its parameters, not its data, are checked).
    stacklevel : int, default=2
        Of the warning for ``tau > 1``, counted from this function (2: its caller).

    Returns
    -------
    float
        The Wasserstein order ``p`` as a number (1, 2 or ``inf``).
    """
    validate_params(model)
    p_value = check_p(model.p)
    if model.group_mode == "marginal":
        raise ValueError(MSG_MARGINAL)
    if model.epsilon is not None and model.tau is not None:
        raise ValueError(MSG_BOTH_TOLERANCES.format(eps=model.epsilon, tau=model.tau))
    if model.tau is not None and model.tau > 1:
        warnings.warn(MSG_TAU_ABOVE_ONE.format(tau=model.tau), UserWarning, stacklevel=stacklevel)
    return p_value


def check_group_sizes(counts: np.ndarray, group_names: Sequence[str], *, where: str = "") -> None:
    """Every group needs at least two samples (``where`` names the set, e.g. ``"calibration "``).

    A count of zero is a missing group when ``where`` names a set other than fit's own data.
    """
    for s, count in enumerate(counts):
        label = group_names[s]
        if count == 0 and where:
            raise ValueError(MSG_MISSING_GROUP.format(group=label))
        if count < 2:
            raise ValueError(MSG_SMALL_GROUP.format(group=label, count=int(count)))


def check_calibration_groups(
    codes: np.ndarray,
    group_names: Sequence[str],
    *,
    sample_weight: np.ndarray | None = None,
    group_sizes: np.ndarray | None = None,
    group_mass: np.ndarray | None = None,
) -> np.ndarray:
    """Check that every group can have a quantile curve, and return the groups' masses.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
        Group code of each calibration score.
    group_names : sequence of str
        Readable name of each group (for the messages); its length is the number of groups.
    sample_weight : ndarray of shape (n_samples,), default=None
        Frequency weights of the calibration scores.
    group_sizes : ndarray of shape (n_groups,), default=None
        Rows per group, when the scores are a summary of more rows (a sketch's quantiles).
        ``None``: the rows of ``codes`` (of positive weight).
    group_mass : ndarray of shape (n_groups,), default=None
        Weight of each group. ``None``: the summed ``sample_weight``, else ``group_sizes``.

    Returns
    -------
    ndarray of shape (n_groups,)
        The groups' masses (their shares up to normalisation), as floats.
    """
    n_groups = len(group_names)
    if group_sizes is None:
        positive = None if sample_weight is None else sample_weight > 0
        group_sizes = np.bincount(codes, weights=positive, minlength=n_groups)
    check_group_sizes(group_sizes, group_names, where="calibration ")
    if group_mass is None:
        if sample_weight is None:
            group_mass = np.asarray(group_sizes, dtype=np.float64)
        else:
            group_mass = np.bincount(codes, weights=sample_weight, minlength=n_groups)
    if sample_weight is not None:
        for s, mass in enumerate(group_mass):
            if mass < 2:
                raise ValueError(MSG_SMALL_WEIGHT.format(group=group_names[s], mass=float(mass)))
    return np.asarray(group_mass, dtype=np.float64)
