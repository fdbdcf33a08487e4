r"""Random Fourier features :math:`\psi(s)` of the COT dual potentials, read from a table.

The penalty uses the features of :mod:`fairot.classification._features` (drawn by its
:func:`~fairot.classification.draw_fourier_features`, so one ``random_state`` gives the same
:math:`\omega, b` as :class:`~fairot.classification.COTClassifier`): exact cosines, computed in
place by the penalty, or the numba kernel's table on [0, 1] read here by linear interpolation.
The derivative is the interpolated :math:`\psi'` (not the slope of the interpolated
:math:`\psi`), exactly as the kernel computes it. The penalty differentiates the dual objective
in closed form, so these are plain tensors.
"""

from __future__ import annotations

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
