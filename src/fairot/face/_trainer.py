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

import copy
import logging
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch import nn
from torch.autograd import forward_ad
from torch.func import functional_call
from tqdm.auto import tqdm

from fairot.exceptions import DivergenceError

from ..utils import atomic_write, remove_stale_temporaries
from ._callbacks import Callback
from ._distributed import all_reduce_mean_, broadcast_, rank_and_world
from ._margin_losses import GroupMarginLoss
from ._samplers import BalancedGroupSampler, RandomBatchSampler
from ._skewness import MetaSkewnessLoss
from ._tangents import RecordedForward, quiet_dual_level

__all__ = ["MetaBalancedTrainer", "as_tensor_dataset", "read_checkpoint"]

logger = logging.getLogger("fairot.face")

NAN_LOSS_ERROR = (
    "the training loss became {value} at step {step} (learning rate {lr:g}, margins {margins}). "
    "Likely cause: the learning rate or the scale s is too large for this model, or the inputs "
    "contain NaN/inf; lower learning_rate or the loss's scale, or check the data."
)
NAN_META_ERROR = (
    "the meta skewness loss or the margin gradient became {value} at step {step} (margin learning "
    "rate {lr:g}). Likely cause: margin_learning_rate too large or a diverging look-ahead; lower "
    "margin_learning_rate or the learning rate."
)
META_LOSS_TYPE_ERROR = (
    "meta_loss needs a GroupMarginLoss training loss with learnable margins; got {loss}."
)
DATA_ERROR = (
    "{name} must be a tuple (inputs, labels, groups) of equal-length tensors or arrays, or a "
    "torch Dataset whose items are (input, label, group); got {value}."
)
LOOKAHEAD_ERROR = (
    "lookahead must be 'all', a positive int (the last k parameter tensors of the model) or a "
    "non-empty list of the model's parameter names; got {value!r}."
)
NUMBER_ERROR = "{name} must be {what}; got {value!r}."
GROUP_WEIGHTS_ERROR = "group_weights must be one non-negative weight per group; got {value!r}."
DEVICE_ERROR = (
    "device={value!r} is not usable here ({reason}); use device='cpu' or run on a machine with "
    "that accelerator."
)
CHECKPOINT_READ_ERROR = (
    "checkpoint {path} cannot be read ({reason}); it is truncated, corrupt or not a fairot "
    "checkpoint. Delete it to start afresh, or point to another one."
)
CHECKPOINT_FIT_ERROR = (
    "checkpoint {path} does not fit this trainer: {reason}. It was written for another model, "
    "loss or method; build the trainer with the arguments that wrote it."
)
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
#: Ways to compute the meta gradient d L^M / d m (see MetaBalancedTrainer).
META_GRADIENTS = ("exact", "forward-mode", "finite-difference")

#: Step of the finite-difference meta gradient, relative to the norm of the meta gradient v
#: (DARTS' 0.01).
FD_SCALE = 0.01
#: The forward-mode meta gradient has not traced the model yet.
_NOT_TRACED = object()
BOUND_LOG = "margin of group %d reached its bound %.4g at step %d (margin_bounds=%s)."


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


def _check_number(value, name: str, *, low: float = 0.0, strict: bool = False) -> float:
    ok = (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and math.isfinite(value)
        and (value > low if strict else value >= low)
    )
    if not ok:
        what = f"a finite number {'>' if strict else '>='} {low}"
        raise ValueError(NUMBER_ERROR.format(name=name, what=what, value=value))
    return float(value)


def _check_count(value, name: str, *, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(NUMBER_ERROR.format(name=name, what=f"an int >= {low}", value=value))
    return int(value)


def _check_device(device) -> torch.device:
    """``torch.device(device)``, refusing one that cannot hold a tensor here (no GPU, bad name)."""
    try:
        resolved = torch.device(device)
        torch.empty(0, device=resolved)
    except (RuntimeError, AssertionError, TypeError) as exc:
        # torch raises AssertionError ("not compiled with CUDA") or a multi-line RuntimeError.
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(DEVICE_ERROR.format(value=str(device), reason=reason)) from None
    return resolved


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


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
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist.")
    try:
        state = torch.load(path, map_location=map_location, weights_only=False)
    except Exception as exc:  # torch raises many types for a torn zip or pickle
        raise ValueError(CHECKPOINT_READ_ERROR.format(path=path, reason=_first_line(exc))) from None
    if not isinstance(state, dict) or any(k not in state for k in CHECKPOINT_KEYS):
        reason = "missing keys" if isinstance(state, dict) else f"holds a {type(state).__name__}"
        raise ValueError(CHECKPOINT_READ_ERROR.format(path=path, reason=reason))
    return state


class MetaBalancedTrainer:
    r"""Train an embedding model with MBN's meta-learned group margins, or a baseline.

    Parameters
    ----------
    model : nn.Module
        Embedding network :math:`f(x; w)` (e.g. :func:`~fairot.face.iresnet34`, :class:`MLP`).
    loss : nn.Module
        Training loss head :math:`L^T` with its class weights (part of :math:`w`):
        :class:`~fairot.face.losses.GroupMarginLoss` for MBN, any margin-softmax loss otherwise.
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
        :math:`v = \nabla_{\hat w} L^M`: no double backward through the backbone, only
        through the loss head. The product propagates tangents through the step's own recorded
        forward (:mod:`torch.fx`; two convolutions per convolution layer, no recomputation), or,
        for a model ``torch.fx`` cannot trace or one that overwrites values in place, by
        ``torch.autograd.forward_ad`` through the whole model.
        ``"finite-difference"``: DARTS' central difference of
        :math:`\nabla_m L^T` at :math:`w \pm \epsilon \nabla_{\hat w} L^M` — no double
        backward, two extra forwards of the training batch; error :math:`O(\epsilon^2)`.
    callbacks : sequence of Callback, default=()
    device : str or torch.device, optional
        Defaults to the model's device.
    random_state : int, default=0
        Seeds the batch samplers (and torch's generator at :meth:`fit`'s first call).
    progress : bool, default=True
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
    ...     meta_loss=MetaSkewnessLoss(), progress=False)
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
        random_state: int = 0,
        progress: bool = True,
    ) -> None:
        if meta_loss is not None and not (
            isinstance(loss, GroupMarginLoss) and bool(loss.learnable_mask.any())
        ):
            raise ValueError(META_LOSS_TYPE_ERROR.format(loss=type(loss).__name__))
        self.model = model
        self.loss = loss
        self.meta_loss = meta_loss
        self.learning_rate = _check_number(learning_rate, "learning_rate", strict=True)
        self.lr_milestones = tuple(int(s) for s in lr_milestones)
        self.lr_decay = _check_number(lr_decay, "lr_decay", strict=True)
        self.momentum = _check_number(momentum, "momentum")
        self.weight_decay = _check_number(weight_decay, "weight_decay")
        self.margin_learning_rate = _check_number(
            margin_learning_rate, "margin_learning_rate", strict=True
        )
        self.margin_milestones = tuple(int(s) for s in margin_milestones)
        self.margin_momentum = _check_number(margin_momentum, "margin_momentum")
        if isinstance(meta_every, bool) or not isinstance(meta_every, int) or meta_every < 1:
            raise ValueError(
                NUMBER_ERROR.format(name="meta_every", what="an int >= 1", value=meta_every)
            )
        self.meta_every = meta_every
        self.lookahead = lookahead
        self.callbacks = list(callbacks)
        self.device = _check_device(device) if device is not None else self._model_device()
        self.random_state = random_state
        self.progress = progress
        self.model.to(self.device)
        self.loss.to(self.device)
        self.reuse_lookahead_gradient = bool(reuse_lookahead_gradient)
        if meta_gradient not in META_GRADIENTS:
            raise ValueError(
                NUMBER_ERROR.format(
                    name="meta_gradient",
                    what=" or ".join(repr(m) for m in META_GRADIENTS),
                    value=meta_gradient,
                )
            )
        self.meta_gradient = meta_gradient
        self.group_weights = None
        if group_weights is not None:
            gw = torch.as_tensor(np.asarray(group_weights, dtype=float))
            if gw.ndim != 1 or bool((gw < 0).any()) or not bool(torch.isfinite(gw).all()):
                raise ValueError(GROUP_WEIGHTS_ERROR.format(value=group_weights))
            self.group_weights = gw.to(self.device)
        self._lookahead_names = self._resolve_lookahead(lookahead)

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
        seeds = np.random.SeedSequence(random_state).spawn(2)
        self._train_rng = np.random.default_rng(seeds[0])
        self._meta_rng = np.random.default_rng(seeds[1])
        self._torch_seeded = False
        self._rank, self._world = 0, 1
        self._bound_logged: set[int] = set()
        self._recorded_forward: RecordedForward | None | object = _NOT_TRACED
        self.step_ = 0
        self.last_record_: dict = {}

    # ------------------------------------------------------------------ helpers
    def _model_device(self) -> torch.device:
        for p in self.model.parameters():
            return p.device
        return torch.device("cpu")

    def _resolve_lookahead(self, lookahead) -> list[str]:
        names = [n for n, p in self.model.named_parameters() if p.requires_grad]
        if isinstance(lookahead, str):
            if lookahead == "all":
                return names
            raise ValueError(LOOKAHEAD_ERROR.format(value=lookahead))
        if isinstance(lookahead, int) and not isinstance(lookahead, bool):
            if lookahead < 1:
                raise ValueError(LOOKAHEAD_ERROR.format(value=lookahead))
            return names[-lookahead:]
        chosen = list(lookahead)
        if not chosen or any(n not in names for n in chosen):
            raise ValueError(LOOKAHEAD_ERROR.format(value=lookahead))
        return chosen

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

    @torch.no_grad()
    def _group_accuracy(self, scores, labels, groups) -> list[float]:
        correct = (scores.argmax(dim=1) == labels).to(torch.float64)
        n_groups = int(groups.max()) + 1 if self.loss.n_groups is None else self.loss.n_groups
        counts = torch.bincount(groups, minlength=n_groups).to(torch.float64)
        hits = torch.zeros(n_groups, dtype=torch.float64, device=scores.device).index_add(
            0, groups, correct
        )
        if self._world > 1:
            all_reduce_mean_([hits, counts])  # the ratio is that of the global batch
        acc = torch.where(counts > 0, hits / counts.clamp_min(1), float("nan"))
        return acc.cpu().tolist()

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
        # forward-mode meta gradient records it, to differentiate it along v afterwards.
        recording = None
        recorder = self._recorder() if do_meta and self.meta_gradient == "forward-mode" else None
        if recorder is not None:
            emb, recording = recorder.forward(x)
        else:
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
        reused = False
        if do_meta:
            meta_value, bias, reused = self._meta_step(
                train_loss, batch, sample_weight, meta_batch, lr, beta, emb, recording
            )
            record["meta_loss"] = meta_value
            record["group_bias"] = bias
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
            group_accuracy=self._group_accuracy(scores.detach(), y, g),
        )
        self.step_ += 1
        self.last_record_ = record
        return record

    def _train_gradients(self, train_loss, params, *, create_graph: bool):
        """Gradients of L^T for the look-ahead; with reuse, also the model step's, set now."""
        reuse = self.reuse_lookahead_gradient
        wanted = self._w_params if reuse else params
        all_grads = torch.autograd.grad(
            train_loss, wanted, create_graph=create_graph, retain_graph=True, allow_unused=True
        )
        if not reuse:
            return list(all_grads)
        # the model step's gradient at the old margins: set it now, detached.
        for p, gr in zip(self._w_params, all_grads, strict=True):
            p.grad = None if gr is None else gr.detach()
        by_param = {id(p): gr for p, gr in zip(self._w_params, all_grads, strict=True)}
        return [by_param[id(p)] for p in params]

    def _exact_meta_gradient(self, train_loss, meta_batch, lr: float):
        model_params = dict(self.model.named_parameters())
        names = self._lookahead_names
        params = [model_params[n] for n in names]
        # Only the backbone's look-ahead matters: the meta loss reads embeddings, not class weights.
        grads = self._train_gradients(train_loss, params, create_graph=True)
        updated = {
            n: p if gr is None else p - lr * gr
            for n, p, gr in zip(names, params, grads, strict=True)
        }
        # Cloned buffers take the meta forward's BatchNorm statistics updates, so the real
        # running statistics see training batches only.
        buffers = {n: b.clone() for n, b in self.model.named_buffers()}
        xm, ym, gm = meta_batch
        meta_emb = functional_call(self.model, {**model_params, **updated, **buffers}, (xm,))
        result = self.meta_loss.compute(meta_emb, ym, gm)
        grad_m = None
        if result.loss.requires_grad:
            (grad_m,) = torch.autograd.grad(result.loss, [self.loss.margins], allow_unused=True)
        return grad_m, result

    def _exact_meta_gradient_distributed(self, train_loss, meta_batch, lr: float):
        r"""The share of this rank in the exact meta gradient (Eq. (10)), under DDP.

        It is :math:`-\alpha\,\partial_m \langle v, \nabla_w L^T_r(w; m)\rangle` with
        :math:`v = \nabla_{\hat w} L^M(\hat w)`. The chain rule through
        :math:`\hat w(m) = w - \alpha \bar g(m)`, with :math:`\bar g`
        the mean over ranks of the local gradients :math:`g_r`, splits Eq. (10) into one term
        per rank; their mean (all-reduced by the caller) is the meta gradient of the global
        batch. :math:`\hat w` and :math:`v` are the same on every rank.
        """
        model_params = dict(self.model.named_parameters())
        names = self._lookahead_names
        params = [model_params[n] for n in names]
        local = self._train_gradients(train_loss, params, create_graph=True)
        mean = [
            torch.zeros_like(p) if gr is None else gr.detach().clone()
            for p, gr in zip(params, local, strict=True)
        ]
        all_reduce_mean_(mean)
        updated = {
            n: (p - lr * gm).detach().requires_grad_(True)
            for n, p, gm in zip(names, params, mean, strict=True)
        }
        buffers = {n: b.clone() for n, b in self.model.named_buffers()}
        xm, ym, gm_ = meta_batch
        meta_emb = functional_call(self.model, {**model_params, **updated, **buffers}, (xm,))
        result = self.meta_loss.compute(meta_emb, ym, gm_)
        if not result.loss.requires_grad:
            return None, result
        v = torch.autograd.grad(result.loss, list(updated.values()), allow_unused=True)
        terms = [
            (vi * gr).sum()
            for vi, gr in zip(v, local, strict=True)
            if vi is not None and gr is not None and gr.requires_grad
        ]
        if not terms:
            return torch.zeros_like(self.loss.margins), result
        (grad_m,) = torch.autograd.grad(sum(terms), [self.loss.margins], allow_unused=True)
        if grad_m is None:
            return torch.zeros_like(self.loss.margins), result
        return -lr * grad_m, result

    def _meta_direction(self, train_loss, meta_batch, lr: float):
        r"""First-order look-ahead :math:`\hat w`, and :math:`v = \nabla_{\hat w} L^M` there.

        Returns the look-ahead parameter names, their current values, ``v`` (``None`` when the
        meta loss does not depend on the parameters) and the meta loss result.
        """
        model_params = dict(self.model.named_parameters())
        names = self._lookahead_names
        params = [model_params[n] for n in names]
        grads = self._train_gradients(train_loss, params, create_graph=False)
        if self._world > 1:
            grads = [
                torch.zeros_like(p) if gr is None else gr.detach().clone()
                for p, gr in zip(params, grads, strict=True)
            ]
            all_reduce_mean_(grads)  # the look-ahead of the global batch, the same on every rank
        updated = {
            n: (p if gr is None else p - lr * gr).detach().requires_grad_(True)
            for n, p, gr in zip(names, params, grads, strict=True)
        }
        buffers = {n: b.clone() for n, b in self.model.named_buffers()}
        xm, ym, gm = meta_batch
        meta_emb = functional_call(self.model, {**model_params, **updated, **buffers}, (xm,))
        result = self.meta_loss.compute(meta_emb, ym, gm)
        if not result.loss.requires_grad:
            return names, params, None, result
        v = torch.autograd.grad(result.loss, list(updated.values()), allow_unused=True)
        v = [torch.zeros_like(p) if vi is None else vi for p, vi in zip(params, v, strict=True)]
        return names, params, v, result

    def _recorder(self) -> RecordedForward | None:
        """The fx-traced forward of the model (traced once, in training mode), if traceable."""
        if self._recorded_forward is _NOT_TRACED:
            self._recorded_forward = RecordedForward.trace(self.model)
        return self._recorded_forward

    def _forward_mode_meta_gradient(
        self, train_loss, batch, sample_weight, meta_batch, lr, emb, recording
    ):
        r"""The exact meta gradient with a Jacobian-vector product instead of a double backward.

        :math:`\nabla_m L^M(\hat w(m)) = -\alpha\,\partial_m \big(v^\top \nabla_w L^T(w; m)\big)`
        and :math:`v^\top \nabla_w L^T = \langle \nabla_e L^T(e; m), J_w e\, v\rangle`: the
        embeddings' directional derivative :math:`J_w e\, v` does not depend on the margins, so
        one forward-mode pass through the backbone and a double backward through the loss head
        alone give the same number as Eq. (10). With a recording of the step's forward, the
        forward-mode pass propagates tangents only (:mod:`fairot.face._tangents`); otherwise
        torch's forward-mode AD recomputes the forward beside them.
        """
        names, params, v, result = self._meta_direction(train_loss, meta_batch, lr)
        if v is None:
            return None, result
        emb_tangent = None
        if recording is not None:
            directions = {id(p): vi for p, vi in zip(params, v, strict=True)}
            emb_tangent = self._recorded_forward.tangent(recording, directions)
        if emb_tangent is None:
            emb_tangent = self._whole_model_tangent(batch[0], names, params, v)
        x, y, g = batch
        emb = emb.detach().requires_grad_(True)
        train_value = self.loss(emb, y, g, sample_weight=sample_weight)
        (grad_emb,) = torch.autograd.grad(train_value, [emb], create_graph=True)
        directional = (grad_emb * emb_tangent).sum()
        (grad_m,) = torch.autograd.grad(directional, [self.loss.margins], allow_unused=True)
        if grad_m is None:
            return torch.zeros_like(self.loss.margins), result
        return -lr * grad_m, result

    def _whole_model_tangent(self, x, names, params, v) -> torch.Tensor:
        """The embeddings' derivative along v by forward-mode AD through the whole model."""
        constants = {n: p.detach() for n, p in self.model.named_parameters()}
        buffers = {n: b.clone() for n, b in self.model.named_buffers()}
        with quiet_dual_level():
            duals = {
                n: forward_ad.make_dual(p.detach(), vi.detach())
                for n, p, vi in zip(names, params, v, strict=True)
            }
            out, tangent = forward_ad.unpack_dual(
                functional_call(self.model, {**constants, **duals, **buffers}, (x,))
            )
            return torch.zeros_like(out) if tangent is None else tangent.detach()

    def _finite_difference_meta_gradient(self, train_loss, batch, sample_weight, meta_batch, lr):
        r"""DARTS' approximation of the meta gradient, with no gradient through a gradient.

        With :math:`v = \nabla_{\hat w} L^M(\hat w)`,
        :math:`\nabla_m L^M(\hat w(m)) = -\alpha\, \partial_m \big(v^\top \nabla_w L^T(w; m)\big)
        \approx -\alpha\, [\nabla_m L^T(w + \epsilon v; m) - \nabla_m L^T(w - \epsilon v; m)]
        / (2\epsilon)`, :math:`\epsilon = 0.01 / \lVert v \rVert` (Eq. (8) of Liu et al., DARTS,
        ICLR 2019); the two extra forwards need a backward through the loss head only.
        """
        names, params, v, result = self._meta_direction(train_loss, meta_batch, lr)
        if v is None:
            return None, result
        model_params = dict(self.model.named_parameters())
        norm = torch.sqrt(sum((vi.double() ** 2).sum() for vi in v))
        if not float(norm) > 0:
            return torch.zeros_like(self.loss.margins), result
        eps = FD_SCALE / float(norm)
        x, y, g = batch
        side = []
        for sign in (1.0, -1.0):
            shifted = {
                n: (p + sign * eps * vi).detach() for n, p, vi in zip(names, params, v, strict=True)
            }
            buffers = {n: b.clone() for n, b in self.model.named_buffers()}
            with torch.no_grad():
                emb = functional_call(self.model, {**model_params, **shifted, **buffers}, (x,))
            shifted_loss = self.loss(emb, y, g, sample_weight=sample_weight)
            (grad_m,) = torch.autograd.grad(shifted_loss, [self.loss.margins])
            side.append(grad_m)
        return -lr * (side[0] - side[1]) / (2 * eps), result

    def _meta_step(
        self, train_loss, batch, sample_weight, meta_batch, lr: float, beta: float, emb, recording
    ):
        loss = self.loss
        if self.meta_gradient == "exact" and self._world > 1:
            grad_m, result = self._exact_meta_gradient_distributed(train_loss, meta_batch, lr)
        elif self.meta_gradient == "exact":
            grad_m, result = self._exact_meta_gradient(train_loss, meta_batch, lr)
        elif self.meta_gradient == "forward-mode":
            grad_m, result = self._forward_mode_meta_gradient(
                train_loss, batch, sample_weight, meta_batch, lr, emb, recording
            )
        else:
            grad_m, result = self._finite_difference_meta_gradient(
                train_loss, batch, sample_weight, meta_batch, lr
            )
        reuse = self.reuse_lookahead_gradient
        meta_value = float(result.loss.detach())
        if grad_m is None:
            grad_m = torch.zeros_like(loss.margins)
        if self._world > 1:
            grad_m = grad_m.detach().clone()
            all_reduce_mean_([grad_m])  # each rank's share of Eq. (10); identical margins after
        if not (math.isfinite(meta_value) and bool(torch.isfinite(grad_m).all())):
            raise DivergenceError(NAN_META_ERROR.format(value=meta_value, step=self.step_, lr=beta))
        for group in self.margin_optimizer_.param_groups:
            group["lr"] = beta
        self.margin_optimizer_.zero_grad(set_to_none=True)
        loss.margins.grad = grad_m.detach()
        self.margin_optimizer_.step()
        at_bound = loss.clamp_margins_()
        for gi in torch.nonzero(at_bound).flatten().tolist():
            if gi not in self._bound_logged:
                self._bound_logged.add(gi)
                logger.warning(
                    BOUND_LOG, gi, float(loss.margins[gi].detach()), self.step_, loss.margin_bounds
                )
        self._bound_logged &= set(torch.nonzero(at_bound).flatten().tolist())
        return meta_value, result.group_bias.cpu().tolist(), reuse

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
        _check_count(n_steps, "n_steps", low=0)
        _check_count(batch_size, "batch_size", low=1)
        _check_count(samples_per_identity, "samples_per_identity", low=1)
        _check_count(num_workers, "num_workers", low=0)
        if meta_batch_size is not None:
            _check_count(meta_batch_size, "meta_batch_size", low=1)
        if checkpoint_every is not None:
            _check_count(checkpoint_every, "checkpoint_every", low=0)
        train = as_tensor_dataset(train_data, "train_data", num_workers)
        self._rank, self._world = rank_and_world()
        if self._world > 1:
            # Every rank starts from rank 0's weights and margins, as DDP does.
            states = [*self.model.state_dict().values(), *self.loss.state_dict().values()]
            broadcast_([t for t in states if t.is_floating_point()])
        # Every rank draws the same global batch (same seeds) and trains on its own slice.
        train_sampler = RandomBatchSampler(
            len(train), batch_size * self._world, random_state=self._train_rng
        )
        share = slice(self._rank * batch_size, (self._rank + 1) * batch_size)
        meta_sampler = None
        if self.meta_loss is not None:
            if meta_data is None:
                raise ValueError(DATA_ERROR.format(name="meta_data", value=None))
            meta = as_tensor_dataset(meta_data, "meta_data", num_workers)
            n_groups = int(meta.groups.max()) + 1
            unit = n_groups * samples_per_identity
            # the global batch under torch.distributed: every rank embeds the whole meta batch
            size = meta_batch_size or max(unit, (batch_size * self._world // unit) * unit)
            meta_sampler = BalancedGroupSampler(
                meta.labels.numpy(),
                meta.groups.numpy(),
                size,
                samples_per_identity=samples_per_identity,
                random_state=self._meta_rng,
            )
        if not self._torch_seeded:
            torch.manual_seed(self.random_state)
            self._torch_seeded = True
        for cb in self.callbacks:
            cb.on_fit_start(self)
        bar = tqdm(
            total=n_steps,
            initial=self.step_,
            disable=not self.progress or self._rank != 0,
            desc="training",
            leave=False,
        )
        try:
            while self.step_ < n_steps:
                batch = train.batch(train_sampler.sample_batch()[share], self.device)
                meta_batch = None
                if meta_sampler is not None and self.step_ % self.meta_every == 0:
                    meta_batch = meta.batch(meta_sampler.sample_batch(), self.device)
                record = self.train_step(batch, meta_batch)
                for cb in self.callbacks:
                    cb.on_step_end(self, record)
                bar.update(1)
                if self.progress:
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
        for cb in self.callbacks:
            cb.on_fit_end(self)
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

    def save_checkpoint(self, path: str | Path) -> None:
        """Write :meth:`state_dict` to ``path`` atomically (``torch.save``).

        The new checkpoint goes to a temporary file in the same folder, is flushed to disk and
        only then replaces ``path``: a process killed mid-write leaves the previous checkpoint
        intact, never a truncated one. Callbacks' ``on_checkpoint`` hooks run first, so that
        what they persist (``history.csv``) is never behind the checkpoint.
        """
        path = Path(path)
        for cb in self.callbacks:
            cb.on_checkpoint(self, path)
        with atomic_write(path, "wb") as f:
            torch.save(self.state_dict(), f)
        # One trainer writes this path: temporaries beside it are from a killed run.
        remove_stale_temporaries(path)

    def load_checkpoint(self, path: str | Path) -> MetaBalancedTrainer:
        """Load a checkpoint written by :meth:`save_checkpoint`; returns ``self``.

        Raises
        ------
        FileNotFoundError
            If ``path`` does not exist.
        ValueError
            If the file is truncated or corrupt, or was written for another model, loss or
            method; the message names the file. The trainer is then left as it was.
        """
        path = Path(path)
        state = read_checkpoint(path, map_location=self.device)
        before = copy.deepcopy(self.state_dict())
        try:
            self.load_state_dict(state)
        except (RuntimeError, ValueError, KeyError, TypeError) as exc:
            self.load_state_dict(before)  # all or nothing: no half-loaded trainer
            raise ValueError(
                CHECKPOINT_FIT_ERROR.format(path=path, reason=_first_line(exc))
            ) from None
        return self
