"""The regressor's in-memory fit (``fairot.regression._fit``): inputs read, calibration scored,
then handed to the seam ``fit_from_group_statistics`` that the Dask backend calls too.

The oracle: the seam called by hand on the same statistics, in another order.
"""

import numpy as np

from fairot.regression import WassersteinFairRegressor

from ._oracle import frozen_column as _frozen_column


def test_fit_is_the_seam_fit_from_group_statistics_on_the_calibration_scores():
    # the Dask backend calls the same seam: equal statistics give an equal fitted regressor
    from fairot.utils.sensitive import check_sensitive_features

    rng = np.random.default_rng(13)
    scores = rng.normal(size=400)
    s = rng.integers(0, 3, 400)
    weights = rng.integers(1, 4, 400).astype(float)
    fitted = WassersteinFairRegressor(estimator=_frozen_column(), tau=0.3, n_grid=60)
    fitted.fit(scores[:, None], scores, sample_weight=weights, sensitive_features=s)
    encoding = check_sensitive_features(s, 400)
    order = rng.permutation(400)  # the statistics may come in any order
    seam = WassersteinFairRegressor(estimator=_frozen_column(), tau=0.3, n_grid=60)
    seam.fit_from_group_statistics(
        scores[order],
        encoding.codes[order],
        encoding=encoding,
        estimators=[_frozen_column()],
        sample_weight=weights[order],
        precision=float(np.finfo(np.float64).eps),
        n_features_in=1,
    )
    for name in ("latent_curves_", "adjusted_curves_", "group_weights_", "grid_"):
        np.testing.assert_array_equal(getattr(seam, name), getattr(fitted, name))
    assert seam.epsilon_ == fitted.epsilon_ and seam.groups_ == fitted.groups_
    test = rng.normal(size=(50, 1))
    t_s = rng.integers(0, 3, 50)
    np.testing.assert_array_equal(
        seam.predict(test, sensitive_features=t_s), fitted.predict(test, sensitive_features=t_s)
    )
