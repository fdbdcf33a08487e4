"""WassersteinFairRegressor on Dask collections against the in-memory estimator."""

import numpy as np
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression

from fairot.dask._regression import MSG_DASK_REGRESSOR
from fairot.regression import WassersteinFairRegressor

da = pytest.importorskip("dask.array")

CHUNK = 5_000


@pytest.fixture(scope="module")
def problem(data):
    rng = np.random.default_rng(5)
    race = data["race"]
    X = np.column_stack([rng.normal(race == "b", 1.0), rng.normal(size=race.shape[0])])
    y = X @ np.array([2.0, -1.0]) + rng.normal(size=race.shape[0])
    base = FrozenEstimator(LinearRegression().fit(X, y))
    return X, y, race, base


def test_exact_fit_predict_equals_in_memory(client, problem):
    X, y, race, base = problem
    model = WassersteinFairRegressor(estimator=base, epsilon=0.05, p=2)
    expected = WassersteinFairRegressor(estimator=base, epsilon=0.05, p=2).fit(
        X, y, sensitive_features=race
    )
    dX = da.from_array(X, chunks=(CHUNK, 2))
    dy, drace = da.from_array(y, chunks=CHUNK), da.from_array(race, chunks=CHUNK)
    model.fit(dX, dy, sensitive_features=drace)
    np.testing.assert_allclose(model.latent_curves_, expected.latent_curves_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        model.adjusted_curves_, expected.adjusted_curves_, rtol=0, atol=1e-12
    )
    pred = model.predict(dX, sensitive_features=drace)
    assert isinstance(pred, da.Array) and pred.chunks[0] == dX.chunks[0]
    np.testing.assert_allclose(
        pred.compute(), expected.predict(X, sensitive_features=race), rtol=0, atol=1e-12
    )


def test_needs_a_frozen_model(client, problem):
    X, y, race, _ = problem
    dX = da.from_array(X, chunks=(CHUNK, 2))
    dy, drace = da.from_array(y, chunks=CHUNK), da.from_array(race, chunks=CHUNK)
    with pytest.raises(ValueError, match=MSG_DASK_REGRESSOR[:40]):
        WassersteinFairRegressor(epsilon=0.1).fit(dX, dy, sensitive_features=drace)


def test_sketch_latent_curves_within_rank_bound(client, problem):
    import dask

    from fairot.dask import rank_error
    from fairot.dask._sketch import n_levels

    X, y, race, base = problem
    expected = WassersteinFairRegressor(estimator=base, epsilon=0.05).fit(
        X, y, sensitive_features=race
    )
    dX = da.from_array(X, chunks=(CHUNK, 2))
    dy, drace = da.from_array(y, chunks=CHUNK), da.from_array(race, chunks=CHUNK)
    k = 200
    with dask.config.set({"fairot.quantiles": "sketch", "fairot.sketch_k": k}):
        model = WassersteinFairRegressor(estimator=base, epsilon=0.05)
        model.fit(dX, dy, sensitive_features=drace)
    np.testing.assert_allclose(model.group_weights_, expected.group_weights_, rtol=0, atol=1e-15)
    # Each sketched quantile is the exact one at a rank within delta, so the grid mean of the
    # gap to the exact curve is at most 2 delta R, plus R / M for reading it on the n_grid grid.
    delta = rank_error(k) + 1.0 / (2 * n_levels(k))
    for got, want in zip(model.latent_curves_, expected.latent_curves_, strict=True):
        spread = want[-1] - want[0]
        assert np.abs(got - want).mean() <= 2 * delta * spread + spread / model.n_grid


def test_dask_fit_ends_in_the_public_seam_and_warns_at_the_callers_line(
    client, problem, monkeypatch
):
    X, y, race, base = problem
    seam = WassersteinFairRegressor.fit_from_group_statistics
    calls = []

    def recording(self, *args, **kwargs):
        calls.append(kwargs["encoding"].n_groups)
        return seam(self, *args, **kwargs)

    monkeypatch.setattr(WassersteinFairRegressor, "fit_from_group_statistics", recording)
    dX = da.from_array(X, chunks=(CHUNK, 2))
    dy, drace = da.from_array(y, chunks=CHUNK), da.from_array(race, chunks=CHUNK)
    with pytest.warns(UserWarning, match="tau=1.5 > 1") as record:
        WassersteinFairRegressor(estimator=base, tau=1.5).fit(dX, dy, sensitive_features=drace)
    assert record[0].filename == __file__
    WassersteinFairRegressor(estimator=base, tau=0.5).fit(X, y, sensitive_features=race)
    assert calls == [3, 3]  # the Dask fit and the in-memory fit


def test_sample_weight_is_refused_on_dask_collections(client, problem):
    # it used to be dropped without a word
    X, y, race, base = problem
    dX = da.from_array(X, chunks=(CHUNK, 2))
    dy, drace = da.from_array(y, chunks=CHUNK), da.from_array(race, chunks=CHUNK)
    model = WassersteinFairRegressor(estimator=base, epsilon=0.1)
    with pytest.raises(ValueError, match="sample_weight is not supported on Dask collections"):
        model.fit(dX, dy, sample_weight=np.ones(X.shape[0]), sensitive_features=drace)


@pytest.mark.parametrize("names", ["race", ["race"]])
def test_groups_named_as_columns_of_a_dask_dataframe(client, problem, names):
    # issue 21: fit reads the groups from X's columns, and predict reads them again
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline

    X, y, race, _ = problem
    frame = pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "race": race})
    numeric = make_column_transformer(("passthrough", ["x0", "x1"]))
    base = FrozenEstimator(make_pipeline(numeric, LinearRegression()).fit(frame, y))
    expected = WassersteinFairRegressor(estimator=base, epsilon=0.05).fit(
        frame, y, sensitive_features=race
    )
    dframe = dd.from_pandas(frame, npartitions=4)
    dy = dd.from_pandas(pd.Series(y), npartitions=4).to_dask_array(lengths=True)
    model = WassersteinFairRegressor(estimator=base, epsilon=0.05)
    model.fit(dframe, dy, sensitive_features=names)
    np.testing.assert_allclose(
        model.adjusted_curves_, expected.adjusted_curves_, rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        model.predict(dframe).compute(),
        expected.predict(frame, sensitive_features=race),
        rtol=0,
        atol=1e-12,
    )
    # in memory, the model fitted on the cluster reads the same columns
    np.testing.assert_allclose(
        model.predict(frame), expected.predict(frame, sensitive_features=race), atol=1e-12
    )


def test_groups_named_as_columns_need_a_dask_dataframe(client, problem):
    X, y, race, base = problem
    dX = da.from_array(X, chunks=(CHUNK, 2))
    dy = da.from_array(y, chunks=CHUNK)
    with pytest.raises(ValueError, match="names columns of X, but X is not a Dask DataFrame"):
        WassersteinFairRegressor(estimator=base, epsilon=0.05).fit(
            dX, dy, sensitive_features="race"
        )
