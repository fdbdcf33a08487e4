"""Fixtures shared by several reporting test modules.

- ``data`` / ``result``: one audit of two attributes (its HTML page and its steps);
- ``small``: a small stream written out with its times (the monitor's windows and reports).
"""

import numpy as np
import pandas as pd
import pytest

from fairot.reporting import audit


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 600
    race = rng.choice(["Black", "White"], n, p=[0.3, 0.7])
    sex = rng.choice(["Female", "Male"], n)
    y = rng.integers(0, 2, n)
    # A spike at 0 (many clipped scores) in one group: the histogram must stay readable.
    s = np.clip(
        rng.beta(2, 4, n) + 0.25 * (sex == "Male") + 0.1 * y - 0.3 * (race == "Black"), 0, 1
    )
    return y, s, pd.DataFrame({"race": race, "sex": sex})


@pytest.fixture(scope="module")
def result(data):
    y, s, sf = data
    return audit(y, s, sf, n_bootstrap=50, random_state=0, title="Audit <test> & more")


# A small stream written out: irregular times over seven weeks (a gap from 26 Jan to 1 Feb).
TIMES = [
    "2026-01-05 08:00", "2026-01-05 09:30", "2026-01-06 11:00", "2026-01-07 12:00",
    "2026-01-08 13:00", "2026-01-09 14:00", "2026-01-11 23:59", "2026-01-12 00:00",
    "2026-01-13 07:00", "2026-01-14 08:00", "2026-01-15 09:00", "2026-01-16 10:00",
    "2026-01-17 11:00", "2026-01-18 12:00", "2026-01-19 13:00", "2026-01-20 14:00",
    "2026-01-21 15:00", "2026-01-22 16:00", "2026-01-23 17:00", "2026-01-24 18:00",
    "2026-01-25 19:00", "2026-02-02 06:00", "2026-02-03 07:00", "2026-02-04 08:00",
    "2026-02-05 09:00", "2026-02-06 10:00", "2026-02-07 11:00", "2026-02-08 12:00",
    "2026-02-09 13:00", "2026-02-10 14:00", "2026-02-11 15:00", "2026-02-12 16:00",
    "2026-02-13 17:00", "2026-02-14 18:00", "2026-02-15 19:00", "2026-02-16 20:00",
    "2026-02-17 21:00", "2026-02-18 22:00", "2026-02-19 23:00", "2026-02-20 00:30",
]  # fmt: skip


GROUPS = list("abababbaabbaababbabaabbaabababbabaabbaab")


@pytest.fixture
def small():
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {"t": pd.to_datetime(TIMES), "g": GROUPS, "s": rng.uniform(size=len(TIMES))}
    )
