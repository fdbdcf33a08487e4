r"""The scaled unit of the scores, in which everything between ranks and predictions runs.

The unit is centred and divided by a power of two near the scores' half range: :math:`W_p` is
homogeneous, so the problem is the same, and scores near 1e300 or 1e-300 neither overflow nor
vanish below the solver's absolute tolerances. Costs that are homogeneous too are rescaled with
the scores (:func:`cost_in_unit`); a cost with an absolute meaning (a logit) keeps the unit of
the scores.

Internal surface (plain names for the estimator's modules): :class:`ScoreUnit`,
:func:`cost_in_unit`, :func:`scaled_r2`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.metrics import r2_score

from ._costs import AbsoluteGaussianCost, InducedCost, PinballGaussianCost, SquaredCost


@dataclass(frozen=True)
class ScoreUnit:
    r"""The scaled unit :math:`z = x 2^{-e} - c 2^{-e}` of the scores and back.

    Scaling by a power of two is exact; only the centring rounds (by less than one ulp of the
    scores).
    """

    centre: float = 0.0
    exponent: int = 0

    @classmethod
    def of(cls, low: float, high: float, *, rescale: bool) -> ScoreUnit:
        """The unit of scores in ``[low, high]`` (the identity when not ``rescale``)."""
        if not rescale:
            return cls()
        # halves first: (high - low) overflows for scores near +-1e308
        centre = low / 2 + high / 2
        half_range = high / 2 - low / 2
        if not half_range > 0:
            return cls(centre=centre, exponent=0)
        return cls(centre=centre, exponent=int(np.frexp(half_range)[1]))

    @property
    def inv_scale(self) -> float:
        return float(np.ldexp(1.0, -self.exponent))

    @property
    def scale(self) -> float:
        return float(np.ldexp(1.0, self.exponent))

    @property
    def shift(self) -> float:
        return float(np.ldexp(self.centre, -self.exponent))

    def to_unit(self, x):
        return np.ldexp(x, -self.exponent) - self.shift

    def from_unit(self, z):
        return self.centre + np.ldexp(z, self.exponent)

    def length_to_unit(self, d: float) -> float:
        return float(np.ldexp(d, -self.exponent))

    def length_from_unit(self, d: float) -> float:
        return float(np.ldexp(d, self.exponent))


def cost_in_unit(cost: InducedCost, unit_scale: float) -> InducedCost | None:
    """The same cost in the scaled unit, or None when it cannot be rescaled (logistic, custom).

    The squared cost is homogeneous; the Gaussian-noise costs are when their noise scale is
    rescaled too. A logit (the logistic cost) has an absolute meaning.
    """
    if type(cost) is SquaredCost:
        return cost
    if type(cost) is AbsoluteGaussianCost:
        return AbsoluteGaussianCost(noise_scale=cost.noise_scale / unit_scale)
    if type(cost) is PinballGaussianCost:
        return PinballGaussianCost(alpha=cost.alpha, noise_scale=cost.noise_scale / unit_scale)
    return None


def scaled_r2(y: np.ndarray, pred: np.ndarray, sample_weight) -> float:
    """R² after scaling both by one power of two (it is scale-free; squares of 1e300 are not)."""
    largest = max(float(np.max(np.abs(y))), float(np.max(np.abs(pred))))
    exponent = int(np.frexp(largest)[1]) if largest > 0 else 0
    return float(
        r2_score(np.ldexp(y, -exponent), np.ldexp(pred, -exponent), sample_weight=sample_weight)
    )
