"""The face-verification audit: its numbers are the metrics', every user string is escaped."""

import json

import numpy as np
import pytest

from fairot.reporting import VerificationAudit, audit_verification, plot_det_curves
from fairot.verification import det_curves, verification_accuracy_by_group, verification_rates

EVIL = "<script>alert(1)</script>"


def _pairs(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    groups = rng.choice([EVIL, "b|*c*", "d"], n)
    same = rng.random(n) < 0.5
    scores = np.where(same, 0.6, 0.1 + 0.1 * (groups == "d")) + rng.normal(0, 0.15, n)
    return same, scores, groups


def test_audit_reports_the_metrics_numbers():
    same, scores, groups = _pairs()
    result = audit_verification(same, scores, sensitive_features=groups, target_fmr=0.01)
    assert isinstance(result, VerificationAudit)
    rates = verification_rates(same, scores, sensitive_features=groups, target_fmr=0.01)
    accuracy = verification_accuracy_by_group(same, scores, sensitive_features=groups)
    assert result.rates.threshold == rates.threshold
    table = result.by_group()
    np.testing.assert_array_equal(table["fmr"], rates.by_group["fmr"])
    np.testing.assert_array_equal(table["accuracy"], accuracy.by_group["accuracy"])
    summary = result.summary()
    assert summary["accuracy_std"] == accuracy.std
    assert summary["skewed_error_ratio"] == accuracy.ser
    assert summary["fnmr_ratio"] == rates.fnmr_ratio
    curves = det_curves(same, scores, sensitive_features=groups)
    for name in curves:
        np.testing.assert_array_equal(result.curves[name].to_numpy(), curves[name].to_numpy())


def test_every_rendering_escapes_group_names_and_title(tmp_path):
    same, scores, groups = _pairs()
    result = audit_verification(
        same, scores, sensitive_features=groups, target_fmr=0.01, title=f"audit {EVIL}"
    )
    page, markdown = result.to_html(), result.to_markdown()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>" not in markdown and "&lt;script&gt;" in markdown
    assert "b\\|\\*c\\*" in markdown  # a | would split a table cell, * would emphasise
    n_impostor = int(result.by_group()["n_impostor"].iloc[0])
    assert f'<td class="num">{n_impostor}</td>' in page  # counts stay integers
    payload = json.loads(result.to_json())
    assert EVIL in [row["group"] for row in payload["groups"]]
    assert payload["rule"].startswith("NIST FRVT reading")
    out = result.write(tmp_path / "report")
    assert sorted(p.name for p in out.iterdir()) == [
        "det_curves.png",
        "report.html",
        "report.json",
        "report.md",
    ]
    assert "<script>" not in (out / "report.html").read_text(encoding="utf-8")


def test_notes_explain_undefined_ratios():
    # Perfectly separated scores: no group has a false non-match, so the FNMR ratio is undefined.
    same = np.tile([True, False], 200)
    scores = np.where(same, 0.9, 0.1) + np.linspace(0, 0.05, 400)
    groups = np.repeat(["a", "b"], 200)
    result = audit_verification(same, scores, sensitive_features=groups, target_fmr=0.05)
    assert np.isnan(result.rates.fnmr_ratio)
    assert any("FNMR ratio is undefined" in n for n in result.notes)
    assert any("SER is infinite" in n for n in result.notes)
    assert "—" in result.to_text()  # an undefined number shows as a dash, never "nan"
    assert json.loads(result.to_json())["summary"]["fnmr_ratio"] is None


def test_det_figure_has_log_axes_and_one_line_per_group():
    same, scores, groups = _pairs(n=600)
    curves = det_curves(same, scores, sensitive_features=groups)
    figure = plot_det_curves(curves)
    ax = figure.axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert sorted(line.get_label() for line in ax.get_lines()) == sorted(curves)
    no_plots = audit_verification(
        same, scores, sensitive_features=groups, target_fmr=0.05, plots=False
    )
    assert no_plots.figures == {}


def test_too_few_impostors_for_the_target():
    same, scores, groups = _pairs(n=600)
    with pytest.raises(ValueError, match=r"target_fmr=0.001 needs at least 1000 impostor"):
        audit_verification(same, scores, sensitive_features=groups)
