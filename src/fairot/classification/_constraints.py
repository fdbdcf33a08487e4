r"""The fairness criterion of COT and DOT: which rows are moved, and to which target.

Strong demographic parity (the COT paper) moves every group's score distribution to one target
:math:`p_{\bar S}`. Strong equalized odds moves, for each label :math:`y \in \{0, 1\}`, the
scores of group :math:`a` among its rows with :math:`Y = y` to a target :math:`\bar p_y`, the
barycenter of the groups' start scores given :math:`Y = y`; strong equal opportunity does so for
:math:`y = 1` only (the negatives are left to the loss of the start). The updates are unchanged:
the (group, label) *cells* take the place of the groups, each cell coupled with its label's
target, so the model still reads neither the attribute nor the label at prediction time.

Internal surface (for :mod:`fairot.classification._base`): ``CONSTRAINTS``, ``constraint_labels``,
``cell_rows``, ``cell_targets``, ``cell_target_rows``, ``target_attributes`` and the
``MSG_*``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairot.transport import build_target, midpoint_grid, quantile_function
from fairot.utils.groups import GroupEncoding

CONSTRAINTS = ("demographic_parity", "equalized_odds", "equal_opportunity")
MSG_EMPTY_CELL = (
    "group {group!r} has no rows with y={label!r} in the data passed to {method}; "
    "constraint={constraint!r} moves each group's scores given each label, so every group needs "
    "rows of {labels}."
)
MSG_TAU = (
    "tau > 0 (a tolerance towards the target) is for constraint='demographic_parity'; "
    "got tau={tau!r} with constraint={constraint!r}."
)
MSG_ARRAY_TARGET = (
    "constraint={constraint!r} builds one target per label from the training scores: target must "
    "be 'barycenter' or a group label; got an array."
)


def constraint_labels(constraint: str) -> tuple[int, ...] | None:
    """Labels (as 0/1) whose cells are moved; ``None`` for demographic parity (no cells)."""
    return {"equalized_odds": (0, 1), "equal_opportunity": (1,)}.get(constraint)


def cell_rows(
    group_rows: list[np.ndarray],
    group_names: list[str],
    y01: np.ndarray,
    constraint: str,
    classes: np.ndarray,
    method: str,
) -> tuple[list[np.ndarray], list[str], np.ndarray]:
    """Rows, names and target index of every cell (label-major); the groups themselves for DP."""
    labels = constraint_labels(constraint)
    if labels is None:
        return group_rows, group_names, np.zeros(len(group_rows), dtype=np.int64)
    rows, names, targets = [], [], []
    for t, label in enumerate(labels):
        for idx, name in zip(group_rows, group_names, strict=True):
            cell = idx[y01[idx] == label]
            if cell.shape[0] == 0:
                raise ValueError(
                    MSG_EMPTY_CELL.format(
                        group=name,
                        label=classes[label].item(),
                        method=method,
                        constraint=constraint,
                        labels=[classes[v].item() for v in labels],
                    )
                )
            rows.append(cell)
            names.append(f"{name}, y={classes[label].item()}")
            targets.append(t)
    return rows, names, np.asarray(targets, dtype=np.int64)


class _GivenLabel:
    """The groups restricted to the rows of one label, as :func:`build_target` reads them."""

    def __init__(self, encoding: GroupEncoding, rows: list[np.ndarray]):
        self._encoding = encoding
        self._rows = rows
        self.names = encoding.names

    def indices(self) -> list[np.ndarray]:
        return self._rows

    def index_of(self, label: Any) -> int:
        return self._encoding.index_of(label)


def cell_targets(
    target: Any,
    scores: np.ndarray,
    encoding: GroupEncoding,
    y01: np.ndarray,
    constraint: str,
    sample_weight: np.ndarray | None,
    classes: np.ndarray,
    tau: float = 0.0,
) -> list[np.ndarray]:
    r"""Sorted samples of each target: one for DP, :math:`\bar p_y` for each moved label."""
    labels = constraint_labels(constraint)
    if labels is None:
        return [build_target(target, scores, encoding, sample_weight)]
    if not isinstance(target, (str, int, tuple, np.integer)) or isinstance(target, bool):
        raise ValueError(MSG_ARRAY_TARGET.format(constraint=constraint))
    if tau:
        raise ValueError(MSG_TAU.format(tau=tau, constraint=constraint))
    rows, _, _ = cell_rows(encoding.indices(), encoding.names, y01, constraint, classes, "fit")
    k = encoding.n_groups
    return [
        build_target(
            target, scores, _GivenLabel(encoding, rows[t * k : (t + 1) * k]), sample_weight
        )
        for t in range(len(labels))
    ]


def cell_target_rows(targets: list[np.ndarray], n_groups: int) -> np.ndarray:
    """One target row per (group, label) cell, label-major, every target on one common grid.

    The kernels read targets of one length (one row per cell, positions shared); each label's
    target is read at the midpoint levels of the longest one, which leaves that one unchanged
    (level (k - 1/2)/n falls on its k-th sample).
    """
    n_levels = max(t.shape[0] for t in targets)
    levels = midpoint_grid(n_levels)
    common = [quantile_function(t, levels, assume_sorted=True) for t in targets]
    return np.repeat(np.stack(common), n_groups, axis=0)


def target_attributes(
    targets: list[np.ndarray], classes: np.ndarray, constraint: str, n_groups: int
) -> tuple[Any, np.ndarray | None]:
    """``target_samples_`` and the kernels' rows per cell (``None`` for demographic parity).

    ``target_samples_`` is one array, or ``{class: samples}`` for each moved label.
    """
    if constraint_labels(constraint) is None:
        return targets[0], None
    moved = classes[list(constraint_labels(constraint))].tolist()
    return dict(zip(moved, targets, strict=True)), cell_target_rows(targets, n_groups)
