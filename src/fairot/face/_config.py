"""Config-file training and evaluation on real face data (``fairot face train|evaluate``).

A config is a JSON (or, on Python >= 3.11, TOML) file; every key and its default is in
:class:`TrainConfig`. See ``docs/face.md`` for BUPT-Balancedface/Globalface -> RFW on a GPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from ..utils import write_atomic
from ._callbacks import Callback, CsvHistory
from ._config_checks import CONFIG_TYPE_ERROR, check_config_values
from ._data import FaceFolderDataset, embed_images, load_rfw_pairs, read_rfw_pairs
from ._distributed import init_from_environment, rank_and_world
from ._evaluation import GroupVerification, cosine_similarity, group_verification, roc_by_group
from ._groups_csv import check_groups_csv
from ._lock import hold_run_lock
from ._methods import METHOD_ERROR, METHODS, make_method
from ._models import MLP, iresnet18, iresnet34, iresnet50
from ._trainer import MetaBalancedTrainer

__all__ = [
    "TrainConfig",
    "build_model",
    "evaluate_pairs",
    "load_config",
    "load_pairs",
    "train_from_config",
]

BACKBONES = {"iresnet18": iresnet18, "iresnet34": iresnet34, "iresnet50": iresnet50}
UNKNOWN_KEYS_ERROR = "unknown config keys {keys}; valid keys are {valid}."
MISSING_KEY_ERROR = "the config needs {key!r} ({why})."
BACKBONE_ERROR = "backbone must be one of {names}; got {value!r}."
CONFIG_FORMAT_ERROR = "config {path!s} must be a .json or .toml file holding one table."
RESUMED_MESSAGE = (
    "fairot: resuming from {path} at step {step} of {n_steps} (its SHA-256 matches the "
    "manifest this run wrote); set resume to false to start afresh."
)


@dataclass
class TrainConfig:
    """Everything ``fairot face train`` reads from the config file.

    Attributes
    ----------
    train_root, train_groups_csv : str
        The training set: one folder per identity, and the identity -> group CSV.
    meta_root, meta_groups_csv : str, optional
        The balanced meta set (required by the MBN methods).
    method : str
        One of :data:`~fairot.face.METHODS` (default ``"mbn-arc"``).
    backbone : str
        ``iresnet18``, ``iresnet34`` (the paper's) or ``iresnet50``.
    embedding_size, image_size : int
        512 and 112 as in the paper.
    anchor_groups : list of int
        Group codes (indices into the sorted group names of the CSV) kept as anchors.
    n_steps, batch_size, meta_batch_size : int
        The paper: 180K steps on Globalface (145K on Balancedface), batches of 240.
    learning_rate, lr_milestones, margin_learning_rate, margin_milestones, momentum, weight_decay
        The paper: 0.1 divided by 10 at 80K/120K/155K (Globalface) or 70K/100K/120K
        (Balancedface); margins 1e-3, decayed twice.
    scale : float
        64 for MBN; the paper's baselines use 60.
    gamma, selection_margin : float
        Of the meta skewness loss (0.5 and 0.2).
    meta_every : int
    lookahead : "all", int or list of str
    meta_gradient : {"exact", "forward-mode", "finite-difference"}
    reuse_lookahead_gradient : bool
        Speed options of :class:`~fairot.face.MetaBalancedTrainer`.
    device : str
        ``"cuda"`` on a GPU machine.
    num_workers : int
        Threads decoding images.
    out_dir : str
        Checkpoint (``checkpoint.pt``, with its manifest ``checkpoint.pt.manifest.json``) and
        history (``history.csv``) go here.
    checkpoint_every : int
    resume : bool
        Continue from ``out_dir/checkpoint.pt`` when it exists; only a checkpoint whose
        SHA-256 its manifest lists (one this run wrote) is loaded, anything else is refused
        with a ``ValueError`` (see ``docs/security.md``).
    seed : int

    Examples
    --------
    The paper's settings are the defaults; a config file (:func:`load_config`) overrides some:

    >>> from fairot.face import TrainConfig
    >>> config = TrainConfig(method="mbn-cos", n_steps=1000)
    >>> config.method, config.n_steps, config.batch_size, config.embedding_size
    ('mbn-cos', 1000, 240, 512)
    """

    train_root: str = ""
    train_groups_csv: str = ""
    meta_root: str | None = None
    meta_groups_csv: str | None = None
    method: str = "mbn-arc"
    backbone: str = "iresnet34"
    embedding_size: int = 512
    image_size: int = 112
    anchor_groups: list[int] = field(default_factory=lambda: [0])
    n_steps: int = 180_000
    batch_size: int = 240
    meta_batch_size: int = 240
    learning_rate: float = 0.1
    lr_milestones: list[int] = field(default_factory=lambda: [80_000, 120_000, 155_000])
    margin_learning_rate: float = 1e-3
    margin_milestones: list[int] = field(default_factory=lambda: [80_000, 120_000])
    momentum: float = 0.9
    weight_decay: float = 5e-4
    scale: float = 64.0
    gamma: float = 0.5
    selection_margin: float | None = 0.2
    meta_every: int = 1
    lookahead: Any = "all"
    meta_gradient: str = "exact"
    reuse_lookahead_gradient: bool = False
    device: str = "cuda" if torch.cuda.is_available() else "cpu"
    num_workers: int = 8
    out_dir: str = "fairot-face-run"
    checkpoint_every: int = 5000
    resume: bool = True
    seed: int = 0


def load_config(path: str | Path) -> TrainConfig:
    """Read a JSON or TOML config file into a :class:`TrainConfig` (unknown keys are errors).

    Examples
    --------
    >>> import json, os, tempfile
    >>> from fairot.face import load_config
    >>> path = os.path.join(tempfile.mkdtemp(), "run.json")
    >>> with open(path, "w") as f:
    ...     json.dump({"train_root": "faces", "train_groups_csv": "groups.csv",
    ...                "method": "arcface", "n_steps": 10}, f)
    >>> config = load_config(path)
    >>> config.method, config.n_steps, config.learning_rate
    ('arcface', 10, 0.1)
    """
    path = Path(path)
    text = path.read_text()
    if path.suffix == ".toml":
        import tomllib  # Python >= 3.11

        raw = tomllib.loads(text)
    elif path.suffix == ".json":
        raw = json.loads(text)
    else:
        raise ValueError(CONFIG_FORMAT_ERROR.format(path=path))
    if not isinstance(raw, dict):
        raise ValueError(CONFIG_FORMAT_ERROR.format(path=path))
    valid = [f.name for f in dataclasses.fields(TrainConfig)]
    unknown = sorted(set(raw) - set(valid))
    if unknown:
        raise ValueError(UNKNOWN_KEYS_ERROR.format(keys=unknown, valid=valid))
    config = TrainConfig(**raw)
    check_config_values(config)
    if not config.train_root or not config.train_groups_csv:
        raise ValueError(
            MISSING_KEY_ERROR.format(key="train_root/train_groups_csv", why="the training set")
        )
    if config.method not in METHODS:
        raise ValueError(METHOD_ERROR.format(methods=METHODS, value=config.method))
    if config.method.startswith("mbn") and not (config.meta_root and config.meta_groups_csv):
        raise ValueError(
            MISSING_KEY_ERROR.format(key="meta_root/meta_groups_csv", why="MBN's balanced meta set")
        )
    return config


def build_model(config: TrainConfig) -> torch.nn.Module:
    """The backbone named by the config (``mlp`` flattens the image, for smoke tests).

    Examples
    --------
    >>> import torch
    >>> from fairot.face import TrainConfig, build_model
    >>> model = build_model(TrainConfig(backbone="mlp", embedding_size=8, image_size=16))
    >>> model(torch.zeros(2, 3, 16, 16)).shape
    torch.Size([2, 8])
    """
    if config.backbone == "mlp":
        size = 3 * config.image_size * config.image_size
        return torch.nn.Sequential(
            torch.nn.Flatten(), MLP(size, embedding_size=config.embedding_size)
        )
    if config.backbone not in BACKBONES:
        raise ValueError(BACKBONE_ERROR.format(names=[*BACKBONES, "mlp"], value=config.backbone))
    return BACKBONES[config.backbone](
        embedding_size=config.embedding_size, input_size=config.image_size
    )


def train_from_config(
    config: TrainConfig, *, progress: bool = True, callbacks: list[Callback] | None = None
) -> MetaBalancedTrainer:
    r"""Train the configured method; checkpoints and history go to ``config.out_dir``.

    Under ``torchrun`` (``fairot face train --nproc N``), joins the process group described by
    the environment (NCCL on ``cuda``, gloo otherwise): each of the N ranks trains on
    ``batch_size / N`` rows of every global batch of ``batch_size`` rows, and rank 0 writes the
    checkpoint, ``history.csv`` and ``config.json``.

    The run holds an exclusive lock on ``out_dir`` (``.fairot-train.lock``, an ``fcntl.flock``
    that the kernel drops when the run's process ends, so a lock file left by a dead run is
    taken over): a second run into the same folder is refused with a ``ValueError``. The group
    CSVs are checked first: an identity in two groups or an empty cell is refused, naming the
    file and the line.

    With ``config.resume`` (the default), an existing ``out_dir/checkpoint.pt`` is resumed
    only when its manifest lists its SHA-256, and the run says on stderr that it resumed and
    from what; a checkpoint without its manifest, one that does not match it, or one holding
    anything but tensors and plain data is refused with a ``ValueError`` naming the file
    (nothing of it runs).

    Returns
    -------
    MetaBalancedTrainer
        The trained trainer (its ``model`` is the embedding network).

    Examples
    --------
    Two steps of MBN-Arc on eight random "identities" of two images (the same folder serves as the
    meta set here), in a temporary folder:

    >>> import os, tempfile
    >>> import numpy as np
    >>> from PIL import Image
    >>> from fairot.face import TrainConfig, train_from_config
    >>> root, rng = tempfile.mkdtemp(), np.random.default_rng(0)
    >>> rows = ["identity,group"]
    >>> for k in range(8):
    ...     os.makedirs(os.path.join(root, "faces", f"id{k}"))
    ...     for i in (1, 2):
    ...         pixels = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
    ...         Image.fromarray(pixels).save(os.path.join(root, "faces", f"id{k}", f"{i}.png"))
    ...     rows.append(f"id{k},{['light', 'dark'][k % 2]}")
    >>> csv = os.path.join(root, "groups.csv")
    >>> with open(csv, "w") as f:
    ...     _ = f.write("\n".join(rows))
    >>> faces = os.path.join(root, "faces")
    >>> config = TrainConfig(
    ...     train_root=faces, train_groups_csv=csv, meta_root=faces, meta_groups_csv=csv,
    ...     method="mbn-arc", backbone="mlp", embedding_size=8, image_size=8, n_steps=2,
    ...     batch_size=8, meta_batch_size=8, num_workers=0, checkpoint_every=2,
    ...     out_dir=os.path.join(root, "run"))
    >>> trainer = train_from_config(config, progress=False)
    >>> trainer.step_, sorted(os.listdir(config.out_dir))  # doctest: +NORMALIZE_WHITESPACE
    (2, ['.fairot-train.lock', 'checkpoint.pt', 'checkpoint.pt.manifest.json', 'config.json',
         'history.csv'])
    """
    initialised, device = init_from_environment(config.device)
    try:
        return _train(config, device, progress=progress, callbacks=callbacks)
    finally:
        if initialised:
            torch.distributed.destroy_process_group()


def _train(config, device, *, progress, callbacks) -> MetaBalancedTrainer:
    rank, world = rank_and_world()
    if config.batch_size % world:
        raise ValueError(
            CONFIG_TYPE_ERROR.format(
                key="batch_size",
                what=f"a multiple of the {world} processes",
                value=config.batch_size,
            )
        )
    check_groups_csv(config.train_groups_csv, "train_groups_csv")
    if config.meta_root and config.meta_groups_csv:
        check_groups_csv(config.meta_groups_csv, "meta_groups_csv")
    out = Path(config.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # Rank 0 alone writes checkpoint and history, so it alone holds the folder's lock.
    with hold_run_lock(out) if rank == 0 else contextlib.nullcontext():
        return _train_locked(config, device, out, progress=progress, callbacks=callbacks)


def _train_locked(config, device, out, *, progress, callbacks) -> MetaBalancedTrainer:
    rank, world = rank_and_world()
    train = FaceFolderDataset(
        config.train_root, config.train_groups_csv, image_size=config.image_size
    )
    meta = None
    if config.meta_root:
        meta = FaceFolderDataset(
            config.meta_root, config.meta_groups_csv, image_size=config.image_size
        )
    # Seed before anything draws random numbers: the loss head's class weights too.
    torch.manual_seed(config.seed)
    n_groups = len(train.group_names)
    counts = pd.Series(train.groups).value_counts().reindex(range(n_groups), fill_value=0)
    spec = make_method(
        config.method,
        n_classes=train.n_classes,
        embedding_size=config.embedding_size,
        n_groups=n_groups,
        group_counts=counts.to_numpy(),
        scale=config.scale,
        anchor_groups=tuple(config.anchor_groups),
        gamma=config.gamma,
        selection_margin=config.selection_margin,
    )
    history = CsvHistory(out / "history.csv")
    trainer = MetaBalancedTrainer(
        build_model(config),
        spec.loss,
        meta_loss=spec.meta_loss,
        group_weights=spec.group_weights,
        learning_rate=config.learning_rate,
        lr_milestones=config.lr_milestones,
        momentum=config.momentum,
        weight_decay=config.weight_decay,
        margin_learning_rate=config.margin_learning_rate,
        margin_milestones=config.margin_milestones,
        meta_every=config.meta_every,
        lookahead=config.lookahead,
        meta_gradient=config.meta_gradient,
        reuse_lookahead_gradient=config.reuse_lookahead_gradient,
        callbacks=[history, *(callbacks or [])],
        device=device,
        random_state=config.seed,
        verbose=progress,
    )
    checkpoint = out / "checkpoint.pt"
    if config.resume and checkpoint.exists():
        # Only a checkpoint this run's folder holds with its manifest: one fairot wrote.
        trainer.load_checkpoint(checkpoint, require_manifest=True)
        history.resume_from(trainer.step_)
        if rank == 0:
            print(
                RESUMED_MESSAGE.format(path=checkpoint, step=trainer.step_, n_steps=config.n_steps),
                file=sys.stderr,
                flush=True,
            )
    if rank == 0:
        write_atomic(out / "config.json", json.dumps(dataclasses.asdict(config), indent=2))
    trainer.fit(
        train,
        meta,
        n_steps=config.n_steps,
        batch_size=config.batch_size // world,
        meta_batch_size=config.meta_batch_size,
        checkpoint_path=checkpoint,
        checkpoint_every=config.checkpoint_every,
        num_workers=config.num_workers,
    )
    return trainer


def evaluate_pairs(
    model: torch.nn.Module,
    pairs: pd.DataFrame,
    *,
    image_size: int = 112,
    device: str = "cpu",
    batch_size: int = 128,
    n_folds: int = 10,
    far_targets: tuple[float, ...] = (1e-3, 1e-4),
) -> tuple[GroupVerification, pd.DataFrame]:
    """Verify image pairs per group: the LFW/RFW protocol and TAR/threshold at fixed FAR.

    Parameters
    ----------
    model : nn.Module
    pairs : pandas.DataFrame
        Columns ``path1``, ``path2``, ``is_same``, ``group`` (:func:`load_rfw_pairs`).
    image_size, device, batch_size, n_folds, far_targets
        As their names say; embeddings add the flipped image's.

    Returns
    -------
    report : GroupVerification
    roc : pandas.DataFrame
        :func:`roc_by_group` of the cosine similarities.

    Examples
    --------
    With the pixels as embeddings (a ``Flatten`` model), a pair of one image with itself has
    cosine 1 and a pair of two random images a cosine near 0: every group is verified perfectly.

    >>> import os, tempfile
    >>> import numpy as np
    >>> import pandas as pd
    >>> import torch
    >>> from PIL import Image
    >>> from fairot.face import evaluate_pairs
    >>> root, rng = tempfile.mkdtemp(), np.random.default_rng(0)
    >>> paths = [os.path.join(root, f"{k}.png") for k in range(8)]
    >>> for path in paths:
    ...     Image.fromarray(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)).save(path)
    >>> rows = []
    >>> for k in range(8):
    ...     rows.append((paths[k], paths[k], True, "ab"[k // 4]))
    ...     rows.append((paths[k], paths[(k + 1) % 4 + 4 * (k // 4)], False, "ab"[k // 4]))
    >>> pairs = pd.DataFrame(rows, columns=["path1", "path2", "is_same", "group"])
    >>> report, roc = evaluate_pairs(torch.nn.Flatten(), pairs, image_size=8, n_folds=2)
    >>> report.by_group["accuracy"].to_dict(), report.mean_accuracy, report.std
    ({'a': 1.0, 'b': 1.0}, 1.0, 0.0)
    """
    model = model.to(device)
    paths = pd.unique(pd.concat([pairs["path1"], pairs["path2"]]))
    emb = embed_images(
        model, list(paths), image_size=image_size, batch_size=batch_size, device=device, flip=True
    )
    row = {p: i for i, p in enumerate(paths)}
    e1 = emb[[row[p] for p in pairs["path1"]]]
    e2 = emb[[row[p] for p in pairs["path2"]]]
    same = pairs["is_same"].to_numpy(bool)
    groups = pairs["group"].astype(str).to_numpy()
    report = group_verification(e1, e2, same, groups, n_folds=n_folds)
    roc = roc_by_group(cosine_similarity(e1, e2), same, groups, far_targets=far_targets)
    return report, roc


def load_pairs(
    *,
    rfw_root: str | None = None,
    races: list[str] | None = None,
    pairs_file: str | None = None,
    images_root: str | None = None,
    extension: str = ".jpg",
) -> pd.DataFrame:
    r"""Pairs of an RFW test set or of one pair list (see :func:`read_rfw_pairs`).

    Examples
    --------
    One RFW-style pair list (a genuine pair, then an impostor pair) under an images folder:

    >>> import os, tempfile
    >>> from fairot.face import load_pairs
    >>> pairs_file = os.path.join(tempfile.mkdtemp(), "pairs.txt")
    >>> with open(pairs_file, "w") as f:
    ...     _ = f.write("m.01 1 2\nm.01 1 m.02 3\n")
    >>> pairs = load_pairs(pairs_file=pairs_file, images_root="images")
    >>> pairs["is_same"].tolist(), pairs["group"].tolist()
    ([True, False], ['all', 'all'])
    """
    if rfw_root is not None:
        kwargs = {"races": races} if races else {}
        return load_rfw_pairs(rfw_root, **kwargs)
    return read_rfw_pairs(pairs_file, images_root, group="all", extension=extension)
