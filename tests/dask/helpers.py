"""What several Dask test modules share: the partitioning of the session's data."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

CHUNK = 5_000  # 4 partitions of the 2·10^4 rows
TOL = 1e-12


def arr(x, chunk=CHUNK):
    return da.from_array(np.asarray(x), chunks=chunk)
