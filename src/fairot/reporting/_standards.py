r"""Rules and verdicts of an audit: the four-fifths rule, credit practice, the distributional view.

Internal surface: :class:`Verdict`, :data:`STANDARDS`, :func:`four_fifths`,
:func:`credit_practice`, :func:`distributional_view`, :func:`two_proportion_z`; the New York City
Local Law 144 table is in ``_ll144.py``. Each rule returns a :class:`Verdict`: its definition and
source (cited in ``docs/audit.md``), a pass/fail line, and the table of numbers behind it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

#: Rule name -> what ``standards=`` / ``--standard`` accepts.
STANDARDS = ("four-fifths", "ll144", "credit", "distributional")
MSG_STANDARD = "standards must be a subset of {choices}; got {value!r}."
FOUR_FIFTHS = 0.8
SMD_FLAG = 0.2
EXCLUDED = "excluded: n < {size}"


@dataclass
class Verdict:
    """One rule applied to the audited decisions.

    Attributes
    ----------
    key : str
        The rule's name in ``standards=`` (``"four-fifths"``, ``"ll144"``, ...).
    title : str
        Heading.
    definition : str
        What is computed, in words.
    source : str
        Where the rule comes from.
    passed : bool or None
        ``True``/``False`` for a rule with a pass mark; ``None`` where the rule sets none (LL144
        asks for disclosure, not a threshold) or it cannot be applied.
    line : str
        The verdict in one sentence, with the numbers behind it.
    table : pandas.DataFrame
        The numbers, one row per group or category.
    notes : list of str
        Anything else a reader must know.
    adversely_impacted : list of str
        The groups (categories) the rule names as adversely impacted (flagged), for the
        verdict block at the top of every rendering; empty when it names none.

    Examples
    --------
    :func:`fairot.reporting.audit` returns one per rule of ``standards=``.

    >>> import numpy as np
    >>> from fairot.reporting import audit
    >>> scores = np.r_[np.full(30, 0.9), np.full(20, 0.1), np.full(16, 0.9), np.full(24, 0.1)]
    >>> groups = np.repeat(["a", "b"], [50, 40])
    >>> verdict = audit(None, scores, groups, plots=False, n_bootstrap=0).verdicts[0]
    >>> verdict.key, verdict.status, round(float(verdict.table.loc["b", "impact_ratio"]), 4)
    ('four-fifths', 'FAIL', 0.6667)
    """

    key: str
    title: str
    definition: str
    source: str
    passed: bool | None
    line: str
    table: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    adversely_impacted: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """``PASS``, ``FAIL`` or ``INFO`` (no pass mark)."""
        return {True: "PASS", False: "FAIL", None: "INFO"}[self.passed]


def two_proportion_z(k1: float, n1: float, k2: float, n2: float) -> tuple[float, float]:
    r"""Pooled two-proportion z statistic and its two-sided normal p-value.

    .. math::

        z = \frac{\hat p_1 - \hat p_2}{\sqrt{\hat p (1 - \hat p) (1/n_1 + 1/n_2)}}, \qquad
        \hat p = \frac{k_1 + k_2}{n_1 + n_2}, \qquad p = 2\,(1 - \Phi(|z|)).

    NaN when the pooled proportion is 0 or 1 (no variation to test).
    """
    from scipy.special import ndtr

    pooled = (k1 + k2) / (n1 + n2)
    var = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if not var > 0:
        return math.nan, math.nan
    z = (k1 / n1 - k2 / n2) / math.sqrt(var)
    return z, float(2 * ndtr(-abs(z)))


def _fmt(value: float) -> str:
    return "—" if not math.isfinite(value) else f"{value:.3g}"


def four_fifths(
    table: pd.DataFrame,
    included: list[str],
    min_size: int,
    exact: bool,
    decision: str = "score > threshold",
) -> Verdict:
    """Impact ratio of selection rates to the most-selected group; below 0.8 is flagged.

    ``table``'s ``selection_rate`` and ``selected`` are the *favourable* ones (see
    ``_direction.py``); ``decision`` says which decision that is (``"score <= 0.5"``).
    """
    from scipy.stats import fisher_exact

    rates = table["selection_rate"]
    top = rates.loc[included].dropna()
    rows = []
    best = None if top.empty else str(top.idxmax())
    for g in table.index:
        n, k, rate = table.loc[g, "n"], table.loc[g, "selected"], rates.loc[g]
        row = {"n": n, "selected": k, "selection_rate": rate}
        if g not in included:
            row.update(impact_ratio=math.nan, z=math.nan, p_z=math.nan, p_fisher=math.nan)
            row["flag"] = EXCLUDED.format(size=min_size)
        elif best is None or not rates.loc[best] > 0:
            row.update(impact_ratio=math.nan, z=math.nan, p_z=math.nan, p_fisher=math.nan)
            row["flag"] = ""
        else:
            nb, kb = table.loc[best, "n"], table.loc[best, "selected"]
            ratio = rate / rates.loc[best]
            z = p_z = p_f = math.nan
            if exact and g != best:
                z, p_z = two_proportion_z(k, n, kb, nb)
                p_f = float(fisher_exact([[k, n - k], [kb, nb - kb]]).pvalue)
            flag = "below 0.8" if ratio < FOUR_FIFTHS else ""
            row.update(impact_ratio=ratio, z=z, p_z=p_z, p_fisher=p_f, flag=flag)
        rows.append(row)
    frame = pd.DataFrame(rows, index=table.index)
    flagged: list[str] = []
    if best is None or not rates.loc[best] > 0:
        passed, line = None, "Not applicable: no group of the headline has a favourable decision."
    else:
        low = frame.loc[included, "impact_ratio"]
        worst = str(low.idxmin())
        flagged = [g for g in included if frame.loc[g, "impact_ratio"] < FOUR_FIFTHS]
        if flagged:
            passed = False
            listed = "; ".join(
                f"{g}: {frame.loc[g, 'impact_ratio']:.3f} (z-test p = "
                f"{_fmt(frame.loc[g, 'p_z'])}, Fisher p = {_fmt(frame.loc[g, 'p_fisher'])})"
                for g in flagged
            )
            line = (
                f"Impact ratio below 0.8 for {len(flagged)} group(s) against {best} "
                f"(selection rate {rates.loc[best]:.3f}): {listed}."
            )
        else:
            passed = True
            line = (
                f"Every impact ratio is at least 0.8 against {best}; the lowest is "
                f"{low.loc[worst]:.3f} ({worst})."
            )
    return Verdict(
        "four-fifths",
        "Four-fifths rule",
        f"Impact ratio = a group's selection rate, the share given the favourable decision "
        f"({decision}), over the highest group's; a ratio under 0.8 is evidence of adverse "
        "impact. Beside it, the pooled two-proportion z-test and Fisher's exact test of the "
        "group against the most-selected group (two-sided p-values): a small ratio in a small "
        "group may be chance.",
        "US Uniform Guidelines on Employee Selection Procedures, 29 CFR 1607.4(D) (1978).",
        passed,
        line,
        frame,
        adversely_impacted=[str(g) for g in flagged],
    )


def credit_practice(
    table: pd.DataFrame,
    scores: np.ndarray,
    rows: dict[str, np.ndarray],
    reference: str,
    included: list[str],
    min_size: int,
    decision: str = "score > threshold",
) -> Verdict:
    r"""Adverse impact ratio and standardised mean difference of scores against the reference.

    ``AIR = rate_g / rate_ref``; ``SMD = (mean_g - mean_ref) / s_pooled`` with
    :math:`s_{pooled}^2 = ((n_g - 1) s_g^2 + (n_r - 1) s_r^2) / (n_g + n_r - 2)` (Cohen's d).
    ``table``'s rates and ``scores`` are the favourable ones (for a risk score, one minus the
    rate and ``1 - score``; see ``_direction.py``), so that a negative SMD and a low AIR are
    always the adverse side; ``decision`` names the favourable decision.
    """
    ref_rate = table.loc[reference, "selection_rate"]
    ref = scores[rows[reference]]
    out = []
    for g in table.index:
        s = scores[rows[g]]
        row = {"n": len(s), "mean_score": float(s.mean()) if len(s) else math.nan}
        row["selection_rate"] = table.loc[g, "selection_rate"]
        if g not in included:
            row.update(air=math.nan, smd=math.nan, flag=EXCLUDED.format(size=min_size))
            out.append(row)
            continue
        row["air"] = row["selection_rate"] / ref_rate if ref_rate > 0 else math.nan
        dof = len(s) + len(ref) - 2
        pooled = (
            ((len(s) - 1) * s.var(ddof=1) + (len(ref) - 1) * ref.var(ddof=1)) / dof
            if len(s) > 1 and len(ref) > 1
            else math.nan
        )
        row["smd"] = (s.mean() - ref.mean()) / math.sqrt(pooled) if pooled > 0 else math.nan
        flags = []
        if row["air"] < FOUR_FIFTHS:
            flags.append("AIR below 0.8")
        if abs(row["smd"]) >= SMD_FLAG and g != reference:
            flags.append(f"|SMD| at least {SMD_FLAG}")
        row["flag"] = ", ".join(flags)
        out.append(row)
    frame = pd.DataFrame(out, index=table.index)
    flagged = [g for g in included if frame.loc[g, "flag"]]
    if not ref_rate > 0:
        passed, line = None, f"Not applicable: the reference group {reference} is never selected."
    elif flagged:
        passed = False
        line = f"Against {reference}: " + "; ".join(
            f"{g} (AIR {frame.loc[g, 'air']:.3f}, SMD {frame.loc[g, 'smd']:+.3f})" for g in flagged
        )
    else:
        passed = True
        line = f"Against {reference}: every AIR is at least 0.8 and every |SMD| under {SMD_FLAG}."
    return Verdict(
        "credit",
        "Credit practice: adverse impact ratio and standardised mean difference",
        f"AIR = a group's approval rate, the share given the favourable decision ({decision}), "
        f"over the reference group's ({reference}), flagged under 0.8. SMD = difference of "
        f"mean favourable scores ({'the score' if '>' in decision else '1 - score'}) over "
        f"their pooled standard deviation (Cohen's d); negative means less favourable scores "
        f"than the reference, flagged at |SMD| >= {SMD_FLAG} (Cohen's 'small' effect; practice "
        f"varies).",
        "Fair-lending practice: P. Hall, B. Cox, S. Dickerson, A. Ravi Kannan, R. Kulkarni, "
        "N. Schmidt, 'A United States fair lending perspective on machine learning', Frontiers "
        "in Artificial Intelligence 4 (2021); J. Cohen, Statistical Power Analysis for the "
        "Behavioral Sciences (1988).",
        passed,
        line,
        frame,
        adversely_impacted=[str(g) for g in flagged] if passed is False else [],
    )


def distributional_view(
    report: pd.DataFrame,
    summary: dict[str, Any],
    strong_eo: dict[str, dict[str, float]],
    included: list[str],
) -> Verdict:
    """Wass1 / SDD / strong equalized odds in plain words: how far each group's scores must move."""
    groups = [g for g in report.index if g != "overall"]
    frame = pd.DataFrame(
        {
            "w1_to_pooled": report.loc[groups, "w1_to_pooled"],
            "mean_shift": report.loc[groups, "mean_score"] - report.loc["overall", "mean_score"],
        }
    )
    for label, values in strong_eo.items():
        frame[f"w1_to_pooled_{label}"] = pd.Series(values)
    worst = str(frame.loc[included, "w1_to_pooled"].idxmax())
    move = frame.loc[worst, "w1_to_pooled"]
    direction = "down" if frame.loc[worst, "mean_shift"] > 0 else "up"
    line = (
        f"The typical score of group {worst} would have to move by {move:.3f} (the average "
        f"distance its scores travel, mostly {direction}) for the group to be scored like "
        f"everyone; SDD, the sum of these moves over the groups, is "
        f"{summary.get('sdd', math.nan):.3f}, and Wass1 (the moves to the groups' common "
        f"barycenter) is {summary.get('wass1', math.nan):.3f}. For scores in [0, 1] a group's "
        f"move is also its selection-rate gap to everyone averaged over every threshold "
        f"(W1 = the integral of |P(S_a > t) - P(S > t)| over t): 0 means the group is scored "
        f"like everyone at every threshold at once."
    )
    if strong_eo:
        line += (
            " Strong equalized odds reads the same moves within the positives and within the "
            "negatives (columns w1_to_pooled_y=1, w1_to_pooled_y=0)."
        )
    return Verdict(
        "distributional",
        "Distributional view (Wass1, SDD, strong equalized odds)",
        "W1 from each group's scores to the pooled scores: the average distance a score of the "
        "group travels when the group's distribution is moved onto everyone's in the cheapest "
        "way (optimal transport). It integrates the selection-rate gap over every threshold, so "
        "it sees disparities a single threshold hides.",
        "Strong demographic parity: R. Jiang, A. Pacchiano, T. Stepleton, H. Jiang, S. Chiappa, "
        "'Wasserstein fair classification', UAI 2019; SDD, SPDD and Wass1 as in the COT paper "
        "(docs/metrics.md).",
        None,
        line,
        frame,
    )
