"""Shared timing helper of the benchmark scripts (run them as ``python benchmarks/bench_*.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_time(fn: Callable[[], object], repeats: int = 5) -> float:
    """Best wall time of ``repeats`` calls, in seconds: the least disturbed by other load."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
