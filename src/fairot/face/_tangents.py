r"""The embeddings' derivative along a weight direction, from a recorded forward pass.

MBN's exact meta gradient in forward mode (see :class:`~fairot.face.MetaBalancedTrainer`) needs
:math:`J_w e\, v`: how the training batch's embeddings move when the weights move along the
meta direction :math:`v`, at the very point where the step's forward was just computed. torch's
forward-mode AD recomputes that forward beside the tangents — three convolutions per
convolution layer. :class:`RecordedForward` runs the step's forward node by node over a
``torch.fx`` trace of the model, keeps every intermediate value, and then propagates tangents
alone: a convolution's tangent is :math:`\mathrm{conv}(t, W) + \mathrm{conv}(x, V)` with the
recorded input :math:`x` — two convolutions — and BatchNorm, PReLU, Linear and dropout have
closed-form tangents too. Every other node is differentiated by forward-mode AD on its recorded
inputs, so any traceable model gets the exact directional derivative.

A model that ``torch.fx`` cannot trace, or a forward that overwrote a recorded value in place
(``nn.ReLU(inplace=True)``, ``out += identity``), makes :meth:`RecordedForward.trace` or
:meth:`RecordedForward.tangent` return ``None``; the caller then falls back to forward-mode AD
through the whole model.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import fx, nn
from torch.autograd import forward_ad
from torch.func import functional_call

__all__ = ["RecordedForward", "quiet_dual_level"]

logger = logging.getLogger("fairot.face")

_CONVOLUTIONS = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
#: Dropout layers whose output is the input times a random 0/scale mask (the alpha variants
#: rescale and shift instead, so they go through the generic rule).
_MASK_DROPOUTS = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d)

Directions = Mapping[int, torch.Tensor]


class _RecordingInterpreter(fx.Interpreter):
    """Runs the trace with autograd on, keeping every node's value and its version counter."""

    def __init__(self, graph_module: fx.GraphModule) -> None:
        super().__init__(graph_module, garbage_collect_values=False)
        self.versions: dict[fx.Node, int] = {}

    def run_node(self, n: fx.Node) -> Any:
        value = super().run_node(n)
        if isinstance(value, torch.Tensor):
            self.versions[n] = value._version
        return value


class Recording:
    """The values of one recorded forward; :meth:`RecordedForward.tangent` reads them."""

    def __init__(self, values: dict[fx.Node, Any], versions: dict[fx.Node, int]) -> None:
        self.values = values
        self.versions = versions

    def intact(self) -> bool:
        """False when the forward overwrote a recorded tensor in place after producing it."""
        return all(self.values[n]._version == v for n, v in self.versions.items())


class RecordedForward:
    """A model's forward that can afterwards give the output's derivative along a direction.

    Build it with :meth:`trace`; call :meth:`forward` instead of ``model(inputs)`` (the same
    operations, in the same order, on the model's own modules and parameters), then
    :meth:`tangent` with a direction for some of the parameters.
    """

    def __init__(self, graph_module: fx.GraphModule) -> None:
        self.graph_module = graph_module
        # A tangent is dropped after its last reader, as the forward drops its values.
        position = {node: i for i, node in enumerate(graph_module.graph.nodes)}
        self._last_readers: dict[fx.Node, list[fx.Node]] = {}
        for node in graph_module.graph.nodes:
            if node.users:
                last = max(node.users, key=position.__getitem__)
                self._last_readers.setdefault(last, []).append(node)

    @classmethod
    def trace(cls, model: nn.Module) -> RecordedForward | None:
        """Trace ``model`` with ``torch.fx``; ``None`` when it cannot be traced.

        Trace in the mode the recorded forward will run in: ``torch.fx`` freezes Python
        branches on ``self.training`` written in a custom ``forward``.
        """
        try:
            graph_module = fx.symbolic_trace(model)
        except Exception as exc:  # noqa: BLE001 - any tracing failure means "use the fallback"
            logger.info(
                "forward-mode meta gradient: %s is not fx-traceable (%s); "
                "using forward-mode AD through the whole model",
                type(model).__name__,
                exc,
            )
            return None
        return cls(graph_module)

    def forward(self, *inputs: torch.Tensor) -> tuple[Any, Recording]:
        """The model's output (autograd on, as ``model(*inputs)``) and the recording."""
        interpreter = _RecordingInterpreter(self.graph_module)
        output = interpreter.run(*inputs)
        return output, Recording(interpreter.env, interpreter.versions)

    @torch.no_grad()
    def tangent(self, recording: Recording, directions: Directions) -> torch.Tensor | None:
        r"""Derivative of the recorded output along the parameter directions.

        Parameters
        ----------
        recording : Recording
            From :meth:`forward` at the current parameters.
        directions : mapping of ``id(parameter)`` to tensor
            The direction :math:`v` for each parameter that moves; the others stay fixed.

        Returns
        -------
        torch.Tensor or None
            :math:`\frac{d}{dh} f(w + h v)\big|_{h=0}`, shaped as the output (zeros when the
            output does not depend on the moving parameters); ``None`` when the recording was
            overwritten in place or the model returns several outputs, so that the caller
            computes it another way.
        """
        if not recording.intact():
            logger.info(
                "forward-mode meta gradient: the forward modified a recorded value in "
                "place; using forward-mode AD through the whole model"
            )
            return None
        values = recording.values
        tangents: dict[fx.Node, Any] = {}
        for node in self.graph_module.graph.nodes:
            if node.op == "output":
                output_node = node.args[0]
                break
            if node.op == "placeholder":
                tangents[node] = None
            elif node.op == "get_attr":
                tangents[node] = directions.get(id(values[node]))
            else:
                in_tangents = fx.node.map_arg((node.args, node.kwargs), lambda n: tangents[n])
                if _all_none(in_tangents) and not self._moves(node, directions):
                    tangents[node] = None  # no path from a moving parameter: skip the work
                else:
                    tangents[node] = self._node_tangent(node, values, tangents, directions)
            for read in self._last_readers.get(node, ()):
                del tangents[read]
        if not isinstance(output_node, fx.Node):
            return None  # several outputs: not an embedding model
        out = tangents.get(output_node)
        return torch.zeros_like(values[output_node]) if out is None else out

    def _moves(self, node: fx.Node, directions: Directions) -> bool:
        if node.op != "call_module":
            return False
        module = self.graph_module.get_submodule(node.target)
        return any(id(p) in directions for p in module.parameters())

    def _node_tangent(self, node, values, tangents, directions) -> Any:
        args = fx.node.map_arg(node.args, lambda n: values[n])
        if node.op == "call_module":
            module = self.graph_module.get_submodule(node.target)
            rule = _module_rule(module)
            if rule is not None and len(node.args) == 1 and not node.kwargs:
                t = tangents[node.args[0]]
                return rule(module, args[0], t, values[node], directions)
            return _generic_tangent(node, module, values, tangents, directions)
        if node.op == "call_function" and node.target is F.dropout:
            t = tangents[node.args[0]] if isinstance(node.args[0], fx.Node) else None
            return None if t is None else _mask_tangent(args[0], t, values[node])
        return _generic_tangent(node, None, values, tangents, directions)


def _all_none(tree: Any) -> bool:
    """True when a nest of tuples, lists and dicts holds no tangent."""
    if isinstance(tree, (tuple, list)):
        return all(_all_none(item) for item in tree)
    if isinstance(tree, dict):
        return all(_all_none(item) for item in tree.values())
    return tree is None


def _accumulate(fresh: torch.Tensor | None, b: torch.Tensor) -> torch.Tensor:
    """``fresh + b``, in place when there is a ``fresh`` tensor (one this module just made)."""
    return b if fresh is None else fresh.add_(b)


def _channel_view(param: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A per-channel parameter shaped to broadcast over ``x``'s dimension 1."""
    return param.reshape(1, -1, *([1] * (x.ndim - 2)))


# ------------------------------------------------------------------------- closed-form rules
def _conv_tangent(module, x, t, y, directions):
    """conv(t, W) + conv(x, V) + V_b: the recorded input replaces the primal recomputation."""
    dw, db = _direction(module, "weight", directions), _direction(module, "bias", directions)
    out = None if t is None else module._conv_forward(t, module.weight, None)
    if dw is not None:
        out = _accumulate(out, module._conv_forward(x, dw, db))
    elif db is not None:
        out = _accumulate(out, _channel_view(db, y).expand_as(y))
    return out


def _linear_tangent(module, x, t, y, directions):
    dw, db = _direction(module, "weight", directions), _direction(module, "bias", directions)
    out = None if t is None else F.linear(t, module.weight)
    if dw is not None:
        out = _accumulate(out, F.linear(x, dw, db))
    elif db is not None:
        out = _accumulate(out, db.expand_as(y))
    return out


def _batch_norm_tangent(module, x, t, y, directions):
    r"""Tangent of :math:`\gamma \hat x + \beta`, :math:`\hat x = (x - \mu)/\sigma`.

    With batch statistics (training, or no running statistics) the mean and variance move with
    the input: :math:`\dot{\hat x} = (t - \bar t - \hat x\, \overline{t \hat x}) / \sigma`
    (bars: means over every dimension but the channel's); with running statistics,
    :math:`\dot{\hat x} = t / \sigma`. That Jacobian is symmetric, so BatchNorm's own backward
    kernel applies it; BatchNorm's forward kernel with weight :math:`\dot\gamma` and bias
    :math:`\dot\beta` gives the parameters' part :math:`\dot\gamma \hat x + \dot\beta`.
    """
    batch_statistics = module.training or module.running_mean is None
    running = (None, None) if batch_statistics else (module.running_mean, module.running_var)
    d_gamma = _direction(module, "weight", directions)
    d_beta = _direction(module, "bias", directions)
    if d_gamma is None and d_beta is not None:
        d_gamma = torch.zeros_like(d_beta)
    moved, mean, inv_std = torch.ops.aten.native_batch_norm(
        x, d_gamma, d_beta, *running, batch_statistics, 0.0, module.eps
    )
    parameters_move = d_gamma is not None
    if t is None:
        return moved if parameters_move else None
    weight = module.weight if module.affine else None
    out = torch.ops.aten.native_batch_norm_backward(
        t, x, weight, *running, mean, inv_std, batch_statistics, module.eps, [True, False, False]
    )[0]
    return out.add_(moved) if parameters_move else out


def _prelu_tangent(module, x, t, y, directions):
    """prelu(x) = x where x > 0, a·x elsewhere (a per channel, or one slope for all).

    Tangent: t where x > 0, a·t where x < 0, plus min(x, 0)·da. The two halves come from ReLU's
    backward kernel, ``threshold_backward`` (exact: one of them is zero at each element);
    ``torch.where`` and PReLU's own backward are several times slower on CPU.
    """
    slope = module.weight if module.weight.numel() == 1 else _channel_view(module.weight, x)
    out = None
    if t is not None:
        out = torch.ops.aten.threshold_backward(t, x, 0.0)
        out += torch.ops.aten.threshold_backward(t * slope, x.neg(), 0.0)
    d_slope = _direction(module, "weight", directions)
    if d_slope is not None:
        d_slope = d_slope if d_slope.numel() == 1 else _channel_view(d_slope, x)
        moved = x.clamp(max=0)
        out = moved.mul_(d_slope) if out is None else out.addcmul_(moved, d_slope)
    return out


def _dropout_tangent(module, x, t, y, directions):
    if t is None or not module.training or module.p == 0:
        return t
    return _mask_tangent(x, t, y)


def _mask_tangent(x, t, y):
    """Dropout keeps the recorded mask: the output is zero exactly where the mask dropped.

    (Where the input itself was zero the mask cannot be read back; there the tangent is taken
    as zero, which is exact after a ReLU and a measure-zero event otherwise.)
    """
    kept = y != 0
    scale = torch.where(kept, y / torch.where(kept, x, 1.0), 0.0)
    return t * scale


def _direction(module: nn.Module, name: str, directions: Directions) -> torch.Tensor | None:
    param = getattr(module, name, None)
    return None if param is None else directions.get(id(param))


def _module_rule(module: nn.Module):
    if isinstance(module, _CONVOLUTIONS):
        return _conv_tangent
    if isinstance(module, nn.Linear):
        return _linear_tangent
    if isinstance(module, nn.modules.batchnorm._BatchNorm) and not isinstance(
        module, nn.SyncBatchNorm
    ):
        return _batch_norm_tangent
    if isinstance(module, nn.PReLU):
        return _prelu_tangent
    if isinstance(module, _MASK_DROPOUTS):
        return _dropout_tangent
    return None


# ------------------------------------------------------------------------------ generic rule
@contextlib.contextmanager
def quiet_dual_level() -> Iterator[None]:
    """``forward_ad.dual_level()``, silencing torch's own deprecation warning.

    torch loads its forward-AD decompositions through the deprecated ``torch.jit.script`` on
    first use; nothing for a caller to act on.
    """
    with warnings.catch_warnings(), forward_ad.dual_level():
        warnings.filterwarnings(
            "ignore", message=".*torch.jit.script.*", category=DeprecationWarning
        )
        yield


def _generic_tangent(node, module, values, tangents, directions) -> Any:
    """Forward-mode AD of one node on its recorded inputs (copies: the op may work in place)."""
    with quiet_dual_level():
        args, kwargs = fx.node.map_arg(
            (node.args, node.kwargs), lambda n: _dual(values[n], tangents[n])
        )
        if module is not None:
            state = {name: b.clone() for name, b in module.named_buffers()}
            for name, p in module.named_parameters():
                d = directions.get(id(p))
                state[name] = p if d is None else forward_ad.make_dual(p, d)
            out = functional_call(module, state, tuple(args), kwargs)
        elif node.op == "call_method":
            self_arg, *rest = args
            out = getattr(self_arg, node.target)(*rest, **kwargs)
        else:
            out = node.target(*args, **kwargs)
        return _tangent_of(out)


def _dual(value: Any, tangent: Any) -> Any:
    if tangent is None:
        return value.clone() if isinstance(value, torch.Tensor) else value
    if isinstance(value, torch.Tensor):
        return forward_ad.make_dual(value.clone(), tangent.clone())
    if isinstance(value, (tuple, list)):
        return _rebuild(value, [_dual(v, t) for v, t in zip(value, tangent, strict=True)])
    return value


def _tangent_of(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return forward_ad.unpack_dual(value).tangent
    if isinstance(value, (tuple, list)):
        items = [_tangent_of(v) for v in value]
        return None if _all_none(items) else _rebuild(value, items)
    return None  # shapes, numbers: no tangent


def _rebuild(value: tuple | list, items: list) -> tuple | list:
    """A sequence like ``value`` (a list, tuple or named tuple) holding ``items``."""
    if isinstance(value, list):
        return items
    if hasattr(value, "_fields"):
        return type(value)(*items)
    return tuple(items)
