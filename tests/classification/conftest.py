"""Fixtures of the classification tests: biased data as arrays and as pandas objects, a fit and
held-out split of it, and DPP at full parity fitted on that split."""

import numpy as np
import pandas as pd
import pytest

from fairot.classification import QuantileParityPostProcessor
from tests.helpers import make_biased


@pytest.fixture
def biased():
    return make_biased()


@pytest.fixture
def biased_frame():
    X, y, a = make_biased(seed=1)
    frame = pd.DataFrame(X, columns=["x1", "x2", "a"])
    return frame, pd.Series(y, name="y"), pd.Series(np.where(a == 1, "B", "A"), name="group")


@pytest.fixture(scope="module")
def split():
    X, y, a = make_biased(n=1200, seed=3)
    return (X[:800], y[:800], a[:800]), (X[800:], y[800:], a[800:])


@pytest.fixture(scope="module")
def full_parity(split):
    (X, y, a), _ = split
    return QuantileParityPostProcessor().fit(X, y, sensitive_features=a)
