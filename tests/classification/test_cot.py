"""COT on its own (``fairot.classification._cot``): its dual potentials, its options and the
divergence of the entropic duals.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from fairot.classification import COTClassifier, DivergenceError
from tests.helpers import FAST_IN_PROCESSING as FAST
from tests.helpers import make_biased


def test_entropic_step_too_large_raises_with_advice(biased):
    X, y, a = biased
    # The failing setting: lambda = .01 with a dual step of .1.
    model = COTClassifier(reg_strength=0.01, dual_step_size=0.1, n_updates=5000, random_state=0)
    with pytest.raises(DivergenceError, match="dual_step_size.*reg_strength"):
        model.fit(X, y, sensitive_features=a)
    assert not hasattr(model, "coef_")  # no NaN or collapsed model is left behind


def test_marginal_groups_overlap_in_cot():
    X, y, a = make_biased(n=500)
    b = np.random.default_rng(5).integers(0, 2, 500)
    sf = pd.DataFrame({"a": a, "b": b})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = FAST["COT"](group_mode="marginal", n_updates=500).fit(X, y, sensitive_features=sf)
    assert len(model.groups_) == 4 and model.duals_.shape[0] == 4


def test_array_target_and_options_run(biased):
    X, y, a = biased
    target = np.random.default_rng(0).beta(2, 5, 300)
    for kw in ({"reg": "l2"}, {"pairing": "all"}, {"constrain_duals": False}):
        model = FAST["COT"](target=target, n_updates=300, verbose=True, **kw).fit(
            X, y, sensitive_features=a
        )
        np.testing.assert_array_equal(model.target_samples_, np.sort(target))
        assert np.isfinite(model.coef_).all()
        if not kw.get("constrain_duals", True):
            assert not np.allclose(model.target_duals_, -model.duals_)
