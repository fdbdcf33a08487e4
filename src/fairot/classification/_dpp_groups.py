"""DPP's group statistics and its map: each group's sorted scores, the target, the pooled ECDF.

Internal surface of :mod:`fairot.classification._postprocessing` and
:mod:`fairot.classification._dpp_strata`: :class:`GroupMaps` (one fitted map and its
application), :func:`sorted_groups`, :func:`target_from_groups`, :func:`pooled_scores`,
:func:`group_of_row`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairot.transport import build_target, geodesic_map
from fairot.utils.groups import GroupEncoding, group_attributes, sensitive_frame
from fairot.utils.sensitive import check_sensitive_features

# A score recomputed on fit-time data can differ from the stored one by rounding (BLAS blocking
# depends on the batch); the ECDF jumps exactly there, so ranks are taken just right of the score.
RANK_TOLERANCE = 1e-12
MSG_UNSEEN = (
    "sensitive_features contains group {label!r}, not seen at fit time (seen groups: {known}). "
    "Refit with rows of that group, or pass unseen_groups='pooled' to map its rows through the "
    "pooled score distribution of all fit-time rows."
)


def sorted_groups(
    scores: np.ndarray, encoding: GroupEncoding, sample_weight: np.ndarray | None
) -> tuple[list[np.ndarray], list]:
    """Each group's scores in nondecreasing order, with their weights (``None``: unweighted)."""
    group_scores, group_weights = [], []
    for rows in encoding.indices():
        order = np.argsort(scores[rows], kind="stable")
        group_scores.append(scores[rows][order])
        group_weights.append(None if sample_weight is None else sample_weight[rows][order])
    return group_scores, group_weights


def group_statistics(
    model, scores: np.ndarray, sensitive_features, encoding: GroupEncoding, sample_weight
) -> tuple[GroupEncoding, list[np.ndarray], list, np.ndarray | None]:
    """The cells mapped, their sorted scores and weights, and the target of marginal groups.

    For ``model.group_mode="marginal"`` the target is built from the overlapping groups of
    ``encoding`` and the cells are the intersections; else the cells are ``encoding``'s groups
    and the target is left to :meth:`GroupMaps.from_groups` (``None``).
    """
    target_samples = None
    if model.group_mode == "marginal":
        target_samples = build_target(model.target, scores, encoding, sample_weight)
        encoding = check_sensitive_features(
            sensitive_features, scores.shape[0], group_mode="intersection", min_groups=1
        )
    group_scores, group_weights = sorted_groups(scores, encoding, sample_weight)
    return encoding, group_scores, group_weights, target_samples


@dataclass
class GroupMaps:
    r"""One fitted DPP map: :math:`s \mapsto \tau s + (1 - \tau) Q_{\bar S}(F_a(s))`.

    ``group_scores[g]`` (sorted) and ``group_weights[g]`` define :math:`F_a` of group ``g`` of
    ``encoding``; ``pooled`` (the sorted scores of all groups, with weights) is the ECDF of the
    rows of unseen groups; ``target_samples`` are the target's sorted samples.
    """

    encoding: GroupEncoding
    group_scores: list
    group_weights: list
    target_samples: np.ndarray
    pooled: tuple

    @classmethod
    def from_groups(cls, target, group_scores, group_weights, encoding, target_samples=None):
        """The map of sorted group scores; the target built from them unless given."""
        group_scores = [np.asarray(g, dtype=np.float64) for g in group_scores]
        if group_weights is None:
            group_weights = [None] * len(group_scores)
        group_weights = list(group_weights)
        if target_samples is None:
            target_samples = target_from_groups(target, group_scores, group_weights, encoding)
        return cls(
            encoding,
            group_scores,
            group_weights,
            np.asarray(target_samples, dtype=np.float64),
            pooled_scores(group_scores, group_weights),
        )

    @property
    def groups_(self) -> list:
        """The groups' labels."""
        return group_attributes(self.encoding)[0]

    @property
    def group_names_(self) -> list[str]:
        """The groups' readable names."""
        return group_attributes(self.encoding)[1]

    def codes(self, sensitive_features, unseen_groups: str) -> np.ndarray:
        """Each row's group (``-1``: unseen, for the pooled ECDF); unseen raises on ``"error"``."""
        codes = self.encoding.encode(sensitive_features, unseen="mark")
        unseen = codes < 0
        if np.any(unseen) and unseen_groups == "error":
            label = group_of_row(sensitive_features, int(np.flatnonzero(unseen)[0]))
            raise ValueError(MSG_UNSEEN.format(label=label, known=self.group_names_))
        return codes

    def apply(self, scores: np.ndarray, codes: np.ndarray, tau: float) -> np.ndarray:
        """The mapped scores of rows with base ``scores`` in groups ``codes``."""
        out = np.empty_like(scores)
        references = [*zip(self.group_scores, self.group_weights, strict=True), self.pooled]
        for g, (reference, weights) in enumerate(references):
            rows = np.flatnonzero(codes == (g if g < len(self.group_scores) else -1))
            if rows.size:
                out[rows] = geodesic_map(
                    scores[rows],
                    reference,
                    self.target_samples,
                    tau,
                    source_weights=weights,
                    rank_offset=RANK_TOLERANCE,
                    assume_sorted=True,
                )
        return out


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
