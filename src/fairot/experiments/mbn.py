"""The MBN paper's study on the synthetic identity benchmark: ``fairot reproduce mbn-synthetic``.

Every baseline of the paper (Softmax, Norm-Softmax, CosFace, ArcFace, M-RBN, re-weighting) and
MBN(soft/arc/cos) are trained with :class:`~fairot.face.MetaBalancedTrainer` on the three scenarios
of :func:`~fairot.face.make_synthetic_faces` — minority groups hard because they are
under-represented, because they are intrinsically noisier, or both — and evaluated with the
LFW/RFW protocol per group (accuracy, mean, STD, SER). By default the full study trains each MBN
variant and its baseline; an optional fixed-margin sweep (ArcFace with the minority margins at,
e.g., 0.1 and 0.7 rad) tells whether *any* larger margin helps a hard group in each scenario,
which is the premise of MBN ("Meta Balanced Network for Fair Face Recognition",
``seeds/002``).

One seed decides nothing here: SER moves by more between seeds than between methods. The study
therefore runs 10 independent seeds per scenario and reports every number as a mean with its 95%
Student t interval, and every MBN claim as the interval of the *paired* difference MBN minus the
baseline with the same loss on the same seed; the notes call a difference only when that interval
excludes 0.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from scipy import stats
from tqdm.auto import tqdm

from fairot.experiments._result import StudyResult
from fairot.face import make_synthetic_faces, run_synthetic_method

__all__ = ["run_mbn_synthetic"]

SCENARIO_ORDER = ("representation", "noise", "mixed")
METHOD_LABELS = {
    "softmax": "Softmax",
    "norm-softmax": "Norm-Softmax",
    "cosface": "CosFace (m=.2)",
    "arcface": "ArcFace (m=.3)",
    "m-rbn": "M-RBN",
    "reweight": "Re-weighting",
    "mbn-soft": "MBN(soft)",
    "mbn-arc": "MBN(arc)",
    "mbn-cos": "MBN(cos)",
}
#: MBN variant -> the baseline with the same loss; each claim is about this paired difference.
COMPARISONS = (("mbn-soft", "norm-softmax"), ("mbn-arc", "arcface"), ("mbn-cos", "cosface"))
DIFFERENCE_LABELS = {"ser": "SER", "std": "STD", "mean": "mean accuracy", "minority": "minority"}
#: What the full study trains by default: each MBN variant and its baseline.
PAIRED_METHODS = tuple(m for pair in COMPARISONS for m in reversed(pair))
#: The two ends of a fixed-margin sweep; ArcFace (0.3 for every group) is the middle point.
SWEEP_MARGINS = (0.1, 0.7)
#: Level of every interval (two-sided, Student t over seeds).
CONFIDENCE = 0.95
#: The clamp of the learned margins (``GroupMarginLoss``'s default ``margin_bounds``).
MARGIN_BOUNDS = (0.0, 0.8)
COUNT_ERROR = "{name} must be an int >= 1 or None; got {value!r}."
METHODS_ERROR = "methods must be a non-empty sequence of {names}; got {value!r}."
QUICK_NOTICE = (
    "SMOKE TEST (--quick): {n_seeds} seed(s) of a miniature benchmark, {n_steps} training "
    "steps. It checks that the study runs end to end; its numbers support no conclusion about "
    "MBN. Run without --quick (10 seeds) for results."
)

#: The only numbers of the paper that survive in the seed's text (its tables were lost): SER and
#: STD of a margin baseline and of MBN on the real benchmarks (Section V-B).
PAPER = pd.DataFrame(
    [
        ("Globalface-4 -> IDS-4", "SER", "ArcFace", 2.33, "MBN(arc)", 1.59),
        ("Globalface-8 -> IDS-8", "SER", "CosFace", 2.28, "MBN(cos)", 1.55),
        ("Balancedface-4 -> IDS-4", "SER", "ArcFace", 1.65, "MBN(arc)", 1.37),
        ("Balancedface-4 -> IDS-4", "STD change", "ArcFace", 1.0, "MBN(arc)", 0.53),
    ],
    columns=["setting", "metric", "baseline", "baseline_value", "mbn", "mbn_value"],
)


def _row(report, **keys) -> dict[str, Any]:
    row = dict(keys)
    accuracies = report.by_group["accuracy"]
    for g, acc in accuracies.items():
        row[f"acc_g{g}"] = 100 * acc
    # Group 0 is the anchor (the best-represented, easiest group in every scenario).
    row["minority"] = 100 * float(accuracies.iloc[1:].mean())
    row.update(mean=100 * report.mean_accuracy, std=100 * report.std, ser=report.ser)
    return row


def _half_width(sd, n, confidence: float):
    r"""Half-width of the Student t interval for a mean: :math:`t_{(1+c)/2,\,n-1}\,s/\sqrt{n}`."""
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        # One seed has no spread: t.ppf with 0 degrees of freedom is NaN, documented as "no
        # interval" rather than a zero-width one.
        quantile = stats.t.ppf(0.5 + confidence / 2, np.where(n > 1, n - 1, np.nan))
        return np.asarray(sd, dtype=float) * quantile / np.sqrt(n)


def _seed_intervals(
    runs: pd.DataFrame, by: list[str], columns: list[str], confidence: float = CONFIDENCE
) -> pd.DataFrame:
    """Mean over seeds of each column with its t interval, one row per ``by`` combination.

    Columns ``<col>``, ``<col>_lo``, ``<col>_hi`` (the two-sided ``confidence`` interval of the
    mean over seeds, Student t with n - 1 degrees of freedom), then ``n_seeds``. With one seed the
    bounds are NaN: one draw says nothing about the spread.
    """
    grouped = runs.groupby(by, sort=False)[columns]
    mean, sd, count = grouped.mean(), grouped.std(ddof=1), grouped.count()
    half = pd.DataFrame(_half_width(sd, count, confidence), index=mean.index, columns=columns)
    table = pd.DataFrame(index=mean.index)
    for col in columns:
        table[col] = mean[col]
        table[f"{col}_lo"] = mean[col] - half[col]
        table[f"{col}_hi"] = mean[col] + half[col]
    table["n_seeds"] = grouped.size()
    return table.reset_index()


def _paired_differences(
    runs: pd.DataFrame,
    by: list[str],
    key: str,
    pairs: Sequence[tuple[Any, Any]],
    columns: list[str],
    confidence: float = CONFIDENCE,
) -> pd.DataFrame:
    """Paired differences ``treatment - control`` over seeds, with t interval and p-value.

    Runs are matched on ``by`` and ``seed`` (same benchmark draw, initialisation and batches),
    so the seed-to-seed variation common to both runs cancels. One row per ``by`` combination,
    pair and column: ``difference`` (mean over seeds), ``ci_lo``, ``ci_hi`` (the two-sided
    ``confidence`` t interval of the mean difference), ``p_value`` (two-sided paired t test,
    as :func:`scipy.stats.ttest_rel`; 0 for a constant nonzero difference, 1 for a constant zero
    one) and ``n_seeds``.
    """
    rows = []
    index = [*by, "seed"]
    for treatment, control in pairs:
        treated = runs[runs[key] == treatment].set_index(index)[columns]
        controls = runs[runs[key] == control].set_index(index)[columns]
        diff = treated.sub(controls).dropna(how="all")
        if diff.empty:
            continue
        for keys, part in diff.groupby(level=list(range(len(by))), sort=False):
            keys = keys if isinstance(keys, tuple) else (keys,)
            for col in columns:
                values = part[col].to_numpy(dtype=float)
                n, mean = len(values), float(values.mean())
                sd = float(values.std(ddof=1)) if n > 1 else np.nan
                half = float(_half_width(sd, n, confidence))
                if n > 1 and sd > 0:
                    p_value = float(2 * stats.t.sf(abs(mean) / (sd / np.sqrt(n)), n - 1))
                elif n > 1:
                    p_value = 0.0 if mean != 0 else 1.0
                else:
                    p_value = np.nan
                rows.append(
                    {
                        **dict(zip(by, keys, strict=True)),
                        "treatment": treatment,
                        "control": control,
                        "metric": col,
                        "difference": mean,
                        "ci_lo": mean - half,
                        "ci_hi": mean + half,
                        "p_value": p_value,
                        "n_seeds": n,
                    }
                )
    columns_out = [*by, "treatment", "control", "metric", "difference", "ci_lo", "ci_hi"]
    return pd.DataFrame(rows, columns=[*columns_out, "p_value", "n_seeds"])


def _seed_streams(random_state: int, scenario_index: int, n_seeds: int) -> list[dict[str, int]]:
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


def _plot_trajectories(curves: pd.DataFrame, prefix: str, ylabel: str, title: str) -> Figure:
    scenarios = list(dict.fromkeys(curves["scenario"]))
    methods = list(dict.fromkeys(curves["method"]))
    fig = Figure(figsize=(4 * len(scenarios), 3 * len(methods)), layout="constrained")
    axes = fig.subplots(len(methods), len(scenarios), squeeze=False, sharex=True)
    cols = sorted(c for c in curves.columns if c.startswith(prefix))
    for i, method in enumerate(methods):
        for j, scenario in enumerate(scenarios):
            ax = axes[i, j]
            part = curves[(curves["method"] == method) & (curves["scenario"] == scenario)]
            for col in cols:
                values = part[col]
                if values.notna().any():
                    smooth = values.rolling(25, min_periods=1).mean()
                    group = int(col.rsplit("_", 1)[1])
                    ax.plot(part["step"], smooth, color=f"C{group}", label=f"group {group}")
            ax.set_title(f"{METHOD_LABELS[method]} — {scenario}", fontsize=9)
            if j == 0:
                ax.set_ylabel(ylabel)
            if i == len(methods) - 1:
                ax.set_xlabel("training step")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(title)
    return fig


def _plot_sweep(sweep: pd.DataFrame) -> Figure:
    scenarios = list(dict.fromkeys(sweep["scenario"]))
    fig = Figure(figsize=(4 * len(scenarios), 3.2), layout="constrained")
    axes = fig.subplots(1, len(scenarios), squeeze=False, sharey=True)[0]
    for ax, scenario in zip(axes, scenarios, strict=True):
        part = sweep[sweep["scenario"] == scenario]
        for col in sorted(c for c in part.columns if c.startswith("acc_g") and c[5:].isdigit()):
            group = int(col[5:])
            ax.errorbar(
                part["minority_margin"],
                part[col],
                yerr=[part[col] - part[f"{col}_lo"], part[f"{col}_hi"] - part[col]],
                marker="o",
                capsize=3,
                color=f"C{group}",
                label=f"group {group}",
            )
        ax.set_title(scenario)
        ax.set_xlabel("ArcFace margin of groups 1-3 (rad); group 0 at 0.3")
    axes[0].set_ylabel("verification accuracy (%)")
    axes[0].legend(fontsize=8)
    return fig


def _plot_differences(paired: pd.DataFrame) -> Figure:
    scenarios = list(dict.fromkeys(paired["scenario"]))
    metrics = [m for m in ("ser", "std", "mean") if m in set(paired["metric"])]
    fig = Figure(figsize=(4 * len(metrics), 0.8 + 0.5 * len(paired) / len(metrics)))
    axes = fig.subplots(1, len(metrics), squeeze=False, sharey=True)[0]
    for ax, metric in zip(axes, metrics, strict=True):
        part = paired[paired["metric"] == metric].reset_index(drop=True)
        y = np.arange(len(part))[::-1]
        for yi, row in zip(y, part.itertuples(), strict=True):
            ax.errorbar(
                row.difference,
                yi,
                xerr=[[row.difference - row.ci_lo], [row.ci_hi - row.difference]],
                fmt="o",
                capsize=3,
                color=f"C{scenarios.index(row.scenario)}",
            )
        ax.axvline(0.0, color="0.5", lw=0.8)
        ax.set_title(f"{DIFFERENCE_LABELS[metric]}: MBN - baseline", fontsize=9)
        ax.set_yticks(
            y,
            [
                f"{s}: {METHOD_LABELS[t]} - {METHOD_LABELS[c]}"
                for s, t, c in zip(
                    part["scenario"], part["treatment"], part["control"], strict=True
                )
            ],
            fontsize=8,
        )
    fig.suptitle(f"Paired differences over seeds, mean and {100 * CONFIDENCE:.0f}% t interval")
    fig.set_layout_engine("constrained")
    return fig


def _interval(row: pd.Series, col: str, digits: int = 2) -> str:
    return f"{row[col]:.{digits}f} [{row[f'{col}_lo']:.{digits}f}, {row[f'{col}_hi']:.{digits}f}]"


def _signed(diff: pd.Series, digits: int = 2) -> str:
    lo, hi = diff["ci_lo"], diff["ci_hi"]
    return f"{diff['difference']:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def _verdict(lo: float, hi: float, up: str, down: str, level: str = "") -> str:
    """Direction a confidence interval supports: ``up`` above, ``down`` below, else none."""
    if lo > 0:
        return up
    if hi < 0:
        return down
    return f"no detectable difference{level}"


def _quick_notice(n_steps: int, n_seeds: int) -> str:
    return QUICK_NOTICE.format(n_steps=n_steps, n_seeds=n_seeds)


def _notes(
    table: pd.DataFrame,
    paired: pd.DataFrame,
    margins: pd.DataFrame,
    sweep: pd.DataFrame | None,
    sweep_paired: pd.DataFrame | None,
    n_seeds: int,
    notice: str | None,
) -> str:
    level = f"{100 * CONFIDENCE:.0f}%"
    lines = []
    if notice:
        lines += [f"**{notice}**", ""]
    lines += [
        "Synthetic identity benchmark (no skin-tone-labelled faces can be had offline); an MLP on "
        "64-d inputs stands in for the ResNet-34 on faces, 10-fold LFW protocol per group. "
        f"Accuracies in %, mean over {n_seeds} seed(s), each a new benchmark draw, "
        "initialisation and batch order (independent streams). `x_lo`/`x_hi` bound the "
        f"{level} Student t interval of the mean over seeds; `paired` holds MBN minus the "
        "baseline with the same loss on the same seed, with its t interval and paired t test.",
        "",
    ]
    if notice or n_seeds < 2:
        lines.append(
            "No conclusion is drawn: "
            + ("this is a smoke test." if notice else "one seed gives no interval.")
        )
        return "\n".join(lines)
    n_claims = len(paired)
    lines += [
        f"Only differences whose {level} paired interval excludes 0 are called; {n_claims} such "
        f"intervals are reported below, so about {n_claims / 20:.1f} would exclude 0 by chance "
        "if nothing differed: a lone borderline call is weak evidence.",
        "",
    ]
    for scenario in dict.fromkeys(table["scenario"]) if len(paired) else ():
        part = table[table["scenario"] == scenario].set_index("method")
        claims = []
        for treatment, control in COMPARISONS:
            rows = paired[
                (paired["scenario"] == scenario)
                & (paired["treatment"] == treatment)
                & (paired["control"] == control)
            ].set_index("metric")
            if rows.empty:
                continue
            bits = []
            for metric in ("ser", "std", "mean"):
                diff = rows.loc[metric]
                verdict = _verdict(
                    diff["ci_lo"],
                    diff["ci_hi"],
                    f"{DIFFERENCE_LABELS[metric]} higher",
                    f"{DIFFERENCE_LABELS[metric]} lower",
                )
                bits.append(f"{DIFFERENCE_LABELS[metric]} {_signed(diff)} ({verdict})")
            claims.append(
                f"{METHOD_LABELS[treatment]} - {METHOD_LABELS[control]}: " + ", ".join(bits)
            )
        best = part["ser"].idxmin()
        lines.append(
            f"- **{scenario}** (SER of the baselines: "
            + ", ".join(
                f"{METHOD_LABELS[c]} {_interval(part.loc[c], 'ser')}"
                for _, c in COMPARISONS
                if c in part.index
            )
            + f"; lowest mean SER: {METHOD_LABELS[best]}): "
            + "; ".join(claims)
            + "."
        )
    if len(margins):
        lines += ["", "Final margins of the learned groups against the anchor's:"]
        for (scenario, method), part in margins.groupby(["scenario", "method"], sort=False):
            learned = part[part["learned"]]
            bits = []
            for _, row in learned.iterrows():
                verdict = _verdict(
                    row["final_lo"] - row["anchor"],
                    row["final_hi"] - row["anchor"],
                    "above",
                    "below",
                )
                verdict = "not distinguishable" if verdict.startswith("no ") else verdict
                bound = (
                    f", at the {row['upper_bound']:g} bound in {row['at_upper_pct']:.0f}% of seeds"
                    if row["at_upper_pct"] > 0
                    else ""
                )
                bits.append(f"g{row['group']} {_interval(row, 'final')} ({verdict}{bound})")
            anchor = learned["anchor"].iloc[0] if len(learned) else float("nan")
            lines.append(
                f"- {scenario}/{METHOD_LABELS[method]} (anchor {anchor:g}, learned from "
                f"{learned['initial'].iloc[0]:g}): " + "; ".join(bits) + "."
            )
    if sweep is not None and sweep_paired is not None and len(sweep_paired):
        lines += ["", "Fixed-margin sweep (ArcFace, group 0 at 0.3 rad, groups 1-3 at m):"]
        for scenario in dict.fromkeys(sweep["scenario"]):
            part = sweep[sweep["scenario"] == scenario].set_index("minority_margin")
            diffs = sweep_paired[sweep_paired["scenario"] == scenario].set_index("metric")
            treatment, control = diffs["treatment"].iloc[0], diffs["control"].iloc[0]
            minority, ser = diffs.loc["minority"], diffs.loc["ser"]
            lines.append(
                f"- **{scenario}**: minority-group accuracy "
                + ", ".join(f"{_interval(part.loc[m], 'minority')} at m={m:g}" for m in part.index)
                + f"; m={treatment:g} - m={control:g}: minority accuracy {_signed(minority)} ("
                + _verdict(minority["ci_lo"], minority["ci_hi"], "higher", "lower")
                + f"), SER {_signed(ser)} ("
                + _verdict(ser["ci_lo"], ser["ci_hi"], "higher", "lower")
                + ")."
            )
    if len(margins):
        skipped = margins.groupby(["scenario", "method"], sort=False)["skipped_pct"].first()
        lines += [
            "",
            "Meta steps skipped because the anchors had no selected (hard) triplet, in % of meta "
            "steps (mean over seeds): "
            + ", ".join(
                f"{scenario}/{METHOD_LABELS[method]} {value:.1f}"
                for (scenario, method), value in skipped.items()
            )
            + ".",
        ]
    return "\n".join(lines)


def _margin_table(margin_runs: pd.DataFrame) -> pd.DataFrame:
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
    table = _seed_intervals(long, ["scenario", "method", "group"], ["final"])
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


def _run_cell(
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
        out["runs"].append(_row(run.report, scenario=scenario, method=method, **keys))
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
        out["sweep"].append(_row(run.report, scenario=scenario, minority_margin=margin, **keys))
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
    notice = _quick_notice(n_steps, n_seeds) if quick else None
    cells = [
        (scenario, k, seeds)
        for s_index, scenario in enumerate(SCENARIO_ORDER)
        for k, seeds in enumerate(_seed_streams(random_state, s_index, n_seeds))
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
                outputs.append(_run_cell(*cell, **shared))
                bar.update(per_cell)
        else:
            # Every run seeds all it uses, so a cell gives the same numbers in any process;
            # "spawn" because a forked torch can deadlock on its thread pools.
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=n_jobs, mp_context=context) as pool:
                futures = [pool.submit(_run_cell, *cell, **shared) for cell in cells]
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
    table = _seed_intervals(runs, ["scenario", "method"], ["mean", "std", "ser"])
    group_means = runs.groupby(["scenario", "method"], sort=False)[[*acc_cols, "minority"]].mean()
    table = group_means.reset_index().merge(table, on=["scenario", "method"])
    paired = _paired_differences(runs, ["scenario"], "method", COMPARISONS, ["ser", "std", "mean"])
    margins = _margin_table(pd.DataFrame(margin_runs)) if margin_runs else pd.DataFrame()
    tables = {
        "accuracy": table.round(3),
        "paired": paired.round(4),
        "margins": margins.round(3),
        "runs": runs.round(4),
    }
    figures, sweep, sweep_paired = {}, None, None
    if len(set(sweep_margins)) >= 2:
        sweep_frame = pd.DataFrame(sweep_runs)
        sweep = _seed_intervals(
            sweep_frame, ["scenario", "minority_margin"], [*acc_cols, "minority", "std", "ser"]
        )
        sweep_paired = _paired_differences(
            sweep_frame,
            ["scenario"],
            "minority_margin",
            [(max(sweep_margins), min(sweep_margins))],
            ["minority", "std", "ser"],
        )
        tables["margin_sweep"] = sweep.round(3)
        tables["sweep_paired"] = sweep_paired.round(4)
        figures["margin_sweep"] = _plot_sweep(sweep)
    if len(paired) and not quick:
        figures["differences"] = _plot_differences(paired)
    traj = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame()
    if len(traj):
        figures["margins"] = _plot_trajectories(
            traj, "margin_", "margin (rad or cos)", "Learned margins per group"
        )
        figures["skewness"] = _plot_trajectories(
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
        notes=_notes(table, paired, margins, sweep, sweep_paired, n_seeds, notice),
        config=config,
    )
