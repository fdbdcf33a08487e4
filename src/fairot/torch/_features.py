r"""Random Fourier features :math:`\psi(s)` of the COT dual potentials, in torch.

The same features as :mod:`fairot.classification._features` (drawn by its
:func:`~fairot.classification.draw_fourier_features`, so one ``random_state`` gives the same
:math:`\omega, b` as :class:`~fairot.classification.COTClassifier`): exact cosines, or the numba
kernel's table on [0, 1] read by linear interpolation, whose derivative is the interpolated
:math:`\psi'` (not the slope of the interpolated :math:`\psi`), exactly as the kernel computes it.
"""

from __future__ import annotations

import math

import torch


def exact_features(s: torch.Tensor, frequencies: torch.Tensor, phases: torch.Tensor):
    r""":math:`\psi(s) = \sqrt{2/D}\cos(\omega s + b)`, shape (n, D), differentiable in s."""
    d = frequencies.shape[0]
    return math.sqrt(2.0 / d) * torch.cos(s[:, None] * frequencies + phases)


class _TabulatedFeatures(torch.autograd.Function):
    r"""Interpolated :math:`\psi` whose backward uses the interpolated :math:`\psi'`."""

    @staticmethod
    def forward(s, values, derivatives):
        grid = values.shape[0] - 1
        t = s * grid
        k = torch.clamp(t.long(), max=grid - 1)
        w = (t - k)[:, None]
        psi = (1.0 - w) * values[k] + w * values[k + 1]
        dpsi = (1.0 - w) * derivatives[k] + w * derivatives[k + 1]
        return psi, dpsi

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output[1])
        ctx.mark_non_differentiable(output[1])

    @staticmethod
    def backward(ctx, grad_psi, grad_dpsi):
        (dpsi,) = ctx.saved_tensors
        return (grad_psi * dpsi).sum(dim=1), None, None


def tabulated_features(s: torch.Tensor, values: torch.Tensor, derivatives: torch.Tensor):
    r""":math:`\psi(s)` read from a table on [0, 1] (cell ``min(floor(sG), G-1)``, as in numba)."""
    return _TabulatedFeatures.apply(s, values, derivatives)[0]
