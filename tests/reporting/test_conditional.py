"""``audit(..., control_features=, constraint=)`` and ``fairot audit --control --constraint``.

Oracles: the metrics recomputed by hand on each stratum's rows (scipy's W1 for SDD), and the
strong EO metrics called directly.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from fairot.cli import main
from fairot.metrics import strong_equalized_odds_disparity, strong_pairwise_equalized_odds_disparity
from fairot.reporting import audit
from fairot.reporting._conditional import MSG_CONSTRAINT, MSG_CONSTRAINT_LABELS


def _data(seed=0, n=800):
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], n)
    c = rng.choice(["x", "y", "z"], n, p=[0.5, 0.3, 0.2])
    y = rng.integers(0, 2, n)
    s = np.clip(rng.beta(2, 3, n) + 0.2 * (g == "b") * (c == "x") + 0.1 * y, 0, 1)
    return y, s, g, c


def _sdd_by_scipy(s, g):
    return sum(scipy.stats.wasserstein_distance(s[g == a], s) for a in np.unique(g))


def test_a_section_per_stratum_and_the_strata_recombined():
    y, s, g, c = _data(1)
    result = audit(y, s, g, plots=False, n_bootstrap=0, control_features=c, min_group_size=1)
    assert list(result.strata) == ["x", "y", "z"]
    expected = 0.0
    for name, stratum in result.strata.items():
        m = c == name
        assert stratum.summary["n_samples"] == m.sum()
        assert stratum.settings["stratum_share"] == pytest.approx(m.mean())
        assert stratum.summary["sdd"] == pytest.approx(_sdd_by_scipy(s[m], g[m]), rel=1e-9)
        expected += m.mean() * _sdd_by_scipy(s[m], g[m])
    assert result.summary["sdd_given_control"] == pytest.approx(expected, rel=1e-9)
    assert result.summary["sdd"] == pytest.approx(_sdd_by_scipy(s, g), rel=1e-9)
    markdown = result.to_markdown()
    assert [line for line in markdown.splitlines() if line.startswith("## Stratum")] == [
        f"## Stratum x (share {(c == 'x').mean():.1%})",
        f"## Stratum y (share {(c == 'y').mean():.1%})",
        f"## Stratum z (share {(c == 'z').mean():.1%})",
    ]
    page = result.to_html()
    assert page.count('class="fairot-audit"') == 4
    assert json.loads(result.to_json())["strata"]["y"]["summary"]["n_samples"] == (c == "y").sum()
    assert "Stratum z" in result.to_text()


def test_stratum_names_are_escaped():
    y, s, g, _ = _data(2, n=200)
    c = np.where(np.arange(200) < 100, "<b>|x", "plain")
    result = audit(y, s, g, plots=False, n_bootstrap=0, control_features=c, min_group_size=1)
    assert "<b>|x" not in result.to_html()
    assert "## Stratum &lt;b&gt;\\|x (share 50.0%)" in result.to_markdown().splitlines()


def test_constraint_adds_the_strong_disparities_given_the_label():
    y, s, g, _ = _data(3)
    result = audit(y, s, g, plots=False, n_bootstrap=0, constraint="equalized_odds")
    assert result.summary["seod"] == strong_equalized_odds_disparity(y, s, sensitive_features=g)
    assert result.summary["speod"] == strong_pairwise_equalized_odds_disparity(
        y, s, sensitive_features=g
    )
    assert "seod" not in audit(y, s, g, plots=False, n_bootstrap=0).summary
    opportunity = audit(y, s, g, plots=False, n_bootstrap=0, constraint="equal_opportunity")
    assert set(opportunity.summary) >= {"seopd", "speopd"}
    with pytest.raises(ValueError, match=re.escape(MSG_CONSTRAINT.format(value="odds"))):
        audit(y, s, g, plots=False, n_bootstrap=0, constraint="odds")
    message = MSG_CONSTRAINT_LABELS.format(constraint="equalized_odds")
    with pytest.raises(ValueError, match=re.escape(message)):
        audit(None, s, g, plots=False, n_bootstrap=0, constraint="equalized_odds")


def test_cli_control_and_constraint(tmp_path, capsys):
    y, s, g, c = _data(4, n=600)
    path = tmp_path / "scores.csv"
    pd.DataFrame({"score": s, "sex": g, "band": c, "label": y}).to_csv(path, index=False)
    args = ["--score", "score", "--sensitive", "sex", "--label", "label", "--n-bootstrap", "0"]
    code = main(
        [
            "audit",
            "--data",
            str(path),
            *args,
            "--control",
            "band",
            "--constraint",
            "equalized_odds",
            "--json",
        ]  # fmt: skip
    )
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert sorted(payload["strata"]) == ["x", "y", "z"]
    expected = 0.0
    for v in "xyz":
        m = c == v
        expected += m.mean() * strong_equalized_odds_disparity(y[m], s[m], sensitive_features=g[m])
    assert payload["summary"]["seod_given_control"] == pytest.approx(expected, rel=1e-9)
    assert main(["audit", "--data", str(path), *args, "--control", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
