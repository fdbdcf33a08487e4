r"""COT with one fixed target per cell: Algorithm 1's pass, cell by cell.

Each cell :math:`c` (a group, or a (group, label) cell) has its own potentials
:math:`\lambda_{S_c}, \lambda_{\bar S,c}` (row ``c`` of the penalty's ``duals`` and
``target_duals``, which hold one row per cell) and its own target; the pass of
:func:`~fairot.torch.penalty._cot.cot_batch_terms` runs on each present cell against its target's
quantiles at the cell's :math:`k` midpoint levels. Every exponent is checked before any
potential is written, as on the shared-target path.
"""

from __future__ import annotations

import torch

from fairot.torch.penalty._checks import check_dual_exponent, check_score_range, host_values
from fairot.torch.penalty._cot import (
    cot_batch_terms,
    group_terms,
    target_terms,
    value_with_gradient,
)
from fairot.torch.penalty._transport import sorted_quantiles


def cot_cells(penalty, scores: torch.Tensor, cells: torch.Tensor, targets: torch.Tensor):
    r""":math:`\sum_c` COT's dual (7) of each present cell to its own target; one ascent each."""
    check_score_range(*host_values((scores.min(), scores.max())))
    call = (scores.dtype, scores.device, torch.is_inference_mode_enabled())
    features = penalty.feature_map_for(call)
    targets = targets.to(device=scores.device, dtype=scores.dtype)
    done = []
    for c in torch.unique(cells).tolist():
        mask = cells == c
        s = scores[mask]
        k = s.shape[0]
        levels = (torch.arange(k, device=scores.device, dtype=scores.dtype) + 0.5) / k
        t = sorted_quantiles(targets[c], levels)
        codes = torch.zeros(k, dtype=torch.long, device=scores.device)
        counts = torch.tensor([k], device=scores.device)
        terms = cot_batch_terms(
            s.detach(), group_terms(codes, counts, 1, s.dtype), target_terms(t, features, False),
            penalty.duals[c : c + 1], penalty.target_duals[c : c + 1], features,
            reg_strength=penalty.reg_strength, entropic=penalty.reg == "entropic",
            constrained=penalty.constrain_duals, diagonal=False, training=penalty.training,
        )  # fmt: skip
        done.append((c, s, terms))
    if penalty.reg == "entropic" and done:
        z_max = max(host_values(tuple(terms.z_max for _, _, terms in done)))
        check_dual_exponent(z_max, penalty.dual_step_size, penalty.reg_strength)
    total = scores.new_zeros(())
    step = penalty.dual_step_size * features.psi_scale
    for c, s, terms in done:
        if terms.ascent is not None:
            penalty.duals[c : c + 1].add_(terms.ascent, alpha=step)
            if penalty.constrain_duals:
                penalty.target_duals[c : c + 1].copy_(-penalty.duals[c : c + 1])
            else:
                penalty.target_duals[c : c + 1].add_(terms.target_ascent, alpha=step)
        total = total + value_with_gradient(s, terms.gradient, terms.offset)
    return total
