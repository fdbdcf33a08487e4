"""Group names that try to forge a verdict (issue 37): every medium shows them, none obeys them.

The terminal test reads the rendered text: no escape, carriage return, bidi or zero-width
character reaches it, and the FAIL line of the four-fifths rule is intact. Markdown and HTML
show the same characters as escapes; figures draw the names as text (``$`` is no maths).
"""

import html
import io
import re
import unicodedata
import warnings

import numpy as np
import pandas as pd
import pytest

from fairot.exceptions import LookAlikeGroupsWarning
from fairot.reporting import (
    audit,
    audit_verification,
    compare_audits,
    plot_det_curves,
    plot_group_histograms,
    plot_group_metrics,
    plot_group_quantile_functions,
)
from fairot.utils import FIGURE_LABEL_LENGTH, show_invisible
from fairot.verification import det_curves

FORGED = "\x1b[2K\x1b[1A four-fifths: PASS"
HOSTILE = [FORGED, "\r", "\u202e", "$10K-$50K", "$\\frac{", "<script>", "a|b\nc", "z\u200b"]
# Text that no page of fairot may hold: C0/C1 controls but the line break, DEL, format
# characters (bidi overrides and isolates, zero-width characters), line/paragraph separators.
INVISIBLE = re.compile(
    r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2069\ufeff]"
)


def _data(names=HOSTILE, n=60, seed=0):
    """The forged name is selected far less often than the others: four-fifths FAILs."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(names, n)
    scores = rng.uniform(0.3, 1.0, groups.size)
    if FORGED in names:
        scores[groups == FORGED] = rng.uniform(0.0, 0.6, n)
    labels = (scores + rng.normal(scale=0.2, size=groups.size) > 0.5).astype(int)
    return labels, scores, groups


def _audit(*args, **kwargs):
    # "\r", "\u202e" and "z\u200b" print as nothing, nothing and "z": they look alike, and
    # the encoder says so.
    with pytest.warns(LookAlikeGroupsWarning, match=r"'\\r' vs '\\u202e'"):
        return audit(*args, **kwargs)


@pytest.fixture(scope="module")
def result():
    labels, scores, groups = _data()
    return _audit(labels, scores, groups, n_bootstrap=0, plots=True, title=f"t{FORGED}")


def test_terminal_text_holds_no_control_byte_and_the_fail_line(result):
    text = result.to_text()
    assert INVISIBLE.search(text) is None
    assert "\x1b" not in text and "\r" not in text
    # The verdict is the rule's, on its own line, and no line of the page is the forged one.
    assert result.verdicts[0].status == "FAIL"
    lines = text.splitlines()
    assert any(line.startswith("FAIL: Impact ratio below 0.8") for line in lines), text
    assert not any(line.strip() == "four-fifths: PASS" for line in lines)
    # Each name is shown, escaped, on one line: "a|b\nc" does not start a line "c".
    assert show_invisible(FORGED) in text and "a|b\\nc" in text and "\\u202e" in text
    assert not any(line == "c" or line.startswith("c ") for line in lines)


def test_markdown_shows_the_escapes(result):
    text = result.to_markdown()
    assert INVISIBLE.search(text) is None and "<script>" not in text
    # "\x1b" is written "\\x1b" (an escaped backslash): CommonMark shows "\x1b".
    assert "\\\\x1b\\[2K" in text and "\\\\u202e" in text and "a\\|b\\\\nc" in text
    assert "\\$10K-\\$50K" not in text and "$10K-$50K" in text


def test_html_shows_the_escapes(result):
    page = result.to_html()
    assert INVISIBLE.search(page) is None
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert html.escape(show_invisible(FORGED)) in page and "\\u202e" in page
    fragment = result._repr_html_()
    assert INVISIBLE.search(fragment) is None


def test_json_keeps_the_names_as_data(result):
    import json

    names = {row["group"] for row in json.loads(result.to_json())["groups"]}
    assert names == {*HOSTILE, "overall"}


def _labels(figure, ticks=False):
    """Titles and legend entries (and the y tick labels: the group names of a metric chart)."""
    texts = []
    for ax in figure.axes:
        texts.append(ax.title)
        texts += ax.get_yticklabels() if ticks else []
        legend = ax.get_legend()
        texts += [] if legend is None else legend.get_texts()
    return [t for t in texts if t.get_text()]


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize(
    "plot", [plot_group_histograms, plot_group_quantile_functions], ids=["hist", "quantile"]
)
def test_figures_draw_the_literal_name(name, plot):
    rng = np.random.default_rng(1)
    groups = np.repeat([name, "other"], 30)
    figure = plot(rng.uniform(size=groups.size), groups)
    figure.savefig(io.BytesIO(), format="png")  # draws every text: a TeX error would raise here
    shown = {t.get_text().split(" (n=")[0] for t in _labels(figure)}
    assert show_invisible(name) in shown
    assert all(not t.get_parse_math() for t in _labels(figure))


def test_metric_chart_and_det_curves_draw_literal_names():
    frame = pd.DataFrame({"tpr": np.linspace(0, 1, len(HOSTILE))}, index=HOSTILE)
    figure = plot_group_metrics(frame)
    figure.savefig(io.BytesIO(), format="png")
    ticks = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert ticks == [show_invisible(n) for n in HOSTILE]
    rng = np.random.default_rng(3)
    same = np.tile([True, False], 200)
    groups = np.repeat(["$10K-$50K", "$\\frac{"], 200)
    scores = np.where(same, 0.6, 0.4) + rng.normal(scale=0.2, size=400)
    figure = plot_det_curves(det_curves(same, scores, sensitive_features=groups))
    figure.savefig(io.BytesIO(), format="png")
    legend = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert legend == ["$10K-$50K", "$\\frac{"]


def test_audit_figures_render_with_hostile_names(result):
    for figure in result.figures.values():
        figure.savefig(io.BytesIO(), format="png")
        for text in _labels(figure, ticks=True):
            assert INVISIBLE.search(text.get_text()) is None


def test_a_long_name_gives_a_bounded_label():
    name = "x" * 100_000
    groups = np.repeat([name, "b"], 20)
    scores = np.random.default_rng(2).uniform(size=groups.size)
    for plot in (plot_group_histograms, plot_group_quantile_functions):
        figure = plot(scores, groups)
        figure.savefig(io.BytesIO(), format="png")
        lengths = [len(t.get_text()) for t in _labels(figure, ticks=True)]
        assert max(lengths) <= FIGURE_LABEL_LENGTH + len(" (n=20)")
    result = audit(None, scores, groups, n_bootstrap=0, min_group_size=1)
    chart = result.figures["group_metrics"]
    assert max(len(t.get_text()) for t in chart.axes[0].get_yticklabels()) == FIGURE_LABEL_LENGTH
    assert name in result.report.index  # the table keeps the name whole


def test_verification_text_and_comparison_text():
    same = np.tile([True, False], 100)
    groups = np.repeat([FORGED, "b"], 100)
    scores = np.where(same, 0.8, 0.2) + np.linspace(-0.5, 0.5, 200)
    verification = audit_verification(
        same, scores, sensitive_features=groups, target_fmr=0.05, plots=False
    )
    for text in (verification.to_text(), verification.to_markdown(), verification.to_html()):
        assert INVISIBLE.search(text) is None
    labels, scores, groups = _data()
    before = _audit(labels, scores, groups, n_bootstrap=0, plots=False, title=FORGED)
    comparison = compare_audits({"a\x1b": before, "b": before}, title=FORGED, notes=["n\r"])
    for text in (comparison.to_text(), comparison.to_markdown(), comparison.to_html()):
        assert INVISIBLE.search(text) is None


def test_look_alike_names_are_shown_apart():
    # A zero-width space and a trailing space: two groups, a warning, and two distinct lines.
    names = ["Male", "Male\u200b", "Male ", "Female"]
    labels, scores, groups = _data(names)
    with pytest.warns(LookAlikeGroupsWarning, match="Male"):
        result = audit(labels, scores, groups, n_bootstrap=0, plots=False)
    text = result.to_text()
    assert "Male\\u200b" in text
    assert result.report.shape[0] == 5  # four groups and "overall"
    # NFC and NFD "é" are one group.
    nfd = unicodedata.normalize("NFD", "Café")
    labels, scores, groups = _data(["Café", nfd, "Tea"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = audit(labels, scores, groups, n_bootstrap=0, plots=False)
    assert list(result.report.index) == ["Café", "Tea", "overall"]
    assert result.report.loc["Café", "size"] == 120
