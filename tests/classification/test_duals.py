"""The regularised W1 dual potentials between two samples (``fairot.classification._duals``).

The oracle is SciPy's exact ``wasserstein_distance``, and Figure 1 of the COT paper.
"""

import numpy as np
from scipy.stats import wasserstein_distance

from fairot.classification import fit_dual_potentials


def test_dual_value_approaches_exact_w1_as_regularisation_vanishes():
    rng = np.random.default_rng(0)
    x, y = rng.normal(-1.0, 1.0, 4000), rng.normal(1.0, 1.0, 4000)
    exact = wasserstein_distance(x, y)
    values = [
        fit_dual_potentials(
            x,
            y,
            reg_strength=lam,
            dual_step_size=lam,
            kernel_variance=4.0,
            n_updates=3000,
            random_state=0,
        ).value
        for lam in (1.0, 0.3, 0.05)
    ]
    assert values[0] < values[1] < values[2]
    assert abs(values[2] - exact) < 0.06 * exact
    # The entropic dual lower-bounds W1 - lambda * (1 - ...) and never exceeds W1 by much.
    assert values[2] < exact + 0.05


def test_constrained_potentials_are_opposite():
    rng = np.random.default_rng(1)
    fit = fit_dual_potentials(
        rng.normal(-1, 1, 500),
        rng.normal(1, 1, 500),
        reg_strength=0.3,
        dual_step_size=0.3,
        kernel_variance=4.0,
        n_updates=500,
        constrain_duals=True,
        random_state=0,
    )
    s = np.linspace(-3, 3, 11)
    np.testing.assert_allclose(fit.potentials.group(s), -fit.potentials.target(s))
    # Figure 1: the source's potential is large where the source has more mass (the left).
    assert fit.potentials.group(-2.0) > fit.potentials.group(2.0)
