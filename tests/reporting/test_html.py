"""The HTML rendering of an audit: a self-contained report.html, rendered by headless Chromium."""

import re

import numpy as np
import pytest

from fairot.reporting import audit
from tests.helpers import chromium_screenshot as _render
from tests.helpers import sized_groups as _groups


def test_html_is_self_contained(result, tmp_path):
    result.write(tmp_path)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # Nothing fetched: no scripts, stylesheets, remote images or fonts. (SVG names its XML
    # namespaces with URIs; those are identifiers, never fetched.)
    fetched = re.sub(r'xmlns(:\w+)?="[^"]*"', "", page)
    for forbidden in ("<script", "<link", "http://", "https://", "@import", "<img"):
        assert forbidden not in fetched, forbidden
    assert not re.search(r"url\((?!#)", fetched)  # url(#clip) points inside the page
    assert page.count("<svg") == 3
    assert "Audit &lt;test&gt; &amp; more" in page  # the title is escaped
    md = (tmp_path / "report.md").read_text()
    assert "## Summary" in md and "![group_metrics](group_metrics.png)" in md


def test_repr_html_for_notebooks(result):
    fragment = result._repr_html_()
    assert fragment.startswith("<style>") and "<table>" in fragment and "<svg" in fragment


@pytest.mark.integration
def test_console_check_catches_a_broken_page(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><p>x</p><script>throw new Error("boom")</script>')
    _, console = _render(page, tmp_path, "broken")
    assert any("boom" in line for line in console)


@pytest.mark.integration
def test_report_renders_in_headless_chromium(result, tmp_path):
    result.write(tmp_path, figures=False)
    image, console = _render(tmp_path / "report.html", tmp_path, "report")
    assert console == []
    rgb = image[..., :3]
    ink = (rgb.min(axis=2) < 0.8).mean()  # share of pixels that are not near-white
    assert ink > 0.02, "the screenshot is blank"
    assert rgb.std() > 0.05
    # The figures drew: somewhere below the tables the page holds the plots' coloured lines.
    coloured = (rgb.max(axis=2) - rgb.min(axis=2)) > 0.3
    assert coloured[rgb.shape[0] // 3 :].mean() > 0.001


@pytest.mark.parametrize("k", [4, 12, 20])
def test_report_with_many_groups_renders_in_chromium(k, tmp_path):
    s, g, _ = _groups(k, seed=1)
    y = np.random.default_rng(2).integers(0, 2, g.size)
    result = audit(y, s, g, n_bootstrap=0, title="<b>many</b> groups")
    result.write(tmp_path, formats=("html",), figures=False)
    image, console = _render(tmp_path / "report.html", tmp_path, f"groups{k}")
    assert console == []
    rgb = image[..., :3]
    assert (rgb.min(axis=2) < 0.8).mean() > 0.02, "blank screenshot"
    assert "<b>many" not in (tmp_path / "report.html").read_text()
