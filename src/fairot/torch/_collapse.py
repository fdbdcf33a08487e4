r"""Degenerate models in the torch loop: the penalty's watch and the trainer's final check.

Both read :func:`fairot.metrics.diagnose_collapse` (the one detector of every fairot
mitigation) and warn with :class:`fairot.exceptions.DegenerateModelWarning` at the user's line.
Why a warning and not an error: a constant or chance-ranking model is what the penalty asks
for when the sensitive attribute is the only signal, and a user may be sweeping ``lam`` on
purpose; the warning says what happened and what to change. (Numerical divergence, which no
setting makes right, stays a :class:`~fairot.exceptions.DivergenceError`.)

- :class:`CollapseWatch` — held by :class:`~fairot.torch.WassersteinParityPenalty`: every
  ``CHECK_EVERY`` training calls it reads the batch's scores (one host transfer) and warns once
  if their spread fell below a tenth of the reference: the fixed target, or (with the moving
  barycenter target) the widest batch it has read.
- :func:`warn_if_degenerate` — :class:`~fairot.torch.FairTrainer` (and through it
  :class:`~fairot.torch.FairMLPClassifier`) compares the returned model's scores with those of
  the model at the epoch the penalty started (spread and, for 0/1 labels, AUC), on the training
  rows and then on the ``eval_set`` rows: :func:`fairot.metrics.diagnose_fit`, the same check
  COT and DOT run at the end of their fit. An MLP can keep its ranking on the rows it fitted
  and lose it on rows it never saw.

Internal surface (for :mod:`fairot.torch`): ``CollapseWatch``, ``warn_if_degenerate``,
``start_scores``,
``CHECK_EVERY``, ``MIN_BATCH``, ``PENALTY_ADVICE``, ``TRAINER_ADVICE``.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

from fairot.exceptions import DegenerateModelWarning
from fairot.metrics import degenerate_model_message, diagnose_collapse, diagnose_fit
from fairot.utils.stacklevel import user_stacklevel

#: Training calls of the penalty between two reads of the batch's spread (one host sync each).
CHECK_EVERY = 50
#: A batch's spread is read only from this many scores on (a few scores have no spread to read).
MIN_BATCH = 32
PENALTY_ADVICE = (
    "a warm start (cross-entropy alone first), then a fixed target (set_target) and a smaller "
    "penalty weight ramped up over the epochs; watch the scores' spread and AUC each epoch "
    "(docs/torch.md)"
)
TRAINER_ADVICE = (
    "a smaller learning_rate (now {lr:g}) or lam (now {lam:g}), more warmup_epochs or "
    "lam_ramp_epochs, early stopping with eval_set"
)


class CollapseWatch:
    """The penalty's periodic check of its scores' spread (warns once per penalty).

    Attributes
    ----------
    enabled : bool
        ``FairTrainer`` turns it off during its fit (it checks the returned model itself).
    """

    def __init__(self) -> None:
        self.enabled = True
        self.calls = 0
        self.reference: np.ndarray | None = None
        self.warned = False

    def observe(self, scores: torch.Tensor, target: torch.Tensor | None) -> None:
        """Count a training call; every ``CHECK_EVERY`` calls, compare the batch's spread."""
        if not self.enabled or self.warned:
            return
        self.calls += 1
        if self.calls % CHECK_EVERY != 0 or scores.shape[0] < MIN_BATCH:
            return
        batch = scores.detach().double().cpu().numpy()
        if target is not None and target.numel() > 1:
            reference = target.detach().double().cpu().numpy()
        else:
            # A moving (batch) target follows the scores: the reference is the widest batch
            # seen. A loop that starts the penalty on an untrained model never had a spread to
            # lose: it needs a warm start (docs/torch.md), which this check cannot see.
            if self.reference is None or np.std(batch) > np.std(self.reference):
                self.reference = batch
            reference = self.reference
        diagnosis = diagnose_collapse(None, batch, start_scores=reference)
        if diagnosis.spread_collapsed:
            self.warned = True
            warnings.warn(
                degenerate_model_message("WassersteinParityPenalty", diagnosis, PENALTY_ADVICE),
                DegenerateModelWarning,
                stacklevel=user_stacklevel(),
            )


def start_scores(trainer, X, evaluation) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The model's scores on the training rows and on the ``eval_set`` rows (``None``: none)."""
    held = None if evaluation is None else torch.as_tensor(trainer.predict_scores(evaluation[0]))
    return torch.as_tensor(trainer.predict_scores(X)), held


def warn_if_degenerate(trainer, X, y, run, sample_weight, evaluation) -> None:
    """Warn if ``trainer``'s model collapsed against the model the penalty started from.

    ``run.start_scores`` (``run.start_eval_scores``) are the training (``eval_set``) scores when
    the penalty started (``None``: it never did, nothing to compare). Soft labels (a teacher's
    scores) are compared by their spread only.
    """
    if run.start_scores is None:
        return

    def labels(values: torch.Tensor) -> np.ndarray | None:
        values = values.double().cpu().numpy()
        return values if np.isin(values, (0.0, 1.0)).all() else None

    held_out = None
    if evaluation is not None and run.start_eval_scores is not None:
        Xv, yv, _ = evaluation

        def held_out():
            return labels(yv), trainer.predict_scores(Xv), run.start_eval_scores.numpy()

    diagnosis = diagnose_fit(
        labels(y),
        trainer.predict_scores(X),
        start_scores=run.start_scores.numpy(),
        sample_weight=sample_weight,
        held_out=held_out,
    )
    if diagnosis.collapsed:
        advice = TRAINER_ADVICE.format(lr=trainer.learning_rate, lam=run.lam)
        warnings.warn(
            degenerate_model_message("FairTrainer", diagnosis, advice),
            DegenerateModelWarning,
            stacklevel=user_stacklevel(),
        )
