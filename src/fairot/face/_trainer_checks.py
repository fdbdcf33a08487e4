"""The trainer's argument checks and error messages (its device check serves the config too)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

__all__ = [
    "DEVICE_ERROR",
    "GROUP_WEIGHTS_ERROR",
    "LOOKAHEAD_ERROR",
    "META_LOSS_TYPE_ERROR",
    "NAN_LOSS_ERROR",
    "NUMBER_ERROR",
    "check_choice",
    "check_count",
    "check_device",
    "check_group_weights",
    "check_number",
    "resolve_lookahead",
]

NAN_LOSS_ERROR = (
    "the training loss became {value} at step {step} (learning rate {lr:g}, margins {margins}). "
    "Likely cause: the learning rate or the scale s is too large for this model, or the inputs "
    "contain NaN/inf; lower learning_rate or the loss's scale, or check the data."
)
META_LOSS_TYPE_ERROR = (
    "meta_loss needs a GroupMarginLoss training loss with learnable margins; got {loss}."
)
LOOKAHEAD_ERROR = (
    "lookahead must be 'all', a positive int (the last k parameter tensors of the model) or a "
    "non-empty list of the model's parameter names; got {value!r}."
)
NUMBER_ERROR = "{name} must be {what}; got {value!r}."
GROUP_WEIGHTS_ERROR = "group_weights must be one non-negative weight per group; got {value!r}."
DEVICE_ERROR = (
    "device={value!r} is not usable here ({reason}); use device='cpu' or run on a machine with "
    "that accelerator."
)


def check_number(value, name: str, *, low: float = 0.0, strict: bool = False) -> float:
    """``value`` as a float, refusing a bool, a non-finite number or one below ``low``."""
    ok = (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and math.isfinite(value)
        and (value > low if strict else value >= low)
    )
    if not ok:
        what = f"a finite number {'>' if strict else '>='} {low}"
        raise ValueError(NUMBER_ERROR.format(name=name, what=what, value=value))
    return float(value)


def check_count(value, name: str, *, low: int, integers: tuple = (int, np.integer)) -> int:
    """``value`` as an int >= ``low``, refusing a bool, a float or a type not in ``integers``."""
    if isinstance(value, bool) or not isinstance(value, integers) or value < low:
        raise ValueError(NUMBER_ERROR.format(name=name, what=f"an int >= {low}", value=value))
    return int(value)


def check_device(device) -> torch.device:
    """``torch.device(device)``, refusing one that cannot hold a tensor here (no GPU, bad name)."""
    try:
        resolved = torch.device(device)
        torch.empty(0, device=resolved)
    except (RuntimeError, AssertionError, TypeError) as exc:
        # torch raises AssertionError ("not compiled with CUDA") or a multi-line RuntimeError.
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(DEVICE_ERROR.format(value=str(device), reason=reason)) from None
    return resolved


def check_choice(value, name: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``."""
    if value not in choices:
        what = " or ".join(repr(c) for c in choices)
        raise ValueError(NUMBER_ERROR.format(name=name, what=what, value=value))
    return value


def check_group_weights(group_weights, device: torch.device) -> torch.Tensor | None:
    """One finite non-negative weight per group, as a tensor on ``device`` (``None`` stays)."""
    if group_weights is None:
        return None
    weights = torch.as_tensor(np.asarray(group_weights, dtype=float))
    if weights.ndim != 1 or bool((weights < 0).any()) or not bool(torch.isfinite(weights).all()):
        raise ValueError(GROUP_WEIGHTS_ERROR.format(value=group_weights))
    return weights.to(device)


def resolve_lookahead(model: nn.Module, lookahead) -> list[str]:
    """The names of the model parameters the look-ahead updates (see ``lookahead``)."""
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    if isinstance(lookahead, str):
        if lookahead == "all":
            return names
        raise ValueError(LOOKAHEAD_ERROR.format(value=lookahead))
    if isinstance(lookahead, int) and not isinstance(lookahead, bool):
        if lookahead < 1:
            raise ValueError(LOOKAHEAD_ERROR.format(value=lookahead))
        return names[-lookahead:]
    chosen = list(lookahead)
    if not chosen or any(n not in names for n in chosen):
        raise ValueError(LOOKAHEAD_ERROR.format(value=lookahead))
    return chosen
