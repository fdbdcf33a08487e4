r"""Batched 1-D transport between each group's scores and one target sample, in torch.

Everything here handles all groups of a mini-batch in one call, without a Python loop over
groups: the batch is laid out group by group (:class:`GroupLayout`), group quantiles are gathered
from it, the exact :math:`W_1` uses the monotone coupling on integer-valued quantile levels, and
Sinkhorn runs on a padded ``(n_groups, max_count, n_target)`` cost tensor. The mathematics is
that of :mod:`fairot.transport` (quantile functions, sorted couplings); the tests compare it with
POT.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import torch

from fairot.utils.stacklevel import user_stacklevel

MSG_SINKHORN_NOT_CONVERGED = (
    "Sinkhorn did not converge in {max_iter} iterations (marginal error {error:.3g} > tol "
    "{tol:g}); the penalty and its gradient are approximate. Raise sinkhorn_max_iter or "
    "reg_strength (epsilon, now {reg:g})."
)


class GroupLayout(NamedTuple):
    """The batch's scores sorted within groups, groups in label order.

    Attributes
    ----------
    order : Tensor of shape (n,)
        Positions in the batch of the sorted layout.
    counts : Tensor of shape (n_groups,)
        Number of scores of each group in the batch (0 for an absent group).
    offsets : Tensor of shape (n_groups,)
        Position of each group's first score in the layout.
    """

    order: torch.Tensor
    counts: torch.Tensor
    offsets: torch.Tensor


def group_layout(scores: torch.Tensor, groups: torch.Tensor, counts: torch.Tensor) -> GroupLayout:
    """Sort the batch by score, then stably by group: each group's scores, sorted, in a block.

    ``counts`` are the groups' counts in the batch (``torch.bincount(groups, minlength=G)``).
    """
    by_score = torch.sort(scores.detach(), stable=True).indices
    by_group = torch.sort(groups[by_score], stable=True).indices
    order = by_score[by_group]
    offsets = torch.cumsum(counts, 0) - counts
    return GroupLayout(order, counts, offsets)


def layout_ranks(layout: GroupLayout) -> tuple[torch.Tensor, torch.Tensor]:
    """Group and rank within the group of each laid-out score."""
    n_groups = layout.counts.shape[0]
    device = layout.counts.device
    laid_groups = torch.repeat_interleave(torch.arange(n_groups, device=device), layout.counts)
    rank = torch.arange(laid_groups.shape[0], device=device) - layout.offsets[laid_groups]
    return laid_groups, rank


def quantile_indices(layout: GroupLayout, levels: torch.Tensor) -> torch.Tensor:
    r"""Layout positions of the group quantiles :math:`Q_a(u) = s_{a,(\lceil u n_a\rceil)}`.

    The left-continuous inverse of the empirical CDF, as :func:`fairot.transport.quantile_function`;
    absent groups get position 0 (mask them with ``layout.counts > 0``). Shape
    ``(n_groups, len(levels))``.
    """
    n = layout.counts[:, None].to(levels.dtype)
    k = torch.ceil(levels[None, :] * n).long() - 1
    k = torch.clamp(torch.minimum(k, layout.counts[:, None] - 1), min=0)
    # An absent group's offset can be the batch's length (groups after the last present one).
    present = layout.counts[:, None] > 0
    return torch.where(present, layout.offsets[:, None] + k, torch.zeros_like(k))


def sorted_quantiles(sorted_samples: torch.Tensor, levels: torch.Tensor) -> torch.Tensor:
    r"""Quantiles :math:`Q(u)` of one sorted sample at ``levels`` (same convention as above)."""
    m = sorted_samples.shape[0]
    k = torch.ceil(levels * m).long() - 1
    return sorted_samples[torch.clamp(k, 0, m - 1)]


def batch_barycenter(
    scores: torch.Tensor, layout: GroupLayout, levels: torch.Tensor
) -> torch.Tensor:
    r"""The :math:`W_1` barycenter of the batch's groups at ``levels`` (detached).

    At each level the median of the present groups' quantiles with equal weights, averaging the
    two middle values on an even count, as :func:`fairot.transport.barycenter_quantiles` with
    ``p=1`` (the COT paper's target).
    """
    laid_out = scores.detach()[layout.order]
    q = laid_out[quantile_indices(layout, levels)]
    present = layout.counts > 0
    # Absent groups sort last as NaN, so the median is read among the present ones only.
    q = torch.where(present[:, None], q, torch.full_like(q, float("nan")))
    q = torch.sort(q, dim=0).values
    k = int(present.sum())
    return 0.5 * (q[(k - 1) // 2] + q[k // 2])


def exact_w1_to_target(
    scores: torch.Tensor, layout: GroupLayout, sorted_target: torch.Tensor
) -> torch.Tensor:
    r"""Per-group exact :math:`W_1` between the batch's groups and one target sample.

    :math:`W_1(\hat p_a, \hat p_{\bar S}) = \int_0^1 |Q_a(u) - Q_{\bar S}(u)|\,du` summed over
    the joint breakpoints of the two quantile functions: the optimal 1-D coupling :math:`T^*_a`
    of Eq. (8) of the COT paper (the sorted matching when the sizes agree). The levels are kept
    as integers over the common denominator :math:`n_a M`, so tied breakpoints are found exactly.
    Differentiable in ``scores``: the gradient in :math:`s_i` is
    :math:`\sum_j T^*_a(i, j)\,\mathrm{sign}(s_i - \bar s_j)`, DOT's update.

    Returns
    -------
    Tensor of shape ()
        The sum over the groups present in the batch.
    """
    device = scores.device
    m = sorted_target.shape[0]
    counts = layout.counts
    present = counts > 0
    if bool((counts[present] == m).all()):
        # Equal sizes (balanced batches): T*_a is the sorted matching, mass 1/M per pair.
        laid_out = scores[layout.order]
        return (laid_out - sorted_target.repeat(int(present.sum()))).abs().sum() / m
    laid_groups, rank = layout_ranks(layout)
    # Breakpoints k/n_a (k = 1..n_a) of the group, and l/M (l = 1..M) of the target for each
    # present group, as integers k*M and l*n_a.
    group_levels = (rank + 1) * m
    present = torch.nonzero(present).squeeze(1)
    target_groups = present.repeat_interleave(m)
    target_levels = (torch.arange(1, m + 1, device=device).repeat(present.shape[0])) * counts[
        target_groups
    ]
    all_groups = torch.cat([laid_groups, target_groups])
    all_levels = torch.cat([group_levels, target_levels])
    is_group = torch.cat(
        [
            torch.ones_like(group_levels, dtype=torch.bool),
            torch.zeros_like(target_levels, dtype=torch.bool),
        ]
    )
    span = int(counts.max()) * m + 1
    order = torch.sort(all_groups * span + all_levels, stable=True).indices
    g, lev, flag = all_groups[order], all_levels[order], is_group[order]
    start = torch.cumsum(counts + (counts > 0) * m, 0) - (counts + (counts > 0) * m)
    # Breakpoints of each kind strictly before this one within its group: the quantile index
    # on the interval that ends here.
    before_g = torch.cumsum(flag.long(), 0) - flag.long()
    before_t = torch.cumsum((~flag).long(), 0) - (~flag).long()
    first = start[g]
    n_group_before = before_g - before_g[first]
    n_target_before = before_t - before_t[first]
    prev = torch.where(
        torch.arange(lev.shape[0], device=device) == first, torch.zeros_like(lev), lev.roll(1)
    )
    width = (lev - prev).to(scores.dtype) / (counts[g] * m).to(scores.dtype)
    ia = layout.offsets[g] + torch.minimum(n_group_before, counts[g] - 1)
    it = torch.clamp(n_target_before, max=m - 1)
    laid_out = scores[layout.order]
    return (width * (laid_out[ia] - sorted_target[it]).abs()).sum()


def sinkhorn_to_target(
    scores: torch.Tensor,
    layout: GroupLayout,
    target: torch.Tensor,
    reg: float,
    max_iter: int,
    tol: float,
) -> torch.Tensor:
    r"""Per-group entropic :math:`W_1` (log-domain Sinkhorn) to one target sample.

    .. math::

        W_1^\varepsilon(\hat p_a, \hat p_{\bar S}) = \min_{P \in \Pi(\mathbf 1/n_a, \mathbf 1/M)}
        \langle P, C\rangle + \varepsilon\,\mathrm{KL}(P \,\|\, \mathbf 1/n_a \otimes
        \mathbf 1/M), \qquad C_{ij} = |s_i - \bar s_j|,

    the dual value :math:`\langle f, a\rangle + \langle g, b\rangle` at the Sinkhorn fixed point.
    The potentials are iterated without a graph; a last half-step in ``f`` carries the gradient,
    which by the envelope theorem is :math:`\sum_j P_{ij}\,\mathrm{sign}(s_i - \bar s_j)`, DOT's
    update with the entropic plan. It tends to the exact :math:`W_1` as :math:`\varepsilon \to 0`.

    Returns
    -------
    Tensor of shape ()
        The sum over the groups present in the batch.
    """
    n_groups = layout.counts.shape[0]
    width = int(layout.counts.max())
    dtype, device = scores.dtype, scores.device
    laid_groups, rank = layout_ranks(layout)
    padded = torch.zeros(n_groups, width, dtype=dtype, device=device)
    valid = torch.zeros(n_groups, width, dtype=torch.bool, device=device)
    valid[laid_groups, rank] = True
    counts = layout.counts.to(dtype)
    log_a = torch.where(
        valid,
        -torch.log(counts.clamp(min=1))[:, None].expand(n_groups, width),
        torch.full((n_groups, width), float("-inf"), dtype=dtype, device=device),
    )
    log_b = -torch.log(torch.tensor(float(target.shape[0]), dtype=dtype, device=device))

    def cost(s_padded: torch.Tensor) -> torch.Tensor:
        return (s_padded[:, :, None] - target[None, None, :]).abs()

    with torch.no_grad():
        padded[laid_groups, rank] = scores.detach()[layout.order]
        c = cost(padded)
        f = torch.zeros(n_groups, width, dtype=dtype, device=device)
        g = torch.zeros(n_groups, target.shape[0], dtype=dtype, device=device)
        error = float("inf")
        for it in range(max_iter):
            f = -reg * torch.logsumexp((g[:, None, :] - c) / reg + log_b, dim=2)
            g = -reg * torch.logsumexp((f[:, :, None] - c) / reg + log_a[:, :, None], dim=1)
            if it % 10 == 9 or it == max_iter - 1:
                # Columns are exact after the g-step; the rows' mass error measures convergence.
                row = torch.logsumexp((f[:, :, None] + g[:, None, :] - c) / reg + log_b, dim=2)
                error = float(((row.exp() - 1.0).abs() * log_a.exp()).sum(dim=1).max())
                if error <= tol:
                    break
    if error > tol:
        warnings.warn(
            MSG_SINKHORN_NOT_CONVERGED.format(max_iter=max_iter, error=error, tol=tol, reg=reg),
            RuntimeWarning,
            # Reached through forward, nn.Module's call wrappers and (for constraint cells) one
            # more frame: count the frames instead of assuming a depth.
            stacklevel=user_stacklevel(),
        )
    s_padded = torch.zeros(n_groups, width, dtype=dtype, device=device).index_put(
        (laid_groups, rank), scores[layout.order]
    )
    f_last = -reg * torch.logsumexp((g[:, None, :] - cost(s_padded)) / reg + log_b, dim=2)
    a = torch.where(valid, log_a.exp(), torch.zeros_like(f_last))
    value = (a * torch.where(valid, f_last, torch.zeros_like(f_last))).sum(dim=1)
    value = value + g.sum(dim=1) * log_b.exp()
    return torch.where(layout.counts > 0, value, torch.zeros_like(value)).sum()
