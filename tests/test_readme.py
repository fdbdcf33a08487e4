"""The README's Python examples run as written, print what the README says and do what they say.

They run once, by the runner of every page's blocks (``tests/test_doc_blocks.py``: in order, one
namespace, a temporary folder, warnings as errors, the stated prints compared).
"""

from pathlib import Path

import numpy as np
import pytest

from tests.test_doc_blocks import parse, run_page_in

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_run(tmp_path, monkeypatch):
    assert len(parse(README)) >= 2
    namespace = run_page_in(README, tmp_path, monkeypatch)
    summary = namespace["report"].attrs["summary"]
    # The README quotes these values next to the paper's.
    assert summary["err"] == pytest.approx(0.147, abs=5e-4)
    assert summary["wass1"] == pytest.approx(0.314, abs=5e-4)
    from fairot.metrics import wass1

    sensitive = namespace["adult"].sensitive[namespace["test"]]
    assert (
        wass1(None, namespace["fair_scores"], sensitive_features=sensitive) < summary["wass1"] / 4
    )
    assert (
        wass1(None, namespace["post_scores"], sensitive_features=sensitive) < summary["wass1"] / 4
    )
    # The budgeted search: the chosen candidate is the most accurate of those within the budget.
    results = namespace["search"].cv_results_
    within = -results["mean_test_neg_wass1"] <= 0.02
    assert within.any() and not within.all()
    best = max(np.flatnonzero(within), key=lambda i: results["mean_test_accuracy"][i])
    assert namespace["search"].best_index_ == best
