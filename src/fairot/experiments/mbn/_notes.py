"""The MBN study's prose: what each interval supports, and only that.

Internal surface: :func:`quick_notice` and :func:`study_notes`.
"""

from __future__ import annotations

import pandas as pd

from fairot.experiments._seeds import CONFIDENCE
from fairot.experiments.mbn._constants import (
    COMPARISONS,
    DIFFERENCE_LABELS,
    METHOD_LABELS,
    QUICK_NOTICE,
)


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


def quick_notice(n_steps: int, n_seeds: int) -> str:
    return QUICK_NOTICE.format(n_steps=n_steps, n_seeds=n_seeds)


def study_notes(
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
