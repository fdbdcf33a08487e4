"""Fixtures of the classification tests: biased data as arrays and as pandas objects."""

import numpy as np
import pandas as pd
import pytest

from tests.helpers import make_biased


@pytest.fixture
def biased():
    return make_biased()


@pytest.fixture
def biased_frame():
    X, y, a = make_biased(seed=1)
    frame = pd.DataFrame(X, columns=["x1", "x2", "a"])
    return frame, pd.Series(y, name="y"), pd.Series(np.where(a == 1, "B", "A"), name="group")
