"""The penalty's fixed targets: the shared barycenter, a tolerance ``tau`` and label
constraints (one target per cell)."""

import re

import numpy as np
import pytest
import torch
from scipy.stats import wasserstein_distance

from fairot.metrics import strong_equalized_odds_disparity
from fairot.torch import FairMLPClassifier, FairTrainer, WassersteinParityPenalty
from fairot.torch.penalty._cells import (
    MSG_CELL_TARGETS,
    MSG_COT_CELLS,
    MSG_LABELS,
    MSG_NO_CELL_TARGETS,
    MSG_SOFT_LABELS,
    MSG_TAU_CONSTRAINT,
    barycenter_target,
    build_cell_targets,
)
from fairot.torch.trainers import Callback
from fairot.transport import geodesic_targets
from fairot.transport._geodesic import MSG_TAU


def _data(n, seed, shift=1.0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(shift * a, 1.0), rng.normal(0, 1, n)]).astype(np.float32)
    y = (X[:, 0] + rng.normal(0, 1, n) > 0.5).astype(np.float32)
    return X, y, a


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tau": 1.5}, re.escape(MSG_TAU.format(value=1.5))),
        (
            {"tau": 0.5, "constraint": "equalized_odds"},
            re.escape(MSG_TAU_CONSTRAINT.format(tau=0.5, constraint="equalized_odds")),
        ),
        ({"constraint": "parity"}, "constraint must be one of"),
        (
            {"method": "cot", "tau": 0.5, "pairing": "diagonal"},
            re.escape(MSG_COT_CELLS.format(tau=0.5, constraint="demographic_parity")),
        ),
        (
            {"method": "cot", "constraint": "equal_opportunity", "pairing": "diagonal"},
            re.escape(MSG_COT_CELLS.format(tau=0.0, constraint="equal_opportunity")),
        ),
    ],
)
def test_bad_options(kwargs, match):
    kwargs = {"method": "dot", **kwargs}
    with pytest.raises(ValueError, match=match):
        WassersteinParityPenalty(2, **kwargs)


def test_checkpoint_restores_cell_targets(tmp_path):
    X, y, a = _data(200, 10)
    path = tmp_path / "run.pt"

    def trainer():
        torch.manual_seed(0)
        model = torch.nn.Linear(2, 1)
        pen = WassersteinParityPenalty(2, method="cot", tau=0.5, random_state=0)
        return FairTrainer(model, pen, warmup_epochs=1, n_epochs=3, batch_size=64, random_state=0)

    first = trainer().fit(X, y, a, checkpoint_path=path)
    second = trainer().load_checkpoint(path)
    assert second.penalty.cell_targets.shape == (2, first.target_samples_.shape[0])
    assert torch.equal(second.penalty.cell_targets, first.penalty.cell_targets)
    assert torch.equal(second.penalty.duals, first.penalty.duals)


def test_default_state_dict_unchanged():
    # The default penalty has no new buffer (checkpoints of earlier versions load as before).
    assert "cell_targets" not in WassersteinParityPenalty(2, method="dot").state_dict()


@pytest.mark.parametrize("method", ["dot", "sinkhorn"])
def test_equalized_odds_value_against_scipy(method):
    rng = np.random.default_rng(0)
    scores = rng.uniform(0, 1, 40)
    groups = np.repeat([0, 1], 20)
    labels = np.tile([0, 1], 20)
    pen = WassersteinParityPenalty(2, method=method, constraint="equalized_odds",
                                   sinkhorn_max_iter=5000)  # fmt: skip
    # Cell (label t, group a) is row 2 t + a; each cell has 10 scores and a 10-point target.
    targets = np.sort(rng.uniform(0, 1, (4, 10)), axis=1)
    pen.set_cell_targets(targets)
    value = pen(
        torch.tensor(scores), torch.tensor(groups), labels=torch.tensor(labels, dtype=torch.float64)
    )
    expected = sum(
        wasserstein_distance(scores[(groups == a) & (labels == t)], targets[2 * t + a])
        for t in (0, 1)
        for a in (0, 1)
    )
    # Sinkhorn's default epsilon (0.01) biases each cell's W1 upwards by a few hundredths.
    tol = 1e-12 if method == "dot" else 0.05
    assert float(value) == pytest.approx(expected, abs=tol)


def test_equal_opportunity_reads_positives_only():
    rng = np.random.default_rng(1)
    scores = rng.uniform(0, 1, 24)
    groups, labels = np.repeat([0, 1], 12), np.tile([0, 0, 1], 8)
    pen = WassersteinParityPenalty(2, method="dot", constraint="equal_opportunity")
    targets = np.sort(rng.uniform(0, 1, (2, 4)), axis=1)
    pen.set_cell_targets(targets)
    s = torch.tensor(scores, requires_grad=True)
    value = pen(s, torch.tensor(groups), labels=torch.tensor(labels))
    expected = sum(
        wasserstein_distance(scores[(groups == a) & (labels == 1)], targets[a]) for a in (0, 1)
    )
    assert float(value.detach()) == pytest.approx(expected, abs=1e-12)
    value.backward()
    assert torch.all(s.grad[torch.tensor(labels) == 0] == 0)


def test_call_errors():
    pen = WassersteinParityPenalty(2, method="dot", constraint="equalized_odds")
    s, g = torch.tensor([0.2, 0.7]), torch.tensor([0, 1])
    with pytest.raises(
        ValueError,
        match=re.escape(MSG_NO_CELL_TARGETS.format(tau=0.0, constraint="equalized_odds")),
    ):
        pen(s, g, labels=torch.tensor([0, 1]))
    pen.set_cell_targets(np.full((4, 3), 0.5))
    with pytest.raises(
        ValueError,
        match=re.escape(MSG_LABELS.format(constraint="equalized_odds", value="NoneType")),
    ):
        pen(s, g)
    with pytest.raises(ValueError, match=re.escape(MSG_CELL_TARGETS[:20])):
        pen.set_cell_targets(np.full((2, 3), 0.5))


def test_cell_targets_round_trip():
    pen = WassersteinParityPenalty(3, method="dot", tau=0.3)
    pen.set_cell_targets(np.linspace(0, 1, 15).reshape(3, 5))
    other = WassersteinParityPenalty(3, method="dot", tau=0.3)
    other.load_state_dict(pen.state_dict())
    assert torch.equal(other.cell_targets, pen.cell_targets)


def test_build_targets_tau_ends():
    rng = np.random.default_rng(2)
    scores = np.concatenate([rng.uniform(0, 0.5, 30), rng.uniform(0.5, 1, 30)])
    member = np.zeros((60, 2), dtype=bool)
    member[:30, 0] = member[30:, 1] = True
    y = np.zeros(60)
    shared, rows0 = build_cell_targets(scores, member, y, None, "demographic_parity", 0.0)
    _, rows1 = build_cell_targets(scores, member, y, None, "demographic_parity", 1.0)
    # tau=0: the barycenter itself; tau=1: each group's own sorted scores (30 midpoints of 30).
    np.testing.assert_array_equal(rows0, np.stack([shared, shared]))
    np.testing.assert_allclose(rows1[0], np.sort(scores[:30]))
    np.testing.assert_allclose(rows1[1], np.sort(scores[30:]))


class _WarmScores(Callback):
    """Keeps the model's training scores at the end of the last warm-up epoch."""

    def __init__(self, X, epoch):
        self.X, self.epoch, self.scores = X, epoch, None

    def on_epoch_end(self, trainer, record):
        if record["epoch"] == self.epoch:
            self.scores = trainer.predict_scores(self.X)


def _fit(tau, X, y, a, callbacks=(), method="dot"):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    pen = WassersteinParityPenalty(2, method=method, tau=tau, random_state=0)
    trainer = FairTrainer(model, pen, lam=3.0, warmup_epochs=3, n_epochs=15, batch_size=64,
                          learning_rate=1e-2, random_state=0, callbacks=callbacks)  # fmt: skip
    return trainer.fit(X, y, a)


def test_trainer_targets_are_geodesic_targets():
    X, y, a = _data(300, 0)
    warm = _WarmScores(X, 2)
    trainer = _fit(0.5, X, y, a, [warm])
    expected = geodesic_targets(trainer.target_samples_, [warm.scores[a == g] for g in (0, 1)], 0.5)
    np.testing.assert_allclose(trainer.penalty.cell_targets.numpy(), np.stack(expected))


@pytest.mark.parametrize("method", ["dot", "cot"])
def test_tau_interpolates_held_out_w1(method):
    X, y, a = _data(600, 3, shift=1.5)
    Xt, _, at = _data(2000, 4, shift=1.5)
    w1 = {}
    for tau in (0.0, 0.5, 1.0):
        trainer = _fit(tau, X, y, a, method=method)
        s = trainer.predict_scores(Xt)
        w1[tau] = sum(wasserstein_distance(s[at == g], trainer.target_samples_) for g in (0, 1))
    assert w1[0.0] < w1[0.5] < w1[1.0]


@pytest.mark.parametrize("method", ["dot", "cot"])
def test_equalized_odds_lowers_disparity(method):
    X, y, a = _data(1500, 5, shift=1.5)
    Xt, yt, at = _data(3000, 6, shift=1.5)
    common = dict(method=method, hidden_layer_sizes=(8,), warmup_epochs=5, batch_size=128,
                  learning_rate=1e-2, patience=None, random_state=0)  # fmt: skip
    warm = FairMLPClassifier(n_epochs=5, **common).fit(X, y, sensitive_features=a)
    fair = FairMLPClassifier(n_epochs=20, lam=5.0, constraint="equalized_odds", **common)
    fair.fit(X, y, sensitive_features=a)

    def seo(clf):
        scores = clf.predict_proba(Xt, sensitive_features=at)[:, 1]
        return strong_equalized_odds_disparity(yt, scores, sensitive_features=at)

    # Measured: 0.56 for the warm model, 0.29 with the penalty.
    assert seo(fair) < 0.75 * seo(warm)


def test_soft_labels_refused_with_label_constraint():
    X, y, a = _data(200, 7)
    pen = WassersteinParityPenalty(2, method="dot", constraint="equalized_odds")
    model = torch.nn.Linear(2, 1)
    trainer = FairTrainer(model, pen, warmup_epochs=1, n_epochs=2, batch_size=64, random_state=0)
    with pytest.raises(
        ValueError, match=re.escape(MSG_SOFT_LABELS.format(constraint="equalized_odds"))
    ):
        trainer.fit(X, np.clip(y, 0.2, 0.8), a)


def test_estimator_refuses_diagonal_cot_with_constraint():
    X, y, a = _data(100, 8)
    clf = FairMLPClassifier(method="cot", constraint="equalized_odds", n_epochs=1,
                            penalty_params={"pairing": "diagonal"})  # fmt: skip
    with pytest.raises(
        ValueError, match=re.escape(MSG_COT_CELLS.format(tau=0.0, constraint="equalized_odds"))
    ):
        clf.fit(X, y, sensitive_features=a)


@pytest.mark.parametrize("reg", ["entropic", "l2"])
def test_cot_cells_match_shared_target_when_targets_agree(reg):
    # Balanced groups of k scores, every cell's target the same k samples t: the cell pass must
    # give the shared-target pass's value, score gradient and dual ascent (both in training mode).
    rng = np.random.default_rng(9)
    k = 12
    scores = rng.uniform(0, 1, 3 * k)
    groups = torch.tensor(np.repeat([0, 1, 2], k))
    t = np.sort(rng.uniform(0, 1, k))
    kw = {"method": "cot", "reg": reg, "dual_step_size": 0.5, "random_state": 0}
    shared = WassersteinParityPenalty(3, target=t, **kw)
    cells = WassersteinParityPenalty(3, tau=0.5, **kw)
    cells.set_cell_targets(np.stack([t, t, t]))
    for _ in range(3):  # the duals move: later calls read non-zero potentials
        out = []
        for pen in (shared, cells):
            s = torch.tensor(scores, requires_grad=True)
            value = pen(s, groups)
            value.backward()
            out.append((float(value.detach()), s.grad.clone()))
        assert out[1][0] == pytest.approx(out[0][0], rel=1e-10, abs=1e-12)
        torch.testing.assert_close(out[1][1], out[0][1], rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(cells.duals, shared.duals, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(cells.target_duals, shared.target_duals, rtol=1e-10, atol=1e-12)
    assert float(shared.duals.abs().sum()) > 0


@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_sinkhorn_warning_points_at_the_callers_line(constraint):
    # One Sinkhorn iteration cannot converge: the warning must name this file, whichever path
    # (plain groups or (group, label) cells) reached the solver.
    torch.manual_seed(0)
    penalty = WassersteinParityPenalty(
        2, method="sinkhorn", sinkhorn_max_iter=1, sinkhorn_tol=1e-12, constraint=constraint
    )
    scores = torch.rand(40, dtype=torch.float64)
    codes = torch.arange(40) % 2
    labels = (torch.arange(40) // 2) % 2
    if constraint != "demographic_parity":
        penalty.set_cell_targets(np.linspace(0.1, 0.9, 4 * 5).reshape(4, 5))
    with pytest.warns(RuntimeWarning, match="Sinkhorn did not converge") as record:
        penalty(scores, codes, labels=labels)
    assert {w.filename for w in record} == {__file__}


def test_integer_weights_give_the_target_of_repeated_rows():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, 90)
    scores = rng.uniform(size=90)
    counts = rng.integers(1, 4, 90)
    member = np.eye(3, dtype=bool)[codes]
    weighted = barycenter_target(scores, member, counts.astype(float))
    repeated = barycenter_target(np.repeat(scores, counts), np.repeat(member, counts, axis=0))
    np.testing.assert_allclose(weighted, repeated, rtol=0, atol=1e-12)
