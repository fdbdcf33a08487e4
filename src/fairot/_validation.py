"""Validation at the public boundary: sensitive features, 1-D arrays, lengths, weights, scores.

Every public function and estimator of fairot checks its inputs here, so that a user sees one kind
of message for one kind of mistake: the message names the argument and what was expected.

Sensitive features may be given as a list, array or Series (one attribute), a DataFrame, 2-D
array or dict of arrays (several attributes), or, where an estimator receives a DataFrame ``X``,
as the name(s) of columns of ``X`` (:func:`resolve_sensitive_features`). Every fitted estimator
exposes its groups the same way (:func:`group_attributes`): ``groups_``, a list of the group
labels (a scalar per group for one attribute, a tuple of values for intersections, a
``(column, value)`` pair for marginal groups), and ``group_names_``, a list of distinct readable
names in the same order.
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
MSG_SF_REQUIRED = (
    "{name} is required: pass the group of every row of X (an array, Series, DataFrame, dict of "
    "arrays, or column name(s) of a DataFrame X)."
)
MSG_SF_COLUMN = (
    "{name}={value!r} names column(s) of X, but {problem}; pass the groups as an array, or "
    "name columns of a DataFrame X."
)
MSG_SF_DICT = (
    "{name} as a dict must map column names to arrays of equal length; got lengths {lengths}."
)
MSG_NAME_CLASH = (
    "{name} has distinct groups that print the same ({clash}); rename their labels so that "
    "reports can tell them apart."
)
MSG_WEIGHTS = (
    "{name} must be finite and non-negative with a positive sum; got {value!r} at row {row}."
)
MSG_WEIGHTS_SUM = "{name} must have a positive sum; all {n} weights are zero."
MSG_SCORE_NAN = "{name} must be finite probabilities; got {value!r} at row {row}."
MSG_SCORE_RANGE = (
    "{name} must lie in [0, 1] (values within {tol:g} of it are clipped); got {value!r} at row "
    "{row}."
)

# Scores computed in floating point (1 - p, a sigmoid, a calibrator) can leave [0, 1] by a few
# ulps; those are clipped, anything farther is a real error.
SCORE_TOLERANCE = 1e-9


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
    if hasattr(a, "__len__"):
        return len(a)
    return int(np.asarray(a).shape[0])  # objects exposing only __array__


def _as_frame(sensitive_features: Any, name: str) -> pd.DataFrame:
    """Turn any accepted form of sensitive features into a DataFrame of columns."""
    if isinstance(sensitive_features, pd.DataFrame):
        frame = sensitive_features
    elif isinstance(sensitive_features, dict):
        lengths = {str(k): _n_samples(v) for k, v in sensitive_features.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(MSG_SF_DICT.format(name=name, lengths=lengths))
        frame = pd.DataFrame(
            {
                k: (v.to_numpy() if isinstance(v, pd.Series) else np.asarray(v))
                for k, v in sensitive_features.items()
            }
        )
    elif isinstance(sensitive_features, pd.Series):
        frame = sensitive_features.to_frame(
            name=sensitive_features.name if sensitive_features.name is not None else "group"
        )
    else:
        # Native dtypes are kept (an int array stays int): factorising and NaN checks on object
        # arrays cost several times more on large inputs.
        arr = sensitive_features if isinstance(sensitive_features, np.ndarray) else None
        if arr is None:
            arr = np.asarray(sensitive_features, dtype=object)
            if arr.ndim == 1:
                arr = pd.Series(list(sensitive_features)).to_numpy()
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


def _label_key(label: Any) -> tuple:
    """Hashable identity of a group label: 1, 1.0 and np.int64(1) name the same group."""
    label = label.item() if isinstance(label, np.generic) else label
    if isinstance(label, bool):
        return ("bool", label)
    if isinstance(label, (int, float)):
        return ("num", int(label)) if float(label).is_integer() else ("num", float(label))
    return (type(label).__name__, label)


def _sort_key(label: Any) -> tuple:
    # Mixed types (e.g. 0 and "a") cannot be compared directly; numbers sort numerically, then
    # everything else by (type, text): deterministic, which is all that group order needs.
    kind, value = _label_key(label)
    return (0, value, "") if kind == "num" else (1, kind, str(value))


def _to_python(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _factorize_columns(frame: pd.DataFrame) -> tuple[list[np.ndarray], list[list]]:
    """Per column: codes into its sorted distinct labels, and those labels."""
    codes, labels = [], []
    for j in range(frame.shape[1]):
        raw_codes, uniques = pd.factorize(frame.iloc[:, j], sort=False)
        values = [_to_python(v) for v in np.asarray(uniques, dtype=object)]
        merged: dict[tuple, Any] = {}
        for v in values:
            merged.setdefault(_label_key(v), v)
        ordered = sorted(merged.values(), key=_sort_key)
        position = {_label_key(v): i for i, v in enumerate(ordered)}
        remap = np.array([position[_label_key(v)] for v in values], dtype=np.intp)
        codes.append(remap[raw_codes])
        labels.append(ordered)
    return codes, labels


def _combine(codes: list[np.ndarray], radices: list[int]) -> np.ndarray:
    """Mixed-radix code of each row's combination of column codes (lexicographic order)."""
    if len(codes) == 1:
        return codes[0].astype(np.int64, copy=False)
    combined = np.zeros(codes[0].shape[0], dtype=np.int64)
    for c, r in zip(codes, radices, strict=True):
        combined = combined * r + c
    return combined


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
        ``membership[i, g]`` is true when sample ``i`` belongs to group ``g`` (built on first
        use for intersection groups, whose ``codes`` say the same more compactly).
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
    _membership: np.ndarray | None
    codes: np.ndarray | None
    columns: list[str]
    mode: GroupsMode
    _column_labels: list[list] = field(repr=False, compare=False, default_factory=list)
    _group_combos: np.ndarray | None = field(repr=False, compare=False, default=None)

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return len(self.labels)

    @property
    def membership(self) -> np.ndarray:
        """Boolean matrix of shape (n_samples, n_groups): sample ``i`` is in group ``g``."""
        if self._membership is not None:
            return self._membership
        membership = np.zeros((self.codes.shape[0], self.n_groups), dtype=bool)
        membership[np.arange(self.codes.shape[0]), self.codes] = True
        return membership

    @property
    def counts(self) -> np.ndarray:
        """Number of samples in each group."""
        if self.codes is not None:
            return np.bincount(self.codes, minlength=self.n_groups)
        return self._membership.sum(axis=0)

    @property
    def is_partition(self) -> bool:
        """Whether every sample belongs to exactly one group."""
        return self.codes is not None

    def indices(self) -> list[np.ndarray]:
        """Row indices of each group, in the order of :attr:`labels`."""
        if self.codes is not None:
            order = np.argsort(self.codes, kind="stable")
            bounds = np.searchsorted(self.codes[order], np.arange(self.n_groups + 1))
            return [order[bounds[g] : bounds[g + 1]] for g in range(self.n_groups)]
        return [np.flatnonzero(self._membership[:, g]) for g in range(self.n_groups)]

    def index_of(self, label: Any) -> int:
        """Return the position of a group given its label or its readable name."""
        # A label wins over a name: with groups 1 and "1" (named "1" and "'1'"), "1" is the
        # string group; a name that is no label (e.g. "race=B, sex=F") is looked up next.
        for g, lab in enumerate(self.labels):
            if _same_label(lab, label):
                return g
        for g, name in enumerate(self.names):
            if name == str(label):
                return g
        raise ValueError(MSG_UNSEEN_GROUP.format(name="group", label=label, known=self.names))

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
        numpy.ndarray
            Group index of each sample, shape (n_samples,), for intersection groups; a boolean
            membership matrix of shape (n_samples, n_groups) for marginal groups.

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
        column_codes = []
        for j, known in enumerate(self._column_labels):
            raw_codes, uniques = pd.factorize(frame.iloc[:, j], sort=False)
            position = {_label_key(v): i for i, v in enumerate(known)}
            remap = np.empty(len(uniques), dtype=np.intp)
            for u, value in enumerate(np.asarray(uniques, dtype=object)):
                key = _label_key(value)
                if key not in position:
                    label = (
                        (self.columns[j], _to_python(value))
                        if self.mode == "marginal"
                        else _to_python(value)
                    )
                    raise ValueError(
                        MSG_UNSEEN_GROUP.format(name=name, label=label, known=self.names)
                    )
                remap[u] = position[key]
            column_codes.append(remap[raw_codes])
        if self.mode == "marginal":
            blocks = [
                column_codes[j][:, None] == np.arange(len(known))[None, :]
                for j, known in enumerate(self._column_labels)
            ]
            return np.hstack(blocks)
        if len(column_codes) == 1:
            # Every value was matched above, and one column's codes are its group indices.
            return column_codes[0]
        combos = _combine(column_codes, [len(k) for k in self._column_labels])
        group = np.searchsorted(self._group_combos, combos)
        group = np.minimum(group, self.n_groups - 1)
        unseen = self._group_combos[group] != combos
        if np.any(unseen):
            i = int(np.flatnonzero(unseen)[0])
            row = tuple(_to_python(v) for v in frame.iloc[i].to_numpy())
            label = row[0] if len(row) == 1 else row
            raise ValueError(MSG_UNSEEN_GROUP.format(name=name, label=label, known=self.names))
        return group.astype(np.intp)


def _same_label(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_label(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, tuple) or isinstance(b, tuple):
        return False
    try:
        return _label_key(a) == _label_key(b)
    except TypeError:
        return False


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
        A list, array or Series for one sensitive attribute, or a DataFrame, 2-D array or dict
        of arrays of several (as in fairlearn). Column names of an estimator's ``X`` are
        turned into data first by :func:`resolve_sensitive_features`.
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
    column_codes, column_labels = _factorize_columns(frame)

    if groups == "marginal":
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


def _distinct_names(labels: list, render, name: str) -> list[str]:
    """Readable names, one per group, never two alike.

    Labels print with ``str`` (``"White"``, ``"sex=Male"``); where two distinct labels would print
    the same (``1`` and ``"1"``, ``True`` and ``"True"``), those are printed with ``repr``
    (``1`` and ``'1'``), so that reports and ``group_names_`` tell them apart.
    """
    names = [render(lab, str) for lab in labels]
    seen: dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    names = [render(lab, repr) if seen[n] > 1 else n for lab, n in zip(labels, names, strict=True)]
    if len(set(names)) < len(names):
        clash = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(MSG_NAME_CLASH.format(name=name, clash=", ".join(clash)))
    return names


def group_attributes(encoding: GroupEncoding) -> tuple[list, list[str]]:
    """The public ``(groups_, group_names_)`` of an estimator fitted on these groups.

    Parameters
    ----------
    encoding : GroupEncoding
        The fitted groups.

    Returns
    -------
    groups : list
        Group labels in the fitted order: a scalar per group for one sensitive column, a tuple
        of values for intersections of several, a ``(column, value)`` pair for marginal groups.
    group_names : list of str
        Distinct readable names in the same order (``"race=B, sex=F"``).

    Examples
    --------
    >>> from fairot._validation import check_sensitive_features, group_attributes
    >>> group_attributes(check_sensitive_features([1, "1", 2, 1]))
    ([1, 2, '1'], ['1', '2', "'1'"])
    """
    return list(encoding.labels), list(encoding.names)


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


def check_sample_weight(
    sample_weight: Any, n_samples: int, name: str = "sample_weight"
) -> np.ndarray | None:
    """Validate sample weights: one finite, non-negative weight per sample, positive sum.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        Weights; ``None`` means equal weights and is returned as is.
    n_samples : int
        Expected number of samples.
    name : str, default="sample_weight"
        Argument name used in error messages.

    Returns
    -------
    numpy.ndarray of shape (n_samples,) or None
        A float64 copy.

    Raises
    ------
    ValueError
        On a wrong length, a negative or non-finite weight (naming its row), or a zero sum.

    Examples
    --------
    >>> check_sample_weight([1, 2, 0], 3)
    array([1., 2., 0.])
    """
    if sample_weight is None:
        return None
    w = check_array_1d(sample_weight, name, allow_nan=True, allow_empty=True)
    if w.shape[0] != n_samples:
        raise ValueError(MSG_LENGTH.format(lengths=f"{name}={w.shape[0]}, samples={n_samples}"))
    bad = ~np.isfinite(w) | (w < 0)
    if np.any(bad):
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(MSG_WEIGHTS.format(name=name, value=float(w[row]), row=row))
    if n_samples and not w.sum() > 0:
        raise ValueError(MSG_WEIGHTS_SUM.format(name=name, n=n_samples))
    return w


def check_scores(
    scores: Any, name: str = "scores", *, tolerance: float = SCORE_TOLERANCE
) -> np.ndarray:
    """Validate probabilities: finite, in [0, 1] up to ``tolerance`` (clipped), as a copy.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Scores of the positive class.
    name : str, default="scores"
        Argument name used in error messages.
    tolerance : float, default=1e-9
        Values within this distance of [0, 1] are clipped into it (rounding of ``1 - p``).

    Returns
    -------
    numpy.ndarray of shape (n_samples,)
        The scores, clipped to [0, 1].

    Raises
    ------
    ValueError
        On a NaN, infinite or out-of-range score, printing the first offending value and row.

    Examples
    --------
    >>> check_scores([0.2, 1.0 + 1e-12, -1e-12])
    array([0.2, 1. , 0. ])
    """
    s = check_array_1d(scores, name, allow_nan=True, allow_empty=True)
    # NaN compares false, so "not inside" catches it along with the values out of range.
    bad = ~((s >= -tolerance) & (s <= 1.0 + tolerance))
    if np.any(bad):
        row = int(np.flatnonzero(bad)[0])
        message = MSG_SCORE_RANGE if np.isfinite(s[row]) else MSG_SCORE_NAN
        raise ValueError(message.format(name=name, tol=tolerance, value=float(s[row]), row=row))
    return np.clip(s, 0.0, 1.0, out=s)


def group_values(values: np.ndarray, encoding: GroupEncoding) -> list[np.ndarray]:
    """Split ``values`` into one array per group (overlapping for marginal groups)."""
    return [values[idx] for idx in encoding.indices()]
