r"""The loop around :class:`WassersteinParityPenalty`: balanced batches, ``lam``, early stopping.

:meth:`FairTrainer.fit` reads as its steps, each a method: check the data, plan the batches
(:func:`~fairot.torch.trainers._data.batch_plan`), build the optimiser, start or resume the run;
then per epoch fix the target when the warm-up ends, train the epoch, validate (and keep the
best epoch); then finish (the best model back, the divergence and collapse checks, the history).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
import torch
from sklearn.utils import check_random_state
from torch import nn
from tqdm.auto import tqdm

from fairot.exceptions import DivergenceError
from fairot.torch._collapse import start_scores, warn_if_degenerate
from fairot.torch.penalty import WassersteinParityPenalty
from fairot.torch.penalty._cells import fix_targets
from fairot.torch.trainers._base import Callback, CheckpointedTrainer
from fairot.torch.trainers._checks import MSG_PARAM, check_arguments, check_count
from fairot.torch.trainers._data import (
    BatchPlan,
    as_tensor,
    batch_plan,
    check_data,
    check_row_weights,
    draw_rows,
    validation_metrics,
)
from fairot.torch.trainers._divergence import DivergenceMonitor, advice, default_adam
from fairot.torch.trainers._state import CHECKPOINT_KEYS, Run, loop_state, restore_loop

MSG_EVAL_SET = "eval_set must be a tuple (X, y, group_codes); got {value!r}."
MSG_NOT_FINITE = (
    "training diverged at epoch {epoch}, step {step}: the loss became {loss}. {advice}."
)


class _FitData(NamedTuple):
    """One fit's checked data: tensors on the training device, groups, weights, eval_set."""

    X: torch.Tensor
    y: torch.Tensor
    membership: np.ndarray
    sample_weight: np.ndarray | None
    evaluation: tuple | None  # (X, y, membership) of eval_set, checked as the training data


class FairTrainer(CheckpointedTrainer):
    r"""Train any PyTorch binary classifier with a strong demographic parity penalty.

    Each step draws a **group-balanced** batch (``batch_size // n_groups`` rows of every group,
    with replacement) and minimises

    .. math::

        \mathrm{BCE}_w(\text{logits}, y) + \text{lam}(e)\;
        \texttt{penalty}(\sigma(\text{logits}), \text{group\_codes}),

    where the cross-entropy is importance-weighted (a row of group :math:`a` weighs
    :math:`n_a / (k\,C\,n)`, :math:`k` rows per group, :math:`C` groups per row; with
    ``sample_weight``, rows are drawn in proportion to their weight and :math:`n_a`, :math:`n`
    are total weights), so that it
    stays an unbiased estimate of the population loss however small a group is. Training runs in
    two phases, as in the COT paper: ``warmup_epochs`` of cross-entropy alone give the unfair
    start :math:`\theta^*`; the target :math:`p_{\bar S}` is then fixed to the :math:`W_1`
    barycenter of the groups' training scores (with ``fix_target=True``), and the penalty is
    switched on with weight ``lam`` (ramped linearly over ``lam_ramp_epochs``, or any schedule
    given as a callable). With ``eval_set`` the trainer records validation Err-.5 and Wass1
    (:math:`\sum_a W_1` to the fixed target) each epoch, keeps the model of the epoch with the
    best monitored value, stops after ``patience`` epochs without improvement, and restores it.

    Parameters
    ----------
    model : torch.nn.Module
        Maps a batch of inputs ``(b, d)`` to logits ``(b,)`` or ``(b, 1)``. Trained in place.
    penalty : WassersteinParityPenalty
        The fairness penalty (its ``n_groups`` fixes the number of groups).
    lam : float or callable, default=1.0
        Penalty weight after the warm-up, or a function ``epoch -> weight`` (0-based epochs,
        called for every epoch, warm-up included: it overrides ``warmup_epochs``' zero weight).
    warmup_epochs : int, default=5
        Epochs of cross-entropy alone before the penalty starts (and the target is fixed).
    lam_ramp_epochs : int, default=0
        Epochs over which ``lam`` grows linearly from 0 after the warm-up.
    n_epochs : int, default=50
        Epochs in all; one epoch is ``ceil(n_samples / batch_size)`` steps.
    batch_size : int, default=256
        Rows per step (split equally between groups).
    learning_rate : float, default=1e-3
        Adam's step size.
    weight_decay : float, default=0.0
        Adam's weight decay.
    optimizer : callable, optional
        ``params -> torch.optim.Optimizer``, replacing Adam.
    lr_schedule : {"constant", "cosine"} or callable, default="constant"
        ``"cosine"``: after the warm-up the step size decays to 0 by the last epoch along a half
        cosine, so that the last epochs average the mini-batch noise of the penalty; a callable
        ``optimizer -> torch.optim.lr_scheduler.LRScheduler`` is stepped once per epoch.
    fix_target : bool, default=True
        Fix the target to the barycenter of the training scores at the end of the warm-up
        (when ``warmup_epochs > 0``).
        Otherwise the penalty keeps its own ``target`` (e.g. the moving batch barycenter).
        A penalty with ``tau > 0`` or a label ``constraint`` gets one target per cell instead
        (``WassersteinParityPenalty.set_cell_targets``; the labels are passed to its calls).
    monitor : {"wass1", "objective"}, default="wass1"
        Early-stopping criterion on ``eval_set``: validation Wass1 to the fixed target, or the
        validation cross-entropy plus ``lam`` times Wass1. Only penalised epochs are compared.
    patience : int or None, default=10
        Epochs without improvement before stopping; ``None`` trains all ``n_epochs``.
    device : str or torch.device, optional
        Where to train (default: the model's device): ``"cpu"``, ``"cuda"``, ``"cuda:N"``,
        ``"mps"`` or a ``torch.device``; one this machine lacks is a ``ValueError``.
    random_state : int, RandomState instance or None, default=None
        Seeds the batches.
    verbose : bool, default=False
        A progress bar over epochs.
    callbacks : sequence of fairot.torch.trainers.Callback, default=()
        Hooks called at the start, after every epoch, before every checkpoint and at the end.

    Attributes
    ----------
    history_ : pandas.DataFrame
        One row per epoch: ``epoch``, ``lam``, ``loss`` (mean training objective), ``bce``,
        ``penalty``, and with ``eval_set`` ``val_error`` (Err-.5), ``val_wass1``, ``val_bce``.
    target_samples_ : ndarray or None
        The fixed target (sorted), if any.
    best_epoch_ : int or None
        The epoch whose model was kept (``None`` without ``eval_set``).
    n_steps_ : int
        Optimiser steps taken.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from fairot.torch import FairTrainer, WassersteinParityPenalty
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 400)
    >>> X = np.column_stack([rng.normal(a, 1.0), a]).astype(np.float32)
    >>> y = (X[:, 0] + rng.normal(0, 1, 400) > 0.5).astype(np.float32)
    >>> _ = torch.manual_seed(0)
    >>> model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    >>> trainer = FairTrainer(model, WassersteinParityPenalty(2, method="dot"), lam=2.0,
    ...                       n_epochs=20, batch_size=64, random_state=0)
    >>> trainer.fit(X, y, a).history_.shape[0]
    20
    """

    def __init__(
        self,
        model: nn.Module,
        penalty: WassersteinParityPenalty,
        *,
        lam: float | Callable[[int], float] = 1.0,
        warmup_epochs: int = 5,
        lam_ramp_epochs: int = 0,
        n_epochs: int = 50,
        batch_size: int = 256,
        learning_rate: float = 1e-3,
        weight_decay: float = 0.0,
        optimizer: Callable | None = None,
        lr_schedule: Literal["constant", "cosine"] | Callable = "constant",
        fix_target: bool = True,
        monitor: Literal["wass1", "objective"] = "wass1",
        patience: int | None = 10,
        device: str | torch.device | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: bool = False,
        callbacks: Sequence[Callback] = (),
    ):
        check_arguments(
            model=model,
            penalty=penalty,
            lam=lam,
            warmup_epochs=warmup_epochs,
            lam_ramp_epochs=lam_ramp_epochs,
            n_epochs=n_epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            weight_decay=weight_decay,
            lr_schedule=lr_schedule,
            monitor=monitor,
            patience=patience,
            device=device,
        )
        self.model = model
        self.penalty = penalty
        self.lam = lam
        self.warmup_epochs = warmup_epochs
        self.lam_ramp_epochs = lam_ramp_epochs
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.optimizer = optimizer
        self.lr_schedule = lr_schedule
        self.fix_target = fix_target
        self.monitor = monitor
        self.patience = patience
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.callbacks = list(callbacks)
        self._loop = None  # (run, optimiser, schedule, batch generator, monitor) of the last fit
        self._resume = None  # a loaded checkpoint the next fit continues

    def lam_at(self, epoch: int) -> float:
        """The penalty weight of an epoch (0-based): 0 in the warm-up, then ``lam`` (ramped)."""
        if callable(self.lam):
            value = float(self.lam(epoch))
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(
                    MSG_PARAM.format(
                        name=f"lam({epoch})", expected="a finite non-negative weight", value=value
                    )
                )
            return value
        if epoch < self.warmup_epochs:
            return 0.0
        if self.lam_ramp_epochs > 0:
            return float(self.lam) * min(
                1.0, (epoch - self.warmup_epochs + 1) / self.lam_ramp_epochs
            )
        return float(self.lam)

    # ----------------------------------------------------------------- helpers
    def _device(self) -> torch.device:
        if self.device is not None:
            return torch.device(self.device)
        first = next(iter(self.model.parameters()), None)
        return first.device if first is not None else torch.device("cpu")

    def _dtype(self) -> torch.dtype:
        first = next(iter(self.model.parameters()), None)
        return first.dtype if first is not None else torch.get_default_dtype()

    def predict_scores(self, X, batch_size: int = 8192) -> np.ndarray:
        r"""Scores :math:`\sigma(\text{logits})` of the model, in eval mode, as a NumPy array."""
        device, dtype = self._device(), self._dtype()
        Xt = as_tensor(X, dtype, device)
        was_training = self.model.training
        self.model.eval()
        out = []
        with torch.no_grad():
            for start in range(0, Xt.shape[0], batch_size):
                logits = self.model(Xt[start : start + batch_size]).reshape(-1)
                out.append(torch.sigmoid(logits).double().cpu().numpy())
        self.model.train(was_training)
        return np.concatenate(out) if out else np.empty(0)

    def _scheduler(self, opt):
        if callable(self.lr_schedule):
            return self.lr_schedule(opt)
        if self.lr_schedule == "constant":
            return None
        start, end = self.warmup_epochs, self.n_epochs

        def factor(epoch: int) -> float:
            # LambdaLR calls this with the number of epochs done: full step through the warm-up.
            if epoch < start or end <= start:
                return 1.0
            return 0.5 * (1.0 + np.cos(np.pi * min(1.0, (epoch - start) / (end - start))))

        return torch.optim.lr_scheduler.LambdaLR(opt, factor)

    # --------------------------------------------------------------------- fit
    def fit(
        self,
        X,
        y,
        group_codes,
        *,
        sample_weight=None,
        eval_set=None,
        checkpoint_path: str | Path | None = None,
        checkpoint_every: int = 1,
    ) -> FairTrainer:
        """Train the model (or continue the run :meth:`load_checkpoint` restored).

        Parameters
        ----------
        X : array-like or Tensor of shape (n_samples, n_features)
        y : array-like or Tensor of shape (n_samples,)
            Labels 0/1, or soft labels in [0, 1] (a teacher's scores, to distil it).
        group_codes : array-like or Tensor
            Integer group codes of shape (n_samples,), or a boolean membership matrix of shape
            (n_samples, n_groups) for overlapping groups.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights: each group's rows are drawn with probability proportional
            to their weight, the cross-entropy is weighted accordingly and the fixed target is
            the barycenter of the weighted group scores (integer weights act as repeated rows,
            in distribution). Overlapping groups take no weights.
        eval_set : tuple (X, y, group_codes), optional
            Validation data for the history and early stopping.
        checkpoint_path : path, optional
            Where :meth:`save_checkpoint` writes every ``checkpoint_every`` epochs and after the
            last one. A run killed at any moment and resumed with :meth:`load_checkpoint` and
            the same ``fit`` call ends as the uninterrupted run would have.
        checkpoint_every : int, default=1

        Returns
        -------
        self : FairTrainer

        Raises
        ------
        fairot.exceptions.DivergenceError
            If the loss, a parameter or a logit became non-finite, every logit ran past ±110
            (scores exactly 0/1) while the starting model's did not, or an epoch's
            cross-entropy rose past ten times the start's (see ``docs/torch.md``).

        Warns
        -----
        fairot.exceptions.DegenerateModelWarning
            If the returned model collapsed against the one the penalty started from.
        """
        check_count(checkpoint_every, "checkpoint_every", 1)
        device, dtype = self._device(), self._dtype()
        self.model.to(device)
        self.penalty.to(device)
        data = self._check_fit_data(X, y, group_codes, sample_weight, eval_set, dtype, device)
        plan = batch_plan(data.membership, data.sample_weight, self.batch_size, dtype, device)
        rng = self._batch_generator()
        opt = self._optimizer(dtype)
        scheduler = self._scheduler(opt)
        run, monitor = self._start_run(data, opt, scheduler, rng)
        # The trainer checks the returned model against the penalty's start itself (below).
        watching, self.penalty.watches_collapse = self.penalty.watches_collapse, False
        self.run_callbacks("on_fit_start")
        saved = None
        for epoch in tqdm(range(run.epoch, self.n_epochs), disable=not self.verbose, desc="epochs"):
            if self.patience is not None and run.stale >= self.patience:
                break
            lam = self.lam_at(epoch)
            self._fix_target_when_warm(epoch, lam, data, monitor)
            if lam > 0 and run.start_scores is None:
                run.start_scores, run.start_eval_scores = start_scores(
                    self, data.X, data.evaluation
                )
            record, logits = self._train_epoch(epoch, lam, data, plan, opt, rng, monitor)
            if scheduler is not None:
                scheduler.step()
            monitor.check_epoch(self.model, epoch, lam, record["bce"], logits)
            if data.evaluation is not None:
                record.update(self._validate(epoch, lam, data.evaluation, run))
            run.history.append(record)
            run.epoch, run.lam = epoch + 1, lam
            self.run_callbacks("on_epoch_end", record)
            if checkpoint_path is not None and run.epoch % checkpoint_every == 0:
                self.save_checkpoint(checkpoint_path)
                saved = run.epoch
        if checkpoint_path is not None and saved != run.epoch:
            self.save_checkpoint(checkpoint_path)  # the last epoch, whatever checkpoint_every
        self._finish(data, run, monitor, watching)
        return self

    # ------------------------------------------------------------- fit's steps
    def _check_fit_data(self, X, y, group_codes, sample_weight, eval_set, dtype, device):
        """The training data (and ``eval_set``'s) checked, as tensors on the training device."""
        Xt, yt, membership = check_data(X, y, group_codes, self.penalty.n_groups, dtype, device)
        sample_weight = check_row_weights(sample_weight, membership)
        evaluation = None
        if eval_set is not None:
            if not isinstance(eval_set, (tuple, list)) or len(eval_set) != 3:
                raise ValueError(MSG_EVAL_SET.format(value=type(eval_set).__name__))
            evaluation = check_data(*eval_set, self.penalty.n_groups, dtype, device)
        return _FitData(Xt, yt, membership, sample_weight, evaluation)

    def _batch_generator(self) -> np.random.RandomState:
        """The generator of the batches' rows, from ``random_state``."""
        rng = check_random_state(self.random_state)
        if self.random_state is None:
            # A generator of its own, seeded from numpy's global one: a resumed checkpoint
            # restores this stream, never numpy's global state.
            rng = np.random.RandomState(rng.randint(np.iinfo(np.int32).max))
        return rng

    def _optimizer(self, dtype: torch.dtype) -> torch.optim.Optimizer:
        """The user's ``optimizer`` over the trainable parameters, or the checked default Adam."""
        params = [p for p in self.model.parameters() if p.requires_grad]
        if self.optimizer is not None:
            return self.optimizer(params)
        return default_adam(params, self.learning_rate, self.weight_decay, dtype)

    def _start_run(self, data: _FitData, opt, scheduler, rng) -> tuple[Run, DivergenceMonitor]:
        """A fresh run, or the one :meth:`load_checkpoint` restored, and its divergence watch."""
        self.target_samples_ = None
        self.best_epoch_ = None
        self.n_steps_ = 0
        run = Run()
        monitor = DivergenceMonitor.start(self.model, data.X, data.y, self.learning_rate)
        if self._resume is not None:
            monitor = restore_loop(self, self._resume["run"], run, opt, scheduler, rng)
            self._resume = None
        self._loop = (run, opt, scheduler, rng, monitor)
        self.model.train()
        self.penalty.train()
        return run, monitor

    def _fix_target_when_warm(
        self, epoch: int, lam: float, data: _FitData, monitor: DivergenceMonitor
    ) -> None:
        """At the first epoch after the warm-up, fix the target(s) to the warm model's scores."""
        if (
            self.fix_target
            and self.target_samples_ is None
            and self.warmup_epochs > 0
            and epoch >= self.warmup_epochs
        ):
            monitor.check_model(self.model, data.X, epoch, lam)  # a NaN target is no target
            scores = self.predict_scores(data.X)
            self.target_samples_ = fix_targets(
                self.penalty, scores, data.membership, data.y, data.sample_weight
            )

    def _train_epoch(
        self,
        epoch: int,
        lam: float,
        data: _FitData,
        plan: BatchPlan,
        opt,
        rng: np.random.RandomState,
        monitor: DivergenceMonitor,
    ) -> tuple[dict[str, float], torch.Tensor]:
        """One epoch of steps; returns its record and the last batch's logits.

        The record holds the epoch's mean objective, cross-entropy and penalty.
        """
        device, dtype = data.X.device, data.X.dtype
        bce = nn.BCEWithLogitsLoss(reduction="none")
        totals = torch.zeros(3, dtype=torch.float64, device=device)
        for step in range(plan.steps_per_epoch):
            rows = draw_rows(plan.members, plan.per_group, rng, plan.drawing)
            idx = torch.as_tensor(rows, device=device)
            logits = self.model(data.X[idx]).reshape(-1)
            ce = (plan.weights * bce(logits, data.y[idx])).sum()
            if lam > 0:
                labels = data.y[idx] if self.penalty.uses_cells else None
                pen = monitor.penalty(self.penalty, logits, plan.groups, epoch, lam, labels)
                loss = ce + lam * pen
            else:
                pen = torch.zeros((), dtype=dtype, device=device)
                loss = ce
            values = torch.stack([loss, ce, pen]).detach()
            # One host sync per step, before a non-finite loss reaches the parameters.
            if not bool(torch.isfinite(values).all()):
                raise DivergenceError(
                    MSG_NOT_FINITE.format(
                        epoch=epoch,
                        step=step,
                        loss=float(values[0]),
                        advice=advice(self.learning_rate, lam),
                    )
                )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            self.n_steps_ += 1
            totals += values
        record = {"epoch": epoch, "lam": lam}
        record.update(
            zip(("loss", "bce", "penalty"), (totals / plan.steps_per_epoch).tolist(), strict=True)
        )
        return record, logits

    def _validate(self, epoch: int, lam: float, evaluation, run: Run) -> dict[str, float]:
        """The epoch's validation metrics; keeps the best penalised epoch's model (early stop)."""
        Xv, yv, mv = evaluation
        metrics = validation_metrics(
            self.predict_scores(Xv),
            yv.double().cpu().numpy(),
            mv,
            self.target_samples_,
            lam,
        )
        if lam > 0:
            value = metrics["val_wass1" if self.monitor == "wass1" else "val_objective"]
            if value < run.best_value:
                run.best_value, run.stale, self.best_epoch_ = value, 0, epoch
                run.best_state = (
                    copy.deepcopy(self.model.state_dict()),
                    copy.deepcopy(self.penalty.state_dict()),
                )
            else:
                run.stale += 1
        return metrics

    def _finish(self, data: _FitData, run: Run, monitor: DivergenceMonitor, watching: bool):
        """Restore the best epoch's model, check the returned one, write ``history_``."""
        if run.best_state is not None:
            self.model.load_state_dict(run.best_state[0])
            self.penalty.load_state_dict(run.best_state[1])
        monitor.check_model(self.model, data.X, run.epoch - 1, run.lam)
        self.penalty.watches_collapse = watching
        warn_if_degenerate(self, data.X, data.y, run, data.sample_weight, data.evaluation)
        self.history_ = pd.DataFrame(run.history)
        self.run_callbacks("on_fit_end")

    # ------------------------------------------------------------- checkpoints
    CHECKPOINT_KEYS = CHECKPOINT_KEYS

    def state_dict(self) -> dict[str, Any]:
        """The model, the penalty and the loop between two epochs: resume at the next one.

        ``epoch`` is 0 and ``run`` ``None`` before :meth:`fit` (or a checkpoint) started a run.
        """
        state = {"model": self.model.state_dict(), "penalty": self.penalty.state_dict()}
        if self._resume is not None:  # loaded, not yet continued: hand the same state on
            return {**state, "epoch": self._resume["epoch"], "run": self._resume["run"]}
        if self._loop is None:
            return {**state, "epoch": 0, "run": None}
        run = self._loop[0]
        loop = loop_state(self, *self._loop)
        return {**state, "epoch": run.epoch, "run": loop}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`; the next :meth:`fit` continues its run."""
        target = state["penalty"].get("target_samples")
        if target is not None:  # the buffer's shape must fit before loading
            self.penalty.set_target(target if target.numel() else "barycenter")
        self.model.load_state_dict(state["model"])
        self.penalty.load_state_dict(state["penalty"])
        self._loop = None
        self._resume = None if state["run"] is None else state

    def load_checkpoint(  # noqa: D102
        self, path: str | Path, *, require_manifest: bool = False
    ) -> FairTrainer:
        pending, loop = self._resume, self._loop
        try:
            return super().load_checkpoint(path, require_manifest=require_manifest)
        except ValueError:
            self._resume, self._loop = pending, loop  # all or nothing: the same next fit
            raise

    load_checkpoint.__doc__ = CheckpointedTrainer.load_checkpoint.__doc__

    def checkpoint_map_location(self) -> torch.device:
        """A checkpoint's tensors load onto the training device."""
        return self._device()
