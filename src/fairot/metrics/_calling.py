"""The one calling form of the group metrics, and weighted per-group samples.

Every group metric is called as fairlearn calls its own,
``metric(y_true, y_pred, *, sensitive_features, sample_weight=None, ...)`` (what
:class:`fairlearn.metrics.MetricFrame`, :func:`sklearn.metrics.make_scorer` and fairot's scorers
call); ``y_true=None`` is accepted by the metrics that need no labels. Nothing is guessed from the
shape of a call: :func:`group_metric` refuses a positional third argument and a call without
``sensitive_features`` with a ``TypeError`` that names the form, so predictions are never read as
groups (which a metric of the ``(scores, sensitive_features)`` days would silently do inside a
``MetricFrame``).

Every dispatching metric is also a backend entry: a call whose data arguments hold a Dask
collection goes to :func:`fairot.utils.backends.dispatch`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from fairot.metrics._control import stratified_call
from fairot.utils.arrays import check_consistent_length
from fairot.utils.backends import any_dask, dispatch

F = TypeVar("F", bound=Callable[..., Any])

MSG_FORM = (
    "{name} takes fairlearn's form {name}(y_true, y_pred, *, sensitive_features, "
    "sample_weight=None, ...){labels}: {problem}."
)
MSG_LABELS_OPTIONAL = " (y_true may be None)"
MSG_CONTROL_DASK = (
    "{name}: control_features is computed in memory; compute the Dask collections first."
)
MSG_EMPTY_WEIGHT = (
    "sample_weight sums to zero over group {group!r}; every group needs a positive total weight."
)


def form_error(name: str, problem: str, *, labels_optional: bool = True) -> TypeError:
    """The ``TypeError`` of a call to metric ``name`` outside fairlearn's form."""
    return TypeError(
        MSG_FORM.format(
            name=name, labels=MSG_LABELS_OPTIONAL if labels_optional else "", problem=problem
        )
    )


def group_metric(
    *data: str, labels_optional: bool = True, backend: bool = True, controls: bool = True
) -> Callable[[F], F]:
    """Check fairlearn's calling form of the decorated metric, and route Dask data to the backend.

    The one guard of every public group metric. The call is bound to the metric's signature
    (``y_true, y_pred`` positional, ``sensitive_features`` a required keyword); a call that does
    not bind (three positional arguments, an unknown keyword) or that passes
    ``sensitive_features=None`` raises a ``TypeError`` naming the form. A call whose data
    arguments (``data``, in order) or groups hold a Dask collection goes to the backend's
    ``"metric"`` operation with every other argument as a keyword, whose unsupported options it
    refuses.

    With ``controls`` the metric also takes ``control_features=None`` (a keyword added to its
    signature): given, the metric is computed within each stratum of the control features and
    recombined with the strata's shares of the rows
    (:func:`fairot.metrics._control.stratified_call`), so every metric is conditional in the
    same way.

    Parameters
    ----------
    *data : str
        Names of the parameters holding the samples, e.g. ``"y_true", "y_pred"``.
    labels_optional : bool, default=True
        Whether ``y_true=None`` is accepted (said in the error message).
    backend : bool, default=True
        Whether the metric has a Dask implementation (``False``: Dask data run in memory).
    controls : bool, default=True
        Whether the metric takes ``control_features``.

    Returns
    -------
    callable
        The decorator.
    """

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        name = function.__name__

        @functools.wraps(function)
        def metric(*args: Any, **kwargs: Any) -> Any:
            control = kwargs.pop("control_features", None) if controls else None
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as error:
                raise form_error(name, str(error), labels_optional=labels_optional) from None
            if bound.arguments.get("sensitive_features") is None:
                raise form_error(
                    name, "sensitive_features is None", labels_optional=labels_optional
                )
            if control is not None:
                if any_dask(*args, *kwargs.values(), control):
                    raise TypeError(MSG_CONTROL_DASK.format(name=name))
                bound.apply_defaults()
                return stratified_call(metric, name, dict(bound.arguments), data, control)
            if backend and any_dask(*args, *kwargs.values()):
                bound.apply_defaults()
                options = dict(bound.arguments)
                samples = tuple(options.pop(parameter) for parameter in data)
                sensitive = options.pop("sensitive_features")
                # Only the data decide: a Dask sample_weight beside in-memory scores is read
                # in memory, as before there was a backend.
                if any_dask(*samples, sensitive):
                    return dispatch("metric", name, samples, sensitive, **options)
            return function(*args, **kwargs)

        if controls:
            metric.__signature__ = _with_control(signature)  # type: ignore[attr-defined]
        return metric  # type: ignore[return-value]

    return decorate


def _with_control(signature: inspect.Signature) -> inspect.Signature:
    """The metric's signature with the keyword ``control_features=None`` appended."""
    control = inspect.Parameter(
        "control_features", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="Any"
    )
    return signature.replace(parameters=[*signature.parameters.values(), control])


def check_labels_length(y_true: Any, y_pred: Any) -> None:
    """Refuse labels of another length than the predictions (``None``: no labels)."""
    if y_true is not None:
        check_consistent_length(y_true=y_true, y_pred=y_pred)


def sorted_group_samples(
    values: np.ndarray,
    indices: list[np.ndarray],
    sample_weight: np.ndarray | None,
    names: list[str],
) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """Each group's values sorted, with its weights in the same order (``None``: unweighted)."""
    if sample_weight is None:
        return [np.sort(values[idx]) for idx in indices], [None] * len(indices)
    xs, ws = [], []
    for idx, name in zip(indices, names, strict=True):
        w = sample_weight[idx]
        if not w.sum() > 0:
            raise ValueError(MSG_EMPTY_WEIGHT.format(group=name))
        order = np.argsort(values[idx], kind="stable")
        xs.append(values[idx][order])
        ws.append(w[order])
    return xs, ws


def sorted_sample(
    values: np.ndarray, sample_weight: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """The whole sample sorted, with its weights in the same order."""
    if sample_weight is None:
        return np.sort(values), None
    order = np.argsort(values, kind="stable")
    return values[order], sample_weight[order]


def dispatches_collections(*data: str) -> Callable[[F], F]:
    """Run the decorated two-sample function on the Dask backend when a sample is Dask.

    The guard of :func:`fairot.metrics.wasserstein_distance`, which compares two samples and
    takes no groups (so no fairlearn form): the samples ``data`` go to the backend's
    ``"metric"`` operation with every other argument as a keyword.

    Parameters
    ----------
    *data : str
        Names of the parameters holding the samples.

    Returns
    -------
    callable
        The decorator.
    """

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        name = function.__name__

        @functools.wraps(function)
        def metric(*args: Any, **kwargs: Any) -> Any:
            if any_dask(*args, *kwargs.values()):
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                options = dict(bound.arguments)
                samples = tuple(options.pop(parameter) for parameter in data)
                if any_dask(*samples):
                    return dispatch("metric", name, samples, None, **options)
            return function(*args, **kwargs)

        return metric  # type: ignore[return-value]

    return decorate
