"""What a :class:`~fairot.torch.FairTrainer` checkpoint holds between two epochs.

Besides the model and the penalty: the loop's counters and early-stopping state (:class:`Run`),
the optimiser and its schedule, the batch generator, torch's generators (dropout), the
divergence monitor's reference values, the fixed target. Restored into a fresh ``fit``, they
make the resumed run draw the same batches and take the same steps as the uninterrupted one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from fairot.torch.trainers._divergence import DivergenceMonitor

__all__ = ["CHECKPOINT_KEYS", "Run", "loop_state", "restore_loop"]

#: Keys every checkpoint written by :meth:`FairTrainer.save_checkpoint` holds.
CHECKPOINT_KEYS = ("epoch", "model", "penalty", "run")


@dataclass
class Run:
    """The loop's counters and early-stopping state between two epochs."""

    epoch: int = 0  # epochs done
    lam: float = 0.0  # the last epoch's penalty weight
    history: list = field(default_factory=list)
    best_value: float = np.inf
    best_state: tuple | None = None
    stale: int = 0
    # The training scores when the penalty started: the reference of the collapse check.
    start_scores: torch.Tensor | None = None
    # The same model's scores on the eval_set rows (None without one): the held-out reference.
    start_eval_scores: torch.Tensor | None = None


def _plain_rng_state(state: tuple) -> tuple:
    # The legacy generator's key is a uint32 array: as a list of ints, the checkpoint holds
    # plain data that torch.load(weights_only=True) rebuilds without NumPy's globals.
    name, key, *rest = state
    return (name, key.tolist(), *rest)


def _tensor_or_none(array: np.ndarray | None) -> torch.Tensor | None:
    return None if array is None else torch.from_numpy(np.array(array))


def loop_state(trainer, run: Run, opt, scheduler, rng, monitor) -> dict[str, Any]:
    """The loop's state after ``run.epoch`` epochs, as plain containers and tensors."""
    return {
        "run": asdict(run),
        "optimizer": opt.state_dict(),
        "scheduler": None if scheduler is None else scheduler.state_dict(),
        "batch_rng": _plain_rng_state(rng.get_state()),
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        "monitor": asdict(monitor),
        "target_samples": _tensor_or_none(trainer.target_samples_),
        "best_epoch": trainer.best_epoch_,
        "n_steps": trainer.n_steps_,
    }


def restore_loop(trainer, loop: dict[str, Any], run: Run, opt, scheduler, rng) -> DivergenceMonitor:
    """Put :func:`loop_state` back into a fresh fit's objects; returns its divergence monitor."""
    for key, value in loop["run"].items():
        setattr(run, key, value)
    opt.load_state_dict(loop["optimizer"])
    if scheduler is not None and loop["scheduler"] is not None:
        scheduler.load_state_dict(loop["scheduler"])
    name, key, *rest = loop["batch_rng"]
    rng.set_state((name, np.asarray(key, dtype=np.uint32), *rest))
    torch.set_rng_state(loop["torch_rng"])
    if loop.get("cuda_rng") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(loop["cuda_rng"])
    target = loop["target_samples"]
    trainer.target_samples_ = None if target is None else target.numpy()
    trainer.best_epoch_ = loop["best_epoch"]
    trainer.n_steps_ = loop["n_steps"]
    return DivergenceMonitor(**loop["monitor"])
