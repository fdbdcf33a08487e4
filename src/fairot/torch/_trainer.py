r"""The loop around :class:`WassersteinParityPenalty`: balanced batches, ``lam``, early stopping."""

from __future__ import annotations

import copy
from collections.abc import Callable
from numbers import Integral, Real
from typing import Literal

import numpy as np
import pandas as pd
import torch
from torch import nn
from tqdm.auto import tqdm

from fairot.exceptions import DivergenceError
from fairot.metrics.reductions import sum_w1_to_barycenter, sum_w1_to_reference
from fairot.torch._device import check_device
from fairot.torch._divergence import DivergenceMonitor, advice, default_adam
from fairot.torch._penalty import WassersteinParityPenalty
from fairot.transport import (
    MAX_TARGET_LEVELS,
    barycenter_quantiles,
    build_target,
    midpoint_grid,
    quantile_function,
)
from fairot.utils.sensitive import check_sensitive_features

MSG_PARAM = "{name} must be {expected}; got {value!r}."
MSG_GROUPS = (
    "groups must be integer codes 0 .. n_groups - 1 of shape (n_samples,) or a boolean "
    "membership matrix of shape (n_samples, n_groups) with n_groups={n_groups} (the penalty's); "
    "got {value}."
)
MSG_LENGTHS = "X, y and groups must have the same number of rows; got {x}, {y} and {g}."
MSG_EMPTY_GROUP = "group {group} has no rows in the training data; every group needs members."
MSG_LABELS = (
    "y must hold labels in [0, 1] (0/1, or soft labels to distil a teacher); got values in "
    "[{low}, {high}]."
)
MSG_EVAL_SET = "eval_set must be a tuple (X, y, groups); got {value!r}."
MSG_NOT_FINITE = (
    "training diverged at epoch {epoch}, step {step}: the loss became {loss}. {advice}."
)


def _as_tensor(a, dtype, device) -> torch.Tensor:
    if isinstance(a, torch.Tensor):
        return a.detach().to(device=device, dtype=dtype)
    return torch.as_tensor(np.asarray(a), dtype=dtype, device=device)


def _membership(groups, n_groups: int, n: int) -> np.ndarray:
    g = groups.detach().cpu().numpy() if isinstance(groups, torch.Tensor) else np.asarray(groups)
    if g.ndim == 2 and g.dtype == bool and g.shape[1] == n_groups:
        membership = g
    elif (
        g.ndim == 1
        and np.issubdtype(g.dtype, np.integer)
        and (g.size == 0 or (g.min() >= 0 and g.max() < n_groups))
    ):
        membership = np.zeros((g.shape[0], n_groups), dtype=bool)
        membership[np.arange(g.shape[0]), g] = True
    else:
        raise ValueError(
            MSG_GROUPS.format(n_groups=n_groups, value=f"shape {g.shape}, dtype {g.dtype}")
        )
    if membership.shape[0] != n:
        raise ValueError(MSG_LENGTHS.format(x=n, y=n, g=membership.shape[0]))
    return membership


class FairTrainer:
    r"""Train any PyTorch binary classifier with a strong demographic parity penalty.

    Each step draws a **group-balanced** batch (``batch_size // n_groups`` rows of every group,
    with replacement) and minimises

    .. math::

        \mathrm{BCE}_w(\text{logits}, y) + \text{lam}(e)\;
        \texttt{penalty}(\sigma(\text{logits}), \text{groups}),

    where the cross-entropy is importance-weighted (a row of group :math:`a` weighs
    :math:`n_a / (k\,C\,n)`, :math:`k` rows per group, :math:`C` groups per row), so that it
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
    ):
        if not isinstance(model, nn.Module):
            raise TypeError(
                MSG_PARAM.format(name="model", expected="a torch.nn.Module", value=model)
            )
        if not isinstance(penalty, WassersteinParityPenalty):
            raise TypeError(
                MSG_PARAM.format(
                    name="penalty", expected="a WassersteinParityPenalty", value=penalty
                )
            )
        if not callable(lam) and (isinstance(lam, bool) or not isinstance(lam, Real) or lam < 0):
            raise ValueError(
                MSG_PARAM.format(
                    name="lam", expected="a non-negative number or a callable", value=lam
                )
            )
        for name, value, low in (
            ("warmup_epochs", warmup_epochs, 0),
            ("lam_ramp_epochs", lam_ramp_epochs, 0),
            ("n_epochs", n_epochs, 1),
            ("batch_size", batch_size, penalty.n_groups),
        ):
            if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
                raise ValueError(
                    MSG_PARAM.format(name=name, expected=f"an integer >= {low}", value=value)
                )
        for name, value in (("learning_rate", learning_rate), ("weight_decay", weight_decay)):
            if (
                isinstance(value, bool)
                or not isinstance(value, Real)
                or not (np.isfinite(value) and value >= 0)
            ):
                raise ValueError(
                    MSG_PARAM.format(
                        name=name, expected="a finite non-negative number", value=value
                    )
                )
        if not callable(lr_schedule) and lr_schedule not in ("constant", "cosine"):
            raise ValueError(
                MSG_PARAM.format(
                    name="lr_schedule",
                    expected="'constant', 'cosine' or a callable",
                    value=lr_schedule,
                )
            )
        if monitor not in ("wass1", "objective"):
            raise ValueError(
                MSG_PARAM.format(name="monitor", expected="'wass1' or 'objective'", value=monitor)
            )
        if patience is not None and (not isinstance(patience, Integral) or patience < 1):
            raise ValueError(
                MSG_PARAM.format(
                    name="patience", expected="a positive integer or None", value=patience
                )
            )
        if device is not None:
            check_device(device)
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
        Xt = _as_tensor(X, dtype, device)
        was_training = self.model.training
        self.model.eval()
        out = []
        with torch.no_grad():
            for start in range(0, Xt.shape[0], batch_size):
                logits = self.model(Xt[start : start + batch_size]).reshape(-1)
                out.append(torch.sigmoid(logits).double().cpu().numpy())
        self.model.train(was_training)
        return np.concatenate(out) if out else np.empty(0)

    def _check_data(self, X, y, groups, dtype, device):
        Xt = _as_tensor(X, dtype, device)
        yt = _as_tensor(y, dtype, device).reshape(-1)
        if Xt.shape[0] != yt.shape[0]:
            raise ValueError(MSG_LENGTHS.format(x=Xt.shape[0], y=yt.shape[0], g=len(groups)))
        if not bool(((yt >= 0) & (yt <= 1)).all()):
            raise ValueError(MSG_LABELS.format(low=float(yt.min()), high=float(yt.max())))
        membership = _membership(groups, self.penalty.n_groups, Xt.shape[0])
        return Xt, yt, membership

    def _val_metrics(self, evaluation, lam: float) -> dict[str, float]:
        Xv, yv, mv = evaluation
        s = self.predict_scores(Xv)
        y = yv.double().cpu().numpy()
        eps = 1e-12
        bce = float(-np.mean(y * np.log(s + eps) + (1 - y) * np.log(1 - s + eps)))
        sorted_groups = [np.sort(s[mv[:, a]]) for a in range(mv.shape[1]) if mv[:, a].any()]
        if self.target_samples_ is not None:
            w1 = float(sum_w1_to_reference(sorted_groups, self.target_samples_))
        else:
            w1 = float(sum_w1_to_barycenter(sorted_groups))
        error = float(np.mean((s > 0.5) != (y > 0.5)))
        return {
            "val_error": error,
            "val_wass1": w1,
            "val_bce": bce,
            "val_objective": bce + lam * w1,
        }

    def _fix_target(self, Xt, membership) -> None:
        s = self.predict_scores(Xt)
        if (membership.sum(axis=1) == 1).all():
            encoding = check_sensitive_features(membership.argmax(axis=1), s.shape[0], min_groups=1)
            self.target_samples_ = build_target("barycenter", s, encoding)
        else:
            # Overlapping groups: the same barycenter (median of the group quantiles on a midpoint
            # grid, as build_target), read from the membership columns.
            rows = [np.flatnonzero(membership[:, a]) for a in range(membership.shape[1])]
            u = midpoint_grid(int(min(max(r.shape[0] for r in rows), MAX_TARGET_LEVELS)))
            curves = np.stack([quantile_function(s[r], u) for r in rows])
            self.target_samples_ = np.sort(barycenter_quantiles(curves, p=1))
        self.penalty.set_target(self.target_samples_)

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
    def fit(self, X, y, groups, *, eval_set=None) -> FairTrainer:
        """Train the model.

        Parameters
        ----------
        X : array-like or Tensor of shape (n_samples, n_features)
        y : array-like or Tensor of shape (n_samples,)
            Labels 0/1, or soft labels in [0, 1] (a teacher's scores, to distil it).
        groups : array-like or Tensor
            Integer group codes of shape (n_samples,), or a boolean membership matrix of shape
            (n_samples, n_groups) for overlapping groups.
        eval_set : tuple (X, y, groups), optional
            Validation data for the history and early stopping.

        Returns
        -------
        self : FairTrainer

        Raises
        ------
        fairot.classification.DivergenceError
            If the loss, a parameter or a logit became non-finite, every logit ran past ±110
            (scores exactly 0/1) while the starting model's did not, or an epoch's
            cross-entropy rose past ten times the start's (see ``docs/torch.md``).
        """
        device, dtype = self._device(), self._dtype()
        self.model.to(device)
        self.penalty.to(device)
        Xt, yt, membership = self._check_data(X, y, groups, dtype, device)
        evaluation = None
        if eval_set is not None:
            if not isinstance(eval_set, (tuple, list)) or len(eval_set) != 3:
                raise ValueError(MSG_EVAL_SET.format(value=type(eval_set).__name__))
            evaluation = self._check_data(*eval_set, dtype, device)
        n, n_groups = membership.shape
        members = [np.flatnonzero(membership[:, a]) for a in range(n_groups)]
        for a, m in enumerate(members):
            if m.shape[0] == 0:
                raise ValueError(MSG_EMPTY_GROUP.format(group=a))
        per_group = self.batch_size // n_groups
        per_row = float(membership.sum()) / n  # C: groups per row
        # Importance weight of a sampled row of group a: unbiased mean cross-entropy.
        weights = torch.tensor(
            [m.shape[0] / (per_group * per_row * n) for m in members], dtype=dtype, device=device
        ).repeat_interleave(per_group)
        batch_groups = torch.arange(n_groups, device=device).repeat_interleave(per_group)
        rng = (
            np.random.RandomState(self.random_state)
            if not isinstance(self.random_state, np.random.RandomState)
            else self.random_state
        )
        params = [p for p in self.model.parameters() if p.requires_grad]
        opt = (
            self.optimizer(params)
            if self.optimizer is not None
            else default_adam(params, self.learning_rate, self.weight_decay, dtype)
        )
        scheduler = self._scheduler(opt)
        bce = nn.BCEWithLogitsLoss(reduction="none")
        steps_per_epoch = -(-n // self.batch_size)
        self.target_samples_ = None
        self.best_epoch_ = None
        self.n_steps_ = 0
        history = []
        best_value, best_state, stale = np.inf, None, 0
        monitor = DivergenceMonitor.start(self.model, Xt, yt, self.learning_rate)
        self.model.train()
        self.penalty.train()
        for epoch in tqdm(range(self.n_epochs), disable=not self.verbose, desc="epochs"):
            lam = self.lam_at(epoch)
            if (
                self.fix_target
                and self.target_samples_ is None
                and self.warmup_epochs > 0
                and epoch >= self.warmup_epochs
            ):
                monitor.check_model(self.model, Xt, epoch, lam)  # a NaN target is no target
                self._fix_target(Xt, membership)
            totals = torch.zeros(3, dtype=torch.float64, device=device)
            for step in range(steps_per_epoch):
                rows = np.concatenate([m[rng.randint(0, m.shape[0], per_group)] for m in members])
                idx = torch.as_tensor(rows, device=device)
                logits = self.model(Xt[idx]).reshape(-1)
                ce = (weights * bce(logits, yt[idx])).sum()
                if lam > 0:
                    pen = monitor.penalty(self.penalty, logits, batch_groups, epoch, lam)
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
            if scheduler is not None:
                scheduler.step()
            record = {"epoch": epoch, "lam": lam}
            record.update(
                zip(("loss", "bce", "penalty"), (totals / steps_per_epoch).tolist(), strict=True)
            )
            monitor.check_epoch(self.model, epoch, lam, record["bce"], logits)
            if evaluation is not None:
                metrics = self._val_metrics(evaluation, lam)
                record.update(metrics)
                if lam > 0:
                    value = metrics["val_wass1" if self.monitor == "wass1" else "val_objective"]
                    if value < best_value:
                        best_value, stale, self.best_epoch_ = value, 0, epoch
                        best_state = (
                            copy.deepcopy(self.model.state_dict()),
                            copy.deepcopy(self.penalty.state_dict()),
                        )
                    else:
                        stale += 1
            history.append(record)
            if self.patience is not None and stale >= self.patience:
                break
        if best_state is not None:
            self.model.load_state_dict(best_state[0])
            self.penalty.load_state_dict(best_state[1])
        monitor.check_model(self.model, Xt, epoch, lam)
        self.history_ = pd.DataFrame(history)
        return self
