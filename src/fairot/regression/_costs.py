r"""Induced costs :math:`c_s(u, q)` of the quantile problem (Sections 2.6 and 3.3.2 of [1]_).

A cost says how much predicting :math:`q` at rank :math:`u` of group :math:`s` loses, given the
latent score quantile :math:`z = Q^*_s(u)`. The quantile problem is convex when the cost is convex
in :math:`q`. Each cost gives, pointwise on the grid, its ``value``, its derivative in :math:`q`
(``gradient``) and its unconstrained ``minimizer``; a cost that is a squared distance to some
target curve also says so (``squared_target``), which lets the solver replace projected gradient
by one exact projection.

Known costs (the score :math:`z` is sufficient for :math:`Y`, Assumption 1 of [1]_):

* :class:`SquaredCost` — :math:`(q - z)^2`.
* :class:`AbsoluteGaussianCost` — :math:`E|Y - q|` with :math:`Y = z + \sigma\xi`,
  :math:`\xi\sim N(0, 1)`.
* :class:`PinballGaussianCost` — :math:`E\rho_\alpha(Y - q)`, same noise model.
* :class:`LogisticCost` — expected logistic loss of a logit :math:`q` when
  :math:`P(Y = 1) = \operatorname{expit}(z)` (the classification illustration, Section 5.4).

Observed loss (Remark 1 of [1]_): :class:`ObservedLossCost` carries each group's responses along
with their ordered fitted scores (the concomitants) and averages the observed loss over each grid
cell.

References
----------
.. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy.special import expit, ndtr, ndtri

from fairot.transport import MASS_TOLERANCE

__all__ = [
    "AbsoluteGaussianCost",
    "InducedCost",
    "LogisticCost",
    "ObservedLossCost",
    "PinballGaussianCost",
    "SquaredCost",
    "resolve_cost",
]

MSG_UNKNOWN_COST = (
    "cost must be one of 'squared', 'absolute', 'pinball', 'logistic' or an InducedCost "
    "instance; got {cost!r}."
)
MSG_NOISE = "noise_scale must be a positive finite number; got {value!r}."
MSG_ALPHA = "alpha must lie strictly between 0 and 1; got {value!r}."


class InducedCost:
    """Base class of the costs :math:`c_s(u_k, q)`, evaluated elementwise on (K, M) arrays.

    Examples
    --------
    Every cost gives the grid objective of problem (6); with the squared cost, curves one unit off
    their latent curve on half of the grid cost 1/2:

    >>> import numpy as np
    >>> from fairot.regression import InducedCost, SquaredCost
    >>> latent = np.array([[0.0, 1.0], [2.0, 3.0]])
    >>> curves = np.array([[1.0, 1.0], [2.0, 2.0]])
    >>> cost = SquaredCost()
    >>> isinstance(cost, InducedCost), cost.objective(latent, curves, np.array([0.5, 0.5]))
    (True, 0.5)
    """

    name = "cost"

    def value(self, latent: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Cost of predicting ``q`` where the latent quantile is ``latent``."""
        raise NotImplementedError

    def gradient(self, latent: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Derivative of :meth:`value` in ``q``."""
        raise NotImplementedError

    def minimizer(self, latent: np.ndarray) -> np.ndarray:
        """Pointwise unconstrained minimiser in ``q``."""
        raise NotImplementedError

    def squared_target(self, latent: np.ndarray) -> np.ndarray | None:
        """Target ``T`` if the cost equals ``(q - T)**2`` up to a constant, else ``None``."""
        return None

    def objective(self, latent: np.ndarray, curves: np.ndarray, weights: np.ndarray) -> float:
        r"""Grid objective :math:`\sum_s r_s \frac1M \sum_k c_s(u_k, q_{sk})` of problem (6)."""
        return float(weights @ self.value(latent, curves).mean(axis=1))


class SquaredCost(InducedCost):
    r"""Squared loss: :math:`c(z, q) = (q - z)^2` (Section 2.5 of [1]_).

    References
    ----------
    .. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.regression import SquaredCost
    >>> cost = SquaredCost()
    >>> z, q = np.array([1.0]), np.array([3.0])
    >>> cost.value(z, q), cost.gradient(z, q), cost.minimizer(z)
    (array([4.]), array([4.]), array([1.]))
    """

    name = "squared"

    def value(self, latent, q):  # noqa: D102
        return (q - latent) ** 2

    def gradient(self, latent, q):  # noqa: D102
        return 2.0 * (q - latent)

    def minimizer(self, latent):  # noqa: D102
        return np.array(latent, dtype=np.float64)

    def squared_target(self, latent):  # noqa: D102
        return np.array(latent, dtype=np.float64)

    def __repr__(self) -> str:
        return "SquaredCost()"


def _check_noise(noise_scale: float) -> float:
    if not (np.isfinite(noise_scale) and noise_scale > 0):
        raise ValueError(MSG_NOISE.format(value=noise_scale))
    return float(noise_scale)


class PinballGaussianCost(InducedCost):
    r"""Expected pinball loss under Gaussian noise.

    .. math:: c(z, q) = E\,\rho_\alpha(z + \sigma\xi - q)
              = \alpha m - m\,\Phi(-m/\sigma) + \sigma\,\varphi(m/\sigma), \quad m = z - q,

    with :math:`\rho_\alpha(t) = t(\alpha - 1\{t < 0\})`; its derivative in :math:`q` is
    :math:`\Phi((q - z)/\sigma) - \alpha` and its minimiser the conditional
    :math:`\alpha`-quantile :math:`z + \sigma\Phi^{-1}(\alpha)`.

    Parameters
    ----------
    alpha : float in (0, 1)
        Quantile level.
    noise_scale : float > 0
        Noise standard deviation :math:`\sigma`.

    Examples
    --------
    The minimiser is the conditional :math:`\alpha`-quantile, where the derivative vanishes
    (oracle: :func:`scipy.stats.norm.ppf`); at :math:`q = z` the cost is
    :math:`\sigma\varphi(0) = \sigma/\sqrt{2\pi}`:

    >>> import numpy as np
    >>> from scipy.stats import norm
    >>> from fairot.regression import PinballGaussianCost
    >>> cost = PinballGaussianCost(alpha=0.9, noise_scale=2.0)
    >>> z = np.array([1.0])
    >>> q = cost.minimizer(z)
    >>> bool(np.isclose(q[0], 1.0 + 2.0 * norm.ppf(0.9)))
    True
    >>> bool(np.isclose(cost.gradient(z, q)[0], 0.0))
    True
    >>> bool(np.isclose(cost.value(z, z)[0], 2.0 / np.sqrt(2 * np.pi)))
    True
    """

    name = "pinball"

    def __init__(self, alpha: float = 0.5, noise_scale: float = 1.0) -> None:
        if not (0.0 < alpha < 1.0):
            raise ValueError(MSG_ALPHA.format(value=alpha))
        self.alpha = float(alpha)
        self.noise_scale = _check_noise(noise_scale)

    def value(self, latent, q):  # noqa: D102
        m = latent - q
        s = self.noise_scale
        density = np.exp(-0.5 * (m / s) ** 2) / np.sqrt(2.0 * np.pi)
        return self.alpha * m - m * ndtr(-m / s) + s * density

    def gradient(self, latent, q):  # noqa: D102
        return ndtr((q - latent) / self.noise_scale) - self.alpha

    def minimizer(self, latent):  # noqa: D102
        return latent + self.noise_scale * ndtri(self.alpha)

    def __repr__(self) -> str:
        return f"PinballGaussianCost(alpha={self.alpha}, noise_scale={self.noise_scale})"


class AbsoluteGaussianCost(PinballGaussianCost):
    r"""Expected absolute loss under Gaussian noise: :math:`c(z, q) = E|z + \sigma\xi - q|`.

    Twice the pinball cost at :math:`\alpha = 1/2`; derivative :math:`2\Phi((q - z)/\sigma) - 1`,
    minimiser :math:`z`.

    Examples
    --------
    At :math:`q = z` the cost is the mean absolute deviation of the noise,
    :math:`E|\sigma\xi| = \sigma\sqrt{2/\pi}`:

    >>> import numpy as np
    >>> from fairot.regression import AbsoluteGaussianCost
    >>> cost = AbsoluteGaussianCost(noise_scale=3.0)
    >>> z = np.array([0.5])
    >>> bool(np.isclose(cost.value(z, z)[0], 3.0 * np.sqrt(2 / np.pi))), cost.minimizer(z)
    (True, array([0.5]))
    """

    name = "absolute"

    def __init__(self, noise_scale: float = 1.0) -> None:
        super().__init__(alpha=0.5, noise_scale=noise_scale)

    def value(self, latent, q):  # noqa: D102
        return 2.0 * super().value(latent, q)

    def gradient(self, latent, q):  # noqa: D102
        return 2.0 * super().gradient(latent, q)

    def minimizer(self, latent):  # noqa: D102
        return np.array(latent, dtype=np.float64)

    def __repr__(self) -> str:
        return f"AbsoluteGaussianCost(noise_scale={self.noise_scale})"


class LogisticCost(InducedCost):
    r"""Expected logistic loss of a logit :math:`q` when :math:`P(Y=1 \mid z) = \sigma(z)`.

    .. math:: c(z, q) = -\sigma(z)\log\sigma(q) - (1 - \sigma(z))\log(1 - \sigma(q))
              = \log(1 + e^{q}) - \sigma(z)\,q,

    convex with derivative :math:`\sigma(q) - \sigma(z)` and minimiser :math:`z` (Section 5.4 of
    [1]_, where the latent scores are a logistic regression's logits).

    References
    ----------
    .. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).

    Examples
    --------
    At :math:`z = q = 0` the cost is :math:`\log 2` (a fair coin), and the derivative vanishes at
    :math:`q = z`:

    >>> import numpy as np
    >>> from fairot.regression import LogisticCost
    >>> cost = LogisticCost()
    >>> bool(np.isclose(cost.value(np.array([0.0]), np.array([0.0]))[0], np.log(2)))
    True
    >>> cost.gradient(np.array([1.5]), np.array([1.5]))
    array([0.])
    """

    name = "logistic"

    def value(self, latent, q):  # noqa: D102
        return np.logaddexp(0.0, q) - expit(latent) * q

    def gradient(self, latent, q):  # noqa: D102
        return expit(q) - expit(latent)

    def minimizer(self, latent):  # noqa: D102
        return np.array(latent, dtype=np.float64)

    def __repr__(self) -> str:
        return "LogisticCost()"


@dataclass
class _GroupCells:
    """Overlap of a group's rank steps ((j-1)/n, j/n] with the grid cells ((k-1)/M, k/M]."""

    responses: np.ndarray  # concomitant of each segment
    cell: np.ndarray  # grid cell of each segment
    length: np.ndarray  # segment length times M (weights summing to 1 within a cell)


def _group_cells(responses_in_score_order: np.ndarray, n_grid: int) -> _GroupCells:
    n = responses_in_score_order.size
    # Work in units of 1/(n*M) so that every boundary is an exact integer.
    breaks = np.union1d(np.arange(n + 1) * n_grid, np.arange(n_grid + 1) * n)
    left, right = breaks[:-1], breaks[1:]
    point = left // n_grid  # the order statistic whose step covers the segment
    cell = left // n
    length = (right - left) / n  # fraction of a cell: sums to 1 over each cell
    return _GroupCells(responses_in_score_order[point], cell, length)


@dataclass
class ObservedLossCost(InducedCost):
    r"""Observed-loss proxy of Remark 1 of [1]_: the calibration loss aggregated per grid cell.

    For group :math:`s` with fitted scores in increasing order and their concomitant responses
    :math:`Y^{(s)}_{(j)}`, the response curve :math:`y_s(u) = Y^{(s)}_{(\lceil n_s u\rceil)}` is
    averaged over each cell :math:`((k-1)/M, k/M]`:

    .. math:: c_s(u_k, q) = M\int_{(k-1)/M}^{k/M} \ell(y_s(u), q)\,du.

    With squared loss this is :math:`(q - \bar y_{sk})^2` plus a constant, :math:`\bar y_{sk}` the
    cell mean, so one projection solves the problem. Build it with :meth:`from_samples`.

    Attributes
    ----------
    loss : {"squared", "absolute"}
    n_grid : int
    cells : list of per-group cell overlaps

    References
    ----------
    .. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).

    Examples
    --------
    One group whose responses follow its scores' order: on a grid of two cells each cell mean is
    one response, on a grid of one cell the mean of both:

    >>> import numpy as np
    >>> from fairot.regression import ObservedLossCost
    >>> scores, responses, codes = np.array([2.0, 1.0]), np.array([20.0, 10.0]), np.array([0, 0])
    >>> ObservedLossCost.from_samples(scores, responses, codes, n_groups=1, n_grid=2).cell_means()
    array([[10., 20.]])
    >>> ObservedLossCost.from_samples(scores, responses, codes, n_groups=1, n_grid=1).cell_means()
    array([[15.]])
    """

    loss: Literal["squared", "absolute"]
    n_grid: int
    cells: list = field(repr=False)

    name = "observed"

    @classmethod
    def from_samples(
        cls,
        scores: np.ndarray,
        responses: np.ndarray,
        codes: np.ndarray,
        n_groups: int,
        n_grid: int,
        loss: Literal["squared", "absolute"] = "squared",
    ) -> ObservedLossCost:
        """Sort each group's scores, carry the responses along, and aggregate per grid cell.

        Ties in the scores keep the data order (a stable sort), so the result is deterministic.
        """
        if loss not in ("squared", "absolute"):
            raise ValueError(f"loss must be 'squared' or 'absolute'; got {loss!r}.")
        scores = np.asarray(scores, dtype=np.float64)
        responses = np.asarray(responses, dtype=np.float64)
        cells = []
        for s in range(n_groups):
            member = codes == s
            order = np.argsort(scores[member], kind="stable")
            cells.append(_group_cells(responses[member][order], n_grid))
        return cls(loss=loss, n_grid=n_grid, cells=cells)

    def _cell_sum(self, s: int, values: np.ndarray) -> np.ndarray:
        c = self.cells[s]
        return np.bincount(c.cell, weights=c.length * values, minlength=self.n_grid)

    def cell_means(self) -> np.ndarray:
        r"""Cell means :math:`\bar y_{sk}` of the concomitants, shape (K, M)."""
        return np.stack([self._cell_sum(s, c.responses) for s, c in enumerate(self.cells)])

    def value(self, latent, q):  # noqa: D102
        out = np.empty_like(q, dtype=np.float64)
        for s, c in enumerate(self.cells):
            diff = q[s][c.cell] - c.responses
            pointwise = diff**2 if self.loss == "squared" else np.abs(diff)
            out[s] = np.bincount(c.cell, weights=c.length * pointwise, minlength=self.n_grid)
        return out

    def gradient(self, latent, q):  # noqa: D102
        out = np.empty_like(q, dtype=np.float64)
        for s, c in enumerate(self.cells):
            diff = q[s][c.cell] - c.responses
            pointwise = 2.0 * diff if self.loss == "squared" else np.sign(diff)
            out[s] = np.bincount(c.cell, weights=c.length * pointwise, minlength=self.n_grid)
        return out

    def minimizer(self, latent):  # noqa: D102
        if self.loss == "squared":
            return self.cell_means()
        out = np.empty((len(self.cells), self.n_grid))
        for s, c in enumerate(self.cells):
            # weighted median of each cell: the first response where the cumulative weight >= 1/2
            order = np.lexsort((c.responses, c.cell))
            cell, resp, length = c.cell[order], c.responses[order], c.length[order]
            cumulative = np.cumsum(length) - np.repeat(
                np.concatenate([[0.0], np.bincount(cell, weights=length)[:-1].cumsum()]),
                np.bincount(cell, minlength=self.n_grid),
            )
            first = np.flatnonzero(cumulative >= 0.5 - MASS_TOLERANCE)
            pick = first[np.unique(cell[first], return_index=True)[1]]
            out[s] = resp[pick]
        return out

    def squared_target(self, latent):  # noqa: D102
        return self.cell_means() if self.loss == "squared" else None


_NAMED_COSTS = {
    "squared": SquaredCost,
    "absolute": AbsoluteGaussianCost,
    "pinball": PinballGaussianCost,
    "logistic": LogisticCost,
}


def resolve_cost(cost: str | InducedCost) -> InducedCost:
    """Turn a cost name (default parameters) or an :class:`InducedCost` into an instance."""
    if isinstance(cost, InducedCost):
        return cost
    if isinstance(cost, str) and cost in _NAMED_COSTS:
        return _NAMED_COSTS[cost]()
    raise ValueError(MSG_UNKNOWN_COST.format(cost=cost))
