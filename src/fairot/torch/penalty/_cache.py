"""What the penalty keeps between calls: the batch's groups, a fixed target's quantiles."""

from __future__ import annotations

from typing import NamedTuple

import torch

from fairot.torch.penalty._cot import GroupTerms, TargetTerms


class BatchGroups(NamedTuple):
    """A batch's group codes and what the penalty derives from them.

    ``codes`` is a copy (the caller may write new codes into its tensor); ``terms`` are COT's.
    """

    codes: torch.Tensor
    dtype: torch.dtype
    counts: torch.Tensor
    max_count: int
    terms: GroupTerms | None


class FixedTarget:
    """A fixed target's quantiles at the ``m`` midpoint levels, and (COT) their terms.

    ``key`` is ``(m, dtype, device, inference mode)`` of the call that made them: tensors made
    under ``torch.inference_mode`` cannot be saved for backward (DOT and Sinkhorn do) outside it.
    """

    def __init__(self, key: tuple, samples: torch.Tensor):
        self.key = key
        self.samples = samples
        self.terms: TargetTerms | None = None


def clear_caches_after_load(module, incompatible_keys) -> None:
    # A load_state_dict post-hook (module level, so that the penalty stays picklable): runs when
    # the penalty's own load_state_dict or that of a module holding it has copied new buffers.
    module.clear_caches()
