"""Validation at the public boundary: sensitive features, 1-D arrays, lengths.

Every public function and estimator of fairot checks its inputs here, so that a user sees one kind
of message for one kind of mistake: the message names the argument and what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

GroupsMode = Literal["intersection", "marginal"]

MSG_NAN = "{name} contains NaN or infinite values; remove or impute them first."
MSG_NOT_1D = "{name} must be one-dimensional (array-like of shape (n_samples,)); got shape {shape}."
MSG_EMPTY = "{name} is empty; at least one sample is needed."
MSG_NOT_NUMERIC = "{name} must be numeric; got values of dtype {dtype}."
MSG_OUT_OF_BOUNDS = "{name} must lie in [{low}, {high}]; got values in [{vmin}, {vmax}]."
MSG_LENGTH = "Found inconsistent numbers of samples: {lengths}."
MSG_SF_MISSING = "{name} contains missing values (None or NaN); give every sample a group."
MSG_SF_NDIM = "{name} must be a 1-D array-like or a 2-D table of columns; got {ndim} dimensions."
MSG_ONE_GROUP = (
    "{name} defines a single group ({label!r}); fairness needs at least two groups to compare."
)
MSG_UNSEEN_GROUP = (
    "{name} contains group {label!r} that was not seen at fit time; known groups: {known}."
)
MSG_GROUPS_MODE = "groups must be 'intersection' or 'marginal'; got {value!r}."
MSG_NCOLS = "{name} has {got} columns but {expected} were seen at fit time."


def check_array_1d(
    x: Any,
    name: str,
    *,
    allow_nan: bool = False,
    bounds: tuple[float, float] | None = None,
    dtype: Any = float,
    allow_empty: bool = False,
) -> np.ndarray:
    """Return ``x`` as a new one-dimensional array, checked.

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        Input values; a list, NumPy array or pandas Series. A column vector of shape
        ``(n_samples, 1)`` is accepted and flattened.
    name : str
        Argument name used in error messages.
    allow_nan : bool, default=False
        Accept NaN and infinite values.
    bounds : tuple of float, optional
        Closed interval the values must lie in.
    dtype : data-type, default=float
        Numeric type of the result.
    allow_empty : bool, default=False
        Accept an empty array.

    Returns
    -------
    numpy.ndarray of shape (n_samples,)
        A copy: the caller's data is never modified by fairot.

    Raises
    ------
    ValueError
        On a wrong shape, non-numeric values, NaN, emptiness or values outside ``bounds``.
    """
    if isinstance(x, (pd.Series, pd.DataFrame)):
        x = x.to_numpy()
    try:
        arr = np.array(x, dtype=dtype, copy=True)
    except (TypeError, ValueError):
        raw = np.asarray(x)
        raise ValueError(MSG_NOT_NUMERIC.format(name=name, dtype=raw.dtype)) from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(MSG_NOT_1D.format(name=name, shape=arr.shape))
    if arr.size == 0 and not allow_empty:
        raise ValueError(MSG_EMPTY.format(name=name))
    if not allow_nan and arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(MSG_NAN.format(name=name))
    if bounds is not None and arr.size:
        low, high = bounds
        vmin, vmax = np.nanmin(arr), np.nanmax(arr)
        if vmin < low or vmax > high:
            raise ValueError(
                MSG_OUT_OF_BOUNDS.format(name=name, low=low, high=high, vmin=vmin, vmax=vmax)
            )
    return arr


def check_consistent_length(**arrays: Any) -> int:
    """Check that every named array has the same number of samples and return it.

    Parameters
    ----------
    **arrays
        Keyword arguments ``name=array``; ``None`` values are skipped.

    Returns
    -------
    int
        The common number of samples.

    Raises
    ------
    ValueError
        Naming each argument and its length when they differ.
    """
    lengths = {name: _n_samples(a) for name, a in arrays.items() if a is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise ValueError(MSG_LENGTH.format(lengths=desc))
    return next(iter(lengths.values())) if lengths else 0


def _n_samples(a: Any) -> int:
    if hasattr(a, "shape") and len(a.shape) > 0:
        return int(a.shape[0])
    return len(a)


def _as_frame(sensitive_features: Any, name: str) -> pd.DataFrame:
    """Turn any accepted form of sensitive features into a DataFrame of columns."""
    if isinstance(sensitive_features, pd.DataFrame):
        frame = sensitive_features
    elif isinstance(sensitive_features, pd.Series):
        frame = sensitive_features.to_frame(
            name=sensitive_features.name if sensitive_features.name is not None else "group"
        )
    else:
        arr = np.asarray(sensitive_features, dtype=object)
        if arr.ndim == 1:
            frame = pd.DataFrame({"group": arr})
        elif arr.ndim == 2:
            frame = pd.DataFrame(arr, columns=[f"sf{j}" for j in range(arr.shape[1])])
        else:
            raise ValueError(MSG_SF_NDIM.format(name=name, ndim=arr.ndim))
    if frame.shape[1] == 0:
        raise ValueError(MSG_SF_NDIM.format(name=name, ndim=0))
    if frame.isna().to_numpy().any():
        raise ValueError(MSG_SF_MISSING.format(name=name))
    return frame.reset_index(drop=True)


def _sort_key(label: Any) -> tuple[str, str]:
    # Mixed types (e.g. 0 and "a") cannot be compared directly; sorting on (type, str) is stable
    # and deterministic, which is all that group order needs.
    return (type(label).__name__, str(label))


def _to_python(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class GroupEncoding:
    """Groups defined by sensitive features, as fitted on one data set.

    Attributes
    ----------
    labels : tuple
        Group labels in a fixed sorted order: a scalar for one column; a tuple of values for
        intersections of several columns; ``(column, value)`` pairs for marginal groups.
    names : list of str
        Readable names, e.g. ``"race=White, sex=Male"`` (just ``"White"`` for one column).
    membership : numpy.ndarray of bool of shape (n_samples, n_groups)
        ``membership[i, g]`` is true when sample ``i`` belongs to group ``g``.
    codes : numpy.ndarray of int of shape (n_samples,) or None
        Index of each sample's group for intersection groups, which partition the samples;
        ``None`` for marginal groups, which may overlap.
    columns : list of str
        Names of the sensitive columns.
    mode : {"intersection", "marginal"}
        How the groups were formed.
    """

    labels: tuple
    names: list[str]
    membership: np.ndarray
    codes: np.ndarray | None
    columns: list[str]
    mode: GroupsMode
    _lookup: dict = field(repr=False, compare=False, default_factory=dict)
    _row_key_to_label: dict = field(repr=False, compare=False, default_factory=dict)

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return len(self.labels)

    @property
    def counts(self) -> np.ndarray:
        """Number of samples in each group."""
        return self.membership.sum(axis=0)

    @property
    def is_partition(self) -> bool:
        """Whether every sample belongs to exactly one group."""
        return self.codes is not None

    def indices(self) -> list[np.ndarray]:
        """Row indices of each group, in the order of :attr:`labels`."""
        return [np.flatnonzero(self.membership[:, g]) for g in range(self.n_groups)]

    def index_of(self, label: Any) -> int:
        """Return the position of a group given its label or its readable name."""
        key = label if label in self._lookup else str(label)
        if key not in self._lookup:
            raise ValueError(MSG_UNSEEN_GROUP.format(name="group", label=label, known=self.names))
        return self._lookup[key]

    def encode(self, sensitive_features: Any, name: str = "sensitive_features") -> np.ndarray:
        """Map new sensitive features to the fitted groups.

        Parameters
        ----------
        sensitive_features : array-like or DataFrame
            New data in the same form as at fit time.
        name : str, default="sensitive_features"
            Argument name used in error messages.

        Returns
        -------
        numpy.ndarray of int of shape (n_samples,)
            Group index of each sample (intersection groups), or, for marginal groups, a boolean
            membership matrix of shape (n_samples, n_groups).

        Raises
        ------
        ValueError
            When a sample's group was not seen at fit time.
        """
        frame = _as_frame(sensitive_features, name)
        if frame.shape[1] != len(self.columns):
            raise ValueError(
                MSG_NCOLS.format(name=name, got=frame.shape[1], expected=len(self.columns))
            )
        keys = _row_keys(frame)
        if self.mode == "marginal":
            membership = np.zeros((len(frame), self.n_groups), dtype=bool)
            for j, col in enumerate(self.columns):
                for i, value in enumerate(frame.iloc[:, j].to_numpy()):
                    key = (col, _to_python(value))
                    if key not in self._lookup:
                        raise ValueError(
                            MSG_UNSEEN_GROUP.format(name=name, label=key, known=self.names)
                        )
                    membership[i, self._lookup[key]] = True
            return membership
        uniques, inverse = np.unique(keys, return_inverse=True)
        mapped = np.empty(len(uniques), dtype=np.intp)
        for u, key in enumerate(uniques):
            if key not in self._row_key_to_label:
                raise ValueError(
                    MSG_UNSEEN_GROUP.format(
                        name=name, label=_decode_key(key, len(self.columns)), known=self.names
                    )
                )
            mapped[u] = self._lookup[self._row_key_to_label[key]]
        return mapped[inverse]


_SEP = "\x1f"


def _row_keys(frame: pd.DataFrame) -> np.ndarray:
    """One string key per row, unique per combination of column values."""
    if frame.shape[1] == 1:
        col = frame.iloc[:, 0].to_numpy()
        return np.array([_encode_value(v) for v in col], dtype=object)
    parts = [
        np.array([_encode_value(v) for v in frame.iloc[:, j].to_numpy()], dtype=object)
        for j in range(frame.shape[1])
    ]
    keys = parts[0]
    for p in parts[1:]:
        keys = keys + _SEP + p
    return keys


def _encode_value(v: Any) -> str:
    v = _to_python(v)
    # 1, 1.0 and np.int64(1) name the same group whichever dtype a later call uses.
    if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer():
        return f"num:{int(v)}"
    if isinstance(v, float):
        return f"num:{v!r}"
    return f"{type(v).__name__}:{v}"


def _decode_key(key: str, n_columns: int) -> Any:
    values = [part.split(":", 1)[1] for part in key.split(_SEP)]
    return values[0] if n_columns == 1 else tuple(values)


def check_sensitive_features(
    sensitive_features: Any,
    n_samples: int | None = None,
    *,
    groups: GroupsMode = "intersection",
    name: str = "sensitive_features",
    min_groups: int = 2,
) -> GroupEncoding:
    """Validate sensitive features and encode them into groups.

    Parameters
    ----------
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)
        A list, array or Series for one sensitive attribute, or a DataFrame / 2-D array of several
        (as in fairlearn).
    n_samples : int, optional
        Expected number of samples; checked when given.
    groups : {"intersection", "marginal"}, default="intersection"
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
        ``groups`` mode.
    """
    if groups not in ("intersection", "marginal"):
        raise ValueError(MSG_GROUPS_MODE.format(value=groups))
    frame = _as_frame(sensitive_features, name)
    if n_samples is not None and len(frame) != n_samples:
        raise ValueError(MSG_LENGTH.format(lengths=f"{name}={len(frame)}, samples={n_samples}"))
    if len(frame) == 0:
        raise ValueError(MSG_EMPTY.format(name=name))
    columns = [str(c) for c in frame.columns]
    n_cols = len(columns)

    if groups == "marginal":
        labels: list = []
        names: list[str] = []
        blocks = []
        for j, col in enumerate(columns):
            values = frame.iloc[:, j].to_numpy()
            uniq = sorted({_to_python(v) for v in values}, key=_sort_key)
            for u in uniq:
                labels.append((col, u))
                names.append(f"{col}={u}")
                blocks.append(np.array([_to_python(v) == u for v in values], dtype=bool))
        membership = np.column_stack(blocks)
        lookup = {lab: g for g, lab in enumerate(labels)}
        lookup.update({nm: g for g, nm in enumerate(names)})
        encoding = GroupEncoding(
            tuple(labels), names, membership, None, columns, "marginal", lookup
        )
    else:
        keys = _row_keys(frame)
        uniq_keys, codes = np.unique(keys, return_inverse=True)
        first = np.zeros(len(uniq_keys), dtype=np.intp)
        first[codes[::-1]] = np.arange(len(codes))[::-1]
        raw_labels = []
        for idx in first:
            row = tuple(_to_python(v) for v in frame.iloc[idx].to_numpy())
            raw_labels.append(row[0] if n_cols == 1 else row)
        order = sorted(range(len(raw_labels)), key=lambda g: _sort_key(raw_labels[g]))
        rank = np.empty(len(order), dtype=np.intp)
        rank[order] = np.arange(len(order))
        labels = [raw_labels[g] for g in order]
        codes = rank[codes].astype(np.intp)
        if n_cols == 1:
            names = [str(lab) for lab in labels]
        else:
            names = [
                ", ".join(f"{c}={v}" for c, v in zip(columns, lab, strict=True)) for lab in labels
            ]
        membership = np.zeros((len(codes), len(labels)), dtype=bool)
        membership[np.arange(len(codes)), codes] = True
        lookup: dict = {lab: g for g, lab in enumerate(labels)}
        lookup.update({nm: g for g, nm in enumerate(names)})
        row_keys = {uniq_keys[g]: raw_labels[g] for g in range(len(uniq_keys))}
        encoding = GroupEncoding(
            tuple(labels), names, membership, codes, columns, "intersection", lookup, row_keys
        )

    if encoding.n_groups < min_groups:
        raise ValueError(MSG_ONE_GROUP.format(name=name, label=encoding.labels[0]))
    return encoding


def group_values(values: np.ndarray, encoding: GroupEncoding) -> list[np.ndarray]:
    """Split ``values`` into one array per group (overlapping for marginal groups)."""
    return [values[idx] for idx in encoding.indices()]
