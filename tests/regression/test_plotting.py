"""Group names in the quantile-curve figure are drawn as text, visible and short (issue 37)."""

import io

import numpy as np

from fairot.regression import plot_quantile_curves
from fairot.utils import FIGURE_LABEL_LENGTH


def test_hostile_group_names_are_literal_labels():
    latent = np.array([[0.0, 1.0, 2.0], [2.0, 3.0, 4.0], [1.0, 2.0, 3.0]])
    names = ["$10K-$50K", "\x1b[2K$\\frac{", "x" * 100_000]
    fig = plot_quantile_curves(latent, latent, group_names=names)
    fig.savefig(io.BytesIO(), format="png")  # no TeX error, no missing-glyph warning
    texts = fig.axes[0].get_legend().get_texts()
    shown = [t.get_text() for t in texts]
    assert shown[:4] == [
        "$10K-$50K latent",
        "$10K-$50K adjusted",
        "\\x1b[2K$\\frac{ latent",
        "\\x1b[2K$\\frac{ adjusted",
    ]
    assert max(len(s) for s in shown) == FIGURE_LABEL_LENGTH + len(" adjusted")
    assert not any(t.get_parse_math() for t in texts)
