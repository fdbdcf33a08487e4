"""What :class:`~fairot.torch.FairTrainer` reads from its data: tensors, groups, draws, metrics.

The checks of ``(X, y, group_codes)``, the group membership matrix, row weights and the weighted
draws of a batch, and the validation metrics recorded each epoch; the loop itself is in
:mod:`fairot.torch.trainers._fair_trainer`. The fixed target (the :math:`W_1` barycenter of the
groups' training scores) is the penalty's: ``fairot.torch.penalty._cells.barycenter_target``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from fairot.metrics.reductions import sum_w1_to_barycenter, sum_w1_to_reference
from fairot.utils.arrays import check_sample_weight

__all__ = [
    "MSG_EMPTY_GROUP",
    "MSG_GROUPS",
    "MSG_LABELS",
    "MSG_LENGTHS",
    "BatchPlan",
    "as_tensor",
    "batch_plan",
    "check_data",
    "check_row_weights",
    "draw_rows",
    "membership",
    "validation_metrics",
]

MSG_GROUPS = (
    "group_codes must be integer codes 0 .. n_groups - 1 of shape (n_samples,) or a boolean "
    "membership matrix of shape (n_samples, n_groups) with n_groups={n_groups} (the penalty's); "
    "got {value}."
)
MSG_LENGTHS = "X, y and group_codes must have the same number of rows; got {x}, {y} and {g}."
MSG_EMPTY_GROUP = "group {group} has no rows in the training data; every group needs members."
MSG_OVERLAP_WEIGHTS = (
    "sample_weight with overlapping groups (a membership matrix with rows in several groups) "
    "is not supported; pass integer group codes, or repeat the rows."
)
MSG_ZERO_WEIGHT = "group {group} has zero total sample_weight; no row of it can be drawn."
MSG_LABELS = (
    "y must hold labels in [0, 1] (0/1, or soft labels to distil a teacher); got values in "
    "[{low}, {high}]."
)


def as_tensor(a, dtype, device) -> torch.Tensor:
    """``a`` (tensor or array-like) as a detached tensor of ``dtype`` on ``device``."""
    if isinstance(a, torch.Tensor):
        return a.detach().to(device=device, dtype=dtype)
    return torch.as_tensor(np.asarray(a), dtype=dtype, device=device)


def membership(groups, n_groups: int, n: int) -> np.ndarray:
    """The boolean (n, n_groups) membership matrix of integer codes or of a boolean matrix."""
    g = groups.detach().cpu().numpy() if isinstance(groups, torch.Tensor) else np.asarray(groups)
    if g.ndim == 2 and g.dtype == bool and g.shape[1] == n_groups:
        member = g
    elif (
        g.ndim == 1
        and np.issubdtype(g.dtype, np.integer)
        and (g.size == 0 or (g.min() >= 0 and g.max() < n_groups))
    ):
        member = np.zeros((g.shape[0], n_groups), dtype=bool)
        member[np.arange(g.shape[0]), g] = True
    else:
        raise ValueError(
            MSG_GROUPS.format(n_groups=n_groups, value=f"shape {g.shape}, dtype {g.dtype}")
        )
    if member.shape[0] != n:
        raise ValueError(MSG_LENGTHS.format(x=n, y=n, g=member.shape[0]))
    return member


def check_data(X, y, group_codes, n_groups: int, dtype, device):
    """``(X, y, membership)`` checked: equal lengths, labels in [0, 1], valid groups."""
    Xt = as_tensor(X, dtype, device)
    yt = as_tensor(y, dtype, device).reshape(-1)
    if Xt.shape[0] != yt.shape[0]:
        raise ValueError(MSG_LENGTHS.format(x=Xt.shape[0], y=yt.shape[0], g=len(group_codes)))
    if not bool(((yt >= 0) & (yt <= 1)).all()):
        raise ValueError(MSG_LABELS.format(low=float(yt.min()), high=float(yt.max())))
    return Xt, yt, membership(group_codes, n_groups, Xt.shape[0])


def check_row_weights(sample_weight, member: np.ndarray) -> np.ndarray | None:
    """Checked row weights (``None`` when all equal, the unweighted run); one group per row."""
    if sample_weight is None:
        return None
    weights = check_sample_weight(sample_weight, member.shape[0])
    if weights is None or np.all(weights == weights[0]):
        return None  # equal weights: exactly the unweighted run, draw for draw
    if not (member.sum(axis=1) == 1).all():
        raise ValueError(MSG_OVERLAP_WEIGHTS)
    for a in range(member.shape[1]):
        if member[:, a].any() and not weights[member[:, a]].sum() > 0:
            raise ValueError(MSG_ZERO_WEIGHT.format(group=a))
    return weights


class BatchPlan(NamedTuple):
    """How a fit draws its group-balanced batches (one plan per fit, read at every step)."""

    members: list[np.ndarray]  # each group's row indices
    per_group: int  # rows drawn from every group per step
    weights: torch.Tensor  # the importance weight of each row of a batch
    drawing: list[np.ndarray] | None  # each group's cumulative row weights (None: uniform)
    groups: torch.Tensor  # the group code of each row of a batch
    steps_per_epoch: int


def batch_plan(
    member: np.ndarray, sample_weight: np.ndarray | None, batch_size: int, dtype, device
) -> BatchPlan:
    r"""The batches of a fit: ``batch_size // n_groups`` rows of every group per step.

    A sampled row of group :math:`a` weighs :math:`n_a / (k\,C\,n)` in the cross-entropy
    (:math:`k` rows per group, :math:`C` groups per row; :math:`n_a`, :math:`n` total weights
    with ``sample_weight``), so that the weighted mean stays an unbiased estimate of the
    population's cross-entropy however small a group is.
    """
    n, n_groups = member.shape
    members = [np.flatnonzero(member[:, a]) for a in range(n_groups)]
    for a, m in enumerate(members):
        if m.shape[0] == 0:
            raise ValueError(MSG_EMPTY_GROUP.format(group=a))
    per_group = batch_size // n_groups
    row_mass = np.ones(n) if sample_weight is None else sample_weight
    group_mass = [float(row_mass[m].sum()) for m in members]
    per_row = float(sum(group_mass)) / float(row_mass.sum())  # C: groups per row
    weights = torch.tensor(
        [mass / (per_group * per_row * float(row_mass.sum())) for mass in group_mass],
        dtype=dtype,
        device=device,
    ).repeat_interleave(per_group)
    # Each group's cumulative row weights: rows drawn in proportion to their weight.
    drawing = None
    if sample_weight is not None:
        drawing = [np.cumsum(sample_weight[m]) for m in members]
    groups = torch.arange(n_groups, device=device).repeat_interleave(per_group)
    return BatchPlan(members, per_group, weights, drawing, groups, -(-n // batch_size))


def draw_rows(
    members: list[np.ndarray],
    per_group: int,
    rng: np.random.RandomState,
    drawing: list[np.ndarray] | None,
) -> np.ndarray:
    """``per_group`` rows of every group, with replacement: uniform, or by cumulative weights."""
    if drawing is None:
        return np.concatenate([m[rng.randint(0, m.shape[0], per_group)] for m in members])
    picks = []
    for m, cumulative in zip(members, drawing, strict=True):
        position = np.searchsorted(cumulative, rng.uniform(0.0, cumulative[-1], per_group), "right")
        picks.append(m[np.minimum(position, m.shape[0] - 1)])
    return np.concatenate(picks)


def validation_metrics(
    scores: np.ndarray, y: np.ndarray, member: np.ndarray, target: np.ndarray | None, lam: float
) -> dict[str, float]:
    """Err-.5, Wass1 (to ``target``, or to the groups' barycenter), cross-entropy, objective."""
    eps = 1e-12
    bce = float(-np.mean(y * np.log(scores + eps) + (1 - y) * np.log(1 - scores + eps)))
    sorted_groups = [
        np.sort(scores[member[:, a]]) for a in range(member.shape[1]) if member[:, a].any()
    ]
    if target is not None:
        w1 = float(sum_w1_to_reference(sorted_groups, target))
    else:
        w1 = float(sum_w1_to_barycenter(sorted_groups))
    error = float(np.mean((scores > 0.5) != (y > 0.5)))
    return {"val_error": error, "val_wass1": w1, "val_bce": bce, "val_objective": bce + lam * w1}
