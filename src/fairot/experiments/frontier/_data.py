"""The frontier study's data: the built-in data sets with the sensitive attributes out of ``X``.

Internal surface (for :mod:`fairot.experiments.frontier`): :data:`FRONTIER_DATASETS`,
:data:`GROUP_COLUMNS`, :data:`ATTRIBUTE_COLUMNS`, :class:`UnawareSplit` and :func:`unaware_split`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairot.datasets import load_baseline_split

#: Data set name -> the study's title.
FRONTIER_DATASETS = {
    "adult": "Adult",
    "german-credit": "German Credit",
    "communities-crime": "Communities & Crime",
}

#: The sensitive columns the study groups by. Communities & Crime keeps one of its four race
#: columns: fairlearn's constraints take intersectional groups only, and the 16 cells of the
#: four columns leave cells with one label (ThresholdOptimizer cannot fit them).
GROUP_COLUMNS = {
    "adult": ["race", "sex"],
    "german-credit": ["age_group"],
    "communities-crime": ["black"],
}

#: Input columns that encode the sensitive attribute (or are the raw value it is cut from):
#: removed from X, so that no model sees the attribute at prediction time.
ATTRIBUTE_COLUMNS = {
    "adult": ("race_", "sex_"),
    "german-credit": ("age",),
    "communities-crime": ("racepctblack", "racePctWhite", "racePctAsian", "racePctHisp"),
}


@dataclass
class UnawareSplit:
    """Train/test arrays without the attribute columns, and the groups beside them.

    Attributes
    ----------
    X_train, X_test : ndarray
        Inputs, sensitive columns removed.
    y_train, y_test : ndarray of int
        0/1 labels.
    sensitive_train, sensitive_test : pandas.DataFrame
        Sensitive columns (used to fit the mitigations and to measure, never as inputs).
    group_mode : "intersection"
        How the sensitive columns form groups (the cells of Adult's race x sex).
    removed : list of str
        The removed input columns.
    note : str
        How the split was made.
    """

    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    sensitive_train: pd.DataFrame
    sensitive_test: pd.DataFrame
    group_mode: str
    removed: list[str]
    note: str


def _attribute_columns(name: str, columns: pd.Index) -> list[str]:
    prefixes = ATTRIBUTE_COLUMNS[name]
    return [
        c for c in columns if any(c == p or (p.endswith("_") and c.startswith(p)) for p in prefixes)
    ]


def _subsample(
    n: int, size: int | None, strata: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Rows of a subsample of about ``size`` rows stratified on ``strata``, in their order.

    Every stratum keeps at least one row, so that each group keeps both labels.
    """
    if size is None or size >= n:
        return np.arange(n)
    keep = []
    for label in np.unique(strata):
        rows = np.flatnonzero(strata == label)
        k = max(1, round(size * rows.shape[0] / n))
        keep.append(rng.choice(rows, size=min(k, rows.shape[0]), replace=False))
    return np.sort(np.concatenate(keep))


def _strata(y: np.ndarray, sensitive: pd.DataFrame) -> np.ndarray:
    """Label x group cell of each row (the cells of all sensitive columns)."""
    cells = sensitive.astype(str).agg("|".join, axis=1).to_numpy()
    return np.char.add(y.astype(str), np.asarray(cells, dtype=str))


def unaware_split(
    name: str, seed: int, *, max_train: int | None = None, max_test: int | None = None
) -> UnawareSplit:
    """Load data set ``name``, split it, and remove the attribute's columns from ``X``.

    Adult keeps its official split (the seed draws the subsample, if any); German Credit and
    Communities & Crime get a stratified 70/30 split seeded by ``seed``. ``max_train`` and
    ``max_test`` cap the sizes by a stratified subsample.
    """
    split = load_baseline_split(name, random_state=seed)
    removed = _attribute_columns(name, split.X_train.columns)
    columns = GROUP_COLUMNS[name]
    split.sensitive_train = split.sensitive_train[columns]
    split.sensitive_test = split.sensitive_test[columns]
    rng = np.random.default_rng(seed)
    y_train = split.y_train.to_numpy().astype(int)
    y_test = split.y_test.to_numpy().astype(int)
    train = _subsample(y_train.shape[0], max_train, _strata(y_train, split.sensitive_train), rng)
    test = _subsample(y_test.shape[0], max_test, _strata(y_test, split.sensitive_test), rng)
    note = split.split_note
    if max_train is not None and train.shape[0] < y_train.shape[0]:
        note += f"; stratified subsample of {train.shape[0]} training rows"
    if max_test is not None and test.shape[0] < y_test.shape[0]:
        note += f" and {test.shape[0]} test rows"
    return UnawareSplit(
        split.X_train.drop(columns=removed).to_numpy(dtype=float)[train],
        split.X_test.drop(columns=removed).to_numpy(dtype=float)[test],
        y_train[train],
        y_test[test],
        split.sensitive_train.iloc[train].reset_index(drop=True),
        split.sensitive_test.iloc[test].reset_index(drop=True),
        "intersection",
        removed,
        note,
    )
