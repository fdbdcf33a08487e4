"""Training loops: the fair trainer and what every fairot loop shares, one room.

:class:`FairTrainer` (``_fair_trainer.py``) trains any PyTorch binary classifier with
:class:`~fairot.torch.WassersteinParityPenalty`: group-balanced batches, a ``lam`` schedule, the
target fixed after a warm-up, early stopping on validation Wass1. Its private rooms: ``_checks.py``
(its arguments), ``_data.py`` (``X``/``y``/``group_codes`` checks, membership, row weights, the
batch plan and its weighted draws, validation metrics), ``_state.py`` (what a checkpoint holds
between two epochs) and ``_divergence.py`` (a diverged run told from a trained one).

Beside it, the base that :class:`FairTrainer` and :class:`fairot.face.MetaBalancedTrainer`
share (``_base.py``): the hooks of :class:`Callback` and :class:`CheckpointedTrainer`'s
all-or-nothing checkpoints, read back weights-only (:func:`read_checkpoint`) and checked
against the SHA-256 manifest written beside each (``_checkpoint_files.py``:
:func:`manifest_path`, :func:`verify_manifest`, :func:`plain_state`).

The room imports the penalty (:mod:`fairot.torch.penalty`), never the other way round;
:mod:`fairot.torch` re-exports :class:`FairTrainer`.
"""

from fairot.torch.trainers._base import (
    CHECKPOINT_FIT_ERROR,
    CHECKPOINT_MANIFEST_ERROR,
    CHECKPOINT_MISMATCH_ERROR,
    CHECKPOINT_NO_MANIFEST_ERROR,
    CHECKPOINT_READ_ERROR,
    CHECKPOINT_STATE_ERROR,
    CHECKPOINT_UNSAFE_ERROR,
    Callback,
    CheckpointedTrainer,
    first_line,
    manifest_path,
    plain_state,
    read_checkpoint,
    resolve_seed,
    verify_manifest,
)
from fairot.torch.trainers._fair_trainer import FairTrainer

__all__ = [
    "CHECKPOINT_FIT_ERROR",
    "CHECKPOINT_MANIFEST_ERROR",
    "CHECKPOINT_MISMATCH_ERROR",
    "CHECKPOINT_NO_MANIFEST_ERROR",
    "CHECKPOINT_READ_ERROR",
    "CHECKPOINT_STATE_ERROR",
    "CHECKPOINT_UNSAFE_ERROR",
    "Callback",
    "CheckpointedTrainer",
    "FairTrainer",
    "first_line",
    "manifest_path",
    "plain_state",
    "read_checkpoint",
    "resolve_seed",
    "verify_manifest",
]
