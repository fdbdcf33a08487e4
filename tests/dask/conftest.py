"""One in-process LocalCluster (2 workers) shared by every Dask test."""

import numpy as np
import pytest

pytest.importorskip("distributed")


@pytest.fixture(scope="session")
def client():
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="session")
def data():
    """2·10^4 rows: scores, labels, a regression target and two sensitive columns."""
    rng = np.random.default_rng(11)
    n = 20_000
    race = rng.choice(["w", "b", "o"], n, p=[0.55, 0.3, 0.15])
    sex = rng.choice(["f", "m"], n)
    shift = (race == "b") * 0.4 + (sex == "m") * 0.2
    scores = 1.0 / (1.0 + np.exp(-(rng.normal(size=n) + shift)))
    # Ties across groups and partitions exercise the exact cells at equal values.
    scores[rng.random(n) < 0.05] = 0.5
    labels = (rng.random(n) < scores).astype(int)
    response = 3.0 * scores + rng.normal(size=n)
    return {"scores": scores, "y": labels, "r": response, "race": race, "sex": sex}
