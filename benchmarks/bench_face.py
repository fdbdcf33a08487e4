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
Prints the median of REPEATS steps after a warm-up (the variants' steps interleaved, so that a
shared machine's load drift cancels), and the peak GPU memory of all variants when on CUDA.
"""

from __future__ import annotations

import argparse
import platform
import statistics
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
        progress=False,
    )


def _step_times(kind: str, device, repeats: int) -> dict[str, float]:
    """Median step time of each variant; steps are interleaved so that load drifts cancel."""
    variants = {
        "arcface": _trainer(kind, False, device),
        "mbn": _trainer(kind, True, device),
        "fwd": _trainer(kind, True, device, gradient="forward-mode"),
        "reuse": _trainer(kind, True, device, reuse=True),
        "fwd+reuse": _trainer(kind, True, device, reuse=True, gradient="forward-mode"),
        "fd": _trainer(kind, True, device, reuse=True, gradient="finite-difference"),
        "last4": _trainer(kind, True, device, lookahead=4),
    }
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
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.set_num_threads(args.threads)
    print(
        f"fairot {fairot.__version__}, torch {torch.__version__}, {platform.processor() or 'cpu'}"
        f", {torch.get_num_threads()} threads, device {device}"
    )
    if device.type == "cuda":
        print(f"GPU: {torch.cuda.get_device_name(device)}")
    columns = [
        ("mbn", "MBN exact"),
        ("fwd", "MBN fwd"),
        ("reuse", "MBN reuse"),
        ("fwd+reuse", "fwd+reuse"),
        ("fd", "MBN fd"),
        ("last4", "MBN last-4"),
    ]
    header = f"{'model':10s} {'ArcFace':>9s}"
    header += "".join(f" {label:>10s} {'ratio':>6s}" for _, label in columns)
    print(header)
    for kind in args.backbones.split(","):
        repeats = args.repeats or (30 if kind == "mlp" else 5)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        t = _step_times(kind, device, repeats)
        plain = t["arcface"]
        line = f"{kind:10s} {1e3 * plain:7.1f}ms"
        line += "".join(f" {1e3 * t[key]:8.1f}ms {t[key] / plain:5.2f}x" for key, _ in columns)
        if device.type == "cuda":
            line += f"  peak memory {torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB"
        print(line, flush=True)


if __name__ == "__main__":
    main()
