import numpy as np
import pandas as pd
import pytest


def make_biased(n=600, seed=0, n_groups=2):
    """Two (or more) groups whose scores differ; the sensitive attribute is among the inputs."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_groups, n)
    x1 = rng.normal(0.8 * a, 1.0)
    x2 = rng.normal(size=n)
    X = np.column_stack([x1, x2, a.astype(float)])
    y = (x1 + 0.5 * x2 + rng.normal(0, 0.8, n) > 0.6).astype(int)
    return X, y, a


@pytest.fixture
def biased():
    return make_biased()


@pytest.fixture
def biased_frame():
    X, y, a = make_biased(seed=1)
    frame = pd.DataFrame(X, columns=["x1", "x2", "a"])
    return frame, pd.Series(y, name="y"), pd.Series(np.where(a == 1, "B", "A"), name="group")
