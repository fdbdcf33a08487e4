"""MetaBalancedTrainer under torch.distributed (gloo, 2 CPU processes).

The oracle is the single process with the doubled batch: 2 ranks with batch B must follow the
same margins and loss trajectory (float64, to rounding), and resume after a kill from rank 0's
checkpoint to the uninterrupted run's margins.
"""

import os
import signal
import socket

import numpy as np
import pytest
import torch
import torch.distributed as dist

from fairot.face import (
    Callback,
    GroupMarginLoss,
    History,
    MetaBalancedTrainer,
    MetaSkewnessLoss,
)

BATCH, N_STEPS, EVERY = 16, 6, 2


def _data():
    rng = np.random.default_rng(0)
    n_ids, per_id, n_groups = 24, 4, 3
    labels = np.repeat(np.arange(n_ids), per_id)
    groups = labels % n_groups
    centres = rng.normal(size=(n_ids, 10))
    x = centres[labels] + 0.3 * rng.normal(size=(len(labels), 10))
    return torch.as_tensor(x), torch.as_tensor(labels), torch.as_tensor(groups)


def _child(rank, world, port, conn, checkpoint, kill_at, meta_gradient):
    torch.set_num_threads(1)
    if world > 1:
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
        )
    torch.manual_seed(0)
    data = _data()
    trainer = MetaBalancedTrainer(
        # No BatchNorm: its batch statistics are per rank under DDP (as without SyncBatchNorm).
        torch.nn.Sequential(
            torch.nn.Linear(10, 12), torch.nn.PReLU(12), torch.nn.Linear(12, 6)
        ).double(),
        GroupMarginLoss(24, 6, 3, kind="arc", anchor_loss="softmax", scale=16.0).double(),
        meta_loss=MetaSkewnessLoss(selection_margin=None),
        margin_learning_rate=0.05,
        meta_gradient=meta_gradient,
        random_state=0,
    )
    if checkpoint is not None and os.path.exists(checkpoint):
        trainer.load_checkpoint(checkpoint)

    class Crash(Callback):
        def on_step_end(self, trainer, record):
            if rank == 0 and trainer.step_ == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    history = History()
    trainer.callbacks += [history, Crash()]
    trainer.fit(
        data,
        data,
        n_steps=N_STEPS,
        batch_size=BATCH // world,
        meta_batch_size=12,
        checkpoint_path=checkpoint,
        checkpoint_every=EVERY,
    )
    if rank == 0:
        conn.send((history.to_frame(), trainer.loss.group_margins().detach().numpy()))
    if world > 1:
        dist.destroy_process_group()


def _run(ctx, world, *, checkpoint=None, kill_at=None, meta_gradient="exact"):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    parent, child = ctx.Pipe()
    procs = [
        ctx.Process(target=_child, args=(r, world, port, child, checkpoint, kill_at, meta_gradient))
        for r in range(world)
    ]
    for p in procs:
        p.start()
    child.close()
    result = None
    try:
        if kill_at is None:
            result = parent.recv()
        procs[0].join(60)
    finally:
        for p in procs[1:]:
            if kill_at is not None:
                p.kill()  # its peer is gone: it would wait for the next all-reduce
            p.join(60)
        parent.close()
    return result, [p.exitcode for p in procs]


@pytest.mark.integration
@pytest.mark.parametrize("meta_gradient", ["exact", "forward-mode"])
def test_two_ranks_follow_one_process_with_the_doubled_batch(forkserver, meta_gradient):
    (one, m_one), codes = _run(forkserver, 1, meta_gradient=meta_gradient)
    assert codes == [0]
    (two, m_two), codes = _run(forkserver, 2, meta_gradient=meta_gradient)
    assert codes == [0, 0]
    assert one.shape == two.shape == (N_STEPS, two.shape[1])
    for column in one.columns:
        np.testing.assert_allclose(two[column], one[column], rtol=1e-9, atol=1e-12, err_msg=column)
    np.testing.assert_allclose(m_two, m_one, rtol=1e-10, atol=1e-12)
    assert np.ptp(one.filter(like="margin_").to_numpy(), axis=0).max() > 1e-4  # margins moved


@pytest.mark.integration
def test_two_ranks_resume_after_a_kill(forkserver, tmp_path):
    checkpoint = str(tmp_path / "checkpoint.pt")
    (full, m_full), _ = _run(forkserver, 2)
    _, codes = _run(forkserver, 2, checkpoint=checkpoint, kill_at=EVERY + 1)
    assert codes[0] == -signal.SIGKILL
    assert torch.load(checkpoint, weights_only=True)["step"] == EVERY
    (rest, m_rest), codes = _run(forkserver, 2, checkpoint=checkpoint)
    assert codes == [0, 0]
    assert rest["step"].tolist() == list(range(EVERY, N_STEPS))
    tail = full[full["step"] >= EVERY].reset_index(drop=True)
    for column in tail.columns:
        np.testing.assert_allclose(rest[column], tail[column], rtol=1e-12, err_msg=column)
    np.testing.assert_allclose(m_rest, m_full, rtol=1e-12)


# ---------------------------------------------------------------- a distributed environment
# Stray variables of a launcher: one clear error, or a stated wait with a stated timeout.

_ENV = ("WORLD_SIZE", "RANK", "MASTER_ADDR", "MASTER_PORT")


@pytest.fixture
def clean_env(monkeypatch):
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize("world", [None, "1"])
def test_a_stray_rank_without_a_launcher_is_one_clear_error(clean_env, world):
    from fairot.face import _distributed

    clean_env.setenv("RANK", "1")
    if world is not None:
        clean_env.setenv("WORLD_SIZE", world)
    with pytest.raises(ValueError, match="RANK=1 is set but WORLD_SIZE is 1") as caught:
        _distributed.init_from_environment("cpu")
    assert "Unset RANK" in str(caught.value)
    assert not dist.is_initialized()


@pytest.mark.parametrize(
    ("env", "match"),
    [
        ({"WORLD_SIZE": "two"}, "WORLD_SIZE='two' in the environment must be an integer >= 1"),
        ({"WORLD_SIZE": "0"}, "WORLD_SIZE='0'"),
        ({"WORLD_SIZE": "2", "RANK": "-1"}, "RANK='-1'"),
        ({"WORLD_SIZE": "2", "RANK": "2"}, "RANK='2' .* below WORLD_SIZE=2"),
        ({"WORLD_SIZE": "2", "RANK": "1"}, "MASTER_ADDR and MASTER_PORT are not set"),
        ({"WORLD_SIZE": "2", "RANK": "1", "MASTER_ADDR": "127.0.0.1"}, "MASTER_PORT is not"),
    ],
)
def test_a_malformed_distributed_environment_is_one_clear_error(clean_env, env, match):
    from fairot.face import _distributed

    for name, value in env.items():
        clean_env.setenv(name, value)
    with pytest.raises(ValueError, match=match):
        _distributed.init_from_environment("cpu")
    assert not dist.is_initialized()


def test_a_rank_says_it_waits_and_gives_up_after_the_stated_timeout(clean_env, capsys):
    from fairot.face import _distributed

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"WORLD_SIZE": "2", "RANK": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
    for name, value in env.items():
        clean_env.setenv(name, value)
    clean_env.setattr(_distributed, "RENDEZVOUS_TIMEOUT_S", 1)
    with pytest.raises(ValueError, match="the other processes did not join .* within 1 s"):
        _distributed.init_from_environment("cpu")
    said = capsys.readouterr().err
    assert f"rank 1 of 2 waits up to 1 s for the other processes at 127.0.0.1:{port}" in said
    assert not dist.is_initialized()


def test_face_train_with_a_stray_rank_prints_one_error_line(clean_env, tmp_path, capsys):
    import fairot.face
    from fairot.cli import main

    clean_env.setattr(fairot.face, "keep_freed_memory", lambda: True)  # not in this process
    config = tmp_path / "c.json"
    config.write_text('{"train_root": "x", "train_groups_csv": "y.csv", "method": "arcface"}')
    clean_env.setenv("RANK", "1")
    assert main(["face", "train", "--config", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "RANK=1 is set but WORLD_SIZE is 1" in err[0]
