"""Time WassersteinFairRegressor on 10^6 scores against the unavoidable work and EquiPy.

Run: ``python benchmarks/bench_regression.py``. Prints best-of-N wall times and ratios against
baselines measured in the same run:

1. K = 2, 10^6 calibration and 10^6 test scores, M = 2000: fit + predict of the score-level
   post-processor (a frozen model whose score is the first column) against the unavoidable work:
   ``np.sort`` of the calibration scores, ``np.argsort`` of the test scores and one
   ``np.searchsorted`` of the sorted test scores into the sorted calibration scores. The time of
   the sensitive-feature validation (``fairot.utils.sensitive``) is shown on its own line.
2. The largest error at strict parity against the exact map of the design (issue 10 §2), and
   EquiPy's ``FairWasserstein`` fit + transform at strict parity on the same data, run in its
   own virtual environment (``$EQUIPY_PYTHON``, default ``/tmp/equipy-venv/bin/python``; create
   it with ``python -m venv /tmp/equipy-venv && /tmp/equipy-venv/bin/pip install equipy``), and
   the mean absolute difference of the two at tau = 0, p = 2, and EquiPy's error.
3. The K = 3 path of 25 tolerances at M = 100 (squared cost, W1 and W2).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
from _timing import best_time
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.frozen import FrozenEstimator

import fairot
from fairot.regression import WassersteinFairRegressor, adjust_quantiles
from fairot.regression._projections import pairwise_grid_distances
from fairot.utils.sensitive import check_sensitive_features

N = 1_000_000
M = 2000
REPEATS = 5
EQUIPY_PYTHON = os.environ.get("EQUIPY_PYTHON", "/tmp/equipy-venv/bin/python")


class FirstColumn(RegressorMixin, BaseEstimator):
    """The score is the first column (so that only the post-processing is timed)."""

    def fit(self, X, y=None):
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        return X[:, 0]


EQUIPY_SCRIPT = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from equipy.fairness import FairWasserstein
    folder = sys.argv[1]
    cal, cal_s = np.load(folder + "/cal.npy"), np.load(folder + "/cal_s.npy")
    test, test_s = np.load(folder + "/test.npy"), np.load(folder + "/test_s.npy")
    times = []
    for _ in range(int(sys.argv[2])):
        start = time.perf_counter()
        model = FairWasserstein(sigma=0.0001)
        model.fit(cal, cal_s)
        out = model.transform(test, test_s, epsilon=0)
        times.append(time.perf_counter() - start)
    np.save(folder + "/equipy.npy", np.asarray(out, dtype=float))
    print(min(times))
    """
)


def run_equipy(cal, cal_s, test, test_s) -> tuple[float, np.ndarray] | None:
    if not Path(EQUIPY_PYTHON).exists():
        return None
    with tempfile.TemporaryDirectory() as folder:
        for name, arr in (("cal", cal), ("cal_s", cal_s), ("test", test), ("test_s", test_s)):
            np.save(f"{folder}/{name}.npy", arr)
        done = subprocess.run(
            [EQUIPY_PYTHON, "-c", EQUIPY_SCRIPT, folder, str(REPEATS)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            print("EquiPy failed:", done.stderr.strip().splitlines()[-1:], file=sys.stderr)
            return None
        return float(done.stdout.strip().splitlines()[-1]), np.load(f"{folder}/equipy.npy")


def main() -> None:
    rng = np.random.default_rng(0)
    cal_s = (rng.random(N) < 0.4).astype(np.int64)
    test_s = (rng.random(N) < 0.4).astype(np.int64)
    cal = rng.normal(size=N) + 2.0 * cal_s + 0.5 * rng.normal(size=N) * cal_s
    test = rng.normal(size=N) + 2.0 * test_s + 0.5 * rng.normal(size=N) * test_s
    X_cal, X_test = cal[:, None], test[:, None]
    frozen = FrozenEstimator(FirstColumn().fit(X_cal))

    def unavoidable():
        sorted_cal = np.sort(cal)
        order = np.argsort(test)
        np.searchsorted(sorted_cal, test[order], side="right")

    def ours(tau=0.5, p=2):
        model = WassersteinFairRegressor(estimator=frozen, tau=tau, p=p, n_grid=M)
        model.fit(X_cal, cal, sensitive_features=cal_s)
        return model.predict(X_test, sensitive_features=test_s)

    def validation():
        encoding = check_sensitive_features(cal_s, N)
        encoding.encode(test_s)

    t_base = best_time(unavoidable)
    t_valid = best_time(validation)
    timings = {f"fit + predict, W{p}, tau=.5": best_time(lambda p=p: ours(0.5, p)) for p in (1, 2)}
    timings["fit + predict, Winf, tau=.5"] = best_time(lambda: ours(0.5, np.inf))
    timings["fit + predict, W2, tau=0"] = best_time(lambda: ours(0.0, 2))

    print(
        f"fairot {fairot.__version__}, numpy {np.__version__}, Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs"
    )
    print(f"K = 2, {N:,} calibration + {N:,} test scores, M = {M}; best of {REPEATS}")
    print(f"unavoidable work (sort cal + argsort test + searchsorted): {t_base * 1e3:.0f} ms")
    print(f"sensitive-feature validation alone (fit + predict):        {t_valid * 1e3:.0f} ms")
    print()
    print(f"{'task':<32}{'ms':>8}{'/ unavoidable':>15}{'minus validation':>18}")
    for name, t in timings.items():
        print(f"{name:<32}{t * 1e3:>8.0f}{t / t_base:>15.2f}{(t - t_valid) / t_base:>18.2f}")

    # The exact strict-parity map of this design: N(0, 1) and N(2, 1.25), shares .6/.4; the
    # standardised score z of either group goes to mean + sd * z of the W2 barycenter.
    sd, mean, share = np.array([1.0, np.sqrt(1.25)]), np.array([0.0, 2.0]), np.array([0.6, 0.4])
    exact = share @ mean + (share @ sd) * (test - mean[test_s]) / sd[test_s]
    low = np.array([cal[cal_s == g].min() for g in (0, 1)])[test_s]
    high = np.array([cal[cal_s == g].max() for g in (0, 1)])[test_s]
    inside = (test >= low) & (test <= high)

    def errors(pred):
        error = np.abs(pred - exact)
        return f"max {error.max():.3f} ({error[inside].max():.3f} inside the calibration range)"

    print()
    print(f"|fairot - exact map| at tau = 0: {errors(ours(0.0, 2))}")
    equipy = run_equipy(cal, cal_s, test, test_s)
    if equipy is None:
        print(f"EquiPy: not available ({EQUIPY_PYTHON} missing or failing); comparison skipped.")
    else:
        t_equipy, y_equipy = equipy
        t_ours = timings["fit + predict, W2, tau=0"]
        ours_fair = ours(0.0, 2)
        mad = float(np.mean(np.abs(ours_fair - y_equipy)))
        print(
            f"EquiPy FairWasserstein fit + transform (epsilon=0): {t_equipy * 1e3:.0f} ms; "
            f"EquiPy / fairot = {t_equipy / t_ours:.1f}x"
        )
        print(f"mean |fairot - EquiPy| at tau = 0, p = 2: {mad:.2e}  (target <= 1e-3)")
        print(f"|EquiPy - exact map|: {errors(y_equipy)}")

    # K = 3, 25 tolerances, M = 100, squared cost
    latent = np.sort(rng.normal(size=(3, 100)), axis=1) + np.array([[0.0], [2.0], [4.0]])
    weights = np.array([0.2, 0.29, 0.51])
    print()
    for p in (1, 2):
        d_max = pairwise_grid_distances(latent, p).max()

        def path(p=p, d_max=d_max):
            for tau in np.linspace(0, 1, 25):
                adjust_quantiles(latent, weights, p=p, epsilon=tau * d_max, bounds=(-20, 20))

        print(
            f"K = 3 path, 25 tolerances, M = 100, W{p}, squared: {best_time(path) * 1e3:.1f} ms"
            " (target < 1000 ms)"
        )


if __name__ == "__main__":
    main()
