"""DPP's tau and unseen-group policy through the Dask backend, against the in-memory estimator."""

import numpy as np
import pytest

from fairot.classification import QuantileParityPostProcessor

da = pytest.importorskip("dask.array")

CHUNK = 5_000


def test_tau_and_pooled_groups_equal_in_memory(client, data):
    rng = np.random.default_rng(4)
    race = data["race"]
    X = np.column_stack([rng.normal(race == "b", 1.0), rng.normal(size=race.shape[0])])
    y = (X[:, 0] + rng.normal(0, 1, race.shape[0]) > 0.5).astype(int)
    params = {"tau": 0.3, "unseen_groups": "pooled"}
    expected = QuantileParityPostProcessor(**params).fit(X, y, sensitive_features=race)
    dX = da.from_array(X, chunks=(CHUNK, 2))
    dy, drace = da.from_array(y, chunks=CHUNK), da.from_array(race, chunks=CHUNK)
    model = QuantileParityPostProcessor(**params).fit(dX, dy, sensitive_features=drace)
    assert model.tau_ == 0.3
    new_race = np.where(np.arange(race.shape[0]) % 4 == 0, "unseen", race)
    got = model.predict_proba(dX, sensitive_features=da.from_array(new_race, chunks=CHUNK))
    np.testing.assert_allclose(
        got.compute(),
        expected.predict_proba(X, sensitive_features=new_race),
        rtol=0,
        atol=1e-12,
    )
