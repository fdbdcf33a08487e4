r"""Random Fourier features :math:`\psi(s)` of the COT dual potentials, and their derivatives.

The same features as :mod:`fairot.classification._features` (drawn by its
:func:`~fairot.classification.draw_fourier_features`, so one ``random_state`` gives the same
:math:`\omega, b` as :class:`~fairot.classification.COTClassifier`): exact cosines, or the numba
kernel's table on [0, 1] read by linear interpolation, whose derivative is the interpolated
:math:`\psi'` (not the slope of the interpolated :math:`\psi`), exactly as the kernel computes it.
The penalty differentiates the dual objective in closed form, so these are plain tensors.
"""

from __future__ import annotations

import math

import torch


def exact_features(
    s: torch.Tensor, frequencies: torch.Tensor, phases: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    r""":math:`\psi(s) = \sqrt{2/D}\cos(\omega s + b)` and :math:`\psi'(s)`, each (n, D)."""
    scale = math.sqrt(2.0 / frequencies.shape[0])
    angle = s[:, None] * frequencies + phases
    return scale * torch.cos(angle), -scale * frequencies * torch.sin(angle)


def tabulated_features(
    s: torch.Tensor, values: torch.Tensor, derivatives: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    r""":math:`\psi(s)` and :math:`\psi'(s)` read from a table on [0, 1] (as the numba kernel).

    Cell ``k = min(floor(s G), G - 1)``, weight ``s G - k``, for both tables.
    """
    grid = values.shape[0] - 1
    t = s * grid
    k = torch.clamp(t.long(), max=grid - 1)
    w = (t - k)[:, None]
    psi = (1.0 - w) * values[k] + w * values[k + 1]
    dpsi = (1.0 - w) * derivatives[k] + w * derivatives[k + 1]
    return psi, dpsi
