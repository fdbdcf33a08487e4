"""Sensitive features in every accepted form, resolved and encoded into groups.

Sensitive features may be given as a list, array or Series (one attribute), a DataFrame, 2-D
array or dict of arrays (several attributes), or, where an estimator receives a DataFrame ``X``,
as the name(s) of columns of ``X`` (:func:`resolve_sensitive_features`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .arrays import MSG_EMPTY, MSG_LENGTH
from .groups import (
    MSG_GROUPS_MODE,
    MSG_ONE_GROUP,
    GroupEncoding,
    GroupsMode,
    _combine,
    _distinct_names,
    _factorize_columns,
    sensitive_frame,
)

MSG_SF_REQUIRED = (
    "{name} is required: pass the group of every row of X (an array, Series, DataFrame, dict of "
    "arrays, or column name(s) of a DataFrame X)."
)
MSG_ENCODING_MODE = (
    "{name} is a GroupEncoding of {mode!r} groups, but group_mode={group_mode!r}; encode the "
    "groups with the same group_mode, or pass the sensitive features as data."
)
MSG_SF_COLUMN = (
    "{name}={value!r} names column(s) of X, but {problem}; pass the groups as an array, or "
    "name columns of a DataFrame X."
)


def check_sensitive_features(
    sensitive_features: Any,
    n_samples: int | None = None,
    *,
    group_mode: GroupsMode = "intersection",
    name: str = "sensitive_features",
    min_groups: int = 2,
) -> GroupEncoding:
    """Validate sensitive features and encode them into groups.

    Parameters
    ----------
    sensitive_features : array-like, DataFrame, dict of arrays or GroupEncoding
        Of shape (n_samples,) or (n_samples, n_columns).
        A list, array or Series for one sensitive attribute, or a DataFrame, 2-D array or dict
        of arrays of several (as in fairlearn). Column names of an estimator's ``X`` are
        turned into data first by :func:`resolve_sensitive_features`. An encoding this function
        returned before is checked (``n_samples``, ``group_mode``, ``min_groups``) and returned
        as it is: a caller that encodes once (the audit) passes it down at no cost, with the
        same groups, names and order.
    n_samples : int, optional
        Expected number of samples; checked when given.
    group_mode : {"intersection", "marginal"}, default="intersection"
        ``"intersection"``: each distinct combination of column values is a group (groups
        partition the samples). ``"marginal"``: each value of each column is a group, so a sample
        belongs to one group per column and groups overlap (the COT paper's 8 groups on
        Communities & Crime).
    name : str, default="sensitive_features"
        Argument name used in error messages.
    min_groups : int, default=2
        Minimum number of groups required.

    Returns
    -------
    GroupEncoding
        The groups, their labels and memberships.

    Raises
    ------
    ValueError
        On missing values, a length mismatch, fewer than ``min_groups`` groups or an unknown
        ``group_mode``, or an encoding of another ``group_mode``.
    """
    if group_mode not in ("intersection", "marginal"):
        raise ValueError(MSG_GROUPS_MODE.format(value=group_mode))
    if isinstance(sensitive_features, GroupEncoding):
        return _checked_encoding(sensitive_features, n_samples, group_mode, name, min_groups)
    frame = sensitive_frame(sensitive_features, name)
    if n_samples is not None and len(frame) != n_samples:
        raise ValueError(MSG_LENGTH.format(lengths=f"{name}={len(frame)}, samples={n_samples}"))
    if len(frame) == 0:
        raise ValueError(MSG_EMPTY.format(name=name))
    columns = [str(c) for c in frame.columns]
    column_codes, column_labels = _factorize_columns(frame, name)

    if group_mode == "marginal":
        labels = [
            (col, v) for col, known in zip(columns, column_labels, strict=True) for v in known
        ]
        names = _distinct_names(labels, lambda lab, fmt: f"{lab[0]}={fmt(lab[1])}", name)
        membership = np.hstack(
            [
                codes[:, None] == np.arange(len(known))[None, :]
                for codes, known in zip(column_codes, column_labels, strict=True)
            ]
        )
        encoding = GroupEncoding(
            tuple(labels), names, membership, None, columns, "marginal", column_labels
        )
    else:
        radices = [len(known) for known in column_labels]
        combos = _combine(column_codes, radices)
        # Sorted distinct combinations are in lexicographic order of the sorted column labels.
        if len(radices) == 1:
            # One column: its codes already index its sorted labels, every one of them present.
            group_combos, codes = np.arange(radices[0], dtype=np.int64), combos.astype(np.intp)
        else:
            group_combos, codes = np.unique(combos, return_inverse=True)
            codes = codes.astype(np.intp)
        labels = []
        for combo in group_combos:
            parts, rest = [], int(combo)
            for r in reversed(radices):
                rest, digit = divmod(rest, r)
                parts.append(digit)
            values = tuple(column_labels[j][d] for j, d in enumerate(reversed(parts)))
            labels.append(values[0] if len(values) == 1 else values)
        if len(columns) == 1:
            names = _distinct_names(labels, lambda lab, fmt: fmt(lab), name)
        else:
            names = _distinct_names(
                labels,
                lambda lab, fmt: ", ".join(
                    f"{c}={fmt(v)}" for c, v in zip(columns, lab, strict=True)
                ),
                name,
            )
        encoding = GroupEncoding(
            tuple(labels),
            names,
            None,
            codes,
            columns,
            "intersection",
            column_labels,
            group_combos,
        )

    if encoding.n_groups < min_groups:
        raise ValueError(MSG_ONE_GROUP.format(name=name, label=encoding.labels[0]))
    return encoding


def _checked_encoding(
    encoding: GroupEncoding, n_samples: int | None, group_mode: str, name: str, min_groups: int
) -> GroupEncoding:
    """An encoding passed as ``sensitive_features``, checked as its data would have been."""
    # The same checks, in the same order and with the same messages, as on the data it encodes:
    # an encoding stands for its data, so a call gives the same answer or the same error.
    if encoding.mode != group_mode:
        raise ValueError(
            MSG_ENCODING_MODE.format(name=name, mode=encoding.mode, group_mode=group_mode)
        )
    if n_samples is not None and encoding.n_samples != n_samples:
        raise ValueError(
            MSG_LENGTH.format(lengths=f"{name}={encoding.n_samples}, samples={n_samples}")
        )
    if encoding.n_groups < min_groups:
        raise ValueError(MSG_ONE_GROUP.format(name=name, label=encoding.labels[0]))
    return encoding


def resolve_sensitive_features(
    X: Any,
    sensitive_features: Any,
    *,
    name: str = "sensitive_features",
    required: bool = True,
) -> tuple[Any, list[str] | None]:
    """Read sensitive features given as data or as column names of ``X``.

    Parameters
    ----------
    X : array-like or DataFrame
        The estimator's input.
    sensitive_features : array-like, DataFrame, dict of arrays, str, list of str or None
        The groups of the rows of ``X``. A string, or a list of strings that are all columns of
        a DataFrame ``X``, names those columns; ``X`` itself is left as it is (the columns stay
        inputs of the model, as in the COT paper). Pass group labels that happen to equal column
        names as an array or Series.
    name : str, default="sensitive_features"
        Argument name used in error messages.
    required : bool, default=True
        Raise when ``sensitive_features`` is None (else return ``(None, None)``).

    Returns
    -------
    sensitive_features : array-like, DataFrame or None
        The groups as data.
    columns : list of str or None
        The column names that were read from ``X``, or None when data was given.

    Raises
    ------
    ValueError
        When the groups are missing but required, or name columns that ``X`` lacks.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"age": [30, 40], "sex": ["F", "M"]})
    >>> sf, columns = resolve_sensitive_features(X, "sex")
    >>> list(sf["sex"]), columns
    (['F', 'M'], ['sex'])
    """
    if sensitive_features is None:
        if required:
            raise ValueError(MSG_SF_REQUIRED.format(name=name))
        return None, None
    if isinstance(sensitive_features, str):
        columns = [sensitive_features]
    elif (
        isinstance(sensitive_features, (list, tuple))
        and len(sensitive_features) > 0
        and all(isinstance(c, str) for c in sensitive_features)
        and isinstance(X, pd.DataFrame)
        and all(c in X.columns for c in sensitive_features)
    ):
        columns = list(sensitive_features)
    else:
        return sensitive_features, None
    if not isinstance(X, pd.DataFrame):
        problem = f"X is a {type(X).__name__}, not a pandas DataFrame"
        raise ValueError(MSG_SF_COLUMN.format(name=name, value=sensitive_features, problem=problem))
    missing = [c for c in columns if c not in X.columns]
    if missing:
        problem = f"X has no column {missing[0]!r}"
        raise ValueError(MSG_SF_COLUMN.format(name=name, value=sensitive_features, problem=problem))
    return X[columns], columns
