"""Checkpoints survive SIGKILL, history equals an uninterrupted run's, CLI runs repeat bit for bit.

The oracle is the uninterrupted run itself: a run killed 20 times (mid-write or between
checkpoints) and resumed must end with the same bytes of ``history.csv`` and the same tensors.
"""

import io
import json
import time

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from fairot.cli import main
from fairot.face import MLP, GroupMarginLoss, MetaBalancedTrainer, MetaSkewnessLoss
from fairot.face.checkpoint import CHECKPOINT_FIT_ERROR, read_checkpoint

CHECKPOINT_EVERY = 3
N_KILLS = 20


def _faces(root, n_ids=8, per_id=3, size=8, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n_ids):
        name = f"id{k:02d}"
        (root / name).mkdir(parents=True)
        base = rng.integers(0, 256, size=(size, size, 3))
        for i in range(1, per_id + 1):
            noisy = np.clip(base + rng.normal(0, 20, size=base.shape), 0, 255).astype(np.uint8)
            Image.fromarray(noisy).save(root / name / f"{name}_{i:04d}.png")
        rows.append((name, ["light", "dark"][k % 2]))
    csv = root.parent / f"{root.name}.csv"
    pd.DataFrame(rows, columns=["identity", "group"]).to_csv(csv, index=False)
    return csv


def _config(tmp_path, out, **overrides):
    if not (tmp_path / "train").exists():
        _faces(tmp_path / "train")
        _faces(tmp_path / "meta", seed=1)
    config = {
        "train_root": str(tmp_path / "train"),
        "train_groups_csv": str(tmp_path / "train.csv"),
        "meta_root": str(tmp_path / "meta"),
        "meta_groups_csv": str(tmp_path / "meta.csv"),
        "method": "mbn-arc",
        "backbone": "mlp",
        "embedding_size": 8,
        "image_size": 8,
        "n_steps": CHECKPOINT_EVERY * (N_KILLS + 2),
        "batch_size": 8,
        "meta_batch_size": 8,
        "lr_milestones": [30],
        "margin_milestones": [30],
        "margin_learning_rate": 0.05,
        "scale": 16.0,
        "selection_margin": None,
        "device": "cpu",
        "num_workers": 0,
        "out_dir": str(tmp_path / out),
        "checkpoint_every": CHECKPOINT_EVERY,
        **overrides,
    }
    path = tmp_path / f"{out}.json"
    path.write_text(json.dumps(config))
    return path


def _train_child(config_path, conn, pause_at):
    """Train; report every step and the middle of every checkpoint write, pause at one."""
    from fairot.face import Callback, load_config, train_from_config

    real_save = torch.save

    def slow_save(obj, f):
        buffer = io.BytesIO()
        real_save(obj, buffer)
        data = buffer.getvalue()
        f.write(data[: len(data) // 2])
        f.flush()
        conn.send(("mid-write", obj["step"]))
        if obj["step"] == pause_at:
            time.sleep(30)  # the parent kills us here, half of the checkpoint on disk
        f.write(data[len(data) // 2 :])

    class Report(Callback):
        def on_step_end(self, trainer, record):
            conn.send(("step", trainer.step_))

    torch.save = slow_save
    torch.set_num_threads(1)
    train_from_config(load_config(config_path), progress=False, callbacks=[Report()])
    conn.send(("done", None))


def _run_child(ctx, config_path, *, kill_at=None):
    """Run the child until it sends the event ``kill_at`` (then SIGKILL it) or finishes."""
    parent, child = ctx.Pipe()
    pause_at = kill_at[1] if kill_at is not None and kill_at[0] == "mid-write" else None
    proc = ctx.Process(target=_train_child, args=(config_path, child, pause_at))
    proc.start()
    child.close()
    killed = False
    try:
        while True:
            event = parent.recv()
            if event == kill_at:
                proc.kill()
                killed = True
                break
            if event[0] == "done":
                break
    finally:
        proc.join(30)
        parent.close()
    return killed, proc.exitcode


@pytest.mark.integration
def test_twenty_sigkills_then_resume_equal_an_uninterrupted_run(tmp_path, forkserver):
    ctx = forkserver
    reference = _config(tmp_path, "reference")
    killed = _config(tmp_path, "killed")
    _, code = _run_child(ctx, reference)
    assert code == 0
    checkpoint = tmp_path / "killed" / "checkpoint.pt"
    resumes = 0
    for attempt in range(N_KILLS):
        start = read_checkpoint(checkpoint)["step"] if checkpoint.exists() else 0
        if attempt % 2 == 0:
            # mid-write of the second checkpoint of this run: the first one must survive
            target = ("mid-write", start + 2 * CHECKPOINT_EVERY)
        else:
            # between checkpoints: history.csv must neither lose nor repeat these steps
            target = ("step", start + CHECKPOINT_EVERY + 1)
        was_killed, code = _run_child(ctx, killed, kill_at=target)
        assert was_killed and code == -9, (attempt, target, code)
        state = read_checkpoint(checkpoint)  # raises a clear error when torn
        assert state["step"] == start + CHECKPOINT_EVERY
        resumes += 1
    assert resumes == N_KILLS
    _, code = _run_child(ctx, killed)
    assert code == 0
    assert not list((tmp_path / "killed").glob(".*.tmp"))  # the torn temporaries were cleared
    got = (tmp_path / "killed" / "history.csv").read_bytes()
    want = (tmp_path / "reference" / "history.csv").read_bytes()
    assert got == want
    steps = pd.read_csv(tmp_path / "killed" / "history.csv")["step"].tolist()
    assert steps == list(range(CHECKPOINT_EVERY * (N_KILLS + 2)))
    a = read_checkpoint(checkpoint)
    b = read_checkpoint(tmp_path / "reference" / "checkpoint.pt")
    for part in ("model", "loss"):
        assert a[part].keys() == b[part].keys()
        for key in a[part]:
            assert torch.equal(a[part][key], b[part][key]), (part, key)


def test_two_cli_runs_with_one_seed_are_bit_identical(tmp_path):
    states = []
    for run, global_seed in (("one", 1), ("two", 2)):
        config = _config(tmp_path, run, n_steps=4, checkpoint_every=2)
        torch.manual_seed(global_seed)  # the run must not depend on torch's global state
        assert main(["face", "train", "--config", str(config), "--no-progress"]) == 0
        states.append(read_checkpoint(tmp_path / run / "checkpoint.pt"))
    for part in ("model", "loss"):
        for key in states[0][part]:
            assert torch.equal(states[0][part][key], states[1][part][key]), (part, key)
    history = [(tmp_path / run / "history.csv").read_bytes() for run in ("one", "two")]
    assert history[0] == history[1]


def test_torn_checkpoint_is_a_one_line_error_naming_the_file(tmp_path, capsys):
    config = _config(tmp_path, "run", n_steps=2, checkpoint_every=1)
    assert main(["face", "train", "--config", str(config), "--no-progress"]) == 0
    capsys.readouterr()
    checkpoint = tmp_path / "run" / "checkpoint.pt"
    checkpoint.write_bytes(checkpoint.read_bytes()[:1000])
    config = _config(tmp_path, "run", n_steps=3, checkpoint_every=1)
    assert main(["face", "train", "--config", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(checkpoint) in err and "truncated" in err


def test_checkpoint_of_another_architecture_is_a_one_line_error(tmp_path, capsys):
    config = _config(tmp_path, "run", n_steps=1, checkpoint_every=1)
    assert main(["face", "train", "--config", str(config), "--no-progress"]) == 0
    capsys.readouterr()
    config = _config(tmp_path, "run", n_steps=2, embedding_size=16)
    assert main(["face", "train", "--config", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert str(tmp_path / "run" / "checkpoint.pt") in err and "does not fit" in err


def test_failed_load_leaves_the_trainer_as_it_was(tmp_path):
    def trainer(width):
        torch.manual_seed(0)
        return MetaBalancedTrainer(
            MLP(4, embedding_size=width, hidden_sizes=(6,)),
            GroupMarginLoss(4, width, 2),
            meta_loss=MetaSkewnessLoss(),
            random_state=0,
        )

    trainer(8).save_checkpoint(tmp_path / "c.pt")
    other = trainer(5)
    before = {k: v.clone() for k, v in other.model.state_dict().items()}
    with pytest.raises(ValueError, match=CHECKPOINT_FIT_ERROR.split("{")[0]):
        other.load_checkpoint(tmp_path / "c.pt")
    for key, value in other.model.state_dict().items():
        assert torch.equal(value, before[key])


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("n_steps", "10", "'n_steps' must be an int >= 0; got '10'"),
        ("n_steps", -1, "'n_steps' must be an int >= 0; got -1"),
        ("batch_size", 2.5, "'batch_size' must be an int >= 1"),
        ("learning_rate", "0.1", "'learning_rate' must be a finite number > 0"),
        ("device", "nonsense", "device='nonsense' is not usable here"),
    ],
)
def test_bad_config_values_exit_2_with_one_line(tmp_path, capsys, key, value, message):
    config = _config(tmp_path, "run", **{key: value})
    assert main(["face", "train", "--config", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")
def test_cuda_without_a_gpu_exits_2_with_one_line(tmp_path, capsys):
    config = _config(tmp_path, "run", device="cuda")
    assert main(["face", "train", "--config", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "device='cuda' is not usable here" in err
    with pytest.raises(ValueError, match="device='cuda' is not usable here"):
        MetaBalancedTrainer(MLP(4, embedding_size=2), GroupMarginLoss(3, 2, 2), device="cuda")


@pytest.mark.parametrize("n_steps", ["3", -1, 2.0, True])
def test_fit_rejects_bad_n_steps(n_steps):
    x = torch.randn(8, 4)
    y = torch.arange(4).repeat(2)
    trainer = MetaBalancedTrainer(
        MLP(4, embedding_size=2), GroupMarginLoss(4, 2, 2), random_state=0
    )
    with pytest.raises(ValueError, match="n_steps must be an int >= 0"):
        trainer.fit((x, y, y % 2), n_steps=n_steps, batch_size=4)


@pytest.mark.slow  # three interpreters start torch: a minute on a busy machine
def test_cli_nproc_2_trains_like_one_process(tmp_path, capsys):
    one = _config(tmp_path, "one", n_steps=4, checkpoint_every=2, backbone="mlp")
    two = _config(tmp_path, "two", n_steps=4, checkpoint_every=2, backbone="mlp")
    assert main(["face", "train", "--config", str(one), "--no-progress"]) == 0
    assert main(["face", "train", "--config", str(two), "--no-progress", "--nproc", "2"]) == 0
    a = pd.read_csv(tmp_path / "one" / "history.csv")
    b = pd.read_csv(tmp_path / "two" / "history.csv")
    assert b["step"].tolist() == [0, 1, 2, 3]
    # BatchNorm in the MLP sees half a batch per rank: close, not equal (see test_distributed)
    np.testing.assert_allclose(b["margin_1"], a["margin_1"], atol=0.05)
    assert read_checkpoint(tmp_path / "two" / "checkpoint.pt")["step"] == 4


def test_nproc_must_divide_the_batch(tmp_path, capsys):
    config = _config(tmp_path, "run", batch_size=8)
    assert main(["face", "train", "--config", str(config), "--nproc", "3"]) == 2
    assert "--nproc must be an int >= 1 that divides" in capsys.readouterr().err


def test_evaluate_with_a_checkpoint_of_another_architecture_is_one_line(tmp_path, capsys):
    config = _config(tmp_path, "run", n_steps=1, checkpoint_every=1)
    assert main(["face", "train", "--config", str(config), "--no-progress"]) == 0
    capsys.readouterr()
    other = _config(tmp_path, "run", embedding_size=16)
    args = ["face", "evaluate", "--config", str(other), "--pairs", "p.txt", "--images", "."]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert str(tmp_path / "run" / "checkpoint.pt") in err and "does not fit" in err
