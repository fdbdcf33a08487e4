r"""The calibration object: stage 2 and the fixed part of stage 4 of the regressor.

A :class:`Calibration` holds what a fitted regressor knows of its calibration scores, all in
the scaled unit of :mod:`._units`: each group's sorted scores (the rank map of stage 4), the
groups' shares, the latent quantile curves :math:`\hat Q^*_s` on the midpoint grid, the cost
and bounds of the adjustment and the tolerance of near-ties. :meth:`Calibration.adjust` runs
stage 3 for one tolerance and tabulates the predictions (:class:`FairMap`); a tolerance path
calls it once per tolerance on the same calibration.

Internal surface (plain names for the estimator's modules): :class:`Calibration`,
:class:`FairMap`, :data:`TIE_ULPS`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fairot.transport import midpoint_grid

from ._adjust import QuantileAdjustment, adjust_quantiles, check_bounds
from ._costs import InducedCost, ObservedLossCost, resolve_cost
from ._projections import pairwise_grid_distances
from ._readout import frequency_quantiles, prediction_tables, read_tables
from ._units import ScoreUnit, cost_in_unit
from .checks import MSG_OVERFLOW, MSG_RESPONSES, is_observed_cost

# A calibration score within this many units in the last place of the model's precision (of
# the largest calibration score) above a new score counts as tied with it. The same row scored
# alone or in a batch differs by a few ulps (BLAS kernels sum in another order: at most 2 ulps of
# the largest score for LinearRegression with 3 to 100 features, float32 or float64), and a rank
# decided on that difference made a prediction depend on the other rows of the call.
# Mid-ranks of tied calibration scores would not help: the re-scored row is one ulp off, not
# tied. Counting near-ties as ties moves each jump of the rank from a calibration score c to
# c - tolerance, where no re-scored row lands; the ECDF shifts by far less than the model's noise.
TIE_ULPS = 64


@dataclass(frozen=True)
class FairMap:
    """The adjustment for one tolerance and its prediction tables.

    Attributes
    ----------
    adjustment : QuantileAdjustment
        The solver's result, in the unit of the scores.
    identity : bool
        The paper's identity convention (Section 3.3, two groups with :math:`W_1`/:math:`W_2`):
        no curve moved, so predictions are the raw scores.
    tables : ndarray
        The prediction at every possible rank of every group (see :mod:`._readout`).
    """

    adjustment: QuantileAdjustment
    identity: bool
    tables: np.ndarray


@dataclass(frozen=True)
class Calibration:
    """Each group's sorted calibration scores and latent curve, in the scaled unit.

    Build one with :meth:`from_scores`. ``samples[offsets[s]:offsets[s + 1]]`` are group
    ``s``'s sorted scores (in the unit of the scores), ``cum_weights[s]`` their cumulative
    frequency weights (``None`` without weights), ``latent`` the latent curves in the scaled
    ``unit``, ``bounds`` and ``cost`` those of the adjustment in that unit, ``unadjusted_gap``
    the largest pairwise grid distance of the latent curves in that unit, ``clip_bounds`` the
    user's prediction range in the unit of the scores (``(-inf, inf)`` without one).
    """

    samples: np.ndarray
    offsets: np.ndarray
    cum_weights: list[np.ndarray] | None
    group_weights: np.ndarray
    unit: ScoreUnit
    grid: np.ndarray
    latent: np.ndarray
    bounds: tuple[float, float]
    cost: InducedCost
    unadjusted_gap: float
    tie_tolerance: float
    clip_bounds: tuple[float, float] = (-np.inf, np.inf)

    @classmethod
    def from_scores(
        cls,
        scores: np.ndarray,
        codes: np.ndarray,
        group_mass: np.ndarray,
        *,
        sample_weight: np.ndarray | None = None,
        responses: np.ndarray | None = None,
        precision: float = 0.0,
        cost: Any = "squared",
        bounds: Any = None,
        n_grid: int = 2000,
        p: float = 2.0,
    ) -> Calibration:
        """Sort each group's scores, choose the unit, and estimate the latent curves.

        ``group_mass`` (one entry per group) gives the groups' shares; ``responses`` are the
        calibration responses, needed by the observed-loss costs only; ``precision`` is the
        score models' (:func:`~fairot.regression.scores.predict_scores`); ``cost``, ``bounds``
        and ``n_grid`` are the regressor's parameters and ``p`` its checked Wasserstein order.
        """
        n_groups = len(group_mass)
        # one sort per group costs about one sort of all scores (a lexsort costs ten times that)
        members = [np.flatnonzero(codes == s) for s in range(n_groups)]
        if sample_weight is None:
            samples = np.concatenate([np.sort(scores[m]) for m in members])
            cum_weights = None
        else:
            # the weights travel with their scores (a plain sort is faster without them)
            orders = [m[np.argsort(scores[m])] for m in members]
            samples = np.concatenate([scores[o] for o in orders])
            cum_weights = [np.cumsum(sample_weight[o]) for o in orders]
        offsets = np.concatenate([[0], np.cumsum([m.size for m in members])]).astype(np.intp)
        resolved = None if is_observed_cost(cost) else resolve_cost(cost)
        rescale = resolved is None or cost_in_unit(resolved, 1.0) is not None
        low, high = float(scores.min()), float(scores.max())
        unit = ScoreUnit.of(low, high, rescale=rescale)
        grid = midpoint_grid(n_grid)
        latent = np.stack(
            [
                frequency_quantiles(
                    samples[offsets[s] : offsets[s + 1]],
                    grid,
                    None if cum_weights is None else cum_weights[s],
                    shift=unit.shift,
                    inv_scale=unit.inv_scale,
                )
                for s in range(n_groups)
            ]
        )
        # ``bounds`` is a range for the predictions, which ``clip`` enforces: a model's scores
        # may leave the range of y (a linear model's tails do), and refusing them would refuse
        # the natural bounds of the target. The solver's box also holds the scores, so that the
        # latent curves stay feasible; clipping is 1-Lipschitz and monotone, so it never widens
        # a Wasserstein gap between groups, and for y inside the bounds it never adds error.
        clip_low, clip_high = check_bounds(bounds)
        bound_low, bound_high = min(clip_low, low), max(clip_high, high)
        unit_bounds = (float(unit.to_unit(bound_low)), float(unit.to_unit(bound_high)))
        if resolved is None:
            if responses is None:
                raise ValueError(MSG_RESPONSES.format(cost=cost))
            unit_cost = ObservedLossCost.from_samples(
                unit.to_unit(scores),
                unit.to_unit(responses),
                codes,
                n_groups,
                n_grid,
                loss=str(cost).split("_", 1)[1],
            )
        else:
            unit_cost = cost_in_unit(resolved, unit.scale) if rescale else resolved
        # an unscaled cost can overflow here: the clear error below replaces numpy's warning
        with np.errstate(over="ignore", invalid="ignore"):
            gap = float(pairwise_grid_distances(latent, p).max())
        if not np.isfinite(gap):
            raise ValueError(MSG_OVERFLOW.format(gap=gap, cost=cost))
        return cls(
            samples=samples,
            offsets=offsets,
            cum_weights=cum_weights,
            group_weights=group_mass / group_mass.sum(),
            unit=unit,
            grid=grid,
            latent=latent,
            bounds=unit_bounds,
            cost=unit_cost,
            unadjusted_gap=gap,
            tie_tolerance=TIE_ULPS * precision * max(abs(low), abs(high)),
            clip_bounds=(clip_low, clip_high),
        )

    @property
    def group_samples(self) -> list[np.ndarray]:
        """Sorted calibration scores of each group (views of ``samples``)."""
        bounds = zip(self.offsets[:-1], self.offsets[1:], strict=True)
        return [self.samples[a:b] for a, b in bounds]

    def adjust(self, epsilon: float | None, tau: float | None, *, p: Any, method: str) -> FairMap:
        """Stage 3 for the tolerance ``epsilon`` (absolute) or ``tau`` (relative), and the tables.

        Neither means strict parity. ``p`` and ``method`` are the regressor's parameters.
        """
        unit = self.unit
        if epsilon is None:
            epsilon_unit = (0.0 if tau is None else tau) * self.unadjusted_gap
            epsilon = unit.length_from_unit(epsilon_unit)
        else:
            epsilon_unit = unit.length_to_unit(float(epsilon))
            epsilon = float(epsilon)
        adjustment = adjust_quantiles(
            self.latent,
            self.group_weights,
            p=p,
            epsilon=epsilon_unit,
            bounds=self.bounds,
            cost=self.cost,
            method=method,
        )
        adjusted = adjustment.curves
        # The paper's identity convention (Section 3.3, K = 2 with W1/W2), for every K and p: if
        # no curve moved (tau >= 1 with a cost minimised by the latent curves, the squared one),
        # keep the raw scores instead of a lossy ECDF/quantile round trip, so that tau = 1 is
        # the model given, bit for bit.
        identity = np.array_equal(adjusted, self.latent)
        barycenter = self.group_weights @ self.latent
        own = self.latent - barycenter
        moved = adjusted - barycenter
        norms = np.einsum("km,km->k", own, own)
        safe = np.where(norms > 0, norms, 1.0)
        own_shares = np.where(
            norms > 0, np.clip(np.einsum("km,km->k", moved, own) / safe, 0.0, 1.0), 0.0
        )
        residuals = moved - own_shares[:, None] * own
        tables = prediction_tables(
            self.group_samples,
            self.cum_weights,
            self.group_weights,
            own_shares,
            residuals,
            shift=unit.shift,
            inv_scale=unit.inv_scale,
            centre=unit.centre,
            scale=unit.scale,
        )
        in_scores = replace(
            adjustment,
            curves=unit.from_unit(adjusted),
            grid_gap=unit.length_from_unit(adjustment.grid_gap),
            violation=unit.length_from_unit(adjustment.violation),
            epsilon=epsilon,
        )
        return FairMap(adjustment=in_scores, identity=identity, tables=tables)

    def clip(self, predictions: np.ndarray) -> np.ndarray:
        """``predictions`` clipped to the user's ``bounds`` (unchanged without bounds)."""
        low, high = self.clip_bounds
        if np.isinf(low) and np.isinf(high):
            return predictions
        return np.clip(predictions, low, high)

    def read(self, scores: np.ndarray, codes: np.ndarray, tables: np.ndarray | None = None):
        """Each score's entry in its group's table (its rank, when ``tables`` is None)."""
        return read_tables(scores, codes, self.samples, self.offsets, self.tie_tolerance, tables)
