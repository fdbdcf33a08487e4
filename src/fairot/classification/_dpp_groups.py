"""DPP's group statistics: the target from sorted group scores, the pooled ECDF of unseen groups.

Internal surface of :mod:`fairot.classification._postprocessing`: :func:`target_from_groups`,
:func:`pooled_scores`, :func:`group_of_row`.
"""

from __future__ import annotations

import numpy as np

from fairot.transport import build_target
from fairot.utils.groups import GroupEncoding, sensitive_frame


def pooled_scores(group_scores: list[np.ndarray], group_weights: list) -> tuple:
    """All fit-time scores, sorted, with their weights: the ECDF of unseen groups' rows."""
    scores = np.concatenate(group_scores)
    order = np.argsort(scores, kind="stable")
    if all(w is None for w in group_weights):
        return scores[order], None
    weights = np.concatenate(
        [
            np.ones(g.shape[0]) if w is None else w
            for g, w in zip(group_scores, group_weights, strict=True)
        ]
    )
    return scores[order], weights[order]


def group_of_row(sensitive_features, row: int):
    """The group label of one row, as the user wrote it (a tuple for several columns)."""
    values = tuple(
        v.item() if isinstance(v, np.generic) else v
        for v in sensitive_frame(sensitive_features, "sensitive_features").iloc[row].to_numpy()
    )
    return values[0] if len(values) == 1 else values


class ConcatenatedGroups:
    """The groups of the concatenated sorted group scores, as ``build_target`` reads groups.

    ``build_target`` asks an encoding for each group's rows (``indices``), a group's position
    (``index_of``) and the names; over the concatenation, group ``g``'s rows are its block.
    """

    def __init__(self, encoding: GroupEncoding, sizes: list[int]):
        self.encoding = encoding
        self.names = encoding.names
        bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        self.rows = [np.arange(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]

    def indices(self) -> list[np.ndarray]:
        return self.rows

    def index_of(self, label) -> int:
        return self.encoding.index_of(label)


def target_from_groups(
    target, group_scores: list[np.ndarray], group_weights: list, encoding: GroupEncoding
) -> np.ndarray:
    """``build_target`` on the concatenated sorted groups: the target of the rows they came from.

    The group quantiles and sizes do not depend on the order of a group's rows, so the sorted
    groups give the target that the rows themselves give.
    """
    groups = ConcatenatedGroups(encoding, [g.shape[0] for g in group_scores])
    weights = None
    if any(w is not None for w in group_weights):
        weights = np.concatenate(
            [
                np.ones(g.shape[0]) if w is None else w
                for g, w in zip(group_scores, group_weights, strict=True)
            ]
        )
    return build_target(target, np.concatenate(group_scores), groups, weights)
