"""Fixtures shared by the command-line tests."""

import numpy as np
import pytest

from tests.helpers import write_rows as _write


@pytest.fixture
def coded_csv(tmp_path):
    rng = np.random.default_rng(1)
    groups = ["01", "1"] * 30
    scores = rng.uniform(0, 1, 60)
    rows = [f"{s:.17g},{g},{int(s > 0.5)}" for s, g in zip(scores, groups, strict=True)]
    return _write(tmp_path / "coded.csv", rows, "score,group,y"), scores, np.array(groups)
