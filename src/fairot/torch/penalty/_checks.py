"""The checks of :class:`~fairot.torch.WassersteinParityPenalty` and their messages.

Validation costs one host sync per call: the scores' range (which COT reads together with its
entropic exponent check after its pass, before it writes anything), and one more when the group
codes differ from the last call's. :func:`check_inputs` therefore returns the range as tensors,
not yet read, and :func:`host_values` reads several 0-d tensors in one transfer.

Internal surface (for :mod:`._penalty`): the ``MSG_*`` templates, :data:`METHODS`,
:data:`MAX_PAIRS`, :data:`MAX_ENTROPIC_EXPONENT` and the functions below.
"""

from __future__ import annotations

import numpy as np
import torch

from fairot.exceptions import DivergenceError

METHODS = ("cot", "dot", "sinkhorn")
MSG_OPTION = "{name} must be one of {options}; got {value!r}."
MSG_POSITIVE = "{name} must be a positive {kind}; got {value!r}."
MSG_TARGET = (
    "target must be 'barycenter' or a 1-D tensor or array of target scores in [0, 1]; got {value}."
)
MSG_SCORES = "scores must be a 1-D floating-point tensor; got {value}."
MSG_SCORE_RANGE = (
    "scores must be finite and in [0, 1] (pass probabilities, e.g. torch.sigmoid(logits)); "
    "got values in [{low}, {high}]."
)
MSG_GROUPS = (
    "group_codes must be a 1-D integer tensor of the same length as scores ({n}); got {value}."
)
MSG_GROUP_RANGE = (
    "group_codes must hold codes in [0, n_groups={n_groups}); got values in [{low}, {high}]."
)
MSG_DEVICE = (
    "scores, group_codes and the penalty's buffers must be on one device; got scores on "
    "{scores}, group_codes on {groups}, penalty on {penalty}. Move the penalty with "
    "penalty.to(scores.device)."
)
MSG_TARGET_BATCH = (
    "target_samples must be a 1-D tensor of target scores in [0, 1]{extra}; got {value}."
)
MSG_TOO_MANY_PAIRS = (
    "method={method!r} compares every score of a group with each of the target's {m} samples: "
    "{pairs:,} pairs in this call, above the {limit:,} that one call may hold in memory (several "
    "{pairs:,}-element temporaries). Call the penalty on mini-batches, as in training{advice}; "
    "for a whole data set's fairness use fairot.metrics (wass1), which needs no pairs."
)
MSG_DUAL_OVERFLOW = (
    "the COT dual exponent (lambda_S(s) + lambda_target(t) - |s - t|) / lambda reached {z:.3g}: "
    "the dual potentials diverged (the entropic exp() would overflow). Lower dual_step_size "
    "(epsilon_lambda, now {dual:g}) or raise reg_strength (lambda, now {lam:g})."
)

# Pairs (score, target sample) one COT or Sinkhorn call may hold: each of its few temporaries of
# this many elements is then 0.5 GiB in float32. Training batches hold a few thousand pairs.
MAX_PAIRS = 2**27
# Same bound as the numba kernel (fairot.classification's MAX_ENTROPIC_EXPONENT): exp(40) is far
# past any density ratio of a coupling on [0, 1].
MAX_ENTROPIC_EXPONENT = 40.0


def describe(value) -> str:
    """A tensor's or an array's shape (and dtype), or the repr of anything else, for messages."""
    if isinstance(value, torch.Tensor):
        return f"tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    return repr(value) if not hasattr(value, "shape") else f"array of shape {value.shape}"


def host_values(values: tuple[torch.Tensor, ...]) -> list:
    """Python numbers of 0-d tensors: one transfer from an accelerator, no stacking on the CPU."""
    if values[0].device.type == "cpu":
        return [v.item() for v in values]
    return torch.stack(values).tolist()


def check_positive(name: str, value, kind: type, kind_name: str) -> None:
    """Raise unless ``value`` is a positive instance of ``kind`` (booleans refused)."""
    if isinstance(value, bool) or not isinstance(value, kind) or not value > 0:
        raise ValueError(MSG_POSITIVE.format(name=name, kind=kind_name, value=value))


def check_option(name: str, value, options: tuple) -> None:
    """Raise unless ``value`` is one of ``options``."""
    if value not in options:
        raise ValueError(MSG_OPTION.format(name=name, options=options, value=value))


def check_target(target, dtype: torch.dtype) -> torch.Tensor:
    """The constructor's (or :meth:`set_target`'s) target, sorted; empty for ``"barycenter"``."""
    if isinstance(target, str):
        if target != "barycenter":
            raise ValueError(MSG_TARGET.format(value=repr(target)))
        return torch.empty(0, dtype=dtype)
    try:
        t = torch.as_tensor(
            np.asarray(target, dtype=np.float64)
            if not isinstance(target, torch.Tensor)
            else target.detach().cpu().double()
        )
    except (TypeError, ValueError):
        raise ValueError(MSG_TARGET.format(value=describe(target))) from None
    if t.ndim != 1 or t.numel() == 0 or not bool(((t >= 0) & (t <= 1)).all()):
        raise ValueError(MSG_TARGET.format(value=describe(target)))
    return torch.sort(t).values.to(dtype)


def check_inputs(scores, groups, penalty_device: torch.device) -> tuple[torch.Tensor, ...]:
    """Types, shapes and devices; returns the scores' (min, max), not yet read.

    The range is read by :func:`check_score_range` at once, or by COT together with its
    exponent check after the pass: one transfer from an accelerator instead of two. COT's
    pass is safe on any scores (NaN, out of [0, 1]) and writes nothing before the check.
    """
    if not isinstance(scores, torch.Tensor) or scores.ndim != 1 or not scores.is_floating_point():
        raise TypeError(MSG_SCORES.format(value=describe(scores)))
    if (
        not isinstance(groups, torch.Tensor)
        or groups.ndim != 1
        or groups.shape[0] != scores.shape[0]
        or groups.is_floating_point()
        or groups.dtype == torch.bool
    ):
        raise TypeError(MSG_GROUPS.format(n=scores.shape[0], value=describe(groups)))
    if scores.shape[0] == 0:
        raise ValueError(MSG_SCORES.format(value="an empty tensor"))
    device = scores.device
    if device != groups.device or device != penalty_device:
        raise ValueError(
            MSG_DEVICE.format(scores=device, groups=groups.device, penalty=penalty_device)
        )
    return torch.aminmax(scores.detach())


def check_score_range(low: float, high: float) -> None:
    """Raise unless ``low`` and ``high`` (the scores' range, read) lie in [0, 1]."""
    # NaN fails both comparisons, so a non-finite score is caught too.
    if not (low >= 0.0 and high <= 1.0):
        raise ValueError(MSG_SCORE_RANGE.format(low=low, high=high))


def check_group_codes(groups: torch.Tensor, n_groups: int) -> None:
    """Raise unless every code is in ``[0, n_groups)`` (one host sync)."""
    low, high = host_values(torch.aminmax(groups))
    if not (low >= 0 and high < n_groups):
        raise ValueError(MSG_GROUP_RANGE.format(n_groups=n_groups, low=low, high=high))


def check_target_batch(
    target_samples, n: int, dtype: torch.dtype, device: torch.device, diagonal: bool
) -> torch.Tensor:
    """A call's ``target_samples``, detached, in the scores' dtype and on their device."""
    extra = f" with one entry per score ({n}) under pairing='diagonal'" if diagonal else ""
    if (
        not isinstance(target_samples, torch.Tensor)
        or target_samples.ndim != 1
        or target_samples.numel() == 0
        or (diagonal and target_samples.shape[0] != n)
    ):
        raise ValueError(MSG_TARGET_BATCH.format(extra=extra, value=describe(target_samples)))
    t = target_samples.detach().to(device=device, dtype=dtype)
    if not bool(((t >= 0) & (t <= 1)).all()):
        raise ValueError(MSG_TARGET_BATCH.format(extra=extra, value="values outside [0, 1]"))
    return t


def check_pair_count(method: str, rows: int, m: int, diagonal: bool) -> None:
    """Raise when a call would hold more than :data:`MAX_PAIRS` (row, target sample) pairs.

    ``rows`` is the batch's length for COT's all-pairs terms ``(n, M)``, and the number of groups
    times the largest group's count for Sinkhorn's padded cost ``(G, max_count, M)``.
    """
    if method == "dot" or diagonal or rows * m <= MAX_PAIRS:
        return
    advice = ", or use method='dot' (no pairs)"
    if method == "cot":
        advice = ", pairing='diagonal' (one target sample per score)" + advice
    raise ValueError(
        MSG_TOO_MANY_PAIRS.format(
            method=method, m=m, pairs=rows * m, limit=MAX_PAIRS, advice=advice
        )
    )


def check_dual_exponent(z_max: float, dual_step_size: float, reg_strength: float) -> None:
    """Raise :class:`~fairot.exceptions.DivergenceError` when COT's exponent passed the bound."""
    if not z_max <= MAX_ENTROPIC_EXPONENT:
        raise DivergenceError(
            MSG_DUAL_OVERFLOW.format(z=z_max, dual=dual_step_size, lam=reg_strength)
        )
