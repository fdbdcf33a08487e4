import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from fairot.cli import main
from fairot.face import load_config


def _faces(root, n_ids=8, per_id=3, size=16, seed=0):
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


@pytest.fixture
def config_file(tmp_path):
    train_csv = _faces(tmp_path / "train")
    meta_csv = _faces(tmp_path / "meta", seed=1)
    config = {
        "train_root": str(tmp_path / "train"),
        "train_groups_csv": str(train_csv),
        "meta_root": str(tmp_path / "meta"),
        "meta_groups_csv": str(meta_csv),
        "method": "mbn-soft",
        "backbone": "iresnet18",
        "embedding_size": 16,
        "image_size": 16,
        "n_steps": 3,
        "batch_size": 8,
        "meta_batch_size": 8,
        "lr_milestones": [2],
        "margin_milestones": [2],
        "scale": 16.0,
        "selection_margin": None,
        "device": "cpu",
        "num_workers": 2,
        "out_dir": str(tmp_path / "run"),
        "checkpoint_every": 2,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


def test_face_train_then_evaluate(config_file, tmp_path, capsys, monkeypatch):
    import fairot.face

    kept = []  # the CLI keeps freed memory on CPU; not in this test process
    monkeypatch.setattr(fairot.face, "keep_freed_memory", lambda: kept.append(True) or True)
    assert main(["face", "train", "--config", str(config_file), "--no-progress"]) == 0
    assert kept == [True]
    out = capsys.readouterr().out
    assert "trained mbn-soft for 3 steps" in out and "final group margins" in out
    run = tmp_path / "run"
    assert (run / "checkpoint.pt").exists() and (run / "config.json").exists()
    history = pd.read_csv(run / "history.csv")
    assert list(history["step"]) == [0, 1, 2]
    # resuming a finished run trains nothing more
    args = ["face", "train", "--config", str(config_file), "--no-progress", "--release-memory"]
    assert main(args) == 0
    assert "for 3 steps" in capsys.readouterr().out
    assert kept == [True]

    pairs = tmp_path / "pairs.txt"
    lines = [f"id{k:02d}\t1\t2" for k in range(8)]
    lines += [f"id{k:02d}\t1\tid{(k + 2) % 8:02d}\t3" for k in range(8)]
    pairs.write_text("\n".join(lines) + "\n")
    table = tmp_path / "eval.csv"
    code = main(
        [
            "face",
            "evaluate",
            "--config",
            str(config_file),
            "--pairs",
            str(pairs),
            "--images",
            str(tmp_path / "train"),
            "--extension",
            ".png",
            "--out",
            str(table),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "SER" in printed and "tar@far=0.001" in printed
    result = pd.read_csv(table)
    assert result["n_pairs"].tolist() == [16]


def test_bad_config_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"train_root": "x", "train_groups_csv": "y", "lr": 0.1}))
    assert main(["face", "train", "--config", str(path)]) == 2
    assert "unknown config keys ['lr']" in capsys.readouterr().err
    path.write_text(json.dumps({"train_root": "x", "train_groups_csv": "y"}))
    with pytest.raises(ValueError, match="meta_root/meta_groups_csv"):
        load_config(path)


@pytest.mark.integration
def test_import_fairot_does_not_import_torch():
    code = (
        "import sys, fairot, fairot.metrics, fairot.experiments, fairot.cli; "
        "fairot.cli.build_parser(); assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
