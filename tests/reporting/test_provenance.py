"""Where an audit comes from (date, versions, model, thresholds), and its glossary, everywhere."""

import numpy as np
import pandas as pd

from fairot.reporting import audit


def test_provenance_and_glossary_in_every_format():
    from importlib.metadata import version

    rng = np.random.default_rng(9)
    g = np.repeat(["a", "b"], 50)
    result = audit(None, rng.uniform(size=100), g, plots=False, n_bootstrap=0, model="my model")
    prov = result.provenance
    created = pd.Timestamp(prov["created_utc"])
    assert created.tzinfo is not None and created.utcoffset().total_seconds() == 0
    for name in ("numpy", "scipy", "scikit-learn", "pandas"):
        assert prov[name] == version(name)
    assert prov["model"] == "my model"
    assert prov["thresholds"]["decision threshold"][0] == 0.5
    for text in (result.to_markdown(), result.to_html(), result.to_text()):
        assert "my model" in text and "Glossary" in text and "SPDD" in text
    payload = __import__("json").loads(result.to_json())
    assert payload["provenance"]["model"] == "my model"
    assert payload["verdicts"][0]["standard"] == "four-fifths"
