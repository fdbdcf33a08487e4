"""Stage 2 of the regressor (``fairot.regression._calibration``): the latent curves are the
groups' linear quantiles of their calibration scores, the shares their weights.

The oracle: NumPy's ``quantile`` and ``bincount``.
"""

import numpy as np

from fairot.regression import WassersteinFairRegressor

from ._oracle import frozen_column as _frozen_column


def test_frozen_estimator_calibrates_on_all_data_and_curves_are_linear_quantiles():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=300)
    s = rng.integers(0, 2, 300)
    model = WassersteinFairRegressor(estimator=_frozen_column(), tau=0.4, n_grid=50)
    model.fit(scores[:, None], np.zeros(300), sensitive_features=s)
    u = (np.arange(50) + 0.5) / 50
    for g in range(2):
        expected = np.quantile(scores[s == g], u, method="linear")
        np.testing.assert_allclose(model.latent_curves_[g], expected, rtol=0, atol=1e-14)
    np.testing.assert_allclose(model.group_weights_, np.bincount(s) / 300)
    assert model.grid_gap_ <= model.epsilon_ + 1e-12
