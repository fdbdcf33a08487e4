r"""MBN's meta-learning trainer (Algorithm 1 of [1]_) and the baselines through the same loop.

One step :math:`t` with a training batch and a balanced meta batch:

1. look-ahead: :math:`\hat w(m) = w - \alpha \nabla_w L^T(w; m)` on the training batch (Eq. (8)),
   kept as a function of the margins (``create_graph=True``);
2. meta step: the meta skewness loss :math:`L^M` of the meta batch embedded with :math:`\hat w(m)`,
   then :math:`m \leftarrow m - \beta \nabla_m L^M` (Eqs. (9)-(10); SGD with momentum), clamped into
   the margin bounds;
3. model step: the ordinary SGD step of :math:`w` on :math:`L^T(w; m_{new})` (Eq. (11)).

With ``meta_loss=None`` only step 3 runs, which trains every baseline (Softmax, Norm-Softmax,
CosFace, ArcFace, fixed group margins, re-weighting) with the same loop.

References
----------
.. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from fairot.exceptions import DivergenceError
from fairot.torch.losses import GroupMarginLoss, MetaSkewnessLoss
from fairot.torch.trainers import Callback, CheckpointedTrainer, resolve_seed

from ._distributed import all_reduce_mean_, broadcast_, rank_and_world
from ._meta_gradients import META_GRADIENTS, meta_step, rng_state
from ._trainer_checks import (
    META_LOSS_TYPE_ERROR,
    NAN_LOSS_ERROR,
    check_choice,
    check_count,
    check_device,
    check_group_weights,
    check_number,
    resolve_lookahead,
)
from ._training_data import StepBatches, as_tensor_dataset, group_accuracy
from .checkpoint import CHECKPOINT_KEYS

__all__ = ["MetaBalancedTrainer"]

logger = logging.getLogger("fairot.face")


class MetaBalancedTrainer(CheckpointedTrainer):
    r"""Train an embedding model with MBN's meta-learned group margins, or a baseline.

    Parameters
    ----------
    model : nn.Module
        Embedding network :math:`f(x; w)` (e.g. :func:`~fairot.face.iresnet34`, :class:`MLP`).
    loss : nn.Module
        Training loss head :math:`L^T` with its class weights (part of :math:`w`):
        :class:`~fairot.torch.losses.GroupMarginLoss` for MBN, any margin-softmax loss otherwise.
    meta_loss : MetaSkewnessLoss, optional
        Meta loss :math:`L^M`; ``None`` turns the meta step off (baselines).
    learning_rate : float, default=0.1
        :math:`\alpha`, both for the look-ahead and the model step.
    lr_milestones : sequence of int, default=()
        Steps at which the learning rate is multiplied by ``lr_decay`` (the paper: 80K, 120K, 155K).
    lr_decay : float, default=0.1
    momentum : float, default=0.9
    weight_decay : float, default=5e-4
    margin_learning_rate : float, default=1e-3
        :math:`\beta` of the margin SGD (momentum ``margin_momentum``).
    margin_milestones : sequence of int, default=()
        Steps at which :math:`\beta` is multiplied by 0.1 (the paper decays it twice).
    margin_momentum : float, default=0.9
    meta_every : int, default=1
        Run the meta step (1-2) every ``meta_every`` steps only, to save time.
    lookahead : "all", int or list of str, default="all"
        Model parameters updated in the look-ahead :math:`\hat w`: all of them, the last ``k``
        parameter tensors, or the named ones. Fewer is cheaper (the double backward stops there).
        The class weights never need a look-ahead: the meta loss reads embeddings only.
    group_weights : sequence of float, optional
        Per-group sample weights of the training loss (the re-weighting baseline).
    reuse_lookahead_gradient : bool, default=False
        Step 3 uses :math:`\nabla_w L^T(w; m_t)` of the look-ahead instead of recomputing
        :math:`\nabla_w L^T(w; m_{t+1})` (Eq. (11)): one backward pass less per step, an error
        first-order in the margin change :math:`\beta \nabla_m L^M` (tiny for the paper's
        :math:`\beta = 10^{-3}`). Off by default (the paper's exact algorithm).
    meta_gradient : {"exact", "forward-mode", "finite-difference"}, default="exact"
        ``"exact"``: :math:`\partial L^M / \partial m` by a gradient through the gradient
        (Eq. (10), ``create_graph=True``). ``"forward-mode"``: the same quantity, exactly, as
        :math:`-\alpha\,\partial_m \langle \nabla_{e} L^T(e; m), J v\rangle` with the
        Jacobian-vector product :math:`J v` of the backbone's embeddings :math:`e` along
        :math:`v = \nabla_{\hat w} L^M` (:func:`torch.func.jvp`): no double backward through
        the backbone, only through the loss head.
        ``"finite-difference"``: DARTS' central difference of
        :math:`\nabla_m L^T` at :math:`w \pm \epsilon \nabla_{\hat w} L^M` — no double
        backward, two extra forwards of the training batch; error :math:`O(\epsilon^2)`.
    callbacks : sequence of Callback, default=()
    device : str or torch.device, optional
        Defaults to the model's device.
    random_state : int, RandomState instance or None, default=None
        Seeds the batch samplers (and torch's generator at :meth:`fit`'s first call).
    verbose : bool, default=False
        Show a tqdm progress bar in :meth:`fit`.

    Attributes
    ----------
    step_ : int
        Number of training steps done.
    optimizer_ : torch.optim.SGD
        Optimiser of :math:`w` (model and class weights).
    margin_optimizer_ : torch.optim.SGD or None
        Optimiser of the margins when the meta step is on.
    last_record_ : dict
        What the last step measured (losses, margins, skewness, per-group accuracy).

    Notes
    -----
    Under ``torch.distributed`` (an initialised default process group, e.g. ``torchrun``), every
    rank draws the same global batch and trains on its slice of ``batch_size`` rows; gradients
    and the meta gradient are averaged across ranks (see :mod:`fairot.face._distributed`), so
    the margins stay identical, and only rank 0 writes checkpoints.

    Examples
    --------
    >>> import torch
    >>> from fairot.face import MLP, GroupMarginLoss, MetaSkewnessLoss, MetaBalancedTrainer
    >>> x = torch.randn(64, 8); y = torch.arange(16).repeat(4); g = y % 4
    >>> trainer = MetaBalancedTrainer(
    ...     MLP(8, embedding_size=4, hidden_sizes=(16,)),
    ...     GroupMarginLoss(16, 4, 4, anchor_loss="softmax"),
    ...     meta_loss=MetaSkewnessLoss(), random_state=0)
    >>> trainer = trainer.fit((x, y, g), (x, y, g), n_steps=2, batch_size=16, meta_batch_size=16)
    >>> trainer.step_
    2
    """

    def __init__(
        self,
        model: nn.Module,
        loss: nn.Module,
        *,
        meta_loss: MetaSkewnessLoss | None = None,
        learning_rate: float = 0.1,
        lr_milestones: Sequence[int] = (),
        lr_decay: float = 0.1,
        momentum: float = 0.9,
        weight_decay: float = 5e-4,
        margin_learning_rate: float = 1e-3,
        margin_milestones: Sequence[int] = (),
        margin_momentum: float = 0.9,
        meta_every: int = 1,
        lookahead: Literal["all"] | int | Sequence[str] = "all",
        group_weights: Sequence[float] | None = None,
        reuse_lookahead_gradient: bool = False,
        meta_gradient: Literal["exact", "forward-mode", "finite-difference"] = "exact",
        callbacks: Sequence[Callback] = (),
        device: str | torch.device | None = None,
        random_state=None,
        verbose: bool = False,
    ) -> None:
        if meta_loss is not None and not (
            isinstance(loss, GroupMarginLoss) and bool(loss.learnable_mask.any())
        ):
            raise ValueError(META_LOSS_TYPE_ERROR.format(loss=type(loss).__name__))
        self.model = model
        self.loss = loss
        self.meta_loss = meta_loss
        self.learning_rate = check_number(learning_rate, "learning_rate", strict=True)
        self.lr_milestones = tuple(int(s) for s in lr_milestones)
        self.lr_decay = check_number(lr_decay, "lr_decay", strict=True)
        self.momentum = check_number(momentum, "momentum")
        self.weight_decay = check_number(weight_decay, "weight_decay")
        self.margin_learning_rate = check_number(
            margin_learning_rate, "margin_learning_rate", strict=True
        )
        self.margin_milestones = tuple(int(s) for s in margin_milestones)
        self.margin_momentum = check_number(margin_momentum, "margin_momentum")
        meta_every = check_count(meta_every, "meta_every", low=1, integers=(int,))
        self.meta_every = meta_every
        self.lookahead = lookahead
        self.callbacks = list(callbacks)
        self.device = check_device(device) if device is not None else self._model_device()
        self.random_state = random_state
        self._seed = resolve_seed(random_state)  # one draw: samplers and torch share it
        self.verbose = verbose
        self.model.to(self.device)
        self.loss.to(self.device)
        self.reuse_lookahead_gradient = bool(reuse_lookahead_gradient)
        self.meta_gradient = check_choice(meta_gradient, "meta_gradient", META_GRADIENTS)
        self.group_weights = check_group_weights(group_weights, self.device)
        self._lookahead_names = resolve_lookahead(model, lookahead)

        margin_params = loss.margin_parameters() if isinstance(loss, GroupMarginLoss) else []
        w_params = [p for p in model.parameters() if p.requires_grad]
        w_params += [p for p in loss.parameters() if p.requires_grad]
        self._w_params = w_params
        self.optimizer_ = torch.optim.SGD(
            w_params, lr=self.learning_rate, momentum=self.momentum, weight_decay=self.weight_decay
        )
        self.margin_optimizer_ = None
        if meta_loss is not None:
            self.margin_optimizer_ = torch.optim.SGD(
                margin_params, lr=self.margin_learning_rate, momentum=self.margin_momentum
            )
        seeds = np.random.SeedSequence(self._seed).spawn(2)
        self._train_rng = np.random.default_rng(seeds[0])
        self._meta_rng = np.random.default_rng(seeds[1])
        self._torch_seeded = False
        self._rank, self._world = 0, 1
        self._bound_logged: set[int] = set()
        self.step_ = 0
        self.last_record_: dict = {}

    # ------------------------------------------------------------------ helpers
    def _model_device(self) -> torch.device:
        for p in self.model.parameters():
            return p.device
        return torch.device("cpu")

    def _scheduled(self, base: float, milestones: tuple[int, ...], decay: float) -> float:
        return base * decay ** sum(self.step_ >= m for m in milestones)

    def current_learning_rates(self) -> tuple[float, float]:
        r"""(:math:`\alpha_t`, :math:`\beta_t`) at the current step."""
        return (
            self._scheduled(self.learning_rate, self.lr_milestones, self.lr_decay),
            self._scheduled(self.margin_learning_rate, self.margin_milestones, 0.1),
        )

    def _margins_list(self) -> list[float]:
        if isinstance(self.loss, GroupMarginLoss):
            return self.loss.group_margins().detach().cpu().tolist()
        return []

    def _sample_weight(self, groups: torch.Tensor) -> torch.Tensor | None:
        if self.group_weights is None:
            return None
        return self.group_weights.to(torch.get_default_dtype())[groups]

    # ------------------------------------------------------------------ one step
    def train_step(
        self,
        batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
        meta_batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
    ) -> dict:
        """Run one step of Algorithm 1 (or a plain step when there is no meta batch).

        Parameters
        ----------
        batch : (inputs, labels, groups)
            Training mini-batch on the trainer's device.
        meta_batch : (inputs, labels, groups), optional
            Group-balanced meta mini-batch; the meta step runs when it is given, a meta loss is
            set and ``step_ % meta_every == 0``.

        Returns
        -------
        dict
            ``step``, ``loss``, ``meta_loss``, ``learning_rate``, ``margins``, ``group_bias``,
            ``group_accuracy``.
        """
        x, y, g = batch
        lr, beta = self.current_learning_rates()
        for group in self.optimizer_.param_groups:
            group["lr"] = lr
        self.model.train()
        self.loss.train()
        sample_weight = self._sample_weight(g)
        do_meta = (
            self.meta_loss is not None
            and meta_batch is not None
            and self.step_ % self.meta_every == 0
        )
        # One forward of the training batch serves the look-ahead and the model step: w does not
        # change in between (only m does), and BatchNorm's running statistics move once. The
        # forward-mode meta gradient differentiates this very forward: it replays its random
        # draws (dropout masks) from the generators' state taken here.
        rng = None
        if do_meta and self.meta_gradient == "forward-mode":
            rng = rng_state(self.device)
        emb = self.model(x)
        if not bool(torch.isfinite(emb).all()):
            # Before the loss: its own check would say NaN embeddings, not at which step and why.
            raise DivergenceError(
                NAN_LOSS_ERROR.format(
                    value="undefined (NaN/inf embeddings)",
                    step=self.step_,
                    lr=lr,
                    margins=self._margins_list(),
                )
            )
        scores = self.loss.scores(emb)
        train_loss = self.loss(emb, y, g, sample_weight=sample_weight, scores=scores)
        if not torch.isfinite(train_loss):
            raise DivergenceError(
                NAN_LOSS_ERROR.format(
                    value=train_loss.item(), step=self.step_, lr=lr, margins=self._margins_list()
                )
            )
        record: dict[str, Any] = {"meta_loss": float("nan"), "group_bias": []}
        self.optimizer_.zero_grad(set_to_none=True)
        # With reuse, the look-ahead's backward already set the model step's gradients.
        reused = do_meta and self.reuse_lookahead_gradient
        if do_meta:
            record["meta_loss"], record["group_bias"] = meta_step(
                self, train_loss, batch, emb, sample_weight, meta_batch, lr, beta, rng,
                lookahead_names=self._lookahead_names, trained_params=self._w_params,
                distributed=self._world > 1, bound_logged=self._bound_logged,
            )  # fmt: skip
            if not reused:
                # L^T(w; m_new): the same embeddings, the updated margins.
                train_loss = self.loss(emb, y, g, sample_weight=sample_weight, scores=scores)
        if not reused:
            # inputs=: the margins' gradient is the meta gradient alone, never dL^T/dm.
            train_loss.backward(inputs=self._w_params)
        train_value = train_loss.detach().clone()
        if self._world > 1:
            for p in self._w_params:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
            # The mean of the ranks' batch means is the global batch's mean (equal slices).
            all_reduce_mean_([p.grad for p in self._w_params] + [train_value])
        self.optimizer_.step()
        record.update(
            step=self.step_,
            loss=float(train_value),
            learning_rate=lr,
            margins=self._margins_list(),
            group_accuracy=group_accuracy(
                scores.detach(), y, g, self.loss.n_groups, distributed=self._world > 1
            ),
        )
        self.step_ += 1
        self.last_record_ = record
        return record

    # ------------------------------------------------------------------ the loop
    def fit(
        self,
        train_data,
        meta_data=None,
        *,
        n_steps: int,
        batch_size: int = 128,
        meta_batch_size: int | None = None,
        samples_per_identity: int = 2,
        checkpoint_path: str | Path | None = None,
        checkpoint_every: int | None = None,
        num_workers: int = 0,
    ) -> MetaBalancedTrainer:
        """Train until ``step_ == n_steps`` (continuing a resumed run).

        Parameters
        ----------
        train_data : (inputs, labels, groups) or Dataset
            The (biased) training set :math:`D_{train}`.
        meta_data : (inputs, labels, groups) or Dataset, optional
            The balanced meta set :math:`D_{meta}`; required by the meta step.
        n_steps : int
            Total number of steps (not additional ones).
        batch_size : int, default=128
            Rows of each training batch; under ``torch.distributed``, rows per process (the
            global batch is ``batch_size * world_size``, split across the ranks).
        meta_batch_size : int, optional
            Defaults to the global ``batch_size`` rounded down to a multiple of
            ``n_groups * samples_per_identity``. Every rank embeds the whole meta batch.
        samples_per_identity : int, default=2
            Images per identity in a meta batch (positive pairs).
        checkpoint_path : path, optional
            Where :meth:`save_checkpoint` writes every ``checkpoint_every`` steps and at the end.
        checkpoint_every : int, optional
        num_workers : int, default=0
            Threads that load the images of a Dataset batch.

        Returns
        -------
        self
        """
        check_count(n_steps, "n_steps", low=0)
        check_count(batch_size, "batch_size", low=1)
        check_count(samples_per_identity, "samples_per_identity", low=1)
        check_count(num_workers, "num_workers", low=0)
        if meta_batch_size is not None:
            check_count(meta_batch_size, "meta_batch_size", low=1)
        if checkpoint_every is not None:
            check_count(checkpoint_every, "checkpoint_every", low=0)
        self._rank, self._world = rank_and_world()
        if self._world > 1:
            # Every rank starts from rank 0's weights and margins, as DDP does.
            states = [*self.model.state_dict().values(), *self.loss.state_dict().values()]
            broadcast_([t for t in states if t.is_floating_point()])
        batches = StepBatches(
            as_tensor_dataset(train_data, "train_data", num_workers),
            None if self.meta_loss is None else meta_data,
            batch_size=batch_size,
            meta_batch_size=meta_batch_size,
            samples_per_identity=samples_per_identity,
            rank=self._rank,
            world=self._world,
            train_rng=self._train_rng,
            meta_rng=self._meta_rng,
            needs_meta=self.meta_loss is not None,
            num_workers=num_workers,
        )
        if not self._torch_seeded:
            torch.manual_seed(self._seed)
            self._torch_seeded = True
        self.run_callbacks("on_fit_start")
        bar = tqdm(
            total=n_steps,
            initial=self.step_,
            disable=not self.verbose or self._rank != 0,
            desc="training",
            leave=False,
        )
        try:
            while self.step_ < n_steps:
                batch, meta_batch = batches.draw(self.device, self.step_ % self.meta_every == 0)
                record = self.train_step(batch, meta_batch)
                self.run_callbacks("on_step_end", record)
                bar.update(1)
                if self.verbose:
                    bar.set_postfix(loss=f"{record['loss']:.3f}")
                if (
                    checkpoint_path is not None
                    and checkpoint_every
                    and self.step_ % checkpoint_every == 0
                ):
                    self._save_on_rank_zero(checkpoint_path)
        finally:
            bar.close()
        if checkpoint_path is not None:
            self._save_on_rank_zero(checkpoint_path)
        self.run_callbacks("on_fit_end")
        return self

    @torch.no_grad()
    def embed(self, inputs, *, batch_size: int = 512) -> torch.Tensor:
        """Embeddings of ``inputs`` in evaluation mode, shape (n, embedding_size), on the CPU."""
        self.model.eval()
        inputs = torch.as_tensor(inputs)
        out = [
            self.model(inputs[i : i + batch_size].to(self.device)).cpu()
            for i in range(0, len(inputs), batch_size)
        ]
        return torch.cat(out) if out else torch.empty(0, getattr(self.model, "embedding_size", 0))

    # ------------------------------------------------------------------ checkpoints
    #: Keys every checkpoint of this trainer holds (see :mod:`fairot.face.checkpoint`).
    CHECKPOINT_KEYS = CHECKPOINT_KEYS

    def checkpoint_map_location(self) -> torch.device:
        """A checkpoint's tensors load onto the trainer's device."""
        return self.device

    def state_dict(self) -> dict:
        """Everything needed to resume at the identical next step."""
        return {
            "step": self.step_,
            "model": self.model.state_dict(),
            "loss": self.loss.state_dict(),
            "optimizer": self.optimizer_.state_dict(),
            "margin_optimizer": (
                None if self.margin_optimizer_ is None else self.margin_optimizer_.state_dict()
            ),
            "train_rng": self._train_rng.bit_generator.state,
            "meta_rng": self._meta_rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            "torch_seeded": self._torch_seeded,
            "bound_logged": sorted(self._bound_logged),
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict` (into a trainer built with the same arguments)."""
        self.step_ = int(state["step"])
        self.model.load_state_dict(state["model"])
        self.loss.load_state_dict(state["loss"])
        self.optimizer_.load_state_dict(state["optimizer"])
        if self.margin_optimizer_ is not None and state["margin_optimizer"] is not None:
            self.margin_optimizer_.load_state_dict(state["margin_optimizer"])
        self._train_rng.bit_generator.state = state["train_rng"]
        self._meta_rng.bit_generator.state = state["meta_rng"]
        torch.set_rng_state(state["torch_rng"])
        if state.get("cuda_rng") is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        self._torch_seeded = bool(state["torch_seeded"])
        self._bound_logged = set(state["bound_logged"])

    def _save_on_rank_zero(self, path) -> None:
        # The ranks hold identical states: one writer, and nobody runs ahead of a half-written file.
        if self._rank == 0:
            self.save_checkpoint(path)
        if self._world > 1:
            torch.distributed.barrier()
