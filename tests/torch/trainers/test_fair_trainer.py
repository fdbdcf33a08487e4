"""FairTrainer: schedule, determinism, the fixed target, early stopping, overlapping groups,
resuming after a kill."""

import copy
import multiprocessing
import re

import numpy as np
import pandas as pd
import pytest
import torch

from fairot.classification import DivergenceError
from fairot.metrics import wass1
from fairot.torch import FairTrainer, WassersteinParityPenalty
from fairot.torch.trainers import CHECKPOINT_FIT_ERROR, Callback, read_checkpoint
from fairot.torch.trainers._data import MSG_GROUPS, MSG_LABELS
from fairot.torch.trainers._fair_trainer import MSG_PARAM
from tests.helpers import make_biased, shifted_groups


def _data(seed=0, n=600):
    return shifted_groups(
        n, seed, noise_column=True, group_column=True, dtype=np.float32, label_dtype=np.float32
    )


def _model(seed=0, d=3):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(d, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))


def _trainer(model, **kwargs):
    params = {"lam": 3.0, "n_epochs": 8, "warmup_epochs": 3, "batch_size": 128, "random_state": 0}
    return FairTrainer(model, WassersteinParityPenalty(2, method="dot"), **{**params, **kwargs})


def test_lam_schedule():
    trainer = _trainer(_model(), lam=2.0, warmup_epochs=2, lam_ramp_epochs=4)
    assert [trainer.lam_at(e) for e in range(7)] == [0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 2.0]
    custom = _trainer(_model(), lam=lambda e: 0.1 * e)
    assert custom.lam_at(3) == pytest.approx(0.3)


def test_deterministic_with_random_state():
    X, y, a = _data()
    runs = []
    for _ in range(2):
        model = _model()
        _trainer(model).fit(X, y, a)
        runs.append(torch.cat([p.detach().ravel() for p in model.parameters()]))
    assert torch.equal(runs[0], runs[1])


def test_penalty_reduces_wass1_against_plain_cross_entropy():
    X, y, a = _data(1)
    Xv, yv, av = _data(2)
    scores = {}
    for lam in (0.0, 3.0):
        model = _model()
        trainer = _trainer(model, lam=lam, n_epochs=20).fit(X, y, a)
        scores[lam] = trainer.predict_scores(Xv)
    # fairot.metrics.wass1 (checked against scipy) on held-out data.
    assert wass1(None, scores[3.0], sensitive_features=av) < 0.5 * wass1(
        None, scores[0.0], sensitive_features=av
    )


def test_target_fixed_after_warmup_and_early_stopping_restores_best():
    X, y, a = _data(3)
    Xv, yv, av = _data(4)
    model = _model()
    trainer = _trainer(model, n_epochs=10, patience=3).fit(X, y, a, eval_set=(Xv, yv, av))
    assert np.all(np.diff(trainer.target_samples_) >= 0)
    assert torch.equal(
        trainer.penalty.target_samples,
        torch.as_tensor(trainer.target_samples_, dtype=torch.float64),
    )
    history = trainer.history_
    penalised = history[history.lam > 0]
    assert trainer.best_epoch_ == int(penalised.loc[penalised.val_wass1.idxmin(), "epoch"])
    # The restored model is the best epoch's: its validation Wass1 to the fixed target, by
    # fairot.metrics.wass1, is the recorded one.
    s = trainer.predict_scores(Xv)
    assert wass1(
        None, s, sensitive_features=av, reference=trainer.target_samples_
    ) == pytest.approx(penalised.val_wass1.min(), abs=1e-9)


def test_overlapping_groups_as_membership_matrix():
    X, y, a = _data(5)
    b = (X[:, 1] > 0).astype(int)
    membership = np.column_stack([a == 0, a == 1, b == 0, b == 1])
    model = _model()
    trainer = FairTrainer(
        model, WassersteinParityPenalty(4, method="dot"), lam=3.0, n_epochs=6, warmup_epochs=2,
        batch_size=128, random_state=0,
    ).fit(X, y, membership)  # fmt: skip
    assert trainer.target_samples_ is not None and trainer.history_.shape[0] == 6


def test_divergence_raises_with_advice():
    X, y, a = _data(6)
    trainer = _trainer(_model(), learning_rate=1e30)
    with pytest.raises(DivergenceError, match="Lower learning_rate"):
        trainer.fit(X, y, a)
    with pytest.raises(ValueError, match="lam\\(0\\) must be a finite non-negative weight"):
        _trainer(_model(), lam=lambda e: float("nan")).fit(X, y, a)


def test_validation_messages():
    X, y, a = _data(7)
    model = _model()
    with pytest.raises(
        ValueError,
        match=re.escape(
            MSG_PARAM.format(name="lam", expected="a non-negative number or a callable", value=-1)
        ),
    ):
        _trainer(model, lam=-1)
    with pytest.raises(
        ValueError,
        match=re.escape(MSG_PARAM.format(name="n_epochs", expected="an integer >= 1", value=0)),
    ):
        _trainer(model, n_epochs=0)
    with pytest.raises(TypeError, match="penalty must be a WassersteinParityPenalty"):
        FairTrainer(model, torch.nn.MSELoss())
    with pytest.raises(ValueError, match=re.escape(MSG_LABELS.format(low=0.0, high=3.0))):
        _trainer(model).fit(X, np.where(y > 0, 2.0, y) + (y > 0), a)
    with pytest.raises(ValueError, match=re.escape(MSG_GROUPS.split("with")[0])):
        _trainer(model).fit(X, y, a + 5)


def test_inputs_not_mutated():
    X, y, a = _data(8)
    X0, y0, a0 = X.copy(), y.copy(), a.copy()
    _trainer(_model(), n_epochs=4).fit(X, y, a)
    assert np.array_equal(X, X0) and np.array_equal(y, y0) and np.array_equal(a, a0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("method", ["cot", "dot"])
def test_cuda_training_matches_cpu(method):
    # The same seeded run on the GPU and on the CPU (float64, so that only the order of
    # floating-point sums differs): the same history to 1e-6 and predictions to 1e-6.
    X, y, a = _data(3)
    runs = []
    for device in ("cpu", "cuda"):
        penalty = WassersteinParityPenalty(2, method=method, random_state=0).double()
        trainer = FairTrainer(
            _model(0).double(), penalty, lam=2.0, n_epochs=4, warmup_epochs=2, batch_size=128,
            random_state=0, device=device,
        )  # fmt: skip
        trainer.fit(X, y, a)
        runs.append((trainer.history_, trainer.predict_scores(X)))
    (h_cpu, p_cpu), (h_gpu, p_gpu) = runs
    np.testing.assert_allclose(h_gpu["loss"], h_cpu["loss"], atol=1e-6)
    np.testing.assert_allclose(p_gpu, p_cpu, atol=1e-6)


# ----------------------------------------------------------------- resume after a kill
class _Crash(Exception):
    pass


class _CrashAt(Callback):
    """Dies after epoch ``epoch`` (after its checkpoint), as a killed process would."""

    def __init__(self, epoch):
        self.epoch = epoch
        self.epochs = []

    def on_epoch_end(self, trainer, record):
        self.epochs.append(record["epoch"])

    def on_checkpoint(self, trainer, path):
        if trainer.state_dict()["epoch"] == self.epoch + 1:
            raise _Crash  # before the checkpoint of this epoch: the previous one stays


def _resumable(**kwargs):
    params = {
        "lam": 3.0,
        "n_epochs": 9,
        "warmup_epochs": 3,
        "batch_size": 128,
        "random_state": 0,
        "lr_schedule": "cosine",
        "patience": 3,
    }
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 16), torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(16, 1)
    )
    torch.manual_seed(0)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    penalty = WassersteinParityPenalty(2, method="cot", n_fourier_features=8, random_state=0)
    return FairTrainer(model, penalty, **{**params, **kwargs})


@pytest.mark.parametrize("crash_epochs", [(1,), (2, 3, 5), (7,)])
def test_fair_trainer_resumes_after_a_kill_as_an_uninterrupted_run(tmp_path, crash_epochs):
    X, y, a = _data()
    Xv, yv, av = _data(seed=1, n=300)
    fit = {"eval_set": (Xv, yv, av), "checkpoint_path": tmp_path / "straight.pt"}
    torch.manual_seed(1)
    straight = _resumable().fit(X, y, a, **fit)
    fit["checkpoint_path"] = checkpoint = tmp_path / "killed.pt"
    torch.manual_seed(1)
    for crash in crash_epochs:
        trainer = _resumable(callbacks=[_CrashAt(crash)])
        if checkpoint.exists():
            torch.manual_seed(123)  # a new process: torch's generator elsewhere
            trainer.load_checkpoint(checkpoint)
        with pytest.raises(_Crash):
            trainer.fit(X, y, a, **fit)
        assert read_checkpoint(checkpoint)["epoch"] == crash  # epochs 0 .. crash - 1 done
    torch.manual_seed(123)
    resumed = _resumable().load_checkpoint(checkpoint).fit(X, y, a, **fit)
    pd.testing.assert_frame_equal(resumed.history_, straight.history_)
    assert resumed.best_epoch_ == straight.best_epoch_
    assert resumed.n_steps_ == straight.n_steps_
    np.testing.assert_array_equal(resumed.target_samples_, straight.target_samples_)
    for p, q in zip(resumed.model.parameters(), straight.model.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    for key, value in straight.penalty.state_dict().items():
        torch.testing.assert_close(resumed.penalty.state_dict()[key], value, rtol=0, atol=0)


def test_fair_trainer_checkpoint_refused_by_another_model_leaves_it_as_it_was(tmp_path):
    X, y, a = _data()
    path = tmp_path / "c.pt"
    _resumable(n_epochs=4).fit(X, y, a, checkpoint_path=path)
    other = FairTrainer(_model(), WassersteinParityPenalty(2, method="dot"), n_epochs=4)
    before = copy.deepcopy(other.model.state_dict())
    with pytest.raises(ValueError, match=CHECKPOINT_FIT_ERROR.split("{")[0]):
        other.load_checkpoint(path)
    for key, value in before.items():
        torch.testing.assert_close(other.model.state_dict()[key], value, rtol=0, atol=0)
    assert other.fit(X, y, a).history_.shape[0] == 4  # a fresh run, not a resumed one
    with pytest.raises(ValueError, match="checkpoint_every must be"):
        other.fit(X, y, a, checkpoint_path=path, checkpoint_every=0)


def _kill_child(path, conn):
    """Fit with checkpoints in a child process; report each epoch; resume from ``path``."""
    torch.set_num_threads(1)

    class Report(Callback):
        def on_epoch_end(self, trainer, record):
            conn.send(record["epoch"])

    X, y, a = _data()
    trainer = _resumable(callbacks=[Report()], patience=None)
    if path.exists():
        trainer.load_checkpoint(path)
    trainer.fit(X, y, a, checkpoint_path=path)
    conn.send("done")


@pytest.mark.integration
def test_fair_trainer_survives_sigkill(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    X, y, a = _data()
    torch.manual_seed(0)
    straight = _resumable(patience=None).fit(X, y, a)
    path = tmp_path / "checkpoint.pt"
    for kill_after in (2, 5, None):
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_kill_child, args=(path, child))
        proc.start()
        child.close()
        try:
            while (event := parent.recv()) != "done":
                if event == kill_after:
                    proc.kill()
                    break
        finally:
            proc.join(60)
            parent.close()
    resumed = _resumable(patience=None).load_checkpoint(path)
    assert read_checkpoint(path)["epoch"] == 9
    for p, q in zip(resumed.model.parameters(), straight.model.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)


def test_random_state_none_is_drawn_from_numpy_global_stream():
    """``None`` reads numpy's global generator once (check_random_state), so np.random.seed
    fixes the run; an int and ``RandomState(int)`` are the same stream."""
    X, y, a = make_biased(n=120, seed=5)

    def history(random_state):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1).double()
        trainer = FairTrainer(
            model,
            WassersteinParityPenalty(2, method="dot"),
            n_epochs=3,
            warmup_epochs=1,
            random_state=random_state,
        )
        return trainer.fit(X, y, a).history_

    np.random.seed(11)
    first = history(None)
    np.random.seed(11)
    pd.testing.assert_frame_equal(history(None), first)
    pd.testing.assert_frame_equal(history(4), history(np.random.RandomState(4)))
