#!/usr/bin/env bash
# GPU check for fairot.face: train IResNet-50 a few hundred steps on synthetic 112x112 images with
# ArcFace and with MBN(arc), print step times, peak memory, losses and margins; then the MBN/ArcFace
# step-time ratio of benchmarks/bench_face.py on the GPU. Self-contained; under 8 minutes on one
# modern GPU. Run from the repository root:  bash benchmarks/gpu_check.sh
#
# It uses the torch already installed (no network is assumed): $PYTHON if set, else .venv/bin/python,
# else python3. It fails with a clear message when torch or a GPU is missing.
# Then MBN steps/s under torch.distributed (NCCL) at 1 and N GPUs (DDP=0 skips it); then
# fairot.torch's CUDA tests (penalty, FairTrainer and FairMLPClassifier equal to the CPU) and the
# penalty's step time against the cross-entropy step on the GPU (PENALTY=0 skips both).
# Smoke test on a CPU (BENCH=0 skips the step-time benchmark; DDP runs gloo with 1 and 2 processes):
#   DEVICE=cpu STEPS=6 BACKBONE=iresnet18 IMAGE=32 BATCH=16 BENCH=0 DDP_BACKBONES=mlp \
#   DDP_BATCH=32 REPEATS=3 PENALTY=0 bash benchmarks/gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-}"
if [[ -z "$PYTHON" ]]; then
  if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export DEVICE="${DEVICE:-cuda}" STEPS="${STEPS:-300}" BACKBONE="${BACKBONE:-iresnet50}"
export IMAGE="${IMAGE:-112}" BATCH="${BATCH:-128}"

"$PYTHON" - <<'PY'
import sys
try:
    import torch
except ImportError:
    sys.exit("gpu_check: torch is not installed for this python; set PYTHON=/path/to/python with torch")
import os
device = os.environ["DEVICE"]
if device.startswith("cuda") and not torch.cuda.is_available():
    sys.exit(f"gpu_check: torch {torch.__version__} sees no CUDA device (built for CUDA "
             f"{torch.version.cuda}); nothing to check")
print(f"torch {torch.__version__}, device {device}"
      + (f" ({torch.cuda.get_device_name(0)})" if device.startswith("cuda") else ""))
PY

"$PYTHON" - <<'PY'
import os, time
import torch
from fairot.face import (ArcFaceLoss, GroupMarginLoss, History, MetaBalancedTrainer,
                         MetaSkewnessLoss, iresnet18, iresnet34, iresnet50)

device = torch.device(os.environ["DEVICE"])
steps, size, batch = int(os.environ["STEPS"]), int(os.environ["IMAGE"]), int(os.environ["BATCH"])
backbone = {"iresnet18": iresnet18, "iresnet34": iresnet34, "iresnet50": iresnet50}[
    os.environ["BACKBONE"]]
if device.type == "cuda":
    torch.backends.cudnn.benchmark = True
g = torch.Generator().manual_seed(0)
n_ids, per_id, n_groups = 256, 8, 4

def images(n_identities):
    # identity "faces": a smooth random prototype per identity plus per-image noise and shift
    proto = torch.nn.functional.interpolate(
        torch.randn(n_identities, 3, 14, 14, generator=g), size=(size, size), mode="bilinear")
    x = proto.repeat_interleave(per_id, 0)
    x = x + 0.5 * torch.randn(x.shape, generator=g)
    labels = torch.arange(n_identities).repeat_interleave(per_id)
    groups = labels % n_groups
    return x.to(device), labels.to(device), groups.to(device)

train, meta = images(n_ids), images(64)
print(f"{os.environ['BACKBONE']} at {size}x{size}, batch {batch}, {steps} steps, "
      f"{n_ids} identities x {per_id} images")
results = {}
for name in ("arcface", "mbn-arc"):
    torch.manual_seed(0)
    model = backbone(input_size=size)
    if name == "arcface":
        loss, meta_loss = ArcFaceLoss(n_ids, 512, margin=0.3, scale=64.0), None
    else:
        loss = GroupMarginLoss(n_ids, 512, n_groups, kind="arc", init_margin=0.3)
        # every triplet kept, so that every step pays the full meta step (the timing is the point)
        meta_loss = MetaSkewnessLoss(selection_margin=None, n_groups=n_groups)
    history = History()
    trainer = MetaBalancedTrainer(model, loss, meta_loss=meta_loss, device=device,
                                  learning_rate=0.05, margin_learning_rate=0.01,
                                  callbacks=[history], random_state=0)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.synchronize()
    warm = min(5, steps // 2)
    trainer.fit(train, meta, n_steps=warm, batch_size=batch, meta_batch_size=batch)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    trainer.fit(train, meta, n_steps=steps, batch_size=batch, meta_batch_size=batch)
    if device.type == "cuda":
        torch.cuda.synchronize()
    per_step = (time.perf_counter() - start) / max(1, steps - warm)
    frame = history.to_frame()
    memory = torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else float("nan")
    results[name] = per_step
    k = max(1, len(frame) // 10)
    print(f"{name:8s} {1e3 * per_step:8.1f} ms/step  peak memory {memory:6.2f} GiB  "
          f"loss {frame['loss'].iloc[:k].mean():.3f} -> {frame['loss'].iloc[-k:].mean():.3f}"
          + (f"  margins {[round(m, 3) for m in trainer.loss.group_margins().tolist()]}"
             if name != "arcface" else ""))
    del trainer, model, loss
    if device.type == "cuda":
        torch.cuda.empty_cache()
print(f"MBN(arc) step / ArcFace step: {results['mbn-arc'] / results['arcface']:.2f}x")
PY

if [[ "${BENCH:-1}" != 0 ]]; then
  # --together: one process for all variants (a fresh process per variant would spend the time
  # budget on CUDA start-ups; CUDA's caching allocator already keeps freed memory).
  "$PYTHON" benchmarks/bench_face.py --device "$DEVICE" --backbones mlp,iresnet18,"$BACKBONE" \
    --repeats "${REPEATS:-10}" --together
fi

if [[ "${DDP:-1}" != 0 ]]; then
  # MetaBalancedTrainer under torch.distributed: NCCL with one GPU per process (gloo on CPU), the
  # same global batch over 1 and N processes; N = every visible GPU (1 GPU: NCCL with one rank).
  if [[ "$DEVICE" == cuda* ]]; then
    NGPU=$("$PYTHON" -c "import torch; print(torch.cuda.device_count())")
  else
    NGPU=2
  fi
  COUNTS=1; [[ "$NGPU" -ge 2 ]] && COUNTS="1,$NGPU"
  "$PYTHON" benchmarks/bench_face.py --device "$DEVICE" --ddp "$COUNTS" \
    --backbones "${DDP_BACKBONES:-mlp,iresnet18}" --ddp-batch "${DDP_BATCH:-128}" \
    --repeats "${REPEATS:-10}"
fi

if [[ "${PENALTY:-1}" != 0 ]]; then
  # fairot.torch (issue 13): every CUDA test of tests/torch, then benchmarks/bench_torch.py part 1
  # on the GPU (the same interleaved rounds as on the CPU).
  "$PYTHON" -m pytest -q -p no:cacheprovider -rs tests/torch -k cuda
  "$PYTHON" benchmarks/bench_torch.py --device "$DEVICE"
fi
