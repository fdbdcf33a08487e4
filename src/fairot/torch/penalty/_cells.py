r"""The penalty's matching targets: a tolerance ``tau`` and the label constraints, per cell.

With ``tau > 0`` each group :math:`a` has its own fixed target, its point at :math:`\tau` on the
:math:`W_1` geodesic from the barycenter :math:`\bar\mu` to the group's warm-start scores
(:func:`fairot.transport.geodesic_targets`): :math:`Q^\tau_a = \tau Q_a + (1 - \tau)\bar Q`, so
that the penalty keeps the fraction :math:`\tau` of each group's raw distance.

With ``constraint="equalized_odds"`` (``"equal_opportunity"``) the (group, label) *cells* take
the place of the groups, for both labels (for :math:`y = 1` only): the scores of group :math:`a`
among its rows with :math:`Y = y` are pulled to :math:`\bar p_y`, the barycenter of the groups'
warm-start scores given :math:`Y = y`, as COT and DOT do (``fairot.classification``). Cells are
numbered label-major: cell ``t * n_groups + a`` for the ``t``-th moved label.

Both need fixed targets, one sorted row per cell (:meth:`set_cell_targets`; ``FairTrainer``
builds them after its warm-up with :func:`build_cell_targets`), around the one shared target
that the default penalty takes alone (:func:`barycenter_target`; :func:`fix_targets` fixes
either). DOT and Sinkhorn compare each
cell with its target here; COT runs its pass cell by cell (:mod:`._cells_cot`), except
under ``pairing="diagonal"`` (``MSG_COT_CELLS``).
"""

from __future__ import annotations

import numpy as np
import torch

from fairot.torch.penalty._cells_cot import cot_cells
from fairot.torch.penalty._checks import check_group_codes
from fairot.torch.penalty._transport import group_layout, sinkhorn_to_target, sorted_quantiles
from fairot.transport import (
    MAX_TARGET_LEVELS,
    barycenter_quantiles,
    build_target,
    check_tau,
    geodesic_targets,
    midpoint_grid,
    quantile_function,
)
from fairot.utils.sensitive import check_sensitive_features

CONSTRAINTS = ("demographic_parity", "equalized_odds", "equal_opportunity")
MSG_CONSTRAINT = "constraint must be one of {options}; got {value!r}."
MSG_TAU_CONSTRAINT = (
    "tau > 0 (a tolerance towards the target) is for constraint='demographic_parity'; "
    "got tau={tau!r} with constraint={constraint!r}."
)
MSG_COT_CELLS = (
    "method='cot' with pairing='diagonal' supports only one shared target: tau={tau!r} with "
    "constraint={constraint!r} is not implemented for it; use pairing='all' (or tau=0 with "
    "constraint='demographic_parity')."
)
MSG_NO_CELL_TARGETS = (
    "tau={tau!r} with constraint={constraint!r} needs fixed per-cell targets: call "
    "set_cell_targets (FairTrainer does so after its warm-up: warmup_epochs > 0, "
    "fix_target=True)."
)
MSG_CELL_TARGETS = (
    "cell targets must be a 2-D array of scores in [0, 1] with {n_cells} rows (one per "
    "{cells}); got {value}."
)
MSG_SOFT_LABELS = (
    "constraint={constraint!r} moves the scores given each label: y must hold labels 0/1, not "
    "soft labels."
)
MSG_EMPTY_CELL = (
    "group {group} has no rows with y={label} in the training data; constraint={constraint!r} "
    "moves each group's scores given each label, so every group needs rows of each moved label."
)
MSG_LABELS = (
    "constraint={constraint!r} needs the batch's labels: pass labels, a tensor of 0/1 of shape "
    "(n,) on the scores' device; got {value}."
)


def constraint_labels(constraint: str) -> tuple[int, ...]:
    """The labels whose cells are moved (``(0,)`` stands for all rows under parity)."""
    return {"equalized_odds": (0, 1), "equal_opportunity": (1,)}.get(constraint, (0,))


def check_cell_options(method: str, constraint, tau, pairing: str = "all") -> tuple[str, float]:
    """``constraint`` and ``tau`` checked together, and against the estimator."""
    if constraint not in CONSTRAINTS:
        raise ValueError(MSG_CONSTRAINT.format(options=CONSTRAINTS, value=constraint))
    tau = check_tau(tau)
    if tau > 0 and constraint != "demographic_parity":
        raise ValueError(MSG_TAU_CONSTRAINT.format(tau=tau, constraint=constraint))
    if method == "cot" and pairing == "diagonal" and (tau > 0 or constraint != CONSTRAINTS[0]):
        raise ValueError(MSG_COT_CELLS.format(tau=tau, constraint=constraint))
    return constraint, tau


def check_cell_targets(targets, n_cells: int, dtype: torch.dtype) -> torch.Tensor:
    """The per-cell targets as a (n_cells, m) tensor with sorted rows."""
    t = torch.as_tensor(np.asarray(targets, dtype=np.float64))
    if (
        t.ndim != 2
        or t.shape[0] != n_cells
        or t.shape[1] == 0
        or not bool(((t >= 0) & (t <= 1)).all())
    ):
        raise ValueError(
            MSG_CELL_TARGETS.format(
                n_cells=n_cells, cells="(label, group) cell, label-major", value=tuple(t.shape)
            )
        )
    return torch.sort(t, dim=1).values.to(dtype)


def cell_codes(
    group_codes: torch.Tensor, labels, constraint: str, n_groups: int
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Each row's cell code, and the rows kept (``None``: all); labels ``None`` under parity."""
    if constraint == "demographic_parity":
        return group_codes, None
    if (
        not isinstance(labels, torch.Tensor)
        or labels.shape != group_codes.shape
        or labels.device != group_codes.device
        or not bool(((labels == 0) | (labels == 1)).all())
    ):
        value = type(labels).__name__ if not isinstance(labels, torch.Tensor) else labels.shape
        raise ValueError(MSG_LABELS.format(constraint=constraint, value=value))
    y = labels.long()
    if constraint == "equal_opportunity":
        keep = y == 1
        return group_codes[keep], keep
    return y * n_groups + group_codes, None


def cell_penalty(
    scores: torch.Tensor,
    cells: torch.Tensor,
    targets: torch.Tensor,
    method: str,
    reg_strength: float,
    max_iter: int,
    tol: float,
) -> torch.Tensor:
    r""":math:`\sum_c W_1` (or :math:`W_1^\varepsilon`) of each present cell to its own target.

    A cell of :math:`k` batch scores is compared with its target's quantiles at the :math:`k`
    midpoint levels :math:`(i + 1/2)/k`; the exact :math:`W_1` pairs them in sorted order.
    """
    targets = targets.to(device=scores.device, dtype=scores.dtype)
    total = scores.new_zeros(())
    for c in torch.unique(cells).tolist():
        s = scores[cells == c]
        k = s.shape[0]
        levels = (torch.arange(k, device=scores.device, dtype=scores.dtype) + 0.5) / k
        t = sorted_quantiles(targets[c], levels)
        if method == "dot":
            total = total + (torch.sort(s).values - t).abs().mean()
        else:
            zeros = torch.zeros(k, dtype=torch.long, device=scores.device)
            counts = torch.tensor([k], device=scores.device)
            layout = group_layout(s, zeros, counts)
            total = total + sinkhorn_to_target(s, layout, t, reg_strength, max_iter, tol)
    return total


def cell_forward(penalty, scores: torch.Tensor, group_codes: torch.Tensor, labels) -> torch.Tensor:
    """The penalty's call with one fixed target per cell (``tau > 0`` or a label constraint)."""
    if penalty.cell_targets.numel() == 0:
        raise ValueError(MSG_NO_CELL_TARGETS.format(tau=penalty.tau, constraint=penalty.constraint))
    check_group_codes(group_codes, penalty.n_groups)
    cells, keep = cell_codes(group_codes, labels, penalty.constraint, penalty.n_groups)
    scores = scores if keep is None else scores[keep]
    penalty.last_target = penalty.cell_targets
    if penalty.method == "cot":
        return cot_cells(penalty, scores, cells, penalty.cell_targets)
    return cell_penalty(
        scores, cells, penalty.cell_targets, penalty.method, penalty.reg_strength,
        penalty.sinkhorn_max_iter, penalty.sinkhorn_tol,
    )  # fmt: skip


def barycenter_target(
    scores: np.ndarray, member: np.ndarray, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """The sorted :math:`W_1` barycenter of the groups' scores (the target fixed after warm-up).

    With ``sample_weight`` (one group per row) the group quantiles are weighted.
    """
    if (member.sum(axis=1) == 1).all():
        encoding = check_sensitive_features(member.argmax(axis=1), scores.shape[0], min_groups=1)
        return build_target("barycenter", scores, encoding, sample_weight)
    # Overlapping groups: the same barycenter (median of the group quantiles on a midpoint
    # grid, as build_target), read from the membership columns.
    rows = [np.flatnonzero(member[:, a]) for a in range(member.shape[1])]
    u = midpoint_grid(int(min(max(r.shape[0] for r in rows), MAX_TARGET_LEVELS)))
    curves = np.stack([quantile_function(scores[r], u) for r in rows])
    return np.sort(barycenter_quantiles(curves, p=1))


def build_cell_targets(
    scores: np.ndarray,
    membership: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None,
    constraint: str,
    tau: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The shared barycenter (sorted) and one target row per cell, on one common grid.

    Parity: each group's :func:`~fairot.transport.geodesic_targets` point at ``tau``. A label
    constraint: for each moved label, the barycenter of the groups' scores on its rows, read at
    the midpoint levels of the longest one (which leaves that one unchanged).
    """
    shared = barycenter_target(scores, membership, sample_weight)
    n_groups = membership.shape[1]
    if constraint == "demographic_parity":
        rows = [np.flatnonzero(membership[:, a]) for a in range(n_groups)]
        weights = None if sample_weight is None else [sample_weight[r] for r in rows]
        return shared, np.stack(
            geodesic_targets(shared, [scores[r] for r in rows], tau, group_weights=weights)
        )
    targets = []
    for label in constraint_labels(constraint):
        on = y == label
        if not (membership[on].any(axis=0)).all():
            missing = int(np.flatnonzero(~membership[on].any(axis=0))[0])
            raise ValueError(
                MSG_EMPTY_CELL.format(group=missing, label=label, constraint=constraint)
            )
        weights = None if sample_weight is None else sample_weight[on]
        targets.append(barycenter_target(scores[on], membership[on], weights))
    levels = midpoint_grid(max(t.shape[0] for t in targets))
    common = [quantile_function(t, levels, assume_sorted=True) for t in targets]
    return shared, np.repeat(np.stack(common), n_groups, axis=0)


def fix_targets(
    penalty,
    scores: np.ndarray,
    membership: np.ndarray,
    y: torch.Tensor,
    sample_weight: np.ndarray | None,
) -> np.ndarray:
    """Fix the penalty's target(s) to the warm model's ``scores``; returns the shared barycenter.

    The default penalty takes the barycenter as its one target (as before); one with ``tau > 0``
    or a label constraint takes :func:`build_cell_targets`' rows (labels must then be 0/1).
    """
    if not penalty.uses_cells:
        shared = barycenter_target(scores, membership, sample_weight)
        penalty.set_target(shared)
        return shared
    y = y.double().cpu().numpy()
    if penalty.constraint != "demographic_parity" and not np.isin(y, (0.0, 1.0)).all():
        raise ValueError(MSG_SOFT_LABELS.format(constraint=penalty.constraint))
    shared, rows = build_cell_targets(
        scores, membership, y, sample_weight, penalty.constraint, penalty.tau
    )
    penalty.set_cell_targets(rows)
    return shared


def resize_cell_targets(module, state_dict, prefix, *args) -> None:
    """A load_state_dict pre-hook: the ``cell_targets`` buffer takes the loaded shape."""
    loaded = state_dict.get(prefix + "cell_targets")
    if loaded is not None and loaded.shape != module.cell_targets.shape:
        module.cell_targets = torch.empty_like(module.cell_targets).resize_(loaded.shape)
