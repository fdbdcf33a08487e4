"""Time one MBN step (Algorithm 1: look-ahead, meta step, model step) over one plain ArcFace step.

Run: ``python benchmarks/bench_face.py [--device cuda] [--backbones mlp,iresnet18,iresnet50]``.
Same model, same training batch (32), a meta batch of 32; the baseline is a plain ArcFace step of
the same trainer with the meta step off, measured in the same run. Theory: about 3x (one extra
backward with ``create_graph``, the meta forward and its double backward). Also times MBN with
the look-ahead restricted to the last layers (``lookahead=4``) and MBN reusing the look-ahead
gradient for the model step (``reuse_lookahead_gradient=True``), the exact forward-mode meta
gradient (``meta_gradient="forward-mode"``: a Jacobian-vector product through the backbone, double
backward through the loss head only), alone and with reuse, and the finite-difference meta
gradient (``meta_gradient="finite-difference"``, no double backward).
``--ddp 1,2`` times MBN(arc) steps per second of the trainer under ``torch.distributed`` (gloo on
CPU, NCCL with one GPU per process) at one global batch split over 1 and 2 processes.
Prints the median of REPEATS steps after a warm-up, and the peak GPU memory when on CUDA. Each
MBN variant runs in a fresh process, its steps interleaved with ArcFace steps (a shared machine's
load drift cancels, and no variant inherits the heap another left behind: with all variants in
one process, ``--together``, the forward-mode step measured 3.7x instead of 3.4x on CPU); the
ratio is against that process's own ArcFace steps.

On CPU the steps are timed twice (``--allocator both``): with glibc's default allocator, which
hands every tensor over 32 MiB back to the kernel when freed, so that the next step page-faults
the same memory in again; then with freed memory kept for reuse (``mallopt``: no ``mmap``, no
trimming), as CUDA's caching allocator does by default and as PyTorch's CPU tuning guide does with
jemalloc or tcmalloc. An MBN step holds more memory at once than a plain step, so the default
allocator penalises it more.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time

import torch

import fairot
from fairot.face import (
    MLP,
    ArcFaceLoss,
    GroupMarginLoss,
    MetaBalancedTrainer,
    MetaSkewnessLoss,
    iresnet18,
    iresnet34,
    iresnet50,
    keep_freed_memory,
)

N_CLASSES, N_GROUPS, BATCH = 1000, 4, 32


def _batches(kind: str, device):
    g = torch.Generator().manual_seed(0)
    shape = (BATCH, 64) if kind == "mlp" else (BATCH, 3, 112, 112)
    labels = torch.randint(0, N_CLASSES, (BATCH,), generator=g)
    groups = torch.randint(0, N_GROUPS, (BATCH,), generator=g)
    batch = (torch.randn(*shape, generator=g), labels, groups)
    # meta batch: 4 groups x 4 identities x 2 images
    meta_labels = torch.arange(16).repeat_interleave(2)
    meta = (torch.randn(*shape, generator=g), meta_labels, meta_labels // 4)
    return [tuple(t.to(device) for t in b) for b in (batch, meta)]


def _model(kind: str):
    if kind == "mlp":
        return MLP(64, embedding_size=128, hidden_sizes=(512, 512))  # 64 -> 512 -> 512 -> 128
    return {"iresnet18": iresnet18, "iresnet34": iresnet34, "iresnet50": iresnet50}[kind]()


def _trainer(kind: str, meta: bool, device, lookahead="all", reuse=False, gradient="exact"):
    torch.manual_seed(0)
    model = _model(kind)
    emb = model.embedding_size
    if meta:
        loss = GroupMarginLoss(N_CLASSES, emb, N_GROUPS, kind="arc", init_margin=0.3)
        meta_loss = MetaSkewnessLoss(selection_margin=None, n_groups=N_GROUPS)
    else:
        loss, meta_loss = ArcFaceLoss(N_CLASSES, emb, margin=0.3), None
    return MetaBalancedTrainer(
        model,
        loss,
        meta_loss=meta_loss,
        lookahead=lookahead,
        reuse_lookahead_gradient=reuse,
        meta_gradient=gradient,
        device=device,
        random_state=0,
    )


#: The MBN variants: column label and trainer options.
VARIANTS = {
    "mbn": ("MBN exact", {}),
    "fwd": ("MBN fwd", {"gradient": "forward-mode"}),
    "reuse": ("MBN reuse", {"reuse": True}),
    "fwd+reuse": ("fwd+reuse", {"reuse": True, "gradient": "forward-mode"}),
    "fd": ("MBN fd", {"reuse": True, "gradient": "finite-difference"}),
    "last4": ("MBN last-4", {"lookahead": 4}),
}


def _step_times(kind: str, device, repeats: int, names: list[str]) -> dict[str, float]:
    """Median step time of each variant; steps are interleaved so that load drifts cancel."""
    variants = {"arcface": _trainer(kind, False, device)}
    variants.update({name: _trainer(kind, True, device, **VARIANTS[name][1]) for name in names})
    batch, meta_batch = _batches(kind, device)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(repeats + 2):  # two warm-up rounds
        for name, trainer in variants.items():
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            trainer.train_step(batch, None if name == "arcface" else meta_batch)
            if device.type == "cuda":
                torch.cuda.synchronize()
            if i >= 2:
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--backbones", default="mlp,iresnet18")
    parser.add_argument("--repeats", type=int, default=0, help="0: 30 for the MLP, 5 otherwise")
    parser.add_argument(
        "--threads", type=int, default=1, help="CPU threads (1: a shared machine oversubscribes)"
    )
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help="comma-separated: " + ",".join(VARIANTS)
    )
    parser.add_argument(
        "--allocator",
        choices=("default", "cached", "both"),
        default="both",
        help="CPU only: time with glibc's default allocator, with freed memory kept, or both",
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="all variants interleaved in this process (default: each variant in its own "
        "process, interleaved with its own ArcFace steps)",
    )
    parser.add_argument(
        "--ddp",
        default="",
        help="comma-separated process counts, e.g. 1,2: MBN steps/s of MetaBalancedTrainer under "
        "torch.distributed (gloo on CPU, NCCL with one GPU per process) at one global batch",
    )
    parser.add_argument("--ddp-batch", type=int, default=64, help="global batch of --ddp")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.set_num_threads(args.threads)
    if args.ddp:
        _ddp_table(args)
        return
    if args.json:  # a child of _pair_in_child: one table, one JSON line
        if args.allocator == "cached":
            keep_freed_memory()
        _table(args, device, args.allocator)
        return
    print(
        f"fairot {fairot.__version__}, torch {torch.__version__}, {platform.processor() or 'cpu'}"
        f", {torch.get_num_threads()} threads, device {device}"
    )
    if device.type == "cuda":
        print(f"GPU: {torch.cuda.get_device_name(device)}")
        _table(args, device, "cuda caching")
        return
    if args.allocator in ("default", "both"):
        _table(args, device, "glibc default")
    if args.allocator in ("cached", "both"):
        if keep_freed_memory():
            _table(args, device, "memory kept")
        else:
            print("(cannot set glibc's mallopt here: the cached-allocator table is skipped)")


def _ddp_worker(rank, world, port, args, kind, queue) -> None:
    """One rank: MBN(arc) steps of the global batch split over ``world`` processes."""
    import torch.distributed as dist

    cuda = args.device.startswith("cuda")
    device = torch.device(f"cuda:{rank}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.set_num_threads(args.threads)
    dist.init_process_group(
        "nccl" if cuda else "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world,
    )
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    n = 8 * args.ddp_batch
    shape = (n, 64) if kind == "mlp" else (n, 3, 112, 112)
    labels = torch.arange(n) // 4  # 4 images per identity: positive pairs for the meta batch
    data = (torch.randn(*shape, generator=g), labels, labels % N_GROUPS)
    trainer = _trainer(kind, True, device)
    repeats = args.repeats or (30 if kind == "mlp" else 5)
    fit = {"batch_size": args.ddp_batch // world, "meta_batch_size": 32}
    trainer.fit(data, data, n_steps=3, **fit)  # warm-up
    dist.barrier()
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    trainer.fit(data, data, n_steps=3 + repeats, **fit)
    if cuda:
        torch.cuda.synchronize()
    dist.barrier()
    if rank == 0:
        queue.put(repeats / (time.perf_counter() - start))
    dist.destroy_process_group()


def _ddp_table(args) -> None:
    """Steps/s of MBN(arc) at each process count, one global batch; the ratio to 1 process."""
    import socket

    import torch.multiprocessing as mp

    counts = [int(c) for c in args.ddp.split(",")]
    print(
        f"fairot {fairot.__version__}, torch {torch.__version__}, DDP on {args.device} "
        f"({'NCCL' if args.device.startswith('cuda') else 'gloo'}), {args.threads} thread(s) per "
        f"process, global batch {args.ddp_batch}, meta batch 32, exact meta gradient"
    )
    ctx = mp.get_context("spawn")
    for kind in args.backbones.split(","):
        base = None
        for world in counts:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            queue = ctx.SimpleQueue()
            mp.spawn(_ddp_worker, args=(world, port, args, kind, queue), nprocs=world)
            rate = queue.get()
            base = base or rate
            print(f"{kind:10s} {world} process(es): {rate:7.2f} steps/s  ({rate / base:.2f}x)")


def _pair_in_child(args, kind: str, name: str, allocator: str) -> dict[str, float]:
    """Time ``name`` against ArcFace in a fresh process: nothing left by another variant."""
    command = [
        sys.executable,
        __file__,
        f"--device={args.device}",
        f"--backbones={kind}",
        f"--variants={name}",
        f"--repeats={args.repeats}",
        f"--threads={args.threads}",
        f"--allocator={'cached' if allocator == 'memory kept' else 'default'}",
        "--together",
        "--json",
    ]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.splitlines()[-1])


def _table(args, device, allocator: str) -> None:
    if not args.json:
        print(f"allocator: {allocator}")
    columns = [(name, VARIANTS[name][0]) for name in args.variants.split(",")]
    header = f"{'model':10s} {'ArcFace':>9s}"
    header += "".join(f" {label:>10s} {'ratio':>6s}" for _, label in columns)
    if not args.json:
        print(header)
    for kind in args.backbones.split(","):
        repeats = args.repeats or (30 if kind == "mlp" else 5)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        if args.together:
            t = _step_times(kind, device, repeats, [name for name, _ in columns])
            if args.json:
                if device.type == "cuda":
                    t["peak_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
                print(json.dumps(t))
                return
            ratio = {key: t[key] / t["arcface"] for key, _ in columns}
            plain = t["arcface"]
        else:
            pairs = {key: _pair_in_child(args, kind, key, allocator) for key, _ in columns}
            t = {key: pair[key] for key, pair in pairs.items()}
            ratio = {key: pair[key] / pair["arcface"] for key, pair in pairs.items()}
            plain = statistics.median(pair["arcface"] for pair in pairs.values())
        line = f"{kind:10s} {1e3 * plain:7.1f}ms"
        line += "".join(f" {1e3 * t[key]:8.1f}ms {ratio[key]:5.2f}x" for key, _ in columns)
        if device.type == "cuda":
            peak = torch.cuda.max_memory_allocated(device) / 2**30
            if not args.together:
                peak = max(pair["peak_gib"] for pair in pairs.values())
            line += f"  peak memory {peak:.2f} GiB"
        print(line, flush=True)


if __name__ == "__main__":
    main()
