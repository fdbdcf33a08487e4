"""``fairot face train`` resumes only from a checkpoint it wrote; ``evaluate`` runs no file's code.

A crafted ``checkpoint.pt`` (a pickle whose ``__reduce__`` runs a shell command) planted in
``out_dir`` or passed to ``evaluate --checkpoint`` is refused with one line naming the file, and
the marker file its payload would create never exists.
"""

import json
import os
import sys

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from fairot.cli import main
from fairot.face import load_config, train_from_config
from fairot.torch.trainers import manifest_path


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"{sys.executable} -c \"open({str(self.marker)!r}, 'w')\"",))


def _faces(root, n_ids=8, size=8, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n_ids):
        (root / f"id{k}").mkdir(parents=True)
        for i in (1, 2):
            pixels = rng.integers(0, 256, (size, size, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / f"id{k}" / f"id{k}_{i:04d}.png")
        rows.append((f"id{k}", ["light", "dark"][k % 2]))
    csv = root.parent / f"{root.name}.csv"
    pd.DataFrame(rows, columns=["identity", "group"]).to_csv(csv, index=False)
    return csv


@pytest.fixture
def config_file(tmp_path):
    csv = _faces(tmp_path / "faces")
    config = {
        "train_root": str(tmp_path / "faces"),
        "train_groups_csv": str(csv),
        "meta_root": str(tmp_path / "faces"),
        "meta_groups_csv": str(csv),
        "method": "arcface",
        "backbone": "mlp",
        "embedding_size": 8,
        "image_size": 8,
        "n_steps": 2,
        "batch_size": 8,
        "meta_batch_size": 8,
        "device": "cpu",
        "num_workers": 0,
        "checkpoint_every": 2,
        "out_dir": str(tmp_path / "run"),
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


def _longer(config_file, n_steps):
    config = json.loads(config_file.read_text())
    config["n_steps"] = n_steps
    config_file.write_text(json.dumps(config))


def test_train_says_it_resumed_and_from_what(config_file, tmp_path, capsys):
    assert main(["face", "train", "--config", str(config_file), "--no-progress"]) == 0
    checkpoint = tmp_path / "run" / "checkpoint.pt"
    assert manifest_path(checkpoint).exists()
    assert "resuming" not in capsys.readouterr().err  # a fresh run resumes nothing
    _longer(config_file, 4)
    assert main(["face", "train", "--config", str(config_file), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert f"fairot: resuming from {checkpoint} at step 2 of 4" in captured.err
    assert "for 4 steps" in captured.out


def test_a_planted_checkpoint_is_refused_and_nothing_runs(config_file, tmp_path, capsys):
    train_from_config(load_config(config_file), progress=False)
    checkpoint, marker = tmp_path / "run" / "checkpoint.pt", tmp_path / "ran"
    good = torch.load(checkpoint, weights_only=True)
    torch.save({**good, "extra": _Payload(marker)}, checkpoint)
    _longer(config_file, 4)
    assert main(["face", "train", "--config", str(config_file), "--no-progress"]) == 2
    err = capsys.readouterr().err
    # the manifest catches the swap before the file is opened
    assert f"checkpoint {checkpoint} does not match its manifest" in err
    assert len(err.strip().splitlines()) == 1 and not marker.exists()
    # without the manifest: refused as a file without one, still unopened
    manifest_path(checkpoint).unlink()
    assert main(["face", "train", "--config", str(config_file), "--no-progress"]) == 2
    assert f"checkpoint {checkpoint} has no manifest" in capsys.readouterr().err
    assert not marker.exists()


def test_a_checkpoint_without_its_manifest_is_not_resumed(config_file, tmp_path):
    train_from_config(load_config(config_file), progress=False)
    checkpoint = tmp_path / "run" / "checkpoint.pt"
    manifest_path(checkpoint).unlink()
    _longer(config_file, 4)
    with pytest.raises(ValueError, match="has no manifest"):
        train_from_config(load_config(config_file), progress=False)
    # resume = false starts afresh, as the message says
    config = load_config(config_file)
    config.resume = False
    assert train_from_config(config, progress=False).step_ == 4


def test_evaluate_refuses_a_crafted_checkpoint_and_nothing_runs(config_file, tmp_path, capsys):
    marker, crafted = tmp_path / "ran", tmp_path / "given.pt"
    torch.save({"model": {}, "extra": _Payload(marker)}, crafted)
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("id0\t1\t2\n")
    args = ["face", "evaluate", "--config", str(config_file), "--checkpoint", str(crafted)]
    args += ["--pairs", str(pairs), "--images", str(tmp_path / "faces")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"checkpoint {crafted} is refused" in err and "weights_only=True" in err
    assert not marker.exists()
