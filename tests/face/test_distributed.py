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
    assert torch.load(checkpoint, weights_only=False)["step"] == EVERY
    (rest, m_rest), codes = _run(forkserver, 2, checkpoint=checkpoint)
    assert codes == [0, 0]
    assert rest["step"].tolist() == list(range(EVERY, N_STEPS))
    tail = full[full["step"] >= EVERY].reset_index(drop=True)
    for column in tail.columns:
        np.testing.assert_allclose(rest[column], tail[column], rtol=1e-12, err_msg=column)
    np.testing.assert_allclose(m_rest, m_full, rtol=1e-12)
