"""QuantileParityPostProcessor on Dask collections against the in-memory estimator."""

import dask
import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from fairot.classification import QuantileParityPostProcessor
from fairot.dask import rank_error
from fairot.dask._postprocessing import MSG_DASK_MARGINAL
from fairot.dask._sketch import n_levels

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

CHUNK = 5_000


@pytest.fixture(scope="module")
def problem(data):
    rng = np.random.default_rng(3)
    race = data["race"]
    X = np.column_stack([rng.normal(race == "b", 1.0), rng.normal(size=race.shape[0])])
    y = (X[:, 0] + rng.normal(0, 1, race.shape[0]) > 0.5).astype(int)
    return X, y, race


def test_exact_fit_predict_equals_in_memory(client, problem):
    X, y, race = problem
    expected = QuantileParityPostProcessor().fit(X, y, sensitive_features=race)
    dX = da.from_array(X, chunks=(CHUNK, 2))
    dy, drace = da.from_array(y, chunks=CHUNK), da.from_array(race, chunks=CHUNK)
    model = QuantileParityPostProcessor().fit(dX, dy, sensitive_features=drace)
    np.testing.assert_allclose(model.target_samples_, expected.target_samples_, rtol=0, atol=1e-12)
    proba = model.predict_proba(dX, sensitive_features=drace)
    assert isinstance(proba, da.Array) and proba.chunks[0] == dX.chunks[0]
    np.testing.assert_allclose(
        proba.compute(), expected.predict_proba(X, sensitive_features=race), rtol=0, atol=1e-12
    )
    np.testing.assert_array_equal(
        model.predict(dX, sensitive_features=drace).compute(),
        expected.predict(X, sensitive_features=race),
    )


def test_dataframe_input_and_sketch_within_rank_bound(client, problem):
    X, y, race = problem
    frame = pd.DataFrame(X, columns=["x0", "x1"])
    base = FrozenEstimator(LogisticRegression().fit(frame, y))
    exact = QuantileParityPostProcessor(estimator=base).fit(frame, y, sensitive_features=race)
    ddf = dd.from_pandas(frame, npartitions=4)
    dy = dd.from_pandas(pd.Series(y), npartitions=4)
    drace = dd.from_pandas(pd.Series(race, name="race"), npartitions=4)
    k = 200
    with dask.config.set({"fairot.quantiles": "sketch", "fairot.sketch_k": k}):
        model = QuantileParityPostProcessor(estimator=base).fit(ddf, dy, sensitive_features=drace)
    got = model.predict_proba(ddf, sensitive_features=drace).compute()[:, 1]
    want = exact.predict_proba(frame, sensitive_features=race)[:, 1]
    # Each sketched group ECDF and target quantile is off by at most delta in rank, so every
    # output is the exact map's at a rank within 2 delta, and the mean gap is at most 4 delta
    # times the score range (1), as for the metrics' bound.
    delta = rank_error(k) + 1.0 / (2 * n_levels(k))
    assert np.abs(got - want).mean() <= 4 * delta


def test_marginal_groups_rejected(client, problem):
    X, y, race = problem
    sf = da.from_array(np.column_stack([race, race]), chunks=(CHUNK, 2))
    dX, dy = da.from_array(X, chunks=(CHUNK, 2)), da.from_array(y, chunks=CHUNK)
    with pytest.raises(ValueError, match=MSG_DASK_MARGINAL[:40]):
        QuantileParityPostProcessor(group_mode="marginal").fit(dX, dy, sensitive_features=sf)


def test_both_backends_fit_through_the_seam(client, problem, monkeypatch):
    import fairot.dask

    X, y, race = problem
    calls = []
    seam = QuantileParityPostProcessor.fit_group_scores

    def recording(self, group_scores, encoding, **kwargs):
        calls.append([g.shape[0] for g in group_scores])
        return seam(self, group_scores, encoding, **kwargs)

    monkeypatch.setattr(QuantileParityPostProcessor, "fit_group_scores", recording)
    QuantileParityPostProcessor().fit(X, y, sensitive_features=race)
    dX = da.from_array(X, chunks=(CHUNK, 2))
    dy, drace = da.from_array(y, chunks=CHUNK), da.from_array(race, chunks=CHUNK)
    QuantileParityPostProcessor().fit(dX, dy, sensitive_features=drace)
    assert len(calls) == 2 and calls[0] == calls[1]
    assert {
        "QuantileParityPostProcessor.fit",
        "QuantileParityPostProcessor.predict",
        "QuantileParityPostProcessor.predict_proba",
    } <= set(fairot.dask.IMPLEMENTATIONS)


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
