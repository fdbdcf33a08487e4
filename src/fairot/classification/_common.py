"""What the three classifiers share: the base estimator's fit, atomic fits, user warnings.

:class:`~fairot.classification.COTClassifier`, :class:`~fairot.classification.DOTClassifier`
(through :mod:`fairot.classification._base`) and
:class:`~fairot.classification.QuantileParityPostProcessor` fit a scikit-learn estimator first,
check group weights and warn at the user's line; a failed fit leaves each of them untouched.
"""

from __future__ import annotations

import copy
import functools
import inspect

import numpy as np
from sklearn import get_config
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import Pipeline
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import has_fit_parameter

from fairot.transport import TAU_MEANING
from fairot.utils.stacklevel import user_stacklevel  # noqa: F401  (the classifiers import it here)

MSG_NO_WEIGHTS = (
    "sample_weight was given but estimator {name} does not accept sample_weight in fit (nor "
    "its last step, for a Pipeline); use an estimator that does, turn on metadata routing "
    "for a meta-estimator, or fit it yourself and wrap it in FrozenEstimator."
)
MSG_ZERO_WEIGHT_GROUP = "group {group!r} has zero total sample_weight; no row of it can be drawn."


def fit_base_estimator(base, X, y, sample_weight: np.ndarray | None):
    """Clone and fit ``base`` on the data as given, passing ``sample_weight`` when there is one.

    Fitting a clone keeps the user's estimator untouched; a model wrapped in
    :class:`sklearn.frozen.FrozenEstimator` stays as trained (its ``fit`` does nothing). The
    weights go to ``fit(..., sample_weight=)`` when the estimator takes it; to a pipeline's
    last step (``<step>__sample_weight``) without metadata routing; and, with routing on, to
    any meta-estimator, which routes them as its steps request.
    """
    estimator = clone(base)
    if sample_weight is None or isinstance(base, FrozenEstimator):
        return estimator.fit(X, y)
    if has_fit_parameter(base, "sample_weight"):
        return estimator.fit(X, y, sample_weight=sample_weight)
    takes_kwargs = any(
        p.kind is inspect.Parameter.VAR_KEYWORD
        for p in inspect.signature(base.fit).parameters.values()
    )
    if takes_kwargs and get_config()["enable_metadata_routing"]:
        return estimator.fit(X, y, sample_weight=sample_weight)
    if isinstance(base, Pipeline) and has_fit_parameter(base.steps[-1][1], "sample_weight"):
        return estimator.fit(X, y, **{f"{base.steps[-1][0]}__sample_weight": sample_weight})
    raise TypeError(MSG_NO_WEIGHTS.format(name=type(base).__name__))


_MUTABLE = (np.ndarray, list, dict, np.random.Generator)


def atomic(method):
    """Run an estimator method so that, if it raises, the estimator is exactly as before.

    A diverged or rejected ``fit``/``partial_fit`` leaves neither a half-fitted object (a
    ``predict`` that fails with AttributeError) nor a mix of new groups and old coefficients.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        # The updates write arrays, lists and random streams in place; everything else (the
        # fitted base model, the groups) is only ever replaced, so a reference keeps it.
        before = {
            name: copy.deepcopy(value) if isinstance(value, _MUTABLE) else value
            for name, value in self.__dict__.items()
        }
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    return wrapper


def check_group_weights(
    sample_weight: np.ndarray, rows: list[np.ndarray], names: list[str]
) -> list[np.ndarray]:
    """Each group's weights; a group of zero total weight has no distribution: an error."""
    group_weights = [sample_weight[r] for r in rows]
    for name, w in zip(names, group_weights, strict=True):
        if not w.sum() > 0:
            raise ValueError(MSG_ZERO_WEIGHT_GROUP.format(group=name))
    return group_weights


class TauUnitsMixin:
    """scikit-learn's parameter validation, with the unit of a bad ``tau`` named.

    Its message on a bad ``tau`` gives the range; what a user lacks is what tau means.
    """

    def _validate_params(self):
        try:
            super()._validate_params()
        except InvalidParameterError as error:
            if "'tau' parameter" not in str(error):
                raise
            raise InvalidParameterError(f"{error} {TAU_MEANING}.") from None
