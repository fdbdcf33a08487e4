"""Speed of COT and DOT: 100,000 updates on Adult against a plain NumPy transcription.

Run: ``python benchmarks/bench_classification.py``. Prints, for each method, the wall time of a
full fit (100,000 updates, 4 groups, D = 100; the initial logistic regression is frozen and not
timed), the time per update of the NumPy transcription of Algorithm 1 / DOT in
``fairot.classification._reference`` (timed on a slice of the same run), and the speed-up. The
JIT compilation is timed separately (it is cached on disk after the first run).

Each speed-up is printed twice: on wall time (the figure of a quiet machine) and on the process's
CPU time, which other processes on a shared machine disturb far less (they take turns on the
cores, which stretches wall time, not CPU time).
"""

from __future__ import annotations

import os
import time

import numpy as np
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from fairot.classification import COTClassifier, DOTClassifier
from fairot.classification._reference import (
    REG_ENTROPIC,
    CotParams,
    cot_updates_numpy,
    dot_updates_numpy,
)
from fairot.datasets import load_adult
from fairot.transport import draw_fourier_features

N_UPDATES = 100_000
N_REFERENCE = int(os.environ.get("FAIROT_BENCH_REFERENCE_UPDATES", "300"))


def _reference_slice(X, rows, target, batch, rng, method, theta):
    """Time ``N_REFERENCE`` updates of the NumPy transcription (exact features, as in the paper)."""
    counts = np.array([r.shape[0] for r in rows])
    bp = rng.integers(0, counts[None, :, None], size=(N_REFERENCE, len(rows), batch))
    tp = rng.integers(0, target.shape[0], size=(N_REFERENCE, batch))
    theta = theta.copy()
    start, cpu = time.perf_counter(), time.process_time()
    if method == "COT":
        feats = draw_fourier_features(100, 0.1, np.random.RandomState(0))
        duals = np.zeros((len(rows), 100))
        params = CotParams(REG_ENTROPIC, 0.1, 0.01, 1e-4, True, False)
        cot_updates_numpy(theta, duals, duals.copy(), X, rows, target, bp, tp, feats, params)
    else:
        dot_updates_numpy(theta, X, rows, target, bp, tp, 1e-3)
    wall = (time.perf_counter() - start) / N_REFERENCE
    return wall, (time.process_time() - cpu) / N_REFERENCE


def main() -> None:
    data = load_adult()
    train = (data.split == "train").to_numpy()
    X = data.data.to_numpy(dtype=float)[train]
    y = data.target.to_numpy()[train]
    sf = data.sensitive[train]
    lr = FrozenEstimator(LogisticRegression().fit(X, y))
    print(f"Adult train: {X.shape[0]} rows, {X.shape[1]} features, 4 groups; {N_UPDATES} updates")

    # Compilation (or loading from the on-disk cache), on a tiny run.
    start = time.perf_counter()
    COTClassifier(estimator=lr, n_updates=1, random_state=0).fit(X, y, sensitive_features=sf)
    DOTClassifier(estimator=lr, n_updates=1, random_state=0).fit(X, y, sensitive_features=sf)
    print(f"JIT compile or cache load (both kernels): {time.perf_counter() - start:.2f} s")

    rng = np.random.default_rng(0)
    for method, cls, batch in (("COT", COTClassifier, 50), ("DOT", DOTClassifier, 100)):
        model = cls(estimator=lr, n_updates=N_UPDATES, batch_size=batch, random_state=0)
        start, cpu = time.perf_counter(), time.process_time()
        model.fit(X, y, sensitive_features=sf)
        fast, fast_cpu = time.perf_counter() - start, time.process_time() - cpu
        rows = model._encoding.indices()
        theta = np.concatenate([model.initial_coef_[0], model.initial_intercept_])
        per_update, per_update_cpu = _reference_slice(
            X, rows, model.target_samples_, batch, rng, method, theta
        )
        numpy_total = per_update * N_UPDATES
        print(
            f"{method} N={batch}: fairot {fast:.2f} s per {N_UPDATES} updates "
            f"({1e3 * fast / N_UPDATES:.3f} ms/update, 100 history records included); "
            f"NumPy transcription {1e3 * per_update:.3f} ms/update "
            f"(~{numpy_total:.0f} s per {N_UPDATES}); speed-up x{numpy_total / fast:.1f}"
        )
        print(
            f"  CPU time: fairot {fast_cpu:.2f} s, NumPy transcription "
            f"{1e3 * per_update_cpu:.3f} ms/update; speed-up "
            f"x{per_update_cpu * N_UPDATES / fast_cpu:.1f}"
        )


if __name__ == "__main__":
    main()
