"""Groups of samples: :class:`GroupEncoding`, the one representation every package uses.

Every fitted estimator exposes its groups the same way (:func:`group_attributes`): ``groups_``, a
list of the group labels (a scalar per group for one attribute, a tuple of values for
intersections, a ``(column, value)`` pair for marginal groups), and ``group_names_``, a list of
distinct readable names in the same order.

String labels are compared in Unicode normal form NFC: ``"é"`` as one code point and ``"e"``
followed by a combining accent are one group (labelled in NFC). Labels that still differ but
print alike (a trailing space, a zero-width space, a Cyrillic ``"а"`` for a Latin ``"a"``, a
different case) stay distinct groups, with a :class:`fairot.exceptions.LookAlikeGroupsWarning`
naming each pair (:mod:`fairot.utils.labels`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from .arrays import number_of_samples
from .labels import normal_label, warn_look_alikes

GroupsMode = Literal["intersection", "marginal"]

MSG_SF_MISSING = "{name} contains missing values (None or NaN); give every sample a group."
MSG_SF_NDIM = "{name} must be a 1-D array-like or a 2-D table of columns; got {ndim} dimensions."
MSG_NAME_CLASH = (
    "{name} has distinct groups that print the same ({clash}); rename their labels so that "
    "reports can tell them apart."
)
MSG_SF_DICT = (
    "{name} as a dict must map column names to arrays of equal length; got lengths {lengths}."
)

MSG_ONE_GROUP = (
    "{name} defines a single group ({label!r}); fairness needs at least two groups to compare."
)
MSG_UNSEEN_GROUP = (
    "{name} contains group {label!r} that was not seen at fit time; known groups: {known}."
)
MSG_GROUPS_MODE = "group_mode must be 'intersection' or 'marginal'; got {value!r}."
MSG_NCOLS = "{name} has {got} columns but {expected} were seen at fit time."
MSG_UNHASHABLE = (
    "{name} holds values that cannot name a group ({error}); give each sample a label such as a "
    "string or a number."
)


def _label_key(label: Any) -> tuple:
    """Hashable identity of a group label: 1, 1.0 and np.int64(1) name the same group.

    Strings are compared in NFC, so the two ways of writing "é" are one group.
    """
    label = normal_label(label)
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


def _factorize(column: pd.Series, name: str) -> tuple[np.ndarray, Any]:
    """``pd.factorize``, with a clear error for labels that cannot be hashed (lists, dicts)."""
    try:
        return pd.factorize(column, sort=False)
    except TypeError as error:
        raise ValueError(MSG_UNHASHABLE.format(name=name, error=error)) from None


def _factorize_columns(
    frame: pd.DataFrame, name: str = "sensitive_features"
) -> tuple[list[np.ndarray], list[list]]:
    """Per column: codes into its sorted distinct labels, and those labels."""
    codes, labels = [], []
    for j in range(frame.shape[1]):
        raw_codes, uniques = _factorize(frame.iloc[:, j], name)
        values = [normal_label(v) for v in np.asarray(uniques, dtype=object)]
        merged: dict[tuple, Any] = {}
        for v in values:
            merged.setdefault(_label_key(v), v)
        ordered = sorted(merged.values(), key=_sort_key)
        warn_look_alikes(ordered, name)
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
    def n_samples(self) -> int:
        """Number of samples (rows) the groups were encoded from."""
        if self.codes is not None:
            return int(self.codes.shape[0])
        return int(self._membership.shape[0])

    @property
    def membership(self) -> np.ndarray:
        """Boolean matrix of shape (n_samples, n_groups): sample ``i`` is in group ``g``."""
        if self._membership is not None:
            return self._membership
        membership = np.zeros((self.codes.shape[0], self.n_groups), dtype=bool)
        membership[np.arange(self.codes.shape[0]), self.codes] = True
        return membership

    @property
    def sparse_membership(self) -> Any:
        """:attr:`membership` as a ``scipy.sparse.csc_array`` of 0/1 floats.

        ``counts @ sparse_membership`` sums each group's rows in memory and time linear in the
        samples, where the dense matrix holds n_samples x n_groups entries (16 GB for 10,000
        groups of 20 rows).
        """
        from scipy import sparse

        if self.codes is None:
            return sparse.csc_array(self._membership.astype(float))
        n = self.codes.shape[0]
        return sparse.csc_array((np.ones(n), (np.arange(n), self.codes)), shape=(n, self.n_groups))

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

    def encode(
        self,
        sensitive_features: Any,
        name: str = "sensitive_features",
        *,
        unseen: Literal["error", "mark"] = "error",
    ) -> np.ndarray:
        """Map new sensitive features to the fitted groups.

        Parameters
        ----------
        sensitive_features : array-like or DataFrame
            New data in the same form as at fit time.
        name : str, default="sensitive_features"
            Argument name used in error messages.
        unseen : {"error", "mark"}, default="error"
            A group not seen at fit time raises, or (``"mark"``, intersection groups only)
            gets the index ``-1``.

        Returns
        -------
        numpy.ndarray
            Group index of each sample, shape (n_samples,), for intersection groups; a boolean
            membership matrix of shape (n_samples, n_groups) for marginal groups.

        Raises
        ------
        ValueError
            When a sample's group was not seen at fit time (and ``unseen="error"``).
        """
        mark = unseen == "mark" and self.mode != "marginal"
        frame = sensitive_frame(sensitive_features, name)
        if frame.shape[1] != len(self.columns):
            raise ValueError(
                MSG_NCOLS.format(name=name, got=frame.shape[1], expected=len(self.columns))
            )
        column_codes = []
        for j, known in enumerate(self._column_labels):
            raw_codes, uniques = _factorize(frame.iloc[:, j], name)
            position = {_label_key(v): i for i, v in enumerate(known)}
            remap = np.empty(len(uniques), dtype=np.intp)
            for u, value in enumerate(np.asarray(uniques, dtype=object)):
                key = _label_key(value)
                if key not in position:
                    if mark:
                        remap[u] = -1
                        continue
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
        missing = np.any(np.column_stack(column_codes) < 0, axis=1)
        if mark:
            column_codes = [np.where(missing, 0, c) for c in column_codes]
        combos = _combine(column_codes, [len(k) for k in self._column_labels])
        group = np.searchsorted(self._group_combos, combos)
        group = np.minimum(group, self.n_groups - 1)
        unseen = (self._group_combos[group] != combos) | missing
        if mark:
            return np.where(unseen, -1, group).astype(np.intp)
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
    >>> from fairot.utils.groups import group_attributes
    >>> from fairot.utils.sensitive import check_sensitive_features
    >>> group_attributes(check_sensitive_features([1, "1", 2, 1]))
    ([1, 2, '1'], ['1', '2', "'1'"])
    """
    return list(encoding.labels), list(encoding.names)


def group_values(values: np.ndarray, encoding: GroupEncoding) -> list[np.ndarray]:
    """Split ``values`` into one array per group (overlapping for marginal groups)."""
    return [values[idx] for idx in encoding.indices()]


def sensitive_frame(sensitive_features: Any, name: str) -> pd.DataFrame:
    """Turn any accepted form of sensitive features into a DataFrame of columns."""
    if isinstance(sensitive_features, pd.DataFrame):
        frame = sensitive_features
    elif isinstance(sensitive_features, dict):
        lengths = {str(k): number_of_samples(v) for k, v in sensitive_features.items()}
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


# One small-group threshold for every method (DPP, COT, DOT, the regressor, the penalty
# estimators), so that a group is "small" in one place only. Under it a group's score distribution
# rests on too few rows: its ECDF moves in steps of more than 1/SMALL_GROUP_SIZE, so one row more
# or less moves each of its members by that much in rank, and its transport to the target with it.
SMALL_GROUP_SIZE = 10
MSG_SMALL_GROUP = (
    "group {group!r} has {count} row(s) at fit, fewer than {size}: its score distribution, and "
    "so its ranks and its transport to the target, rests on too few rows to be trusted. Merge "
    "it with a related group or collect more of its rows."
)


def warn_small_groups(counts, names, *, stacklevel: int) -> None:
    """Warn, once per group, for each group with fewer than :data:`SMALL_GROUP_SIZE` rows.

    Parameters
    ----------
    counts : array-like of int
        Number of rows (or rows stood for) of each group.
    names : list of str
        The groups' readable names, in the same order.
    stacklevel : int
        Passed to :func:`warnings.warn` (the user's line).
    """
    for name, count in zip(names, counts, strict=True):
        if count < SMALL_GROUP_SIZE:
            warnings.warn(
                MSG_SMALL_GROUP.format(group=name, count=int(count), size=SMALL_GROUP_SIZE),
                UserWarning,
                stacklevel=stacklevel + 1,
            )
