r"""A confidence bound on the population disparity of the rate-constrained rule's decisions.

:class:`~fairot.classification.RateConstrainedClassifier` meets its budget on the
model-expected rates of the fitting rows; the rule's *population* rates are what a held-out
budget is about. Given the rule's decision :math:`d_i \in \{0, 1\}` on each training row from
its cross-fitted probabilities (each row's from a model that did not see it) and each row's
true unit, every unit's rate :math:`\hat r_j = \sum_{i \in j} w_i d_i / \sum_{i \in j} w_i`
estimates the population rate :math:`r_j` of the rule. The units compared within a family are
disjoint sets of rows (groups; (group, label) cells; (stratum, group) pairs), so their
estimates are independent given the units' sizes, and each is approximately normal (the delta
method for a ratio of weighted sums):

.. math::

    \hat r_j \approx \mathcal N\!\left(r_j,\ \frac{\tilde r_j (1 - \tilde r_j)}{n_j}\right),
    \qquad n_j = \frac{(\sum_{i \in j} w_i)^2}{\sum_{i \in j} w_i^2}, \qquad
    \tilde r_j = \frac{n_j \hat r_j + 1}{n_j + 2},

with :math:`n_j` Kish's effective size (the count of rows without weights) and
:math:`\tilde r_j` the rate shrunk by one success and one failure (Agresti and Coull), so that
a unit whose decisions are all equal on the training rows is not read as exact. The bound is
then the ``confidence`` quantile of the disparity over draws :math:`R_j = \hat r_j +
\mathrm{se}_j Z_j` (:math:`Z_j` independent standard normals, a fixed set drawn once, so the
bound is a function of the data): for the difference, the upper quantile of
:math:`\max_f (\max_{j \in f} R_j - \min_{j \in f} R_j)`; for the ratio, the lower quantile of
:math:`\min_f \min_{j \in f} R_j / \max_{j \in f} R_j`. With one gap well away from 0 it is the
usual one-sided normal bound :math:`\hat\Delta + z_c\, \mathrm{se}(\hat\Delta)`; where several
groups are close, the maximum over noisy draws is biased upward, so the bound is conservative.

What it covers: the sampling noise of the training rows' estimate of the rule's population
rates under the training distribution. Not covered: a shift of the distribution, and the
difference between the cross-fitted rule and the final model refitted on every row (small when
the folds hold most of the rows); a finite held-out sample adds its own noise.

Internal surface (for :mod:`fairot.classification._rate_constrained`): :func:`disparity_bound`,
:data:`N_DRAWS`.
"""

from __future__ import annotations

import numpy as np

#: Normal draws per unit: the Monte Carlo standard deviation of a quantile c from 10,000 draws
#: is :math:`\sqrt{c(1 - c)/10^4} / \varphi(z_c)`, about 2 % of the gap's standard error at
#: c = .95 (1.4 % at .8): well below the margins it chooses.
N_DRAWS = 10_000

#: The seed of the fixed draws (the bound is a function of the data, not of ``random_state``).
_SEED = 0


def disparity_bound(
    decisions: np.ndarray,
    membership: np.ndarray,
    families: np.ndarray,
    weights: np.ndarray,
    *,
    form: str,
    confidence: float,
) -> float:
    """The one-sided ``confidence`` bound of the population disparity of ``decisions``.

    Parameters
    ----------
    decisions : ndarray of shape (n_samples,)
        The rule's 0/1 decision on each row.
    membership : ndarray of shape (n_samples, n_units)
        1 where the row truly belongs to the unit.
    families : ndarray of int of shape (n_units,)
        Units are compared within a family.
    weights : ndarray of shape (n_samples,)
        Row weights.
    form : {"difference", "ratio"}
        An upper bound of the largest max − min, or a lower bound of the smallest min / max.
    confidence : float in (0, 1)

    Returns
    -------
    float
    """
    size = weights @ membership
    rates = ((weights * decisions) @ membership) / size
    n_effective = size**2 / ((weights**2) @ membership)
    shrunk = (n_effective * rates + 1.0) / (n_effective + 2.0)
    se = np.sqrt(shrunk * (1.0 - shrunk) / n_effective)
    draws = rates + se * np.random.default_rng(_SEED).standard_normal((N_DRAWS, rates.shape[0]))
    draws = np.clip(draws, 0.0, 1.0)
    if form == "difference":
        spread = np.zeros(N_DRAWS)
        for f in np.unique(families):
            block = draws[:, families == f]
            spread = np.maximum(spread, block.max(axis=1) - block.min(axis=1))
        return float(np.quantile(spread, confidence))
    ratio = np.ones(N_DRAWS)
    for f in np.unique(families):
        block = draws[:, families == f]
        top = block.max(axis=1)
        # A family with every rate 0 selects no group more than another: ratio 1.
        within = np.divide(block.min(axis=1), top, out=np.ones(N_DRAWS), where=top > 0)
        ratio = np.minimum(ratio, within)
    return float(np.quantile(ratio, 1.0 - confidence))
