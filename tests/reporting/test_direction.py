"""The outcome direction (``favorable_outcome``): the adverse reading of a risk score.

A constructed risk score where the reading decides who is disadvantaged: group ``A`` is labelled
high-risk (the positive decision) 30 times in 50, group ``B`` 10 times in 50. Read as an approval
score (the default), ``B`` is selected least (impact ratio 0.2 / 0.6 = 1/3); read as a risk
score, ``A`` gets the favourable decision least (0.4 / 0.8 = 1/2). Every expected number is
computed here by hand, with NumPy, from the scores themselves: the four-fifths rule, the credit
rule's AIR and SMD (Cohen's d of the favourable scores), and LL144's selection and scoring
rates; the command line must print the same verdicts as Python.
"""

import json
import math

import numpy as np
import pandas as pd
import pytest

from fairot.cli import main
from fairot.reporting import audit
from fairot.reporting._direction import MSG_FAVORABLE_OUTCOME

STANDARDS = ("four-fifths", "credit", "ll144")


@pytest.fixture
def risk():
    rng = np.random.default_rng(7)
    groups = np.repeat(["A", "B"], 50)
    high = np.r_[np.arange(50) < 30, np.arange(50) < 10]  # the positive decision: "high risk"
    scores = np.where(high, 0.7, 0.2) + rng.uniform(0.0, 0.2, 100)
    return scores, groups


def _smd(favorable, groups, group, reference):
    s, r = favorable[groups == group], favorable[groups == reference]
    pooled = ((len(s) - 1) * s.var(ddof=1) + (len(r) - 1) * r.var(ddof=1)) / (len(s) + len(r) - 2)
    return (s.mean() - r.mean()) / math.sqrt(pooled)


def _verdicts(result):
    return {v.key: v for v in result.verdicts}


def test_default_reading_names_the_group_labelled_high_risk_least(risk):
    scores, groups = risk
    result = audit(None, scores, groups, plots=False, n_bootstrap=0, standards=STANDARDS)
    v = _verdicts(result)
    assert result.settings["favorable_outcome"] == 1
    assert result.settings["direction"] == (
        "favourable outcome: the positive decision (score > 0.5)"
    )
    assert v["four-fifths"].status == "FAIL" and v["four-fifths"].adversely_impacted == ["B"]
    assert v["four-fifths"].table.loc["B", "impact_ratio"] == pytest.approx(0.2 / 0.6)
    assert v["credit"].adversely_impacted == ["B"]
    assert v["credit"].table.loc["B", "smd"] == pytest.approx(_smd(scores, groups, "B", "A"))
    assert result.settings["reference"] == "A"


def test_adverse_reading_flips_the_disadvantaged_group(risk):
    scores, groups = risk
    result = audit(
        None,
        scores,
        groups,
        plots=False,
        n_bootstrap=0,
        standards=STANDARDS,
        favorable_outcome=0,
    )
    v = _verdicts(result)
    assert result.settings["direction"] == (
        "favourable outcome: the negative decision (score <= 0.5)"
    )
    # Four-fifths: favourable rates A 20/50, B 40/50; B is the most favourably treated.
    four = v["four-fifths"]
    assert four.status == "FAIL" and four.adversely_impacted == ["A"]
    assert four.table.loc["A", "selection_rate"] == pytest.approx(0.4)
    assert four.table.loc["A", "selected"] == 20
    assert four.table.loc["A", "impact_ratio"] == pytest.approx(0.4 / 0.8)
    assert "score <= 0.5" in four.definition
    # Credit: AIR on the favourable rates, SMD of the favourable score 1 - s against B.
    credit = v["credit"]
    assert result.settings["reference"] == "B"
    assert credit.adversely_impacted == ["A"]
    assert credit.table.loc["A", "air"] == pytest.approx(0.5)
    assert credit.table.loc["A", "smd"] == pytest.approx(_smd(1 - scores, groups, "A", "B"))
    assert credit.table.loc["A", "smd"] < 0  # less favourable scores than the reference
    # LL144: selected = score <= t, scoring rate = share below the pooled median.
    table = v["ll144"].table
    below = scores < np.median(scores)
    for name in ("A", "B"):
        rows = groups == name
        assert table.loc[f"group={name}", "selection_rate"] == pytest.approx(
            np.mean(scores[rows] <= 0.5)
        )
        assert table.loc[f"group={name}", "scoring_rate"] == pytest.approx(np.mean(below[rows]))
    assert table.loc["group=A", "impact_ratio"] == pytest.approx(0.5)
    # The disparate_impact column and the DP ratio read the favourable rates too.
    assert result.report.loc["A", "disparate_impact"] == pytest.approx(0.5)
    assert result.summary["demographic_parity_ratio"] == pytest.approx(0.5)
    # The verdict block states the reading first and names A.
    text = result.to_text()
    block = text[: text.index("Summary:")]
    assert "Favourable outcome: the negative decision (score <= 0.5)." in block
    assert "Adversely impacted: A." in block
    assert (
        "favourable outcome: the negative decision"
        in result.to_markdown().split("## Summary")[0].lower()
    )
    html = result.to_html()
    assert html.index("Verdict") < html.index("<h2>Summary</h2>")
    assert "the negative decision (score &lt;= 0.5)" in html


def test_direction_is_stated_even_by_default(risk):
    scores, groups = risk
    result = audit(None, scores, groups, plots=False, n_bootstrap=0)
    first = result.to_text().split("Summary:")[0]
    assert "Favourable outcome: the positive decision (score > 0.5)." in first
    payload = json.loads(result.to_json())
    assert payload["verdict"][0]["text"].startswith("Favourable outcome: the positive decision")


@pytest.mark.parametrize("value", [2, -1, "0", 0.0, True, None])
def test_bad_favorable_outcome(risk, value):
    scores, groups = risk
    with pytest.raises(ValueError, match="favorable_outcome must be 1"):
        audit(None, scores, groups, plots=False, n_bootstrap=0, favorable_outcome=value)
    assert MSG_FAVORABLE_OUTCOME.startswith("favorable_outcome must be 1")


def test_cli_agrees_with_python(risk, tmp_path, capsys):
    scores, groups = risk
    path = tmp_path / "risk.csv"
    pd.DataFrame({"score": scores, "group": groups}).to_csv(path, index=False)
    args = ["audit", "--data", str(path), "--score", "score", "--sensitive", "group"]
    args += ["--n-bootstrap", "0", "--json", "--favorable-outcome", "0"]
    for rule in STANDARDS:
        args += ["--standard", rule]
    assert main(args) == 0
    payload = json.loads(capsys.readouterr().out)
    python = audit(
        None,
        scores,
        groups,
        plots=False,
        n_bootstrap=0,
        standards=STANDARDS,
        favorable_outcome=0,
    )
    assert payload["settings"]["favorable_outcome"] == 0
    assert [v["status"] for v in payload["verdicts"]] == [v.status for v in python.verdicts]
    assert [v["line"] for v in payload["verdicts"]] == [v.line for v in python.verdicts]
    four = {row["group"]: row for row in payload["verdicts"][0]["table"]}
    assert four["A"]["impact_ratio"] == pytest.approx(0.5)
    assert payload["verdict"][0]["text"] == (
        "Favourable outcome: the negative decision (score <= 0.5)."
    )


def test_cli_rejects_a_bad_direction(risk, tmp_path, capsys):
    scores, groups = risk
    path = tmp_path / "risk.csv"
    pd.DataFrame({"score": scores, "group": groups}).to_csv(path, index=False)
    with pytest.raises(SystemExit) as raised:
        main(["audit", "--data", str(path), "--score", "score", "--sensitive", "group",
              "--favorable-outcome", "2"])  # fmt: skip
    assert raised.value.code == 2
    assert "--favorable-outcome" in capsys.readouterr().err
