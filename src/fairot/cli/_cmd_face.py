"""``fairot face``: train a face-recognition model with MBN (or a baseline) and evaluate it.

``fairot face train --config FILE`` trains on an image folder with a group CSV (see
``docs/face.md``); ``fairot face evaluate`` verifies RFW-style pairs per group. Needs the ``torch``
extra; torch is imported only when a face command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    """Add the ``face`` subcommand with ``train`` and ``evaluate``."""
    p = subparsers.add_parser(
        "face",
        help="fair face recognition: MBN training and per-group verification",
        description="Train with MBN's meta-learned group margins or evaluate on RFW pairs.",
    )
    sub = p.add_subparsers(dest="face_command", metavar="ACTION")
    train = sub.add_parser("train", help="train from a JSON/TOML config file")
    train.add_argument("--config", type=Path, required=True, help="the config file")
    train.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    train.add_argument(
        "--release-memory",
        action="store_true",
        help="on CPU, let malloc hand freed memory back to the system (default: keep it for "
        "reuse, which saves page faults at every step; see docs/face.md)",
    )
    train.add_argument(
        "--nproc",
        type=int,
        default=1,
        metavar="N",
        help="train with N data-parallel processes on this machine (torchrun; gloo on CPU, "
        "NCCL on GPUs): each takes batch_size/N rows of every batch",
    )
    train.set_defaults(func=_train)

    evaluate = sub.add_parser("evaluate", help="verify pairs per group with a trained model")
    evaluate.add_argument("--config", type=Path, required=True, help="the training config file")
    evaluate.add_argument(
        "--checkpoint",
        type=Path,
        help="checkpoint (default: OUT_DIR/checkpoint.pt); read weights-only (tensors and plain "
        "data, never code) and checked against its manifest when one is beside it",
    )
    source = evaluate.add_mutually_exclusive_group(required=True)
    source.add_argument("--rfw-root", help="RFW's test folder (txts/<race>/, data/<race>/)")
    source.add_argument("--pairs", help="one pair list (LFW/RFW format); needs --images")
    evaluate.add_argument("--images", help="folder of identity sub-folders for --pairs")
    evaluate.add_argument("--races", nargs="+", help="RFW races (default: all four)")
    evaluate.add_argument("--extension", default=".jpg", help="image extension for --pairs")
    evaluate.add_argument("--device", help="override the config's device")
    evaluate.add_argument("--out", type=Path, help="write the per-group table as CSV")
    evaluate.set_defaults(func=_evaluate)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


NPROC_ERROR = (
    "--nproc must be an int >= 1 that divides the config's batch_size {batch}; got {value}."
)


def _launch(args: argparse.Namespace) -> int:
    """Run this same command in ``--nproc`` processes with torch's elastic launcher (torchrun)."""
    import subprocess

    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += [f"--nproc-per-node={args.nproc}", "-m", "fairot", "face", "train"]
    command += ["--config", str(args.config)]
    command += ["--no-progress"] if args.no_progress else []
    command += ["--release-memory"] if args.release_memory else []
    # A child process, not torchrun's main() in this one: it owns its signals and stderr.
    code = subprocess.run(command, check=False).returncode
    if code:
        print(
            f"error: distributed training failed (exit status {code}); see above", file=sys.stderr
        )
        return 1
    return 0


def _train(args: argparse.Namespace) -> int:
    import os

    from fairot.face import keep_freed_memory, load_config, train_from_config

    config = load_config(args.config)
    if args.nproc < 1 or config.batch_size % args.nproc:
        raise ValueError(NPROC_ERROR.format(batch=config.batch_size, value=args.nproc))
    if args.nproc > 1 and "WORLD_SIZE" not in os.environ:
        return _launch(args)
    if str(config.device).startswith("cpu") and not args.release_memory:
        keep_freed_memory()
    trainer = train_from_config(config, progress=not args.no_progress)
    if int(os.environ.get("RANK") or 0) != 0:
        return 0  # rank 0 reports (train_from_config refused a RANK without a launcher)
    margins = trainer.last_record_.get("margins", [])
    print(f"trained {config.method} for {trainer.step_} steps; checkpoint in {config.out_dir}/")
    if margins:
        print("final group margins: " + ", ".join(f"{m:.4f}" for m in margins))
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from fairot.face import build_model, evaluate_pairs, load_config, load_pairs
    from fairot.face.checkpoint import CHECKPOINT_FIT_ERROR, read_checkpoint
    from fairot.utils import terminal_table

    if args.pairs and not args.images:
        raise ValueError("--pairs needs --images (the folder of identity sub-folders).")
    config = load_config(args.config)
    device = args.device or config.device
    checkpoint = args.checkpoint or Path(config.out_dir) / "checkpoint.pt"
    state = read_checkpoint(checkpoint, map_location=device)
    model = build_model(config)
    try:
        model.load_state_dict(state["model"])
    except RuntimeError as exc:
        reason = str(exc).strip().splitlines()[0]
        raise ValueError(CHECKPOINT_FIT_ERROR.format(path=checkpoint, reason=reason)) from None
    pairs = load_pairs(
        rfw_root=args.rfw_root,
        races=args.races,
        pairs_file=args.pairs,
        images_root=args.images,
        extension=args.extension,
    )
    report, roc = evaluate_pairs(model, pairs, image_size=config.image_size, device=device)
    table = report.by_group.join(roc)
    print(terminal_table(table, float_format=lambda v: f"{v:.4f}"))
    print(
        f"\nmean accuracy {100 * report.mean_accuracy:.2f}%  STD {100 * report.std:.2f}  "
        f"SER {report.ser:.3f}"
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out)
        print(f"written to {args.out}", file=sys.stderr)
    return 0
