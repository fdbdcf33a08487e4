"""``fairot demo``'s one page: every model's held-out numbers, each equal to its own audit."""

import html

import pytest

from fairot.cli._cmd_demo import demo_page
from fairot.experiments.cot import demo_test_scores
from fairot.metrics import demographic_parity_difference, strong_demographic_disparity
from fairot.reporting._format import format_value


@pytest.fixture(scope="module")
def fitted():
    return demo_test_scores(n_updates=300, progress=False)


def test_page_holds_every_model_equal_to_the_metrics(fitted, tmp_path):
    page = demo_page(fitted)
    split = fitted.split
    assert list(page.audits) == ["logistic regression", "COT", "DOT", "DPP"]
    out = page.write(tmp_path / "demo", figures=False)
    text = (out / "report.html").read_text()
    table = page.summary_table()
    for name, key in [("logistic regression", "LR"), ("COT", "COT"), ("DPP", "DPP")]:
        scores = fitted.scores[key]
        expected = {
            "sdd": strong_demographic_disparity(
                None, scores, sensitive_features=split.sensitive_test
            ),
            "demographic_parity_difference": demographic_parity_difference(
                split.y_test, scores, sensitive_features=split.sensitive_test
            ),
        }
        for metric, value in expected.items():
            assert table.loc[metric, name] == pytest.approx(value, abs=1e-12)
            assert format_value(value) in text
    assert table.loc["n_samples", "DPP"] == len(split.y_test)
    assert html.escape("test rows") in text and (out / "report.json").exists()
