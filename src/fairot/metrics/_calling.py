"""The two calling forms of the group metrics, and weighted per-group samples.

A group metric is called either in the score-only form, ``metric(scores, sensitive_features)``,
or in fairlearn's form, ``metric(y_true, y_pred, *, sensitive_features=..., sample_weight=...)``
(what :class:`fairlearn.metrics.MetricFrame`, :func:`sklearn.metrics.make_scorer` and fairot's
scorers call). The form is read from the call's shape alone:

- one positional argument: the scores; ``sensitive_features`` must be a keyword;
- two positional arguments and no ``sensitive_features`` keyword: ``(scores,
  sensitive_features)``;
- two positional arguments and a ``sensitive_features`` keyword: ``(y_true, y_pred)``, the
  labels unused by metrics that do not need them (``None`` is accepted).

Every public metric is also a backend entry: :func:`dispatches_collections` hands a call whose
data arguments hold a Dask collection to :func:`fairot.utils.backends.dispatch`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from fairot.utils.arrays import check_consistent_length
from fairot.utils.backends import any_dask, dispatch

F = TypeVar("F", bound=Callable[..., Any])

MSG_N_POSITIONAL = (
    "{name} takes (scores, sensitive_features) or (y_true, y_pred, *, sensitive_features=...); "
    "got {n} positional arguments."
)
MSG_NO_SENSITIVE = (
    "{name} needs sensitive_features: call {name}(scores, sensitive_features) or "
    "{name}(y_true, y_pred, sensitive_features=...)."
)
MSG_GROUPS_LOOK_LIKE_SCORES = (
    "{name}(a, b) reads b as the sensitive features, but b holds non-integer numbers such as "
    "{example!r}, which look like predictions. For fairlearn's form pass the groups as a keyword: "
    "{name}(y_true, y_pred, sensitive_features=...). A metric that compares groups has no value "
    "inside a single group, so it cannot be a per-group metric of a MetricFrame."
)
MSG_EMPTY_WEIGHT = (
    "sample_weight sums to zero over group {group!r}; every group needs a positive total weight."
)


def split_metric_args(name: str, args: tuple, sensitive_features: Any) -> tuple[Any, Any, Any]:
    """Return ``(y_true, scores, sensitive_features)`` from either calling form (module doc)."""
    if len(args) == 1:
        if sensitive_features is None:
            raise TypeError(MSG_NO_SENSITIVE.format(name=name))
        return None, args[0], sensitive_features
    if len(args) != 2:
        raise TypeError(MSG_N_POSITIONAL.format(name=name, n=len(args)))
    if sensitive_features is not None:
        y_true, scores = args
        if y_true is not None:
            check_consistent_length(y_true=y_true, y_pred=scores)
        return y_true, scores, sensitive_features
    scores, groups = args
    _refuse_scores_as_groups(name, groups)
    return None, scores, groups


def _refuse_scores_as_groups(name: str, groups: Any) -> None:
    # fairlearn's MetricFrame calls metric(y_true, y_pred) without groups: read as the score-only
    # form, the predictions would silently become group labels. Group labels are categories, so
    # fractional numbers in the second position are refused rather than guessed about.
    if isinstance(groups, pd.DataFrame):
        return
    values = groups.to_numpy() if isinstance(groups, pd.Series) else groups
    if not isinstance(values, (np.ndarray, list, tuple)):
        return
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.dtype.kind != "f" or arr.size == 0:
        return
    finite = arr[np.isfinite(arr)]
    fractional = finite[finite != np.round(finite)]
    if fractional.size:
        raise ValueError(
            MSG_GROUPS_LOOK_LIKE_SCORES.format(name=name, example=float(fractional[0]))
        )


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


def dispatches_collections(
    *data: str, groups: str | None = "sensitive_features"
) -> Callable[[F], F]:
    """Run the decorated metric on the Dask backend when one of its data arguments is Dask.

    The one guard of every public metric. A call whose arguments hold no Dask collection runs
    the metric itself (one duck-typing test per argument); otherwise the data arguments (in
    order, a ``*args`` parameter expanded) and the groups go to the backend's ``"metric"``
    operation with every other argument as a keyword, whose unsupported options it refuses.

    Parameters
    ----------
    *data : str
        Names of the parameters holding the samples (``"args"`` for a ``*args`` parameter).
    groups : str or None, default="sensitive_features"
        Name of the parameter holding the groups (``None``: the metric takes none).

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
                samples: list[Any] = []
                for parameter in data:
                    value = options.pop(parameter)
                    variadic = (
                        signature.parameters[parameter].kind is inspect.Parameter.VAR_POSITIONAL
                    )
                    samples.extend(value if variadic else [value])
                sensitive = options.pop(groups) if groups else None
                # Only the data decide: a Dask sample_weight beside in-memory scores is read
                # in memory, as before there was a backend.
                if any_dask(*samples, sensitive):
                    return dispatch("metric", name, tuple(samples), sensitive, **options)
            return function(*args, **kwargs)

        return metric  # type: ignore[return-value]

    return decorate
