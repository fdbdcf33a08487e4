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

import os
from collections.abc import Iterable

import torch
import torch.distributed as dist

__all__ = ["all_reduce_mean_", "broadcast_", "init_from_environment", "rank_and_world"]


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
    """
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1 or not dist.is_available():
        return False, device
    if device.startswith("cuda") and ":" not in device:
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
    if dist.is_initialized():
        return False, device
    if device.startswith("cuda"):
        torch.cuda.set_device(torch.device(device))
    dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")
    return True, device
