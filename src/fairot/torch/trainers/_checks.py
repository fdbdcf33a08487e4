"""The argument checks of :class:`~fairot.torch.FairTrainer` (at construction, as sklearn's)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from torch import nn

from fairot.torch._device import check_device
from fairot.torch.penalty import WassersteinParityPenalty

__all__ = ["MSG_PARAM", "check_arguments", "check_count"]

MSG_PARAM = "{name} must be {expected}; got {value!r}."


def check_count(value, name: str, low: int) -> None:
    """Refuse ``value`` unless it is an integer (not a bool) >= ``low``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise ValueError(MSG_PARAM.format(name=name, expected=f"an integer >= {low}", value=value))


def check_arguments(
    *,
    model,
    penalty,
    lam,
    warmup_epochs,
    lam_ramp_epochs,
    n_epochs,
    batch_size,
    learning_rate,
    weight_decay,
    lr_schedule,
    monitor,
    patience,
    device,
) -> None:
    """Raise ``TypeError``/``ValueError`` naming the first argument of FairTrainer that is wrong."""
    if not isinstance(model, nn.Module):
        raise TypeError(MSG_PARAM.format(name="model", expected="a torch.nn.Module", value=model))
    if not isinstance(penalty, WassersteinParityPenalty):
        raise TypeError(
            MSG_PARAM.format(name="penalty", expected="a WassersteinParityPenalty", value=penalty)
        )
    if not callable(lam) and (isinstance(lam, bool) or not isinstance(lam, Real) or lam < 0):
        raise ValueError(
            MSG_PARAM.format(name="lam", expected="a non-negative number or a callable", value=lam)
        )
    for name, value, low in (
        ("warmup_epochs", warmup_epochs, 0),
        ("lam_ramp_epochs", lam_ramp_epochs, 0),
        ("n_epochs", n_epochs, 1),
        ("batch_size", batch_size, penalty.n_groups),
    ):
        check_count(value, name, low)
    for name, value in (("learning_rate", learning_rate), ("weight_decay", weight_decay)):
        if (
            isinstance(value, bool)
            or not isinstance(value, Real)
            or not (np.isfinite(value) and value >= 0)
        ):
            raise ValueError(
                MSG_PARAM.format(name=name, expected="a finite non-negative number", value=value)
            )
    if not callable(lr_schedule) and lr_schedule not in ("constant", "cosine"):
        raise ValueError(
            MSG_PARAM.format(
                name="lr_schedule",
                expected="'constant', 'cosine' or a callable",
                value=lr_schedule,
            )
        )
    if monitor not in ("wass1", "objective"):
        raise ValueError(
            MSG_PARAM.format(name="monitor", expected="'wass1' or 'objective'", value=monitor)
        )
    if patience is not None and (not isinstance(patience, Integral) or patience < 1):
        raise ValueError(
            MSG_PARAM.format(name="patience", expected="a positive integer or None", value=patience)
        )
    if device is not None:
        check_device(device)
