r"""Telling a diverged training run from a trained model, for :class:`FairTrainer`.

A step size far too large (Adam with ``learning_rate=1e6``) rarely makes the loss non-finite:
the logits run to :math:`\pm 10^{6}` and stay finite, every score is exactly 0 or 1, and the
returned "classifier" is a hard one with no gradient left to move it. ``COTClassifier`` and
``DOTClassifier`` raise :class:`~fairot.classification.DivergenceError` for the same failure;
this module gives the torch loop the same three signals, measured against the model it started
from:

- the loss (checked at every step by the trainer) or a parameter is non-finite;
- a logit is non-finite, or every logit is beyond :data:`SATURATED_LOGIT` while the starting
  model's were not;
- an epoch's mean cross-entropy exceeds :data:`LOSS_BLOWUP_FACTOR` times the start's (or
  :math:`\log 2`, the cross-entropy of the constant score 1/2, when the start was better).

Internal surface (for :mod:`fairot.torch`'s trainer): ``DivergenceMonitor``,
``default_adam``, ``advice``, ``SATURATED_LOGIT``, ``LOSS_BLOWUP_FACTOR``, ``MSG_SATURATED``,
``MSG_LOSS_BLOWUP``, ``MSG_LOGITS_NOT_FINITE``, ``MSG_PARAMETER_NOT_FINITE``,
``MSG_FIRST_STEP_OVERFLOW``, ``MSG_WEIGHT_DECAY``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from fairot.exceptions import DivergenceError

# Past |logit| = 110 float32's sigmoid is exactly 0 or 1 on every backend (it reaches 0 from
# -88.7 where exp flushes to zero, -103.3 with subnormals; 1 from 16.7), so the scores are hard
# labels and the penalty's gradient through them is 0. A cross-entropy fit never gets there: its
# gradient on a correct row decays as exp(-|logit|), so logits grow only logarithmically.
SATURATED_LOGIT = 110.0
# A mean cross-entropy of 10 log 2 ~ 6.9 nats is that of a model confidently wrong on most rows;
# the constant score 1/2 has log 2, and the penalty alone pulls towards a constant, not past it.
LOSS_BLOWUP_FACTOR = 10.0

ADVICE = "Lower learning_rate (now {lr:g})"
ADVICE_LAM = " or lam (now {lam:g})"
MSG_SATURATED = (
    "training diverged at epoch {epoch}: every logit of the {where} is beyond +-{bound:g} "
    "(the smallest |logit| is {smallest:.3g}; the starting model's was {start:.3g}), so every "
    "score is exactly 0 or 1 and no gradient is left. {advice}."
)
MSG_LOSS_BLOWUP = (
    "training diverged at epoch {epoch}: the mean cross-entropy rose to {bce:.3g}, more than "
    "{factor:g} times the starting model's {start:.3g} (or log 2, if larger). {advice}."
)
MSG_FIRST_STEP_OVERFLOW = (
    "training would diverge at its first step: Adam's first step, learning_rate / (1 - beta1) "
    "= {step:g}, overflows the parameters' {dtype} (largest {largest:g}). {advice}."
)
MSG_WEIGHT_DECAY = "weight_decay must be at most {largest:g} (the largest {dtype}); got {value!r}."
MSG_LOGITS_NOT_FINITE = (
    "training diverged at epoch {epoch}: {count} of the {n} logits of the {where} are "
    "non-finite (the parameters are so large that the network overflows). {advice}."
)
MSG_PARAMETER_NOT_FINITE = (
    "training diverged at epoch {epoch}: parameter {name!r} became non-finite. {advice}."
)


def advice(learning_rate: float, lam: float) -> str:
    """What to lower: the step size, and ``lam`` once the penalty is on."""
    text = ADVICE.format(lr=learning_rate)
    return text + ADVICE_LAM.format(lam=lam) if lam > 0 else text


def default_adam(
    params: list[torch.Tensor], learning_rate: float, weight_decay: float, dtype: torch.dtype
) -> torch.optim.Adam:
    """Adam, refused where its first step would overflow the parameters' dtype.

    Torch computes the first step as ``learning_rate / (1 - beta1)`` and the decay term as
    ``weight_decay * param`` in the parameters' dtype; past its largest value
    (``learning_rate`` above about 3.4e37 in float32) ``opt.step()`` fails with an overflow
    RuntimeError from inside Adam that names neither argument.
    """
    optimizer = torch.optim.Adam(params, lr=learning_rate, weight_decay=weight_decay)
    beta1 = optimizer.defaults["betas"][0]
    largest = torch.finfo(dtype).max
    step = learning_rate / (1.0 - beta1)
    if not step <= largest:
        raise DivergenceError(
            MSG_FIRST_STEP_OVERFLOW.format(
                step=step, dtype=dtype, largest=largest, advice=advice(learning_rate, 0.0)
            )
        )
    if not weight_decay <= largest:
        raise ValueError(MSG_WEIGHT_DECAY.format(largest=largest, dtype=dtype, value=weight_decay))
    return optimizer


def _logits(model: nn.Module, X: torch.Tensor, batch_size: int = 8192) -> torch.Tensor:
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = [
            model(X[start : start + batch_size]).reshape(-1)
            for start in range(0, X.shape[0], batch_size)
        ]
    model.train(was_training)
    return torch.cat(out) if out else X.new_empty(0)


def _smallest_abs(logits: torch.Tensor) -> float:
    return float(logits.abs().min()) if logits.numel() else 0.0


@dataclass(frozen=True)
class DivergenceMonitor:
    """The starting model's statistics, and the checks against them.

    Parameters
    ----------
    start_logit : float
        Smallest |logit| of the starting model on the training rows.
    start_bce : float
        Its mean cross-entropy on them.
    learning_rate : float
        Named in the advice.
    """

    start_logit: float
    start_bce: float
    learning_rate: float

    @classmethod
    def start(
        cls, model: nn.Module, X: torch.Tensor, y: torch.Tensor, learning_rate: float
    ) -> DivergenceMonitor:
        """Measure the model before its first step (one forward pass, in eval mode)."""
        logits = _logits(model, X)
        bce = F.binary_cross_entropy_with_logits(logits, y) if logits.numel() else logits.sum()
        return cls(_smallest_abs(logits), float(bce), float(learning_rate))

    @property
    def _saturation_checked(self) -> bool:
        # A model handed over already saturated is the user's; only a run that saturates it
        # is divergence.
        return self.start_logit <= SATURATED_LOGIT

    def _not_finite(self, n_bad: int, logits, epoch: int, lam: float, where: str):
        return DivergenceError(
            MSG_LOGITS_NOT_FINITE.format(
                epoch=epoch,
                count=n_bad,
                n=logits.numel(),
                where=where,
                advice=advice(self.learning_rate, lam),
            )
        )

    def _check_logits(self, logits: torch.Tensor, epoch: int, lam: float, where: str) -> None:
        n_bad = int((~torch.isfinite(logits)).sum())
        if n_bad:
            raise self._not_finite(n_bad, logits, epoch, lam, where)
        smallest = _smallest_abs(logits)
        if self._saturation_checked and smallest > SATURATED_LOGIT:
            raise DivergenceError(
                MSG_SATURATED.format(
                    epoch=epoch,
                    where=where,
                    bound=SATURATED_LOGIT,
                    smallest=smallest,
                    start=self.start_logit,
                    advice=advice(self.learning_rate, lam),
                )
            )

    def penalty(
        self, penalty: nn.Module, logits: torch.Tensor, groups, epoch: int, lam: float, labels=None
    ):
        """``penalty(sigmoid(logits), groups)``, with non-finite logits a ``DivergenceError``.

        The penalty refuses non-finite scores with a ``ValueError`` about its input; in the loop
        they mean that the last step overflowed the network, which is the step size's fault.
        The logits are only inspected when the penalty refused them (no sync otherwise).
        """
        try:
            if labels is None:
                return penalty(torch.sigmoid(logits), groups)
            return penalty(torch.sigmoid(logits), groups, labels=labels)
        except ValueError:
            n_bad = int((~torch.isfinite(logits)).sum())
            if not n_bad:
                raise
            raise self._not_finite(n_bad, logits, epoch, lam, "batch") from None

    def check_epoch(
        self, model: nn.Module, epoch: int, lam: float, bce: float, last_logits: torch.Tensor
    ) -> None:
        """Raise ``DivergenceError`` if the epoch ended diverged.

        Parameters
        ----------
        model : torch.nn.Module
            Its parameters must be finite.
        epoch : int
        lam : float
            The epoch's penalty weight (named in the advice).
        bce : float
            The epoch's mean (importance-weighted) cross-entropy.
        last_logits : Tensor
            The logits of the epoch's last batch: any non-finite, or all of them saturated, is
            divergence.
        """
        named = list(model.named_parameters())
        if named:
            finite = torch.stack([torch.isfinite(p).all() for _, p in named]).tolist()
            for (name, _), ok in zip(named, finite, strict=True):
                if not ok:
                    raise DivergenceError(
                        MSG_PARAMETER_NOT_FINITE.format(
                            epoch=epoch, name=name, advice=advice(self.learning_rate, lam)
                        )
                    )
        reference = max(self.start_bce, math.log(2.0))
        if bce > LOSS_BLOWUP_FACTOR * reference:
            raise DivergenceError(
                MSG_LOSS_BLOWUP.format(
                    epoch=epoch,
                    bce=bce,
                    factor=LOSS_BLOWUP_FACTOR,
                    start=self.start_bce,
                    advice=advice(self.learning_rate, lam),
                )
            )
        self._check_logits(last_logits.detach(), epoch, lam, "last batch")

    def check_model(self, model: nn.Module, X: torch.Tensor, epoch: int, lam: float) -> None:
        """Raise ``DivergenceError`` if the model overflows or saturates every training row.

        Called on the warm model before its scores fix the target, and on the returned model.
        """
        self._check_logits(_logits(model, X), epoch, lam, "training data")
