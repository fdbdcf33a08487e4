r"""Data-parallel training over ``torch.distributed`` (DDP-style), for MetaBalancedTrainer.

Every rank draws the same global batches (samplers seeded alike) and trains on its slice of the
training batch; gradients of the model are averaged with ``all_reduce`` as DDP does. The meta step
stays identical on every rank: the look-ahead uses the averaged training gradient, every rank
embeds the whole (small, balanced) meta batch, so the hardest-triplet mining sees the same batch
as a single process, and each rank's share of the meta gradient
:math:`-\alpha\,\partial_m \langle v, \nabla_w L^T_r(w; m)\rangle` is averaged too (the mean
over ranks of the local training losses is the loss of the global batch, so the result is Eq.
(10) of [1]_ for the global batch). Only rank 0 writes checkpoints.

References
----------
.. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
"""

from __future__ import annotations

import datetime
import os
import sys
from collections.abc import Iterable

import torch
import torch.distributed as dist

__all__ = [
    "RENDEZVOUS_TIMEOUT_S",
    "all_reduce_mean_",
    "broadcast_",
    "init_from_environment",
    "rank_and_world",
]

#: Seconds a rank waits for the others to join (and, once joined, for any collective):
#: stated in the message printed before the wait, instead of torch's silent 30 minutes.
RENDEZVOUS_TIMEOUT_S = 600
STRAY_RANK_ERROR = (
    "RANK={rank} is set but WORLD_SIZE is {world}: this process was not started by a "
    "distributed launcher, so it is not rank {rank} of anything. Unset RANK to train in one "
    "process, or train with several processes by fairot face train --nproc N (torchrun)."
)
WORLD_ENV_ERROR = (
    "{name}={value!r} in the environment must be {what}; it is set by torchrun (fairot face "
    "train --nproc N). Unset WORLD_SIZE and RANK to train in one process."
)
MISSING_ENV_ERROR = (
    "WORLD_SIZE={world} asks for distributed training but {names} not set; torchrun sets "
    "them all (fairot face train --nproc N). Unset WORLD_SIZE and RANK to train in one process."
)
WAITING_MESSAGE = (
    "fairot: rank {rank} of {world} waits up to {timeout} s for the other processes at "
    "{address}:{port}..."
)
RENDEZVOUS_ERROR = (
    "rank {rank} of {world}: the other processes did not join at {address}:{port} within "
    "{timeout} s ({reason}). Start every rank (torchrun, or fairot face train --nproc N), or "
    "unset WORLD_SIZE and RANK to train in one process."
)


def _env_int(name: str, default: int, minimum: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise ValueError(
            WORLD_ENV_ERROR.format(name=name, value=value, what=f"an integer >= {minimum}")
        )
    return number


def rank_and_world() -> tuple[int, int]:
    """``(rank, world_size)`` of the initialised default process group, else ``(0, 1)``."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def all_reduce_mean_(tensors: Iterable[torch.Tensor]) -> None:
    """Average tensors across ranks, in place, with one flat all-reduce per dtype."""
    _, world = rank_and_world()
    tensors = list(tensors)
    if world == 1 or not tensors:
        return
    by_dtype: dict[torch.dtype, list[torch.Tensor]] = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    for group in by_dtype.values():
        flat = torch.cat([t.reshape(-1) for t in group])
        dist.all_reduce(flat)
        flat /= world
        offset = 0
        for t in group:
            t.copy_(flat[offset : offset + t.numel()].view_as(t))
            offset += t.numel()


def broadcast_(tensors: Iterable[torch.Tensor], src: int = 0) -> None:
    """Copy rank ``src``'s values into every rank's tensors, in place."""
    _, world = rank_and_world()
    if world == 1:
        return
    with torch.no_grad():
        for t in tensors:
            dist.broadcast(t, src)


def init_from_environment(device: str) -> tuple[bool, str]:
    """Join the process group ``torchrun`` describes in the environment, if any.

    Parameters
    ----------
    device : str
        The configured device; ``"cuda"`` becomes ``"cuda:LOCAL_RANK"`` and selects NCCL,
        anything else gloo.

    Returns
    -------
    initialised_here : bool
        Whether this call created the process group (then the caller destroys it).
    device : str
        The device this rank trains on.

    Raises
    ------
    ValueError
        If ``RANK`` is non-zero without ``WORLD_SIZE`` > 1 (no launcher started this process),
        if ``WORLD_SIZE``, ``RANK`` or the rendezvous address are malformed or missing, or if
        the other ranks do not join within :data:`RENDEZVOUS_TIMEOUT_S` seconds; a rank
        says on stderr that it waits, and for how long, before it waits.
    """
    world = _env_int("WORLD_SIZE", 1, 1)
    rank = _env_int("RANK", 0, 0)
    if world <= 1:
        if rank != 0:
            raise ValueError(STRAY_RANK_ERROR.format(rank=rank, world=world))
        return False, device
    if rank >= world:
        raise ValueError(
            WORLD_ENV_ERROR.format(name="RANK", value=str(rank), what=f"below WORLD_SIZE={world}")
        )
    if not dist.is_available():
        return False, device
    if device.startswith("cuda") and ":" not in device:
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
    if dist.is_initialized():
        return False, device
    missing = [name for name in ("MASTER_ADDR", "MASTER_PORT") if not os.environ.get(name)]
    if missing:
        names = " and ".join(missing) + (" are" if len(missing) > 1 else " is")
        raise ValueError(MISSING_ENV_ERROR.format(world=world, names=names))
    if device.startswith("cuda"):
        torch.cuda.set_device(torch.device(device))
    where = {"address": os.environ["MASTER_ADDR"], "port": os.environ["MASTER_PORT"]}
    said = {"rank": rank, "world": world, "timeout": RENDEZVOUS_TIMEOUT_S, **where}
    print(WAITING_MESSAGE.format(**said), file=sys.stderr, flush=True)
    try:
        dist.init_process_group(
            backend="nccl" if device.startswith("cuda") else "gloo",
            timeout=datetime.timedelta(seconds=RENDEZVOUS_TIMEOUT_S),
        )
    except RuntimeError as exc:  # torch.distributed.DistNetworkError, DistStoreError: timeouts
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(RENDEZVOUS_ERROR.format(**said, reason=reason)) from None
    return True, device
