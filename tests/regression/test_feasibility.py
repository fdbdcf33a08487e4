"""The feasibility guarantee of ``adjust_quantiles`` (``fairot.regression._feasibility``)."""

import numpy as np

from fairot.regression import adjust_quantiles
from fairot.regression._feasibility import FEASIBILITY_ATOL, FEASIBILITY_RTOL

from ._oracle import GRID_LEVELS as U


def test_feasible_is_the_documented_bound():
    latent = np.stack([U, U + 1.0, U + 3.0]) * 5e5
    out = adjust_quantiles(latent, p=1, epsilon=0.7 * 5e5)
    bound = out.epsilon * (1 + FEASIBILITY_RTOL) + FEASIBILITY_ATOL * np.abs(latent).max()
    assert out.magnitude == np.abs(latent).max()
    assert out.grid_gap <= bound and out.feasible
    assert out.violation <= bound - out.epsilon
