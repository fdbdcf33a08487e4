"""Batch samplers: group-balanced meta batches with positive pairs, and plain random batches.

They yield index arrays (NumPy, no torch): a loop indexes its data with them, as with
pytorch-metric-learning's samplers. Their state is the random generator's, for checkpoints.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["BalancedGroupSampler", "RandomBatchSampler"]

SAMPLER_INPUT_ERROR = (
    "labels and group_codes must be 1-D integer arrays of the same length; got shapes {lab} and "
    "{grp}."
)
BATCH_SIZE_ERROR = (
    "batch_size={batch_size} must be a positive multiple of n_groups * samples_per_identity "
    "= {unit} (n_groups={n_groups})."
)
TOO_FEW_ERROR = (
    "group {group} has no identity with at least samples_per_identity={k} samples; "
    "a balanced meta batch needs positive pairs in every group."
)
RANDOM_BATCH_ERROR = "batch_size must be in [1, n_samples={n}]; got {batch_size!r}."


def _as_generator(random_state: Any) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)


class BalancedGroupSampler:
    """Meta batches with ``batch_size / n_groups`` samples of each group (Section IV of MBN).

    Each group's share is made of ``samples_per_identity`` images of each of several identities, so
    that every sample has a positive pair for the meta skewness loss.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Identity of each sample.
    group_codes : array-like of shape (n_samples,)
        Group code of each sample, ``0 .. n_groups - 1``.
    batch_size : int
        Total meta batch size :math:`n`; a multiple of ``n_groups * samples_per_identity``.
    samples_per_identity : int, default=2
    n_batches : int, optional
        Batches per iteration (``len(sampler)``); defaults to ``n_samples // batch_size``.
    random_state : int, numpy Generator or None

    Notes
    -----
    Identities are drawn without replacement within a batch, with replacement across batches; images
    of an identity are drawn without replacement when it has enough.

    Examples
    --------
    Three groups, batches of 12: four samples of each group, two per identity:

    >>> import numpy as np
    >>> from fairot.torch.samplers import BalancedGroupSampler
    >>> labels = np.repeat(np.arange(30), 3)
    >>> groups = labels % 3
    >>> sampler = BalancedGroupSampler(labels, groups, 12, n_batches=5, random_state=0)
    >>> batch = next(iter(sampler))
    >>> np.bincount(groups[batch]).tolist()
    [4, 4, 4]
    >>> np.unique(labels[batch], return_counts=True)[1].tolist()
    [2, 2, 2, 2, 2, 2]
    >>> len(sampler)
    5
    """

    def __init__(
        self,
        labels,
        group_codes,
        batch_size: int,
        *,
        samples_per_identity: int = 2,
        n_batches: int | None = None,
        random_state=None,
    ) -> None:
        labels = np.asarray(labels)
        group_codes = np.asarray(group_codes)
        if (
            labels.ndim != 1
            or labels.shape != group_codes.shape
            or not np.issubdtype(labels.dtype, np.integer)
            or not np.issubdtype(group_codes.dtype, np.integer)
        ):
            raise ValueError(SAMPLER_INPUT_ERROR.format(lab=labels.shape, grp=group_codes.shape))
        self.n_groups = int(group_codes.max()) + 1
        self.samples_per_identity = int(samples_per_identity)
        unit = self.n_groups * self.samples_per_identity
        if isinstance(batch_size, bool) or batch_size < unit or batch_size % unit:
            raise ValueError(
                BATCH_SIZE_ERROR.format(batch_size=batch_size, unit=unit, n_groups=self.n_groups)
            )
        self.batch_size = int(batch_size)
        self.ids_per_group = self.batch_size // unit
        self._members: list[list[np.ndarray]] = []
        for g in range(self.n_groups):
            in_g = np.flatnonzero(group_codes == g)
            ids, inverse = np.unique(labels[in_g], return_inverse=True)
            members = [in_g[inverse == i] for i in range(len(ids))]
            members = [m for m in members if len(m) >= self.samples_per_identity]
            if not members:
                raise ValueError(TOO_FEW_ERROR.format(group=g, k=self.samples_per_identity))
            self._members.append(members)
        self.n_batches = n_batches if n_batches is not None else max(1, len(labels) // batch_size)
        self.rng = _as_generator(random_state)

    def sample_batch(self) -> np.ndarray:
        """Indices of one balanced batch, shape (batch_size,), grouped by group then identity."""
        out = []
        for members in self._members:
            chosen = self.rng.choice(
                len(members), self.ids_per_group, replace=len(members) < self.ids_per_group
            )
            for i in chosen:
                out.append(self.rng.choice(members[i], self.samples_per_identity, replace=False))
        return np.concatenate(out)

    def __iter__(self) -> Iterator[np.ndarray]:
        for _ in range(self.n_batches):
            yield self.sample_batch()

    def __len__(self) -> int:
        return self.n_batches

    def state_dict(self) -> dict:
        """The random generator's state, for checkpoints that resume identically."""
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict`."""
        self.rng.bit_generator.state = state["rng"]


class RandomBatchSampler:
    """Uniformly random training batches, without replacement within a batch.

    Parameters
    ----------
    n_samples : int
    batch_size : int
    n_batches : int, optional
        Batches per iteration; defaults to one epoch, ``n_samples // batch_size``.
    random_state : int, numpy Generator or None

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.torch.samplers import RandomBatchSampler
    >>> sampler = RandomBatchSampler(10, 4, random_state=0)
    >>> batches = list(sampler)
    >>> len(batches), [len(np.unique(b)) for b in batches]
    (2, [4, 4])
    """

    def __init__(
        self, n_samples: int, batch_size: int, *, n_batches: int | None = None, random_state=None
    ) -> None:
        if isinstance(batch_size, bool) or not 1 <= batch_size <= n_samples:
            raise ValueError(RANDOM_BATCH_ERROR.format(n=n_samples, batch_size=batch_size))
        self.n_samples = int(n_samples)
        self.batch_size = int(batch_size)
        self.n_batches = n_batches if n_batches is not None else max(1, n_samples // batch_size)
        self.rng = _as_generator(random_state)

    def sample_batch(self) -> np.ndarray:
        """Indices of one batch, shape (batch_size,)."""
        return self.rng.choice(self.n_samples, self.batch_size, replace=False)

    def __iter__(self) -> Iterator[np.ndarray]:
        for _ in range(self.n_batches):
            yield self.sample_batch()

    def __len__(self) -> int:
        return self.n_batches

    state_dict = BalancedGroupSampler.state_dict
    load_state_dict = BalancedGroupSampler.load_state_dict
