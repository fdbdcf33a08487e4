"""DPP's groups at prediction time (``fairot.classification._dpp_groups``): an unseen group is
refused with the list of the seen ones, or mapped through the pooled scores of every fit row.

The oracle: the pooled ECDF and the target quantiles, written out in NumPy.
"""

import re

import numpy as np
import pandas as pd
import pytest

from fairot.classification import QuantileParityPostProcessor
from fairot.classification._postprocessing import MSG_UNSEEN
from tests.helpers import make_biased


def test_unseen_group_error_lists_the_seen_groups(full_parity, split):
    _, (Xt, _, at) = split
    message = MSG_UNSEEN.format(label=7, known=["0", "1"])
    with pytest.raises(ValueError, match=re.escape(message)):
        full_parity.predict(Xt, sensitive_features=np.where(at == 1, 7, at))


@pytest.mark.parametrize("tau", [0.0, 0.4])
def test_unseen_group_pooled_maps_through_all_fit_rows(split, tau):
    (X, y, a), (Xt, _, at) = split
    model = QuantileParityPostProcessor(tau=tau, unseen_groups="pooled").fit(
        X, y, sensitive_features=a
    )
    sf = np.where(np.arange(at.size) % 3 == 0, 9, at)
    got = model.predict_proba(Xt, sensitive_features=sf)[:, 1]
    seen = sf != 9
    strict = QuantileParityPostProcessor(tau=tau).fit(X, y, sensitive_features=a)
    np.testing.assert_array_equal(
        got[seen], strict.predict_proba(Xt[seen], sensitive_features=sf[seen])[:, 1]
    )
    pooled = np.sort(model.base_scores(X))
    s_new = model.base_scores(Xt[~seen])
    rank = np.searchsorted(pooled, s_new + 1e-12, side="right") / pooled.size
    target = model.target_samples_
    image = target[np.clip(np.ceil(rank * target.size - 1e-9).astype(int) - 1, 0, None)]
    np.testing.assert_allclose(got[~seen], tau * s_new + (1 - tau) * image, rtol=0, atol=1e-15)


def test_unseen_intersection_pooled_with_two_columns():
    X, y, a = make_biased(n=600, seed=2)
    b = np.random.default_rng(0).integers(0, 2, a.size)
    sf = pd.DataFrame({"a": a, "b": b})
    model = QuantileParityPostProcessor(unseen_groups="pooled").fit(X, y, sensitive_features=sf)
    new = pd.DataFrame({"a": [0, 1, 5, 0], "b": [1, 0, 0, 3]})
    out = model.predict_proba(X[:4], sensitive_features=new)
    assert out.shape == (4, 2) and np.all(np.isfinite(out))
    strict = QuantileParityPostProcessor().fit(X, y, sensitive_features=sf)
    with pytest.raises(ValueError, match=re.escape("not seen at fit time (seen groups:")):
        strict.predict_proba(X[:4], sensitive_features=new)
