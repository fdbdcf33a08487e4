"""Text, markdown and JSON renderings of an audit; every user string escaped for its medium."""

import json
import re

import numpy as np
import pandas as pd

from fairot.reporting import audit


def test_audit_text_and_markdown():
    rng = np.random.default_rng(0)
    s = rng.random(100)
    g = rng.choice(["a", "b"], 100)
    result = audit(None, s, g, plots=False, title="T")
    assert result.to_text().startswith("T\n=")
    assert "## Summary" in result.to_markdown()
    assert json.loads(result.to_json())["summary"]["n_samples"] == 100


def test_user_strings_are_escaped():
    rng = np.random.default_rng(10)
    bad = "<script>alert(1)</script>|*x*"
    g = np.repeat([bad, "b"], 40)
    frame = pd.DataFrame({"col<b>|": g, "sex": np.tile(["f", "m"], 40)})
    result = audit(None, rng.uniform(size=80), frame, plots=False, n_bootstrap=0,
                   standards=("four-fifths", "ll144", "credit"))  # fmt: skip
    page = result.to_html()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>" not in page
    markdown = result.to_markdown()
    assert "<script>" not in markdown and "<b>" not in markdown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\|\\*x\\*" in markdown
    # Every table row keeps its column count: no pipe of a user string splits a cell.
    for block in markdown.split("\n\n"):
        rows = [r for r in block.splitlines() if r.startswith("|")]
        widths = {len(re.split(r"(?<!\\)\|", r)) for r in rows}
        assert len(widths) <= 1, block
