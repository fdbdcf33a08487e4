"""Speed of the PyTorch fairness penalty: against the cross-entropy step, and the numba kernels.

Run: ``python benchmarks/bench_torch.py [--device cuda] [--instructions]`` (a GPU runs part 1
only). Prints

1. for a 2x64 MLP on Adult's features (CPU, one thread, batch 256 split over the 4 groups), the
   time of one training step (forward, loss, backward, Adam) with cross-entropy alone and with
   cross-entropy plus each penalty (COT, DOT, Sinkhorn), and the ratio (issue 13's target:
   <= 1.5x for batch 256). The configurations take turns over 15 rounds of 50 steps (5 for
   Sinkhorn): the time is a configuration's median round, the ratio the median over rounds of
   its time over the cross-entropy step's in the same round (neighbours in time share the
   machine's load);
2. for the paper's logistic model, the time per update of the penalty driven as Algorithm 1
   (batches of 50 per group for COT, 100 for DOT; forward, backward, SGD step) against the fused
   numba kernels of ``fairot.classification`` (per update, from a 20,000-update run).

``--instructions`` replaces part 1's clock by valgrind's instruction count (callgrind, a few
minutes; needs ``valgrind`` on the PATH): the same steps counted on a simulated CPU, unmoved by
the machine's load. Counts are not times (valgrind runs torch's AVX2 kernels where the CPU may
run AVX-512 ones, and a load that misses the cache counts as one instruction), but at these
sizes a step's time is mostly the dispatch of its operations, which the count measures exactly.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch
from _timing import best_time

from fairot.classification import COTClassifier, DOTClassifier
from fairot.datasets import load_adult
from fairot.torch import WassersteinParityPenalty

N_STEPS = 200
BATCH = 256
ROUND_STEPS = 50
CALLGRIND_STEPS = 10


def _adult():
    adult = load_adult()
    train = (adult.split == "train").to_numpy()
    X = adult.data[train].to_numpy(float)
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    y = adult.target[train].to_numpy().astype(float)
    from fairot.utils.sensitive import check_sensitive_features

    enc = check_sensitive_features(adult.sensitive[train], X.shape[0])
    return X, y, enc.codes, enc.n_groups


def _step_runner(
    model, penalty, X, y, g, batches, lam=1.0, lr=1e-3, sgd=False, ce=True, per_call=None
):
    """A function running training steps (its model persists between calls).

    Each call runs ``per_call`` steps (all by default) on the next batches of ``batches``,
    cycling, so that repeated calls keep training on new batches.
    """
    opt = (torch.optim.SGD if sgd else torch.optim.Adam)(model.parameters(), lr=lr)
    bce = torch.nn.BCEWithLogitsLoss()
    per_call = len(batches) if per_call is None else per_call
    position = [0]

    def run():
        start = position[0]
        position[0] = (start + per_call) % len(batches)
        for k in range(start, start + per_call):
            idx = batches[k % len(batches)]
            logits = model(X[idx]).reshape(-1)
            loss = bce(logits, y[idx]) if ce else 0.0
            if penalty is not None:
                loss = loss + lam * penalty(torch.sigmoid(logits), g[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        if X.is_cuda:
            torch.cuda.synchronize()  # the steps' kernels run asynchronously

    return run


def _steps(model, penalty, X, y, g, batches, **kwargs):
    run = _step_runner(model, penalty, X, y, g, batches, **kwargs)
    return best_time(run, repeats=3) / len(batches)


def _interleaved(runners: dict, n_steps: dict, baseline: str, rounds: int = 15) -> dict:
    """Time per step of each runner and its ratio to ``baseline``, the runners taking turns.

    In every round each runner runs its steps once, so that neighbours in time share the
    machine's load; a runner's time is its median over rounds, its ratio the median over rounds
    of its time over the baseline's in the same round.
    """
    times = {name: [] for name in runners}
    for _ in range(rounds):
        for name, run in runners.items():
            times[name].append(best_time(run, repeats=1) / n_steps[name])
    base = np.array(times[baseline])
    return {
        name: (float(np.median(t)), float(np.median(np.array(t) / base)))
        for name, t in times.items()
    }


def _balanced(codes, n_groups, per_group, n_steps, rng):
    members = [np.flatnonzero(codes == a) for a in range(n_groups)]
    return [
        torch.as_tensor(
            np.concatenate([m[rng.integers(0, m.shape[0], per_group)] for m in members])
        )
        for _ in range(n_steps)
    ]


def _part1_data() -> dict:
    """Adult's standardised training split, its groups, and the logistic model and its scores."""
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    X_np, y_np, codes, n_groups = _adult()
    lr = FrozenEstimator(LogisticRegression(max_iter=200).fit(X_np, y_np))
    # A fixed target, as FairTrainer uses after its warm-up: the logistic model's scores.
    target = np.sort(lr.predict_proba(X_np)[:, 1])
    return {"X": X_np, "y": y_np, "codes": codes, "n_groups": n_groups, "target": target, "lr": lr}


def _part1_runners(device, data: dict, methods=("cot", "dot", "sinkhorn"), steps=ROUND_STEPS):
    """Part 1's step runners (cross-entropy first) and their steps per call."""
    X_np, y_np, codes, n_groups = data["X"], data["y"], data["codes"], int(data["n_groups"])
    X = torch.tensor(X_np, dtype=torch.float32, device=device)
    y = torch.tensor(y_np, dtype=torch.float32, device=device)
    g = torch.tensor(codes, device=device)
    rng = np.random.default_rng(0)
    batches = [b.to(device) for b in _balanced(codes, n_groups, BATCH // n_groups, N_STEPS, rng)]

    def mlp():
        torch.manual_seed(0)
        return torch.nn.Sequential(
            torch.nn.Linear(X.shape[1], 64), torch.nn.ReLU(),
            torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1),
        ).to(device)  # fmt: skip

    target = data["target"]
    runners = {"cross-entropy": _step_runner(mlp(), None, X, y, g, batches, per_call=steps)}
    n_steps = {"cross-entropy": steps}
    for method in methods:
        penalty = WassersteinParityPenalty(n_groups, method=method, target=target, random_state=0)
        penalty = penalty.to(device)
        # Sinkhorn iterates to convergence at every step (hundreds of iterations at the default
        # epsilon = .01): timed on fewer steps.
        n_steps[method] = 5 if method == "sinkhorn" else steps
        runners[method] = _step_runner(mlp(), penalty, X, y, g, batches, per_call=n_steps[method])
    return runners, n_steps


def _count_instructions(child_data: str | None) -> None:
    """Part 1 under callgrind: instructions per step of each configuration and their ratios.

    The data and the target are prepared here and read by the child under valgrind, which
    runs everything about 50 times slower.
    """
    if child_data is not None:
        torch.set_num_threads(1)
        data = dict(np.load(child_data))
        # 10 steps warm (caches filled, the model past its first step), then 10 counted.
        runners, _ = _part1_runners(torch.device("cpu"), data, ("cot", "dot"), CALLGRIND_STEPS)
        names = []
        for name, run in runners.items():
            run()
            torch._C._valgrind_toggle()
            run()
            torch._C._valgrind_toggle_and_dump_stats()
            names.append(name)
        print(",".join(names))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind on the PATH (e.g. apt install valgrind).")
    data = _part1_data()
    with tempfile.TemporaryDirectory() as out:
        np.savez(f"{out}/data.npz", **{k: v for k, v in data.items() if k != "lr"})
        child = subprocess.run(
            [
                "valgrind", "--tool=callgrind", "--collect-atstart=no", "--dump-instr=no",
                "--dump-line=no", f"--callgrind-out-file={out}/cg.%p", sys.executable,
                os.path.abspath(__file__), "--_callgrind-child", f"{out}/data.npz",
            ],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        names = child.stdout.strip().splitlines()[-1].split(",")
        dumps = sorted(glob.glob(f"{out}/cg.*.*"), key=lambda f: int(f.rsplit(".", 1)[1]))
        counts = {}
        for name, dump in zip(names, dumps, strict=True):
            with open(dump) as f:
                total = next(line for line in f if line.startswith(("summary:", "totals:")))
            counts[name] = int(total.split()[1]) / CALLGRIND_STEPS
    print(f"1. MLP 2x64 on Adult, batch {BATCH}, CPU, 1 thread: instructions per step (callgrind)")
    base = counts.pop("cross-entropy")
    print(f"   cross-entropy step alone: {base / 1e6:.3f} M")
    for method, count in counts.items():
        print(f"   + {method:8s} penalty:      {count / 1e6:.3f} M  ({count / base:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="torch device of part 1 (e.g. cuda)")
    parser.add_argument(
        "--instructions", action="store_true", help="count part 1's instructions (valgrind)"
    )
    parser.add_argument("--_callgrind-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.instructions or args._callgrind_child:
        _count_instructions(args._callgrind_child)
        return
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)
    data = _part1_data()
    runners, n_steps = _part1_runners(device, data)
    where = "CPU, 1 thread" if device.type == "cpu" else str(device)
    print(f"1. MLP 2x64 on Adult ({data['X'].shape[1]} features), batch {BATCH}, {where}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # Sinkhorn's non-convergence notes
        results = _interleaved(runners, n_steps, "cross-entropy")
    print(f"   cross-entropy step alone: {results.pop('cross-entropy')[0] * 1e3:.3f} ms")
    for method, (t, ratio) in results.items():
        print(f"   + {method:8s} penalty:      {t * 1e3:.3f} ms  ({ratio:.2f}x)")

    if device.type != "cpu":
        return  # part 2 compares with the numba kernels, which run on the CPU
    print("2. Logistic model, per update: penalty (torch, exact features) vs numba kernel")
    X_np, y_np, codes, n_groups, lr = (data[k] for k in ("X", "y", "codes", "n_groups", "lr"))
    X, y = torch.tensor(X_np, dtype=torch.float32), torch.tensor(y_np, dtype=torch.float32)
    g = torch.tensor(codes)
    rng = np.random.default_rng(1)
    n_kernel = 20_000
    for name, cls, batch, kwargs in (
        ("COT", COTClassifier, 50, {"method": "cot", "pairing": "diagonal"}),
        ("DOT", DOTClassifier, 100, {"method": "dot"}),
    ):
        est = cls(estimator=lr, n_updates=n_kernel, batch_size=batch, random_state=0)
        est.fit(X_np[:2000], y_np[:2000], sensitive_features=codes[:2000])  # compile
        kernel = (
            best_time(lambda est=est: est.fit(X_np, y_np, sensitive_features=codes), repeats=2)
            / n_kernel
        )
        logistic = torch.nn.Linear(X.shape[1], 1)
        penalty = WassersteinParityPenalty(
            n_groups, target=est.target_samples_, random_state=0, **kwargs
        )
        steps = _balanced(codes, n_groups, batch, N_STEPS, rng)
        t = _steps(logistic, penalty, X, y, g, steps, lam=1.0, lr=1e-4, sgd=True, ce=False)
        print(
            f"   {name}: numba kernel {kernel * 1e6:.1f} us/update (fit incl. history), "
            f"torch penalty step {t * 1e6:.1f} us/update ({t / kernel:.1f}x the kernel)"
        )


if __name__ == "__main__":
    main()
