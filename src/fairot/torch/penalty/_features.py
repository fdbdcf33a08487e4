r"""Random Fourier features :math:`\psi(s)` of the COT dual potentials, and their derivatives.

The penalty uses the features of :mod:`fairot.transport` (drawn by its
:func:`~fairot.transport.draw_fourier_features`, so one ``random_state`` gives the same
:math:`\omega, b` as :class:`~fairot.classification.COTClassifier`): exact cosines, or the numba
kernel's table on [0, 1] read here by linear interpolation. The derivative is the interpolated
:math:`\psi'` (not the slope of the interpolated :math:`\psi`), exactly as the kernel computes
it. The penalty differentiates the dual objective in closed form, so these are plain tensors.

Internal surface (for :mod:`fairot.torch.penalty._cot` and :mod:`fairot.torch.penalty._penalty`):
:class:`FeatureMap`, :func:`feature_map`, :func:`interpolate_table`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


def interpolate_table(s: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    r"""Rows of ``table`` (values at the grid points ``k / G`` of [0, 1]) interpolated at ``s``.

    Cell ``k = min(floor(s G), G - 1)``, weight ``s G - k``, as the numba kernel reads its
    :math:`\psi` and :math:`\psi'` tables (here stacked in one table of shape ``(G + 1, 2, D)``,
    so that one pass reads both). Returns ``(n, *table.shape[1:])``.
    """
    grid = table.shape[0] - 1
    t = s * grid
    # Clamped below too: the penalty checks the scores' range after COT's pass, which must not
    # fail before on a NaN or negative score.
    k = torch.clamp(t.long(), min=0, max=grid - 1)
    w = (t - k).view(-1, *([1] * (table.ndim - 1)))
    return torch.lerp(table[k], table[k + 1], w)


@dataclass(frozen=True)
class FeatureMap:
    r""":math:`\psi` and :math:`\psi'` in the dtype and on the device of one call's scores.

    Calling it on scores as a column ``(n, 1)`` gives the *raw* features ``(2, n, D)``:
    :math:`\psi(s)` then :math:`\psi'(s)`, each divided by its factor in ``scales``. The factors
    multiply the duals instead (``D`` numbers rather than ``n D``).

    Attributes
    ----------
    scales : Tensor of shape (2, 1, D)
        The factors of :math:`\psi` and :math:`\psi'`: :math:`\sqrt{2/D}` and
        :math:`-\sqrt{2/D}\,\omega` for exact features, ones for a table.
    psi_scale : float
        The factor of :math:`\psi` as a number (1 for a table).
    angles : tuple of two Tensors of shape (2, 1, D), or None
        Exact features: frequencies and phases of ``cos(omega s + b)`` and of
        ``cos(omega s + b - pi/2) = sin(omega s + b)``, so that one cosine call gives both.
    table : Tensor of shape (G + 1, 2, D), or None
        Tabulated features: :math:`\psi` and :math:`\psi'` at the grid points, read together.
    """

    scales: torch.Tensor
    psi_scale: float
    angles: tuple[torch.Tensor, torch.Tensor] | None = None
    table: torch.Tensor | None = None

    def __call__(self, s_column: torch.Tensor) -> torch.Tensor:
        """The raw features ``(2, n, D)`` of the scores ``s_column`` ``(n, 1)``."""
        if self.table is not None:
            return interpolate_table(s_column.view(-1), self.table).transpose(0, 1)
        frequencies, phases = self.angles
        return torch.cos(torch.addcmul(phases, s_column, frequencies))  # omega s + b


def feature_map(
    frequencies: torch.Tensor,
    phases: torch.Tensor,
    values: torch.Tensor,
    derivatives: torch.Tensor,
    dtype: torch.dtype,
    device: torch.device,
) -> FeatureMap:
    r"""The feature map of :math:`\omega, b` (or of their tables) in ``dtype`` on ``device``.

    ``values`` and ``derivatives`` are the tabulated :math:`\psi` and :math:`\psi'` of shape
    ``(G + 1, D)``, or empty tensors for exact features.
    """
    d = frequencies.shape[0]
    if values.numel():
        table = torch.stack([values, derivatives], dim=1).to(device=device, dtype=dtype)
        scales = torch.ones(2, 1, d, dtype=dtype, device=device)
        return FeatureMap(scales=scales, psi_scale=1.0, table=table)
    psi_scale = math.sqrt(2.0 / d)
    both = torch.stack([frequencies, frequencies])[:, None]
    shifted = torch.stack([phases, phases - 0.5 * math.pi])[:, None]
    scales = torch.stack([torch.full_like(frequencies, psi_scale), -psi_scale * frequencies])
    return FeatureMap(
        scales=scales[:, None].to(device=device, dtype=dtype),
        psi_scale=psi_scale,
        angles=(both.to(device=device, dtype=dtype), shifted.to(device=device, dtype=dtype)),
    )
