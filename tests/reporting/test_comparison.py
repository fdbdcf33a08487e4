"""compare_audits: numbers copied from the audits, rows checked, user strings escaped."""

import html
import json

import numpy as np
import pytest

from fairot.metrics import wass1
from fairot.reporting import audit, compare_audits
from fairot.reporting._comparison import MSG_AUDITS

OPTIONS = dict(plots=False, n_bootstrap=0, min_group_size=1)


def _audits(evil="<b>x</b>|y"):
    rng = np.random.default_rng(0)
    groups = rng.choice([evil, "plain"], 60)
    raw = np.clip(rng.uniform(size=60) + 0.3 * (groups == "plain"), 0, 1)
    fair = rng.uniform(size=60)
    labels = rng.integers(0, 2, 60)
    return (
        groups,
        raw,
        fair,
        audit(labels, raw, groups, **OPTIONS),
        audit(labels, fair, groups, **OPTIONS),
    )


def test_summary_is_the_audits_and_the_change():
    groups, raw, fair, a, b = _audits()
    table = compare_audits({"raw": a, "fair": b}).summary_table()
    assert table.loc["wass1", "raw"] == pytest.approx(wass1(None, raw, sensitive_features=groups))
    assert table.loc["wass1", "fair"] == pytest.approx(wass1(None, fair, sensitive_features=groups))
    assert table.loc["wass1", "change"] == pytest.approx(
        table.loc["wass1", "fair"] - table.loc["wass1", "raw"]
    )


def test_escaped_in_every_format(tmp_path):
    evil = "<script>alert(1)</script>"
    *_, a, b = _audits(evil)
    comparison = compare_audits({"raw <i>": a, "fair": b}, title="t <b>", notes=["n <u>"])
    out = comparison.write(tmp_path / "page", figures=False)
    page = (out / "report.html").read_text()
    assert evil not in page and html.escape(evil) in page
    assert "<i>" not in page and "<b>" not in page.split("</style>")[-1] and "<u>" not in page
    assert "<script>" not in (out / "report.md").read_text()
    rows = json.loads((out / "report.json").read_text())["audits"]["fair"]["groups"]
    assert evil in {row["group"] for row in rows}  # JSON keeps the raw string


def test_refuses_one_audit_or_different_rows():
    _, _, _, a, b = _audits()
    with pytest.raises(ValueError, match=MSG_AUDITS.format(value="dict")[:30]):
        compare_audits({"only": a})
    other = audit(None, [0.2, 0.4], ["a", "b"], **OPTIONS)
    with pytest.raises(ValueError, match="the audits must cover the same rows"):
        compare_audits({"raw": a, "other": other})
