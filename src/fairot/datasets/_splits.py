"""The train/test splits of the built-in data sets that the audits and the reproductions share.

Adult keeps its official split; German Credit and Communities & Crime, which have none, get a
stratified split. :func:`fairot.reporting.audit_logistic_regression` and the COT paper's studies
(:mod:`fairot.experiments.cot`) both start from :func:`load_baseline_split`. The regression data
set ``"acs-excerpts"`` (:data:`BUILTIN_REGRESSION_DATASETS`, audited by
:func:`fairot.reporting.audit_gradient_boosting`) is split within race groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ._acs_excerpts import load_acs_excerpts
from ._adult import load_adult
from ._communities_crime import load_communities_crime
from ._german_credit import load_german_credit

BUILTIN_DATASETS = ("adult", "german-credit", "communities-crime")
#: Built-in regression data: the 2018 national NIST ACS excerpt, log income, three race groups.
BUILTIN_REGRESSION_DATASETS = ("acs-excerpts",)
MSG_UNKNOWN_DATASET = "unknown dataset {name!r}; choose one of: {names}."


@dataclass
class BaselineSplit:
    """A built-in data set split into train and test, with its grouping convention.

    Attributes
    ----------
    name : str
        The data set's name, as given to :func:`load_baseline_split`.
    X_train, X_test : pandas.DataFrame
        Inputs (the sensitive attributes among them, as the COT paper's LR baseline has them).
    y_train, y_test : pandas.Series
        Binary targets (log income for ``"acs-excerpts"``).
    sensitive_train, sensitive_test : pandas.DataFrame
        Sensitive columns.
    group_mode : {"intersection", "marginal"}
        How the sensitive columns form groups in the paper (marginal for Communities & Crime).
    split_note : str
        How the split was made, for reports.

    Examples
    --------
    :func:`load_baseline_split` returns one.

    >>> from fairot.datasets import load_baseline_split
    >>> split = load_baseline_split("adult")
    >>> split.group_mode, split.split_note, list(split.sensitive_test.columns)
    ('intersection', 'official train/test split', ['race', 'sex'])
    """

    name: str
    X_train: pd.DataFrame
    X_test: pd.DataFrame
    y_train: pd.Series
    y_test: pd.Series
    sensitive_train: pd.DataFrame
    sensitive_test: pd.DataFrame
    group_mode: str
    split_note: str


def load_baseline_split(
    name: str, *, random_state: int = 0, test_size: float = 0.3, **loader_kwargs: Any
) -> BaselineSplit:
    """Load a built-in data set and split it as the reproductions do.

    Adult uses its official split (``adult.data`` / ``adult.test``); German Credit and
    Communities & Crime, which have none, use a ``test_size`` split stratified by label.
    ``"acs-excerpts"`` is the regression paper's ACS task on the 2018 national NIST excerpt
    (:func:`load_acs_excerpts` with ``subset="regression-paper"``,
    ``features="regression-paper"``, ``target="log_income"``, ``n_groups=3``), split with
    stratification by race group.

    Parameters
    ----------
    name : {"adult", "german-credit", "communities-crime", "acs-excerpts"}
        Data set.
    random_state : int, default=0
        Seed of the stratified split.
    test_size : float, default=0.3
        Share of the test set where there is no official split.
    **loader_kwargs
        Passed to the loader (e.g. ``race_threshold="mean"`` for Communities & Crime).

    Returns
    -------
    BaselineSplit

    Examples
    --------
    German Credit has no official split: a stratified 70/30 split of its 1000 rows.

    >>> from fairot.datasets import load_baseline_split
    >>> split = load_baseline_split("german-credit", random_state=0)
    >>> len(split.X_train), len(split.X_test)
    (700, 300)
    >>> bool(round(split.y_train.mean(), 2) == round(split.y_test.mean(), 2))
    True
    """
    # Imported here: model_selection is heavy and only a split needs it.
    from sklearn.model_selection import train_test_split

    loaders = {
        "adult": load_adult,
        "german-credit": load_german_credit,
        "communities-crime": load_communities_crime,
        "acs-excerpts": _load_acs_regression,
    }
    if name not in loaders:
        names = ", ".join(BUILTIN_DATASETS + BUILTIN_REGRESSION_DATASETS)
        raise ValueError(MSG_UNKNOWN_DATASET.format(name=name, names=names))
    bunch = loaders[name](**loader_kwargs)
    # a continuous target cannot stratify a split; its groups can
    strata = bunch.sensitive["race"] if name in BUILTIN_REGRESSION_DATASETS else bunch.target
    group_mode = "marginal" if name == "communities-crime" else "intersection"
    if bunch.split is not None:
        train = (bunch.split == "train").to_numpy()
        note = "official train/test split"
    else:
        idx = pd.RangeIndex(len(bunch.target))
        train_idx, _ = train_test_split(
            idx, test_size=test_size, random_state=random_state, stratify=strata
        )
        train = idx.isin(train_idx)
        by = " by race group" if name in BUILTIN_REGRESSION_DATASETS else ""
        note = (
            f"stratified {1 - test_size:.0%}/{test_size:.0%} split{by}, random_state={random_state}"
        )
    return BaselineSplit(
        name,
        bunch.data[train],
        bunch.data[~train],
        bunch.target[train],
        bunch.target[~train],
        bunch.sensitive[train],
        bunch.sensitive[~train],
        group_mode,
        note,
    )


def _load_acs_regression(**loader_kwargs: Any):
    options = {
        "subset": "regression-paper",
        "features": "regression-paper",
        "target": "log_income",
        "n_groups": 3,
    }
    return load_acs_excerpts(**{**options, **loader_kwargs})
