"""The MBN synthetic study: seed aggregation against scipy, independent seeds, the quick path."""

import json

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

import fairot.experiments.mbn as mbn
import fairot.experiments.mbn._study as study
from fairot.cli import main
from fairot.experiments import get_study
from fairot.experiments.mbn import METHOD_LABELS, run_mbn_synthetic
from fairot.face import SyntheticRun, make_synthetic_faces, run_synthetic_method
from fairot.face._evaluation import GroupVerification
from fairot.metrics import group_accuracy_std, skewed_error_ratio

# Whole studies on small data: each runs a paper's pipeline end to end.
pytestmark = pytest.mark.integration


def _scipy_interval(values):
    values = np.asarray(values, dtype=float)
    return stats.t.interval(
        mbn.CONFIDENCE, len(values) - 1, loc=values.mean(), scale=stats.sem(values)
    )


def test_seed_streams_are_distinct_and_stable():
    streams = [study.seed_streams(0, s, 10) for s in range(3)]
    values = [v for per in streams for seeds in per for v in seeds.values()]
    assert len(values) == 90 and len(set(values)) == 90
    # asking for more seeds keeps the first ones; another random_state shares none
    assert study.seed_streams(0, 1, 3) == streams[1][:3]
    other = {v for seeds in study.seed_streams(1, 0, 10) for v in seeds.values()}
    assert not other & set(values)


SMALL = dict(
    n_train_identities=40,
    images_per_identity=4,
    n_meta_identities=4,
    n_test_identities=10,
    images_per_test_identity=3,
    n_pairs=40,
)


def _fingerprint(run: SyntheticRun) -> np.ndarray:
    return np.concatenate(
        [run.report.by_group["accuracy"].to_numpy(), run.history["loss"].to_numpy()]
    )


def test_each_seed_stream_changes_the_run_and_nothing_else_does():
    data = make_synthetic_faces("mixed", random_state=3, **SMALL)
    other = make_synthetic_faces("mixed", random_state=4, **SMALL)
    assert not torch.equal(data.train[0][:5], other.train[0][:5])
    kwargs = dict(n_steps=4, batch_size=32, hidden_sizes=(16,), embedding_size=8)
    base = run_synthetic_method(data, "mbn-arc", seed=1, sampling_seed=2, **kwargs)
    # the process's torch state before a run must not leak into it (the loss's class weights
    # used to be drawn from it)
    torch.manual_seed(12345)
    torch.randn(1000)
    again = run_synthetic_method(data, "mbn-arc", seed=1, sampling_seed=2, **kwargs)
    np.testing.assert_array_equal(_fingerprint(base), _fingerprint(again))
    # float32 parameters: 0.3 to float32 precision
    np.testing.assert_allclose(base.initial_margins, [0.3, 0.3, 0.3, 0.3], rtol=1e-7)
    for changed in (dict(seed=5, sampling_seed=2), dict(seed=1, sampling_seed=6)):
        run = run_synthetic_method(data, "mbn-arc", **changed, **kwargs)
        assert not np.array_equal(_fingerprint(run), _fingerprint(base)), changed


def _fake_run(data, method="arcface", *, fixed_margins=None, seed, sampling_seed, **kwargs):
    """Accuracies with a designed effect: MBN(arc) costs the minority groups 4 points."""
    key = 99 if fixed_margins is not None else list(METHOD_LABELS).index(method)
    rng = np.random.default_rng([seed, sampling_seed, key])
    acc = np.array([0.94, 0.91, 0.90, 0.89]) + rng.normal(0, 0.002, 4)
    if method == "mbn-arc" and fixed_margins is None:
        acc[1:] -= 0.04
    by_group = pd.DataFrame({"accuracy": acc}, index=pd.RangeIndex(4, name="group"))
    report = GroupVerification(
        by_group, float(acc.mean()), group_accuracy_std(acc), skewed_error_ratio(acc)
    )
    # learned margins: g1 at the 0.8 bound, g2 around the anchor, g3 below it
    final = [0.3, 0.8, 0.3 + rng.normal(0, 0.05), 0.1 + rng.normal(0, 0.02)]
    history = pd.DataFrame(
        {
            "step": [0, 1],
            "loss": [1.0, 0.5],
            **{f"margin_{g}": [0.3, m] for g, m in enumerate(final)},
            **{f"bias_{g}": [0.1, np.nan] for g in range(4)},
        }
    )
    initial = np.full(4, 0.3) if method.startswith("mbn") else None
    return SyntheticRun(report, history, initial)


class _FakeData:
    n_groups = 4


def test_full_study_aggregates_and_states_only_supported_claims(monkeypatch):
    monkeypatch.setattr(study, "run_synthetic_method", _fake_run)
    monkeypatch.setattr(study, "make_synthetic_faces", lambda *a, **k: _FakeData())
    result = run_mbn_synthetic(
        n_seeds=6, progress=False, methods=list(METHOD_LABELS), sweep_margins=mbn.SWEEP_MARGINS
    )
    runs = result.tables["runs"]
    assert len(runs) == 3 * 6 * len(METHOD_LABELS) and result.config["n_seeds"] == 6
    paired = result.tables["paired"]
    notes = result.notes
    for _, row in paired.iterrows():
        part = runs[runs["scenario"] == row["scenario"]]
        a = part[part["method"] == row["treatment"]].sort_values("seed")[row["metric"]]
        b = part[part["method"] == row["control"]].sort_values("seed")[row["metric"]]
        lo, hi = _scipy_interval(a.to_numpy() - b.to_numpy())
        np.testing.assert_allclose([row["ci_lo"], row["ci_hi"]], [lo, hi], atol=1e-3)
    arc = paired[(paired["treatment"] == "mbn-arc") & (paired["metric"] == "ser")]
    assert (arc["ci_lo"] > 0).all()  # the designed effect is found in every scenario
    for scenario in ("representation", "noise", "mixed"):
        line = next(x for x in notes.splitlines() if x.startswith(f"- **{scenario}**"))
        for treatment, control in mbn.COMPARISONS:
            row = paired[
                (paired["scenario"] == scenario)
                & (paired["treatment"] == treatment)
                & (paired["metric"] == "ser")
            ].iloc[0]
            claim = line.split(f"{METHOD_LABELS[treatment]} - {METHOD_LABELS[control]}: SER")[1]
            verdict = claim.split("(", 1)[1].split(")", 1)[0]
            expected = (
                "SER higher"
                if row["ci_lo"] > 0
                else "SER lower"
                if row["ci_hi"] < 0
                else "no detectable difference"
            )
            assert verdict == expected
    margins = result.tables["margins"].set_index(["scenario", "method", "group"])
    row = margins.loc[("noise", "mbn-arc", 3)]
    finals = [
        _fake_run(None, "mbn-arc", seed=s["init_seed"], sampling_seed=s["sampling_seed"])
        .history["margin_3"]
        .iloc[-1]
        for s in study.seed_streams(0, 1, 6)
    ]
    np.testing.assert_allclose(
        [row["final_lo"], row["final_hi"]], _scipy_interval(finals), atol=1e-3
    )
    assert margins.loc[("noise", "mbn-arc", 1), "at_upper_pct"] == 100.0
    margin_line = next(x for x in notes.splitlines() if x.startswith("- noise/MBN(arc)"))
    assert "g1 0.80 [0.80, 0.80] (above, at the 0.8 bound in 100% of seeds)" in margin_line
    assert "g3" in margin_line and "(below)" in margin_line
    assert {"accuracy", "paired", "margins", "margin_sweep", "sweep_paired"} <= set(result.tables)
    assert {"differences", "margin_sweep", "margins", "skewness"} <= set(result.figures)
    assert "SMOKE TEST" not in notes and "notice" not in result.config


def test_quick_cli_says_smoke_test_and_writes(tmp_path, capsys):
    assert get_study("mbn-synthetic") is run_mbn_synthetic
    out = tmp_path / "mbn"
    assert main(["reproduce", "mbn-synthetic", "--quick", "--no-progress", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    notice = mbn.QUICK_NOTICE.format(n_steps=60, n_seeds=1)
    assert captured.err.rstrip().endswith(notice) and notice in captured.out
    saved = json.loads((out / "results.json").read_text())
    assert saved["config"]["notice"] == notice and notice in saved["notes"]
    assert notice in (out / "results.md").read_text()
    # a smoke test draws no conclusion
    assert "higher" not in saved["notes"] and "lower" not in saved["notes"]
    table = pd.DataFrame(saved["tables"]["accuracy"])
    assert set(table["scenario"]) == {"representation", "noise", "mixed"}
    assert set(table["method"]) == set(saved["config"]["methods"]) <= set(METHOD_LABELS)
    runs = pd.DataFrame(saved["tables"]["runs"])
    merged = table.merge(runs, on=["scenario", "method"], suffixes=("", "_run"))
    np.testing.assert_allclose(merged["ser"], merged["ser_run"], atol=1e-3)
    assert ((table["ser"] >= 1.0) & (table["mean"] > 25.0)).all()
    margins = pd.DataFrame(saved["tables"]["margins"])
    assert set(margins["method"]) == {"mbn-arc"}
    assert (margins.loc[margins["group"] == 0, "final"] == 0.3).all()
    assert (out / "margins.png").exists() and (out / "skewness.png").exists()


def test_study_without_an_mbn_pair_reports_the_sweep(monkeypatch):
    monkeypatch.setattr(study, "run_synthetic_method", _fake_run)
    monkeypatch.setattr(study, "make_synthetic_faces", lambda *a, **k: _FakeData())
    result = run_mbn_synthetic(
        n_seeds=3, progress=False, methods=["softmax", "arcface"], sweep_margins=(0.1, 0.7)
    )
    assert result.tables["paired"].empty and "differences" not in result.figures
    sweep = result.tables["sweep_paired"]
    assert set(sweep["metric"]) == {"minority", "std", "ser"} and len(sweep) == 9
    assert "- **noise**: minority-group accuracy" in result.notes
