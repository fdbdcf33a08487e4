r"""The cells of the rate-constrained rule: one probability model, every rate it needs.

:class:`~fairot.classification.RateConstrainedClassifier` fits one multiclass model of the
*cell* of each row, :math:`c = (\text{stratum}, a, y)` (the stratum only with
``control_features``), so that its probabilities :math:`p(c \mid x)` give at once

.. math::

    \eta(x) = \sum_{c:\ y = 1} p(c \mid x), \qquad
    g_a(x) = \sum_{c:\ \text{group } a} p(c \mid x), \qquad
    p(a, y \mid x),

the posterior of the label, of the groups and of the (group, label) cells, all consistent
(they sum as probabilities should). A cell's integer code is
:math:`(\text{stratum} \cdot K + a) \cdot 2 + y`, with :math:`a` the group's index in
``groups_`` (sorted labels), :math:`y` the index of the label in ``classes_`` and
:math:`K` the number of groups; a model given already trained (in
:class:`~sklearn.frozen.FrozenEstimator`) must predict these codes.

A constraint compares *units*, each a sum of cells: the groups for demographic parity; the
(group, :math:`y = 1`) cells for equal opportunity (TPR); those and the (group,
:math:`y = 0`) cells, in two families, for equalized odds (TPR and FPR); the (stratum, group)
pairs, one family per stratum, for conditional demographic parity.

Internal surface (for :mod:`fairot.classification._rate_constrained`): :data:`CONSTRAINTS`,
:class:`CellLayout`, :func:`cell_layout`, :func:`cross_fit_cell_proba`,
:func:`cell_proba`, :func:`rule_scores`, :func:`empirical_rates`, :func:`spread` and the
``MSG_*``.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils import _safe_indexing

from fairot.classification._common import fit_base_estimator

#: fairot's names of the constraints (those of COT/DOT, and fairlearn's in snake case).
CONSTRAINTS = (
    "demographic_parity",
    "equal_opportunity",
    "equalized_odds",
    "conditional_demographic_parity",
)

MSG_ONE_LABEL = (
    "group {group!r} has no rows with y={label!r}; constraint={constraint!r} compares the "
    "groups' rates among the rows of each label in {labels}, so every group needs rows of each."
)
MSG_CLASSES = (
    "estimator's classes_ must be the integer cell codes (stratum * n_groups + group) * 2 + "
    "label in 0..{last}; got {classes}."
)
MSG_PROBA_NAN = (
    "estimator {name}.predict_proba returned NaN or infinite probabilities; the rule needs "
    "finite cell probabilities (check the model's inputs and its fit)."
)
MSG_CONTROL_NEEDED = (
    "constraint='conditional_demographic_parity' compares the groups within each stratum of "
    "control_features: pass control_features to fit."
)
MSG_CONTROL_UNUSED = (
    "control_features was given with constraint={constraint!r}, which does not read strata; "
    "use constraint='conditional_demographic_parity', or drop control_features."
)


@dataclass(frozen=True)
class CellLayout:
    r"""Cells, units and families of one fit.

    Attributes
    ----------
    n_cells : int
        ``n_strata * n_groups * 2``.
    units : ndarray of float of shape (n_cells, n_units)
        ``units[c, j] = 1`` when cell ``c`` belongs to unit ``j``.
    families : ndarray of int of shape (n_units,)
        The family of each unit: rates are compared within a family.
    unit_names : list of str
        Readable names of the units.
    family_names : list of str
        Readable names of the families.
    positive : ndarray of float of shape (n_cells,)
        1 for the cells of the positive label (their probabilities sum to :math:`\eta`).
    """

    n_cells: int
    units: np.ndarray
    families: np.ndarray
    unit_names: list[str]
    family_names: list[str]
    positive: np.ndarray


def cell_codes(strata: np.ndarray, groups: np.ndarray, y01: np.ndarray, n_groups: int):
    """Each row's cell code, ``(stratum * n_groups + group) * 2 + label``."""
    return ((strata * n_groups + groups) * 2 + y01).astype(np.intp)


def cell_layout(
    constraint: str,
    group_names: list[str],
    strata_names: list[str] | None,
    codes: np.ndarray,
    classes: np.ndarray,
    weights: np.ndarray,
) -> CellLayout:
    """The units and families of ``constraint``; a group lacking a label it needs raises."""
    n_groups = len(group_names)
    n_strata = 1 if strata_names is None else len(strata_names)
    n_cells = n_strata * n_groups * 2
    present = np.bincount(codes, weights=weights, minlength=n_cells) > 0
    cell = np.arange(n_cells)
    label, group, stratum = cell % 2, (cell // 2) % n_groups, cell // (2 * n_groups)
    columns, families, names = [], [], []
    if constraint in ("equal_opportunity", "equalized_odds"):
        labels = (1,) if constraint == "equal_opportunity" else (1, 0)
        for family, y in enumerate(labels):
            for a, name in enumerate(group_names):
                members = (group == a) & (label == y)
                if not present[members].any():
                    raise ValueError(
                        MSG_ONE_LABEL.format(
                            group=name,
                            label=classes[y].item(),
                            constraint=constraint,
                            labels=[classes[v].item() for v in labels],
                        )
                    )
                columns.append(members)
                families.append(family)
                names.append(f"{name}, y={classes[y].item()}")
        family_names = ["TPR", "FPR"][: len(labels)]
    elif constraint == "conditional_demographic_parity":
        for s, stratum_name in enumerate(strata_names):
            for a, name in enumerate(group_names):
                members = (group == a) & (stratum == s)
                if present[members].any():  # a group absent from a stratum has no rate there
                    columns.append(members)
                    families.append(s)
                    names.append(f"{stratum_name}: {name}")
        family_names = list(strata_names)
    else:
        columns = [group == a for a in range(n_groups)]
        families = [0] * n_groups
        names = list(group_names)
        family_names = ["selection rate"]
    return CellLayout(
        n_cells=n_cells,
        units=np.column_stack(columns).astype(float),
        families=np.asarray(families, dtype=np.intp),
        unit_names=names,
        family_names=family_names,
        positive=(label == 1).astype(float),
    )


def cell_proba(model, X, n_cells: int) -> np.ndarray:
    """``model.predict_proba(X)`` placed in the columns of the cell codes (absent cells: 0)."""
    classes = np.asarray(model.classes_)
    if (
        classes.dtype.kind not in "iu"
        or classes.min(initial=0) < 0
        or classes.max(initial=0) >= n_cells
    ):
        raise ValueError(MSG_CLASSES.format(last=n_cells - 1, classes=classes[:10].tolist()))
    proba = np.asarray(model.predict_proba(X), dtype=float)
    if not np.all(np.isfinite(proba)):
        raise ValueError(MSG_PROBA_NAN.format(name=type(model).__name__))
    out = np.zeros((proba.shape[0], n_cells))
    out[:, classes] = proba
    return out


def cross_fit_cell_proba(
    estimator, X, codes: np.ndarray, n_cells: int, *, cv: int, random_state, weights
) -> np.ndarray:
    """Out-of-fold cell probabilities of every row: ``cv`` folds stratified on the cell.

    An integer ``cv`` shuffles the folds with ``random_state``; a splitter or an iterable of
    (train, test) indices is used as given.

    A model in :class:`~sklearn.frozen.FrozenEstimator` is not refitted, so its
    probabilities are those of every row at once.
    """
    if isinstance(estimator, FrozenEstimator):
        return cell_proba(estimator, X, n_cells)
    if sp.issparse(X):
        X = X.tocsr()  # row indexing (COO and DIA have none)
    elif not hasattr(X, "iloc") and not isinstance(X, np.ndarray):
        X = np.asarray(X)  # lists and array-likes, indexed by rows below
    if isinstance(cv, Integral):
        folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=random_state)
        splits = folds.split(np.zeros(codes.shape[0]), _fold_labels(codes, cv))
    else:
        splits = check_cv(cv).split(np.zeros(codes.shape[0]), codes)
    out = np.zeros((codes.shape[0], n_cells))
    for train, test in splits:
        model = fit_base_estimator(
            estimator,
            _safe_indexing(X, train),
            codes[train],
            None if weights is None else weights[train],
        )
        out[test] = cell_proba(model, _safe_indexing(X, test), n_cells)
    return out


def rule_scores(
    proba: np.ndarray, layout: CellLayout, shares: np.ndarray, multipliers: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""The rule's score :math:`s = 2\eta - 1 - \sum_j \mu_j q_j / Q_j` and the :math:`q_j`.

    Parameters
    ----------
    proba : ndarray of shape (n_samples, n_cells)
        Cell probabilities.
    layout : CellLayout
    shares : ndarray of shape (n_units,)
        :math:`Q_j`.
    multipliers : ndarray of shape (n_units,)
        :math:`\mu_j`.

    Returns
    -------
    scores : ndarray of shape (n_samples,)
    unit_probabilities : ndarray of shape (n_samples, n_units)
    """
    units = proba @ layout.units
    return 2.0 * (proba @ layout.positive) - 1.0 - (units / shares) @ multipliers, units


def _fold_labels(codes: np.ndarray, cv: int) -> np.ndarray:
    """What the folds are stratified on: the cells, those with fewer than ``cv`` rows pooled.

    A rare cell cannot be in every fold; pooled, its rows are spread as evenly as the rest
    (a fold model that saw none of them gives their cell probability 0). Where even the pool
    is smaller than ``cv``, its rows join the largest cell.
    """
    counts = np.bincount(codes)
    labels = np.where(counts[codes] >= cv, codes, -1)
    pooled = labels == -1
    if 0 < pooled.sum() < cv:
        labels[pooled] = int(np.argmax(counts))
    return labels


def empirical_rates(
    decisions: np.ndarray, codes: np.ndarray, units: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """Each unit's weighted mean decision over the rows that truly belong to it."""
    if isinstance(codes, np.ndarray):
        membership = units[codes]  # n x J
    else:  # a Dask array: the same rows of units, as a one-hot product per partition
        membership = (codes[:, None] == np.arange(units.shape[0])) @ units
    return ((weights * decisions) @ membership) / (weights @ membership)


def spread(rates: np.ndarray, families: np.ndarray) -> tuple[float, float]:
    """The largest max - min and the smallest min / max of the rates within a family.

    A family whose rates are all 0 has ratio 1 (no group is selected more than another).
    """
    difference, ratio = 0.0, 1.0
    for f in np.unique(families):
        r = rates[families == f]
        difference = max(difference, float(r.max() - r.min()))
        if r.max() > 0:
            ratio = min(ratio, float(r.min() / r.max()))
    return difference, ratio
