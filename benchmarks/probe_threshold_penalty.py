"""Probe for issue 22: is the gap to ExponentiatedGradient the objective, the optimiser, or both?

Run: ``python benchmarks/probe_threshold_penalty.py --dataset adult --seeds 0 1 2``
``[--penalty rate|w1] [--optimizer adam|gd] [--bandwidths .05 .1] [--lams .2 .3 1]``.

Not a fairot method: a deterministic linear (logistic) model, started at the unaware logistic
model as COT and DOT are, trained full-batch on

.. math::

    \\frac{1}{n}\\sum_i \\ell(y_i, s_i) + \\lambda\\,\\mathrm{penalty}(s),

with ``--penalty rate`` the threshold-local gap
:math:`\\sum_a |\\bar\\Phi_a - \\bar\\Phi|`, :math:`\\bar\\Phi_a` the mean over group :math:`a` of
the soft decision :math:`\\Phi((s_i - 1/2)/h)` (:math:`\\Phi` the normal CDF, :math:`h` the
bandwidth; :math:`h \\to 0` gives the groups' selection rates at 0.5 against the population's),
or ``--penalty w1`` the whole-distribution :math:`\\sum_a W_1(p_{S_a}, p_S)` to the pooled scores
(strong demographic parity, COT's and DOT's objective, on a 199-point quantile grid). Adam or
plain gradient descent. The split, the metrics and fairlearn's ``ExponentiatedGradient`` (no
attribute at prediction) are those of ``fairot reproduce frontier``, in the same run. Prints
every point, then the best test accuracy within each DP budget per seed and the mean over seeds
(``frontier_at``: NaN unless every seed has a point).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import torch
from torch.nn import functional as F

from fairot.experiments.frontier import (
    fairlearn_points,
    frontier_at,
    logistic,
    point_metrics,
    unaware_split,
)
from fairot.utils import markdown_table

LEARNING_RATE = {"adam": 0.01, "gd": 0.5}


def penalty(scores: torch.Tensor, onehot: torch.Tensor, kind: str, bandwidth: float):
    """The fairness term of the probe's objective (see the module docstring)."""
    counts = onehot.sum(0)
    if kind == "rate":
        soft = 0.5 * (1.0 + torch.erf((scores - 0.5) / (bandwidth * np.sqrt(2.0))))
        rates = onehot.T @ soft / counts
        return (rates - soft.mean()).abs().sum()
    levels = torch.linspace(0.005, 0.995, 199, dtype=scores.dtype)
    pooled = torch.quantile(scores, levels)
    total = scores.new_zeros(())
    for a in range(onehot.shape[1]):
        group = scores[onehot[:, a] > 0]
        total = total + (torch.quantile(group, levels) - pooled).abs().mean()
    return total


def train(split, lr, kind: str, optimizer: str, bandwidth: float, lam: float, steps: int):
    """Test scores of the linear model trained on the probe's objective from ``lr``."""
    X = torch.tensor(split.X_train, dtype=torch.float64)
    y = torch.tensor(split.y_train, dtype=torch.float64)
    cells = split.sensitive_train.astype(str).agg("|".join, axis=1).to_numpy()
    codes = torch.tensor(np.unique(cells, return_inverse=True)[1])
    onehot = F.one_hot(codes).double()
    coef = torch.tensor(lr.coef_.ravel(), dtype=torch.float64, requires_grad=True)
    intercept = torch.tensor(lr.intercept_, dtype=torch.float64, requires_grad=True)
    make = torch.optim.Adam if optimizer == "adam" else torch.optim.SGD
    opt = make([coef, intercept], lr=LEARNING_RATE[optimizer])
    for _ in range(steps):
        logits = X @ coef + intercept
        loss = F.binary_cross_entropy_with_logits(logits, y)
        objective = loss + lam * penalty(torch.sigmoid(logits), onehot, kind, bandwidth)
        opt.zero_grad()
        objective.backward()
        opt.step()
    with torch.no_grad():
        X_test = torch.tensor(split.X_test, dtype=torch.float64)
        return torch.sigmoid(X_test @ coef + intercept).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="adult")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--penalty", choices=["rate", "w1"], default="rate")
    parser.add_argument("--optimizer", choices=["adam", "gd"], default="adam")
    parser.add_argument("--bandwidths", type=float, nargs="+", default=[0.05, 0.1])
    parser.add_argument("--lams", type=float, nargs="+", default=[0.2, 0.3, 0.5, 1.0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--eg-bounds", type=float, nargs="+", default=[0.01, 0.02, 0.04, 0.07, 0.1])
    args = parser.parse_args()
    torch.set_num_threads(1)
    name = f"probe ({args.penalty}, {args.optimizer})"
    points = []
    for seed in args.seeds:
        # Adult's training rows subsampled as in the study (10,000, stratified, every test row).
        split = unaware_split(
            args.dataset, seed, max_train=10_000 if args.dataset == "adult" else None
        )
        lr = logistic(split)
        bandwidths = args.bandwidths if args.penalty == "rate" else [0.0]
        for h in bandwidths:
            for lam in args.lams:
                scores = train(split, lr, args.penalty, args.optimizer, h, lam, args.steps)
                m = point_metrics(split, scores)
                points.append({"method": name, "seed": seed, "h": h, "lam": lam, **m})
                print(
                    f"seed {seed} h={h:g} lam={lam:g}: accuracy {m['accuracy']:.3f}, "
                    f"DP {m['dp_difference']:.3f}, AUC {m['auc']:.3f}",
                    flush=True,
                )
        peer = fairlearn_points(
            split, lr, seed=seed, bounds=args.eg_bounds, max_iter=50, grid_size=2, tolerances=()
        )
        for p in peer:
            if p["method"] == "ExponentiatedGradient":
                points.append({**p, "seed": seed})
    frame = pd.DataFrame(points).assign(dataset=args.dataset)
    for seed in args.seeds:
        table = frontier_at(frame[frame["seed"] == seed])
        print(f"\nseed {seed}\n" + markdown_table(table.round(3)))
    print("\nmean over seeds\n" + markdown_table(frontier_at(frame).round(3)))


if __name__ == "__main__":
    main()
