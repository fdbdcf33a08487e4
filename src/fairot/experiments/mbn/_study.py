"""The MBN synthetic study: every (scenario, seed) cell trained, then summarised over seeds.

Internal surface: :func:`run_mbn_synthetic` (re-exported by :mod:`fairot.experiments.mbn`),
:func:`seed_streams` and :func:`run_cell` (a cell, the unit spread over processes).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from fairot.experiments._result import StudyResult
from fairot.experiments._seeds import CONFIDENCE, paired_differences, seed_intervals
from fairot.experiments.mbn._constants import (
    COMPARISONS,
    COUNT_ERROR,
    MARGIN_BOUNDS,
    METHOD_LABELS,
    METHODS_ERROR,
    PAIRED_METHODS,
    PAPER,
    SCENARIO_ORDER,
)
from fairot.experiments.mbn._notes import quick_notice, study_notes
from fairot.experiments.mbn._plots import plot_differences, plot_sweep, plot_trajectories
from fairot.face import make_synthetic_faces, run_synthetic_method


def report_row(report, **keys) -> dict[str, Any]:
    row = dict(keys)
    accuracies = report.by_group["accuracy"]
    for g, acc in accuracies.items():
        row[f"acc_g{g}"] = 100 * acc
    # Group 0 is the anchor (the best-represented, easiest group in every scenario).
    row["minority"] = 100 * float(accuracies.iloc[1:].mean())
    row.update(mean=100 * report.mean_accuracy, std=100 * report.std, ser=report.ser)
    return row


def seed_streams(random_state: int, scenario_index: int, n_seeds: int) -> list[dict[str, int]]:
    """Independent data, initialisation and sampling seeds for each replication of a scenario.

    ``SeedSequence(random_state)`` is spawned per scenario, then per replication, then into the
    three streams, so no two streams share state, and the first ``n`` replications do not
    change when more are asked for (``random_state + k`` would instead reuse the streams of
    ``random_state=1`` inside a run with ``random_state=0``).
    """
    scenario = np.random.SeedSequence(random_state).spawn(scenario_index + 1)[scenario_index]
    streams = []
    for replication in scenario.spawn(n_seeds):
        data, init, sampling = (int(s.generate_state(1)[0]) for s in replication.spawn(3))
        streams.append({"data_seed": data, "init_seed": init, "sampling_seed": sampling})
    return streams


def margin_table(margin_runs: pd.DataFrame) -> pd.DataFrame:
    """Final margins per (scenario, method, group) with their t interval over seeds."""
    long = margin_runs.melt(
        id_vars=["scenario", "method", "seed", "skipped_pct"],
        value_vars=[c for c in margin_runs.columns if c.startswith("final_g")],
        var_name="group",
        value_name="final",
    )
    long["group"] = long["group"].str.slice(len("final_g")).astype(int)
    initial = margin_runs.melt(
        id_vars=["scenario", "method", "seed"],
        value_vars=[c for c in margin_runs.columns if c.startswith("initial_g")],
        var_name="group",
        value_name="initial",
    )
    initial["group"] = initial["group"].str.slice(len("initial_g")).astype(int)
    long = long.merge(initial, on=["scenario", "method", "seed", "group"])
    long["at_upper_pct"] = 100.0 * (long["final"] >= MARGIN_BOUNDS[1] - 1e-6)
    table = seed_intervals(long, ["scenario", "method", "group"], ["final"])
    extra = long.groupby(["scenario", "method", "group"], sort=False).agg(
        initial=("initial", "first"),
        at_upper_pct=("at_upper_pct", "mean"),
        skipped_pct=("skipped_pct", "mean"),
    )
    table = table.merge(extra.reset_index(), on=["scenario", "method", "group"])
    anchors = margin_runs.groupby(["scenario", "method"], sort=False)["anchor"].first()
    table["anchor"] = [
        anchors[(s, m)] for s, m in zip(table["scenario"], table["method"], strict=True)
    ]
    table["learned"] = table["group"] != 0
    table["upper_bound"] = MARGIN_BOUNDS[1]
    return table


def run_cell(
    scenario: str,
    k: int,
    seeds: dict[str, int],
    *,
    methods: Sequence[str],
    sweep_margins: Sequence[float],
    data_kwargs: dict[str, Any],
    n_steps: int,
    scale: float,
    margin_lr: float,
) -> dict[str, list]:
    """Every method and sweep margin on one benchmark draw (one scenario, one seed)."""
    data = make_synthetic_faces(scenario, random_state=seeds["data_seed"], **data_kwargs)
    keys = {"seed": k, **seeds}
    train = dict(
        n_steps=n_steps, seed=seeds["init_seed"], sampling_seed=seeds["sampling_seed"], scale=scale
    )
    out: dict[str, list] = {"runs": [], "sweep": [], "margins": [], "curves": []}
    for method in methods:
        run = run_synthetic_method(data, method, margin_learning_rate=margin_lr, **train)
        history = run.history
        out["runs"].append(report_row(run.report, scenario=scenario, method=method, **keys))
        if method.startswith("mbn"):
            if k == 0:
                out["curves"].append(history.assign(scenario=scenario, method=method))
            bias = history.filter(like="bias_")
            out["margins"].append(
                {
                    "scenario": scenario,
                    "method": method,
                    "seed": k,
                    "skipped_pct": 100 * float(bias.isna().all(axis=1).mean()),
                    "anchor": float(history["margin_0"].iloc[-1]),
                    **{
                        f"final_g{g}": float(history[f"margin_{g}"].iloc[-1])
                        for g in range(data.n_groups)
                    },
                    **{f"initial_g{g}": float(m) for g, m in enumerate(run.initial_margins)},
                }
            )
    for margin in sweep_margins:
        fixed = [0.3] + [margin] * (data.n_groups - 1)
        run = run_synthetic_method(data, fixed_margins=fixed, **train)
        out["sweep"].append(
            report_row(run.report, scenario=scenario, minority_margin=margin, **keys)
        )
    return out


def run_mbn_synthetic(
    *,
    quick: bool = False,
    n_seeds: int | None = None,
    random_state: int = 0,
    progress: bool = True,
    n_jobs: int | None = None,
    methods: Sequence[str] | None = None,
    sweep_margins: Sequence[float] = (),
) -> StudyResult:
    r"""Compare every baseline with MBN(soft/arc/cos) on the three synthetic scenarios, over seeds.

    Every seed draws a new benchmark, a new initialisation and a new batch order from
    independent streams (``numpy.random.SeedSequence(random_state)`` spawned per scenario and
    replication); within a seed every method sees the same three, so MBN and its baseline are
    compared *paired*. Each summary is the mean over seeds with a Student t interval,

    .. math:: ar x \pm t_{0.975,\,n-1}\, s / \sqrt{n},

    and each claim rests on the interval of the paired difference MBN - baseline (the paired
    t test of :func:`scipy.stats.ttest_rel`). SER and STD are those of Section V-B of [1]_.

    Parameters
    ----------
    quick : bool, default=False
        A smoke test: a miniature benchmark, ArcFace, M-RBN and MBN(arc), one seed, 60 steps,
        no sweep (for the tests; seconds). Its notes and ``config["notice"]`` say that it
        supports no conclusion.
    n_seeds : int, optional
        Seeds per scenario (default 10, or 1 when ``quick``).
    random_state : int, default=0
        Root of the seed streams.
    progress : bool, default=True
        Show a progress bar.
    n_jobs : int, optional
        Processes over which the (scenario, seed) cells are spread; the numbers do not depend on
        it (every run seeds everything it draws). Default: one, in this process.
    methods : sequence of str, optional
        Methods of :data:`METHOD_LABELS` to train. Default: the three MBN variants and their
        baselines (:data:`COMPARISONS`), or ArcFace, M-RBN and MBN(arc) when ``quick``; pass
        ``list(METHOD_LABELS)`` for every baseline of the paper.
    sweep_margins : sequence of float, default=()
        Fixed ArcFace margins of groups 1-3 (group 0 at 0.3) to train as well, e.g.
        :data:`SWEEP_MARGINS`; their paired difference compares the largest with the smallest.

    Returns
    -------
    StudyResult
        Tables ``accuracy`` (per scenario and method: group accuracies, mean, STD and SER with
        their intervals), ``paired`` (MBN - baseline per scenario and metric), ``margins`` (final
        margin of each group with its interval, the anchor's and initial margin, how often it
        ended at the upper bound), ``margin_sweep`` and ``sweep_paired`` (fixed minority margins)
        and ``runs`` (every seed, with its three stream seeds); curves ``trajectories`` (margins,
        skewness :math:`B^g`, training accuracy per step, first seed); figures ``differences``,
        ``margins``, ``skewness`` and ``margin_sweep``; the paper's surviving numbers.

    References
    ----------
    .. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
       IEEE TPAMI (2021).
    """
    for name, value in (("n_seeds", n_seeds), ("n_jobs", n_jobs)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1
        ):
            raise ValueError(COUNT_ERROR.format(name=name, value=value))
    if methods is not None:
        methods = tuple(methods)
        unknown = [m for m in methods if m not in METHOD_LABELS]
        if not methods or unknown:
            raise ValueError(METHODS_ERROR.format(names=tuple(METHOD_LABELS), value=methods))
    sweep_margins = tuple(float(m) for m in sweep_margins)
    if quick:
        n_seeds = n_seeds or 1
        methods = methods or ("arcface", "m-rbn", "mbn-arc")
        data_kwargs = dict(
            n_train_identities=120,
            images_per_identity=6,
            n_meta_identities=8,
            n_test_identities=30,
            n_pairs=150,
        )
        n_steps, margin_lr = 60, 0.1
    else:
        n_seeds = n_seeds or 10
        methods = methods or PAIRED_METHODS
        data_kwargs = {}
        n_steps = 150
        # The paper's beta = 1e-3 over 180K steps moves a margin by at most ~180 gradient
        # units; beta * n_steps = 150 keeps that budget at any length of run.
        margin_lr = 150.0 / n_steps
    # s=30 rather than the paper's 60-64: with a few hundred classes a smaller scale suffices
    # (ArcFace's bound s >= log((C-1) P / (1-P)) is about 8 here) and trains stably.
    scale = 30.0
    notice = quick_notice(n_steps, n_seeds) if quick else None
    cells = [
        (scenario, k, seeds)
        for s_index, scenario in enumerate(SCENARIO_ORDER)
        for k, seeds in enumerate(seed_streams(random_state, s_index, n_seeds))
    ]
    shared = dict(
        methods=methods,
        sweep_margins=sweep_margins,
        data_kwargs=data_kwargs,
        n_steps=n_steps,
        scale=scale,
        margin_lr=margin_lr,
    )
    per_cell = len(methods) + len(sweep_margins)
    bar = tqdm(total=len(cells) * per_cell, disable=not progress, desc="mbn-synthetic")
    try:
        if n_jobs is None or n_jobs == 1:
            outputs = []
            for cell in cells:
                outputs.append(run_cell(*cell, **shared))
                bar.update(per_cell)
        else:
            # Every run seeds all it uses, so a cell gives the same numbers in any process;
            # "spawn" because a forked torch can deadlock on its thread pools.
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=n_jobs, mp_context=context) as pool:
                futures = [pool.submit(run_cell, *cell, **shared) for cell in cells]
                for future in as_completed(futures):
                    future.result()
                    bar.update(per_cell)
                outputs = [future.result() for future in futures]
    finally:
        bar.close()
    runs = [row for out in outputs for row in out["runs"]]
    sweep_runs = [row for out in outputs for row in out["sweep"]]
    margin_runs = [row for out in outputs for row in out["margins"]]
    curves = [curve for out in outputs for curve in out["curves"]]

    runs = pd.DataFrame(runs)
    acc_cols = [c for c in runs.columns if c.startswith("acc_g")]
    table = seed_intervals(runs, ["scenario", "method"], ["mean", "std", "ser"])
    group_means = runs.groupby(["scenario", "method"], sort=False)[[*acc_cols, "minority"]].mean()
    table = group_means.reset_index().merge(table, on=["scenario", "method"])
    paired = paired_differences(runs, ["scenario"], "method", COMPARISONS, ["ser", "std", "mean"])
    margins = margin_table(pd.DataFrame(margin_runs)) if margin_runs else pd.DataFrame()
    tables = {
        "accuracy": table.round(3),
        "paired": paired.round(4),
        "margins": margins.round(3),
        "runs": runs.round(4),
    }
    figures, sweep, sweep_paired = {}, None, None
    if len(set(sweep_margins)) >= 2:
        sweep_frame = pd.DataFrame(sweep_runs)
        sweep = seed_intervals(
            sweep_frame, ["scenario", "minority_margin"], [*acc_cols, "minority", "std", "ser"]
        )
        sweep_paired = paired_differences(
            sweep_frame,
            ["scenario"],
            "minority_margin",
            [(max(sweep_margins), min(sweep_margins))],
            ["minority", "std", "ser"],
        )
        tables["margin_sweep"] = sweep.round(3)
        tables["sweep_paired"] = sweep_paired.round(4)
        figures["margin_sweep"] = plot_sweep(sweep)
    if len(paired) and not quick:
        figures["differences"] = plot_differences(paired)
    traj = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame()
    if len(traj):
        figures["margins"] = plot_trajectories(
            traj, "margin_", "margin (rad or cos)", "Learned margins per group"
        )
        figures["skewness"] = plot_trajectories(
            traj, "bias_", "skewness B_g (meta set)", "Meta skewness per group vs the anchor"
        )
    config = {
        "quick": quick,
        "n_seeds": n_seeds,
        "random_state": random_state,
        "seed_streams": "SeedSequence(random_state).spawn per scenario, replication, "
        "then (data, init, sampling)",
        "confidence": CONFIDENCE,
        "methods": list(methods),
        "comparisons": [list(pair) for pair in COMPARISONS],
        "n_steps": n_steps,
        "batch_size": 128,
        "meta_batch_size": 128,
        "learning_rate": 0.1,
        "lr_milestones": [int(0.6 * n_steps), int(0.85 * n_steps)],
        "margin_learning_rate": margin_lr,
        "margin_bounds": list(MARGIN_BOUNDS),
        "scale": scale,
        "model": "MLP(64 -> 256 -> 256 -> 64)",
        "data": {**data_kwargs, "scenarios": list(SCENARIO_ORDER)},
        "sweep_margins": list(sweep_margins),
    }
    if notice:
        config["notice"] = notice
    return StudyResult(
        name="mbn-synthetic",
        tables=tables,
        curves={"trajectories": traj},
        figures=figures,
        paper={"paper_ser_std": PAPER},
        notes=study_notes(table, paired, margins, sweep, sweep_paired, n_seeds, notice),
        config=config,
    )
