"""The trainer's view of a data set: ``(inputs, labels, groups)`` tensors or a torch Dataset.

:func:`as_tensor_dataset` validates what a user passes to
:meth:`~fairot.face.MetaBalancedTrainer.fit` and wraps it in an object with ``labels``,
``groups`` (read once, for the samplers) and ``batch(indices, device)``; :class:`StepBatches`
draws each step's training and meta batches from them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from fairot.torch.samplers import BalancedGroupSampler, RandomBatchSampler

from ._distributed import all_reduce_mean_

__all__ = ["DATA_ERROR", "StepBatches", "as_tensor_dataset", "group_accuracy"]

DATA_ERROR = (
    "{name} must be a tuple (inputs, labels, groups) of equal-length tensors or arrays, or a "
    "torch Dataset whose items are (input, label, group); got {value}."
)


class _TensorData:
    """Indexable (inputs, labels, groups) tensors; fetches a batch by fancy indexing."""

    def __init__(self, inputs: torch.Tensor, labels: torch.Tensor, groups: torch.Tensor) -> None:
        self.inputs, self.labels, self.groups = inputs, labels, groups

    def __len__(self) -> int:
        return len(self.labels)

    def batch(self, idx: np.ndarray, device) -> tuple[torch.Tensor, ...]:
        idx_t = torch.as_tensor(idx, dtype=torch.long)
        return tuple(t[idx_t].to(device) for t in (self.inputs, self.labels, self.groups))


class _DatasetData:
    """A torch Dataset of (input, label, group) items; labels/groups read once."""

    def __init__(self, dataset, num_workers: int = 0) -> None:
        self.dataset = dataset
        self.num_workers = num_workers
        labels = getattr(dataset, "labels", None)
        groups = getattr(dataset, "groups", None)
        if labels is None or groups is None:
            items = [dataset[i] for i in range(len(dataset))]
            labels = [int(item[1]) for item in items]
            groups = [int(item[2]) for item in items]
        self.labels = torch.as_tensor(np.asarray(labels), dtype=torch.long)
        self.groups = torch.as_tensor(np.asarray(groups), dtype=torch.long)

    def __len__(self) -> int:
        return len(self.labels)

    def batch(self, idx: np.ndarray, device) -> tuple[torch.Tensor, ...]:
        if self.num_workers > 1:
            # Pillow releases the GIL while decoding, so threads load a batch in parallel.
            with ThreadPoolExecutor(self.num_workers) as pool:
                items = list(pool.map(lambda i: self.dataset[int(i)][0], idx))
        else:
            items = [self.dataset[int(i)][0] for i in idx]
        inputs = torch.stack([torch.as_tensor(item) for item in items])
        idx_t = torch.as_tensor(idx, dtype=torch.long)
        return inputs.to(device), self.labels[idx_t].to(device), self.groups[idx_t].to(device)


def as_tensor_dataset(data: Any, name: str = "data", num_workers: int = 0):
    """Wrap ``(inputs, labels, groups)`` or a Dataset for the trainer (validated)."""
    if isinstance(data, (_TensorData, _DatasetData)):
        return data
    if isinstance(data, (tuple, list)) and len(data) == 3:
        inputs, labels, groups = (
            a if torch.is_tensor(a) else torch.as_tensor(np.asarray(a)) for a in data
        )
        if not inputs.is_floating_point():
            inputs = inputs.float()
        if (
            inputs.ndim < 2
            or labels.ndim != 1
            or groups.ndim != 1
            or not len(inputs) == len(labels) == len(groups)
            or labels.is_floating_point()
            or groups.is_floating_point()
        ):
            raise ValueError(DATA_ERROR.format(name=name, value="mismatched shapes or dtypes"))
        return _TensorData(inputs, labels.long(), groups.long())
    if hasattr(data, "__getitem__") and hasattr(data, "__len__"):
        return _DatasetData(data, num_workers)
    raise ValueError(DATA_ERROR.format(name=name, value=type(data).__name__))


class StepBatches:
    """Each step's batches: this rank's slice of a global training batch, and a meta batch.

    Under ``torch.distributed`` every rank draws the same global batch of
    ``batch_size * world`` rows (the same seeds) and keeps its own slice; every rank embeds the
    whole group-balanced meta batch.

    Parameters
    ----------
    train : object returned by :func:`as_tensor_dataset`
    meta_data : (inputs, labels, groups) or Dataset, optional
        The balanced meta set; required when ``needs_meta``.
    batch_size : int
        Rows per rank.
    meta_batch_size : int or None
        Defaults to the global batch rounded down to a multiple of
        ``n_groups * samples_per_identity``.
    samples_per_identity : int
    rank, world : int
    train_rng, meta_rng : numpy.random.Generator
        The trainer's generators (checkpointed with it).
    needs_meta : bool
    num_workers : int
    """

    def __init__(
        self,
        train,
        meta_data,
        *,
        batch_size: int,
        meta_batch_size: int | None,
        samples_per_identity: int,
        rank: int,
        world: int,
        train_rng: np.random.Generator,
        meta_rng: np.random.Generator,
        needs_meta: bool,
        num_workers: int = 0,
    ) -> None:
        self.train = train
        self.train_sampler = RandomBatchSampler(
            len(train), batch_size * world, random_state=train_rng
        )
        self.share = slice(rank * batch_size, (rank + 1) * batch_size)
        self.meta = self.meta_sampler = None
        if needs_meta:
            if meta_data is None:
                raise ValueError(DATA_ERROR.format(name="meta_data", value=None))
            self.meta = as_tensor_dataset(meta_data, "meta_data", num_workers)
            n_groups = int(self.meta.groups.max()) + 1
            unit = n_groups * samples_per_identity
            size = meta_batch_size or max(unit, (batch_size * world // unit) * unit)
            self.meta_sampler = BalancedGroupSampler(
                self.meta.labels.numpy(),
                self.meta.groups.numpy(),
                size,
                samples_per_identity=samples_per_identity,
                random_state=meta_rng,
            )

    def draw(self, device, with_meta: bool) -> tuple[tuple, tuple | None]:
        """The next training batch, and a meta batch when ``with_meta`` and there is a meta set."""
        batch = self.train.batch(self.train_sampler.sample_batch()[self.share], device)
        meta_batch = None
        if self.meta_sampler is not None and with_meta:
            meta_batch = self.meta.batch(self.meta_sampler.sample_batch(), device)
        return batch, meta_batch


@torch.no_grad()
def group_accuracy(
    scores: torch.Tensor,
    labels: torch.Tensor,
    groups: torch.Tensor,
    n_groups: int | None,
    *,
    distributed: bool = False,
) -> list[float]:
    """Training accuracy of each group in a batch (NaN for a group with no row in it).

    Under ``torch.distributed`` the counts are all-reduced: the accuracy of the global batch.
    """
    correct = (scores.argmax(dim=1) == labels).to(torch.float64)
    n_groups = int(groups.max()) + 1 if n_groups is None else n_groups
    counts = torch.bincount(groups, minlength=n_groups).to(torch.float64)
    hits = torch.zeros(n_groups, dtype=torch.float64, device=scores.device).index_add(
        0, groups, correct
    )
    if distributed:
        all_reduce_mean_([hits, counts])  # the ratio is that of the global batch
    acc = torch.where(counts > 0, hits / counts.clamp_min(1), float("nan"))
    return acc.cpu().tolist()
