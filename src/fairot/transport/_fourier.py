r"""Random Fourier features of a scalar score, and their tabulation on [0, 1].

The dual potentials of COT are expansions :math:`\lambda(s) = \lambda^\top \psi(s)` in random
Fourier features (Rahimi and Recht, 2008), as in Section "Dual Variables Parametrization" of [1]_:

.. math::

    \psi(s) = \sqrt{2/D}\,\big(\cos(\omega^1 s + b^1), \dots, \cos(\omega^D s + b^D)\big),
    \qquad \omega^i \sim \mathcal N(0, 2/\sigma^2), \quad b^i \sim U[0, 2\pi].

With these frequencies :math:`\mathbb E[\psi(s)^\top\psi(t)] = \exp(-(s - t)^2 / \sigma^2)`, a
Gaussian kernel of *variance* :math:`\sigma^2 / 2`; the paper calls :math:`\sigma^2` the kernel
variance and so do we (``kernel_variance``).

The scores live in [0, 1], so :math:`\psi` and :math:`\psi'` can be tabulated once on a fine grid
and interpolated linearly: this replaces D cosines per score by two rows of a table, the main
saving of the fast kernel (:mod:`fairot.classification._kernels`).

References
----------
.. [1] S. Chiappa and A. Pacchiano, "Fairness with Continuous Optimal Transport", 2021.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# 4,096 intervals keep the interpolation error of lambda(s) near 1e-6 for sigma^2 >= 0.01
# (|omega| up to ~50); see tests/transport/test_fourier.py.
DEFAULT_GRID_SIZE = 4096


class FourierFeatures(NamedTuple):
    r"""Frequencies :math:`\omega` and phases :math:`b` of D random Fourier features.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.transport import FourierFeatures
    >>> FourierFeatures(np.array([1.0, -2.0]), np.array([0.0, np.pi])).n_features
    2
    """

    frequencies: np.ndarray
    phases: np.ndarray

    @property
    def n_features(self) -> int:
        """Number of features D."""
        return int(self.frequencies.shape[0])


class FeatureTable(NamedTuple):
    r""":math:`\psi` and :math:`\psi'` tabulated at ``grid_size + 1`` equispaced points of [0, 1].

    ``values[k]`` and ``derivatives[k]`` are :math:`\psi(k/G)` and :math:`\psi'(k/G)`, each of
    shape (D,), with ``G = values.shape[0] - 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.transport import draw_fourier_features, tabulate_features
    >>> table = tabulate_features(draw_fourier_features(4, 0.1, np.random.RandomState(0)), 8)
    >>> table.grid_size, table.derivatives.shape
    (8, (9, 4))
    """

    values: np.ndarray
    derivatives: np.ndarray

    @property
    def grid_size(self) -> int:
        """Number of grid intervals G."""
        return int(self.values.shape[0] - 1)


def draw_fourier_features(
    n_features: int, kernel_variance: float, rng: np.random.RandomState
) -> FourierFeatures:
    r"""Draw :math:`\omega \sim \mathcal N(0, 2/\sigma^2)` and :math:`b \sim U[0, 2\pi]`.

    Parameters
    ----------
    n_features : int
        Number of features D.
    kernel_variance : float
        :math:`\sigma^2`.
    rng : numpy.random.RandomState
        Source of randomness.

    Returns
    -------
    FourierFeatures

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.transport import draw_fourier_features
    >>> features = draw_fourier_features(500, 0.1, np.random.RandomState(0))
    >>> features.frequencies.shape, bool(np.all(features.phases <= 2 * np.pi))
    ((500,), True)
    """
    frequencies = rng.normal(0.0, np.sqrt(2.0 / kernel_variance), size=n_features)
    phases = rng.uniform(0.0, 2.0 * np.pi, size=n_features)
    return FourierFeatures(frequencies, phases)


def fourier_features(s: np.ndarray, features: FourierFeatures) -> np.ndarray:
    r"""Exact :math:`\psi(s)`, shape (n, D).

    Examples
    --------
    With many features, :math:`\psi(s)^\top\psi(t)` approaches the Gaussian kernel
    :math:`\exp(-(s - t)^2 / \sigma^2)`:

    >>> import numpy as np
    >>> from fairot.transport import draw_fourier_features, fourier_features
    >>> features = draw_fourier_features(200_000, 0.1, np.random.RandomState(0))
    >>> psi = fourier_features(np.array([0.2, 0.5]), features)
    >>> round(float(psi[0] @ psi[1]), 2), round(float(np.exp(-(0.3**2) / 0.1)), 2)
    (0.41, 0.41)
    """
    d = features.n_features
    return np.sqrt(2.0 / d) * np.cos(np.multiply.outer(s, features.frequencies) + features.phases)


def fourier_features_derivative(s: np.ndarray, features: FourierFeatures) -> np.ndarray:
    r"""Exact :math:`\psi'(s) = -\sqrt{2/D}\,\omega \sin(\omega s + b)`, shape (n, D).

    Examples
    --------
    A central finite difference of :func:`fourier_features` agrees:

    >>> import numpy as np
    >>> from fairot.transport import (
    ...     draw_fourier_features, fourier_features, fourier_features_derivative)
    >>> features = draw_fourier_features(6, 0.2, np.random.RandomState(1))
    >>> s, h = np.array([0.3]), 1e-6
    >>> numeric = (fourier_features(s + h, features) - fourier_features(s - h, features)) / (2 * h)
    >>> bool(np.allclose(fourier_features_derivative(s, features), numeric, atol=1e-6))
    True
    """
    d = features.n_features
    arg = np.multiply.outer(s, features.frequencies) + features.phases
    return -np.sqrt(2.0 / d) * features.frequencies * np.sin(arg)


def tabulate_features(
    features: FourierFeatures, grid_size: int = DEFAULT_GRID_SIZE
) -> FeatureTable:
    r"""Tabulate :math:`\psi` and :math:`\psi'` on ``grid_size + 1`` points of [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.transport import (
    ...     draw_fourier_features, fourier_features, tabulate_features)
    >>> features = draw_fourier_features(8, 0.1, np.random.RandomState(0))
    >>> table = tabulate_features(features, grid_size=4)
    >>> table.values.shape, bool(np.allclose(table.values[2], fourier_features(0.5, features)))
    ((5, 8), True)
    """
    grid = np.arange(grid_size + 1) / grid_size
    return FeatureTable(
        np.ascontiguousarray(fourier_features(grid, features)),
        np.ascontiguousarray(fourier_features_derivative(grid, features)),
    )


def interpolate_features(s: np.ndarray, table: FeatureTable) -> tuple[np.ndarray, np.ndarray]:
    r"""Linear interpolation of the tabulated :math:`\psi` and :math:`\psi'` at scores in [0, 1].

    The same arithmetic as the fast kernel (cell ``k = min(floor(s G), G - 1)``, weight
    ``s G - k``), so that the NumPy transcription and the kernel agree to rounding.

    Examples
    --------
    At a grid point the interpolation is the tabulated value:

    >>> import numpy as np
    >>> from fairot.transport import draw_fourier_features, interpolate_features, tabulate_features
    >>> table = tabulate_features(draw_fourier_features(4, 0.1, np.random.RandomState(0)), 8)
    >>> psi, dpsi = interpolate_features(np.array([0.25]), table)
    >>> bool(np.allclose(psi[0], table.values[2]) and np.allclose(dpsi[0], table.derivatives[2]))
    True
    """
    g = table.grid_size
    t = np.asarray(s, dtype=float) * g
    k = np.minimum(t.astype(np.int64), g - 1)
    w = (t - k)[..., None]
    psi = (1.0 - w) * table.values[k] + w * table.values[k + 1]
    dpsi = (1.0 - w) * table.derivatives[k] + w * table.derivatives[k + 1]
    return psi, dpsi
