"""The audit's outputs: summary against fairlearn and fairness_report, MLflow-ready metrics.json,
a self-contained report.html rendered by headless Chromium, readable plots."""

import json
import os
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import demographic_parity_difference as fl_dpd
from fairlearn.metrics import equalized_odds_difference as fl_eod

from fairot.metrics import fairness_report, strong_demographic_disparity
from fairot.reporting import audit, plot_group_histograms
from fairot.reporting._audit import MSG_N_BOOTSTRAP
from fairot.reporting._subsets import MSG_ALL_SMALL

MLFLOW_KEY = re.compile(r"^[\w\-./ :]+$")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 600
    race = rng.choice(["Black", "White"], n, p=[0.3, 0.7])
    sex = rng.choice(["Female", "Male"], n)
    y = rng.integers(0, 2, n)
    # A spike at 0 (many clipped scores) in one group: the histogram must stay readable.
    s = np.clip(
        rng.beta(2, 4, n) + 0.25 * (sex == "Male") + 0.1 * y - 0.3 * (race == "Black"), 0, 1
    )
    return y, s, pd.DataFrame({"race": race, "sex": sex})


@pytest.fixture(scope="module")
def result(data):
    y, s, sf = data
    return audit(y, s, sf, n_bootstrap=50, random_state=0, title="Audit <test> & more")


def test_summary_against_oracles(data, result):
    y, s, sf = data
    decisions = (s > 0.5).astype(int)
    summary = result.summary
    assert summary["demographic_parity_difference"] == pytest.approx(
        fl_dpd(y, decisions, sensitive_features=sf), abs=1e-12
    )
    assert summary["equalized_odds_difference"] == pytest.approx(
        fl_eod(y, decisions, sensitive_features=sf), abs=1e-12
    )
    assert summary["sdd"] == pytest.approx(
        strong_demographic_disparity(None, s, sensitive_features=sf), abs=1e-12
    )
    bands = result.intervals.summary
    assert set(bands.index) >= {"sdd", "wass1", "spdd", "err", "demographic_parity_difference"}
    assert (bands["low"] <= bands["high"]).all()


def test_metrics_json_is_flat_and_mlflow_ready(result, tmp_path):
    result.write(tmp_path, figures=False)
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics and all(type(v) is float and np.isfinite(v) for v in metrics.values())
    assert all(MLFLOW_KEY.match(k) for k in metrics)
    assert metrics["sdd"] == result.summary["sdd"]
    assert metrics["sdd_ci_low"] == result.intervals.summary.loc["sdd", "low"]
    assert metrics["group/race_Black_sex_Female/selection_rate"] == pytest.approx(
        result.report.loc["race=Black, sex=Female", "selection_rate"]
    )


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


def test_small_groups_excluded_match_fairness_report():
    rng = np.random.default_rng(1)
    g = np.array(["a"] * 80 + ["b"] * 90 + ["c"] * 12)
    y = rng.integers(0, 2, g.shape[0])
    s = rng.uniform(size=g.shape[0])
    kept = audit(y, s, g, plots=False, n_bootstrap=0, exclude_small_groups=True)
    keep = g != "c"
    oracle = fairness_report(y[keep], s[keep], sensitive_features=g[keep]).attrs["summary"]
    for key in ("sdd", "wass1", "err", "spdd"):
        assert kept.summary[key] == pytest.approx(oracle[key], abs=1e-12)
    assert kept.summary["demographic_parity_difference"] == pytest.approx(
        fl_dpd(y[keep], (s[keep] > 0.5).astype(int), sensitive_features=g[keep]), abs=1e-12
    )
    assert kept.report.loc["c", "note"] == "n < 30"
    assert "excluded from the summary" in kept.warnings[0]
    with pytest.raises(ValueError, match=re.escape(MSG_ALL_SMALL.split("{")[0])):
        audit(y, s, g, plots=False, n_bootstrap=0, exclude_small_groups=True, min_group_size=85)


@pytest.mark.parametrize("n_bootstrap", [3, -1, 1.5])
def test_bad_n_bootstrap(n_bootstrap):
    with pytest.raises(ValueError, match=re.escape(MSG_N_BOOTSTRAP.split("{")[0])):
        audit(None, [0.1, 0.2, 0.3, 0.4], ["a", "a", "b", "b"], n_bootstrap=n_bootstrap)


def test_histogram_axis_not_dominated_by_a_spike():
    rng = np.random.default_rng(2)
    g = np.repeat(["a", "b"], 500)
    s = np.where(g == "a", 0.0, rng.uniform(size=1000))  # group a: one huge bar at 0
    fig = plot_group_histograms(s, g, value_range=(0, 1))
    ax = fig.axes[0]
    heights, _ = np.histogram(s[g == "a"], bins=40, range=(0, 1), density=True)
    typical, _ = np.histogram(s[g == "b"], bins=40, range=(0, 1), density=True)
    top = ax.get_ylim()[1]
    assert top < heights.max() / 5  # the spike (40) is cut...
    assert top > typical.max()  # ...but the uniform group's bars (about 1) are whole
    assert any("tallest bar 40" in t.get_text() for t in ax.texts)
    legend = ax.get_legend()
    # The legend sits right of the axes, outside the data.
    assert legend.get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1


# --------------------------------------------------------------------------- Chromium
def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _render(page, tmp_path, name):
    """Screenshot ``page`` with headless Chromium; return the image and the console lines."""
    browser = _chromium()
    if browser is None:
        pytest.skip(
            "headless Chromium not found (Debian: apt-get install chromium; `make test` installs "
            "it when run as root)"
        )
    shot = tmp_path / f"{name}.png"
    args = [
        browser,
        "--headless",
        "--disable-gpu",
        "--hide-scrollbars",
        "--window-size=1200,3200",  # the verdict block first pushes the figures down
        f"--screenshot={shot}",
        "--enable-logging=stderr",
        "--v=0",
        # Any request leaving the machine fails, and its failure is a console error.
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={tmp_path / 'profile'}",
        page.as_uri(),
    ]
    if os.geteuid() == 0:
        args.insert(1, "--no-sandbox")
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if not shot.exists():
        pytest.fail(f"Chromium made no screenshot (exit {done.returncode}): {done.stderr[-2000:]}")
    import matplotlib.image

    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return matplotlib.image.imread(shot), console


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
