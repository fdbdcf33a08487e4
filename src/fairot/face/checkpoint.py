"""Checkpoints of :class:`~fairot.face.MetaBalancedTrainer`: what they hold and how to read one.

A checkpoint is the trainer's ``state_dict()`` written atomically by
:meth:`~fairot.face.MetaBalancedTrainer.save_checkpoint` (the shared
:class:`fairot.torch.trainers.CheckpointedTrainer`); :func:`read_checkpoint` reads one back,
verified, without a trainer (``fairot face train`` inspects a checkpoint before it builds one).
"""

from __future__ import annotations

from pathlib import Path

from fairot.torch.trainers import CHECKPOINT_FIT_ERROR, CHECKPOINT_READ_ERROR
from fairot.torch.trainers import read_checkpoint as read_trainer_checkpoint

__all__ = ["CHECKPOINT_FIT_ERROR", "CHECKPOINT_KEYS", "CHECKPOINT_READ_ERROR", "read_checkpoint"]

#: Keys every checkpoint written by :meth:`MetaBalancedTrainer.save_checkpoint` holds.
CHECKPOINT_KEYS = (
    "step",
    "model",
    "loss",
    "optimizer",
    "margin_optimizer",
    "train_rng",
    "meta_rng",
)


def read_checkpoint(path: str | Path, *, map_location=None) -> dict:
    """Read a checkpoint written by :meth:`MetaBalancedTrainer.save_checkpoint`, verified.

    Parameters
    ----------
    path : str or Path
    map_location : str or torch.device, optional
        As :func:`torch.load`.

    Returns
    -------
    dict
        The trainer's :meth:`~MetaBalancedTrainer.state_dict`.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is truncated, corrupt or not a trainer checkpoint (the message names it).

    Examples
    --------
    >>> import tempfile, pathlib, torch
    >>> from fairot.face import MLP, GroupMarginLoss, MetaBalancedTrainer
    >>> from fairot.face.checkpoint import read_checkpoint
    >>> trainer = MetaBalancedTrainer(
    ...     MLP(8, embedding_size=4, hidden_sizes=(16,)),
    ...     GroupMarginLoss(16, 4, 4, anchor_loss="softmax"), random_state=0)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "checkpoint.pt"
    >>> trainer.save_checkpoint(path)
    >>> read_checkpoint(path)["step"]
    0
    """
    return read_trainer_checkpoint(path, CHECKPOINT_KEYS, map_location=map_location)
