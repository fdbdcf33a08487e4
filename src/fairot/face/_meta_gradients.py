r"""MBN's meta gradient :math:`\partial L^M(\hat w(m)) / \partial m`, three ways, one look-ahead.

Every way starts from the same look-ahead (:func:`look_ahead`): the first-order step
:math:`\hat w = w - \alpha \bar g` with :math:`\bar g = \nabla_w L^T(w; m)` (under
``torch.distributed`` the mean over the ranks), the meta loss :math:`L^M` of the meta batch
embedded with :math:`\hat w`, and :math:`v = \nabla_{\hat w} L^M(\hat w)`. The chain rule through
:math:`\hat w(m)` then gives

.. math::

    \nabla_m L^M(\hat w(m)) = -\alpha\, \partial_m \big\langle v, \nabla_w L^T(w; m) \big\rangle,

with :math:`v` held fixed, which the three ways evaluate differently:

- ``"exact"`` (:func:`exact_meta_gradient`): a backward through the gradient kept with
  ``create_graph=True`` (Eq. (10) of MBN). Under ``torch.distributed`` each rank differentiates
  its own share :math:`\langle v, \nabla_w L^T_r\rangle` and the trainer all-reduces the mean:
  the same code path, one all-reduce more.
- ``"forward-mode"`` (:func:`forward_mode_meta_gradient`):
  :math:`\langle v, \nabla_w L^T\rangle = \langle \nabla_e L^T(e; m), J_w e\, v\rangle`, the
  Jacobian-vector product of the embeddings :math:`e` by :func:`torch.func.jvp`, then a double
  backward through the loss head only.
- ``"finite-difference"`` (:func:`finite_difference_meta_gradient`): DARTS' central difference
  of :math:`\nabla_m L^T` at :math:`w \pm \epsilon v`; no double backward at all.

:func:`meta_step` runs one of them for a trainer and then the margins' step (:func:`margin_step`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch import nn
from torch.func import functional_call, jvp

from fairot.exceptions import DivergenceError

from ._distributed import all_reduce_mean_

__all__ = [
    "FD_SCALE",
    "META_GRADIENTS",
    "NAN_META_ERROR",
    "RngState",
    "embedding_tangent",
    "exact_meta_gradient",
    "finite_difference_meta_gradient",
    "forward_mode_meta_gradient",
    "look_ahead",
    "margin_step",
    "meta_step",
    "rng_state",
    "train_gradients",
]

#: Ways to compute the meta gradient d L^M / d m (see MetaBalancedTrainer).
META_GRADIENTS = ("exact", "forward-mode", "finite-difference")
#: Step of the finite-difference meta gradient, relative to the norm of the meta gradient v
#: (DARTS' 0.01).
FD_SCALE = 0.01

logger = logging.getLogger("fairot.face")
NAN_META_ERROR = (
    "the meta skewness loss or the margin gradient became {value} at step {step} (margin learning "
    "rate {lr:g}). Likely cause: margin_learning_rate too large or a diverging look-ahead; lower "
    "margin_learning_rate or the learning rate."
)
BOUND_LOG = "margin of group %d reached its bound %.4g at step %d (margin_bounds=%s)."

#: torch's generator states before a step's forward: (CPU state, accelerator state or None).
RngState = tuple[torch.Tensor, torch.Tensor | None]
Batch = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


def train_gradients(
    train_loss: torch.Tensor,
    params: Sequence[torch.Tensor],
    w_params: Sequence[torch.Tensor],
    *,
    reuse: bool,
    create_graph: bool,
) -> list[torch.Tensor | None]:
    r""":math:`\nabla L^T` of the look-ahead parameters ``params``.

    With ``reuse`` the gradient of every trained parameter ``w_params`` comes out of the same
    backward and is set as their ``.grad`` now (detached): the model step reuses it instead of
    a second backward at the new margins.
    """
    wanted = list(w_params) if reuse else list(params)
    grads = torch.autograd.grad(
        train_loss, wanted, create_graph=create_graph, retain_graph=True, allow_unused=True
    )
    if not reuse:
        return list(grads)
    for p, grad in zip(w_params, grads, strict=True):
        p.grad = None if grad is None else grad.detach()
    by_param = {id(p): grad for p, grad in zip(w_params, grads, strict=True)}
    return [by_param[id(p)] for p in params]


def look_ahead(
    model: nn.Module,
    names: Sequence[str],
    grads: Sequence[torch.Tensor | None],
    learning_rate: float,
    meta_loss: nn.Module,
    meta_batch: Batch,
    *,
    distributed: bool,
) -> tuple[list[torch.Tensor] | None, Any]:
    r"""The meta loss at :math:`\hat w = w - \alpha \bar g`, and :math:`v = \nabla_{\hat w} L^M`.

    Parameters
    ----------
    model : nn.Module
        The backbone; its parameters not in ``names`` stay at :math:`w`.
    names : sequence of str
        The look-ahead parameters (the trainer's ``lookahead``).
    grads : sequence of Tensor or None
        :math:`\nabla_w L^T` of those parameters (this rank's, under ``torch.distributed``).
    learning_rate : float
        :math:`\alpha`.
    meta_loss : MetaSkewnessLoss
    meta_batch : (inputs, labels, groups)
    distributed : bool
        Average ``grads`` over the ranks first: the look-ahead of the global batch, the same on
        every rank.

    Returns
    -------
    v : list of Tensor or None
        One tensor per look-ahead parameter (zeros where :math:`L^M` does not reach it);
        ``None`` when the meta loss does not depend on the parameters at all.
    result : SkewnessResult
        What the meta loss measured.
    """
    model_params = dict(model.named_parameters())
    params = [model_params[n] for n in names]
    step = [
        torch.zeros_like(p) if grad is None else grad.detach().clone()
        for p, grad in zip(params, grads, strict=True)
    ]
    if distributed:
        all_reduce_mean_(step)
    updated = {
        n: (p - learning_rate * s).detach().requires_grad_(True)
        for n, p, s in zip(names, params, step, strict=True)
    }
    # Cloned buffers take the meta forward's BatchNorm statistics updates, so the real running
    # statistics see training batches only.
    buffers = {n: b.clone() for n, b in model.named_buffers()}
    xm, ym, gm = meta_batch
    meta_emb = functional_call(model, {**model_params, **updated, **buffers}, (xm,))
    result = meta_loss.compute(meta_emb, ym, gm)
    if not result.loss.requires_grad:
        return None, result
    v = torch.autograd.grad(result.loss, list(updated.values()), allow_unused=True)
    return [
        torch.zeros_like(p) if vi is None else vi for p, vi in zip(params, v, strict=True)
    ], result


def exact_meta_gradient(
    margins: torch.Tensor,
    grads: Sequence[torch.Tensor | None],
    v: Sequence[torch.Tensor],
    learning_rate: float,
) -> torch.Tensor:
    r""":math:`-\alpha\,\partial_m \langle v, \nabla_w L^T(w; m)\rangle` through the kept graph.

    ``grads`` are this rank's :math:`\nabla_w L^T`, computed with ``create_graph=True``.
    """
    terms = [
        (vi * grad).sum()
        for vi, grad in zip(v, grads, strict=True)
        if grad is not None and grad.requires_grad
    ]
    if not terms:
        return torch.zeros_like(margins)
    (grad_m,) = torch.autograd.grad(sum(terms), [margins], allow_unused=True)
    return torch.zeros_like(margins) if grad_m is None else -learning_rate * grad_m


def rng_state(device: torch.device) -> RngState:
    """Return torch's generator states now, to replay a forward's random draws (dropout masks)."""
    cuda = device.type == "cuda"
    return torch.get_rng_state(), torch.cuda.get_rng_state(device) if cuda else None


@contextlib.contextmanager
def _replayed(state: RngState | None, device: torch.device) -> Iterator[None]:
    """Run with torch's generators at ``state``; they are back where they were afterwards."""
    if state is None:
        yield
        return
    cpu, accelerator = state
    with torch.random.fork_rng(devices=[device] if accelerator is not None else []):
        torch.set_rng_state(cpu)
        if accelerator is not None:
            torch.cuda.set_rng_state(accelerator, device)
        yield


@contextlib.contextmanager
def _quiet_forward_ad() -> Iterator[None]:
    """Silence torch's own deprecation warning on its first forward-mode AD call.

    torch loads its forward-AD decompositions through the deprecated ``torch.jit.script``;
    nothing for a caller to act on.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=".*torch.jit.script.*", category=DeprecationWarning
        )
        yield


def embedding_tangent(
    model: nn.Module,
    inputs: torch.Tensor,
    names: Sequence[str],
    params: Sequence[torch.Tensor],
    v: Sequence[torch.Tensor],
    rng: RngState | None = None,
) -> torch.Tensor:
    r""":math:`J_w e\, v`: the embeddings' derivative as the ``names`` parameters move along v.

    ``rng`` (taken by :func:`rng_state` before the step's forward) replays that forward's
    random draws, so that the tangent is the one of the step's own forward (same dropout masks);
    torch's generators are left as they were. The model's buffers are not modified.
    """
    moving = set(names)
    fixed = {n: p.detach() for n, p in model.named_parameters() if n not in moving}

    def embed(*weights: torch.Tensor) -> torch.Tensor:
        # Buffers cloned inside: BatchNorm writes its running statistics into them, and jvp
        # refuses writes into tensors captured from outside the transformed function.
        buffers = {n: b.clone() for n, b in model.named_buffers()}
        state = {**fixed, **buffers, **dict(zip(names, weights, strict=True))}
        return functional_call(model, state, (inputs,))

    with _quiet_forward_ad(), _replayed(rng, inputs.device):
        if not params:  # nothing moves (jvp needs a primal): the embeddings stay put
            with torch.no_grad():
                return torch.zeros_like(embed())
        primals = tuple(p.detach() for p in params)
        _, tangent = jvp(embed, primals, tuple(vi.detach() for vi in v))
    return tangent


def forward_mode_meta_gradient(
    model: nn.Module,
    head: nn.Module,
    batch: Batch,
    emb: torch.Tensor,
    sample_weight: torch.Tensor | None,
    names: Sequence[str],
    params: Sequence[torch.Tensor],
    v: Sequence[torch.Tensor],
    learning_rate: float,
    rng: RngState | None,
) -> torch.Tensor:
    r"""The exact meta gradient with a Jacobian-vector product instead of a double backward.

    :math:`v^\top \nabla_w L^T = \langle \nabla_e L^T(e; m), J_w e\, v\rangle`: the embeddings'
    directional derivative :math:`J_w e\, v` does not depend on the margins, so one
    forward-mode pass through the backbone (:func:`embedding_tangent`) and a double backward
    through the loss head alone give the same number as Eq. (10). ``emb`` are the step's
    embeddings of ``batch``.
    """
    tangent = embedding_tangent(model, batch[0], names, params, v, rng)
    _, y, g = batch
    emb = emb.detach().requires_grad_(True)
    train_value = head(emb, y, g, sample_weight=sample_weight)
    (grad_emb,) = torch.autograd.grad(train_value, [emb], create_graph=True)
    directional = (grad_emb * tangent).sum()
    (grad_m,) = torch.autograd.grad(directional, [head.margins], allow_unused=True)
    return torch.zeros_like(head.margins) if grad_m is None else -learning_rate * grad_m


def finite_difference_meta_gradient(
    model: nn.Module,
    head: nn.Module,
    batch: Batch,
    sample_weight: torch.Tensor | None,
    names: Sequence[str],
    params: Sequence[torch.Tensor],
    v: Sequence[torch.Tensor],
    learning_rate: float,
) -> torch.Tensor:
    r"""DARTS' approximation of the meta gradient, with no gradient through a gradient.

    :math:`\nabla_m L^M(\hat w(m)) \approx -\alpha\, [\nabla_m L^T(w + \epsilon v; m) -
    \nabla_m L^T(w - \epsilon v; m)] / (2\epsilon)`, :math:`\epsilon = 0.01 / \lVert v \rVert`
    (Eq. (8) of Liu et al., DARTS, ICLR 2019); the two extra forwards need a backward through the
    loss head only.
    """
    model_params = dict(model.named_parameters())
    norm = torch.sqrt(sum((vi.double() ** 2).sum() for vi in v))
    if not float(norm) > 0:
        return torch.zeros_like(head.margins)
    eps = FD_SCALE / float(norm)
    x, y, g = batch
    side = []
    for sign in (1.0, -1.0):
        shifted = {
            n: (p + sign * eps * vi).detach() for n, p, vi in zip(names, params, v, strict=True)
        }
        buffers = {n: b.clone() for n, b in model.named_buffers()}
        with torch.no_grad():
            emb = functional_call(model, {**model_params, **shifted, **buffers}, (x,))
        shifted_loss = head(emb, y, g, sample_weight=sample_weight)
        (grad_m,) = torch.autograd.grad(shifted_loss, [head.margins])
        side.append(grad_m)
    return -learning_rate * (side[0] - side[1]) / (2 * eps)


def meta_step(
    trainer: Any,
    train_loss: torch.Tensor,
    batch: Batch,
    emb: torch.Tensor,
    sample_weight: torch.Tensor | None,
    meta_batch: Batch,
    learning_rate: float,
    margin_learning_rate: float,
    rng: RngState | None = None,
    *,
    lookahead_names: list[str],
    trained_params: list[torch.Tensor],
    distributed: bool,
    bound_logged: set[int],
) -> tuple[float, list[float]]:
    r"""Steps 1-2 of Algorithm 1 for a :class:`~fairot.face.MetaBalancedTrainer`.

    The meta gradient by the trainer's ``meta_gradient`` (under ``torch.distributed`` each
    rank's share, all-reduced here), then :func:`margin_step`. ``emb`` are the step's embeddings
    of ``batch``; ``rng`` the generators' state before they were computed (forward mode).
    The trainer's own state comes in explicitly: ``lookahead_names`` (the parameters of the
    look-ahead), ``trained_params`` (the parameters ``w`` of the training loss), whether the run
    is ``distributed``, and ``bound_logged`` (the groups whose margin sits at a bound, updated
    in place).

    Returns
    -------
    meta_value : float
        The meta loss :math:`L^M(\hat w)`.
    group_bias : list of float
        The skewness the meta loss measured per group.

    Raises
    ------
    DivergenceError
        If the meta loss or the meta gradient is not finite.
    """
    model, head, mode = trainer.model, trainer.loss, trainer.meta_gradient
    names = lookahead_names
    model_params = dict(model.named_parameters())
    params = [model_params[n] for n in names]
    exact = mode == "exact"
    grads = train_gradients(
        train_loss,
        params,
        trained_params,
        reuse=trainer.reuse_lookahead_gradient,
        create_graph=exact,
    )
    v, result = look_ahead(
        model, names, grads, learning_rate, trainer.meta_loss, meta_batch, distributed=distributed
    )
    if v is None:
        grad_m = torch.zeros_like(head.margins)
    elif exact:
        grad_m = exact_meta_gradient(head.margins, grads, v, learning_rate)
    elif mode == "forward-mode":
        grad_m = forward_mode_meta_gradient(
            model, head, batch, emb, sample_weight, names, params, v, learning_rate, rng
        )
    else:
        grad_m = finite_difference_meta_gradient(
            model, head, batch, sample_weight, names, params, v, learning_rate
        )
    meta_value = float(result.loss.detach())
    if distributed:
        grad_m = grad_m.detach().clone()
        all_reduce_mean_([grad_m])  # each rank's share of Eq. (10); identical margins after
    if not (math.isfinite(meta_value) and bool(torch.isfinite(grad_m).all())):
        raise DivergenceError(
            NAN_META_ERROR.format(value=meta_value, step=trainer.step_, lr=margin_learning_rate)
        )
    margin_step(
        trainer.margin_optimizer_,
        head,
        grad_m,
        margin_learning_rate,
        bound_logged,
        trainer.step_,
    )
    return meta_value, result.group_bias.cpu().tolist()


def margin_step(
    optimizer: torch.optim.Optimizer,
    head: nn.Module,
    grad_m: torch.Tensor,
    learning_rate: float,
    bound_logged: set[int],
    step: int,
) -> None:
    r"""The margins' SGD step on the meta gradient (Eq. (10)), clamped into their bounds.

    A group whose margin reaches its bound is logged once until it leaves the bound again
    (``bound_logged``, the trainer's set, is updated in place).
    """
    for group in optimizer.param_groups:
        group["lr"] = learning_rate
    optimizer.zero_grad(set_to_none=True)
    head.margins.grad = grad_m.detach()
    optimizer.step()
    at_bound = torch.nonzero(head.clamp_margins_()).flatten().tolist()
    for gi in at_bound:
        if gi not in bound_logged:
            bound_logged.add(gi)
            logger.warning(
                BOUND_LOG, gi, float(head.margins[gi].detach()), step, head.margin_bounds
            )
    bound_logged &= set(at_bound)
