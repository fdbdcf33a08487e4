"""Baseline audits of a logistic regression on the built-in data sets (the COT paper's LR row)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

BUILTIN_DATASETS = ("adult", "german-credit", "communities-crime")
MSG_UNKNOWN_DATASET = "unknown dataset {name!r}; choose one of: {names}."


@dataclass
class BaselineSplit:
    """A built-in data set split into train and test, with its grouping convention."""

    name: str
    X_train: pd.DataFrame
    X_test: pd.DataFrame
    y_train: pd.Series
    y_test: pd.Series
    sensitive_train: pd.DataFrame
    sensitive_test: pd.DataFrame
    groups: str
    split_note: str


def load_baseline_split(
    name: str, *, random_state: int = 0, test_size: float = 0.3, **loader_kwargs: Any
) -> BaselineSplit:
    """Load a built-in data set and split it as the reproductions do.

    Adult uses its official split (``adult.data`` / ``adult.test``); German Credit and
    Communities & Crime, which have none, use a stratified ``test_size`` split.

    Parameters
    ----------
    name : {"adult", "german-credit", "communities-crime"}
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

    >>> from fairot.reporting import load_baseline_split
    >>> split = load_baseline_split("german-credit", random_state=0)
    >>> len(split.X_train), len(split.X_test)
    (700, 300)
    >>> bool(round(split.y_train.mean(), 2) == round(split.y_test.mean(), 2))
    True
    """
    from sklearn.model_selection import train_test_split

    from fairot import datasets

    loaders = {
        "adult": datasets.load_adult,
        "german-credit": datasets.load_german_credit,
        "communities-crime": datasets.load_communities_crime,
    }
    if name not in loaders:
        raise ValueError(MSG_UNKNOWN_DATASET.format(name=name, names=", ".join(BUILTIN_DATASETS)))
    bunch = loaders[name](**loader_kwargs)
    groups = "marginal" if name == "communities-crime" else "intersection"
    if bunch.split is not None:
        train = (bunch.split == "train").to_numpy()
        note = "official train/test split"
    else:
        idx = pd.RangeIndex(len(bunch.target))
        train_idx, _ = train_test_split(
            idx, test_size=test_size, random_state=random_state, stratify=bunch.target
        )
        train = idx.isin(train_idx)
        note = f"stratified {1 - test_size:.0%}/{test_size:.0%} split, random_state={random_state}"
    return BaselineSplit(
        name,
        bunch.data[train],
        bunch.data[~train],
        bunch.target[train],
        bunch.target[~train],
        bunch.sensitive[train],
        bunch.sensitive[~train],
        groups,
        note,
    )


def audit_logistic_regression(
    name: str,
    *,
    random_state: int = 0,
    plots: bool = True,
    threshold: float = 0.5,
    n_bootstrap: int = 200,
    min_group_size: int = 30,
    exclude_small_groups: bool = False,
    **loader_kwargs: Any,
):
    """Audit scikit-learn's default ``LogisticRegression`` on a built-in data set's test split.

    The COT paper's LR baseline: default hyper-parameters, the sensitive attributes among the
    inputs, scores ``predict_proba[:, 1]`` audited on the test set.

    Parameters
    ----------
    name : {"adult", "german-credit", "communities-crime"}
        Data set.
    random_state : int, default=0
        Seed of the split where the data set has no official one, and of the bootstrap.
    plots : bool, default=True
        Draw the audit's figures.
    threshold, n_bootstrap, min_group_size, exclude_small_groups
        As in :func:`fairot.reporting.audit`.
    **loader_kwargs
        Passed to the loader.

    Returns
    -------
    fairot.reporting.Audit

    Examples
    --------
    >>> from fairot.reporting import audit_logistic_regression
    >>> result = audit_logistic_regression("german-credit", plots=False, n_bootstrap=20)
    >>> 0 <= result.summary["wass1"] <= 1
    True
    """
    from sklearn.linear_model import LogisticRegression

    from fairot.reporting._audit import audit

    split = load_baseline_split(name, random_state=random_state, **loader_kwargs)
    model = LogisticRegression().fit(split.X_train, split.y_train)
    scores = model.predict_proba(split.X_test)[:, 1]
    title = f"Audit of LogisticRegression() on {name} (test set; {split.split_note})"
    return audit(
        split.y_test,
        scores,
        split.sensitive_test,
        groups=split.groups,
        title=title,
        plots=plots,
        threshold=threshold,
        n_bootstrap=n_bootstrap,
        random_state=random_state,
        min_group_size=min_group_size,
        exclude_small_groups=exclude_small_groups,
    )
