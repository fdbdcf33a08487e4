"""Issue 19: ``fairot face train`` refuses bad group CSVs, out-of-range config values and a
second run into a locked ``out_dir``, each with one clear message."""

import json
import os
import re
import socket
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from fairot.cli import main
from fairot.face import TrainConfig, load_config, train_from_config
from fairot.face._config_checks import (
    CONFIG_TYPE_ERROR,
    MAX_EMBEDDING_SIZE,
    MAX_SCALE,
    MAX_SEED,
)
from fairot.face._groups_csv import (
    GROUPS_CSV_COLUMNS_ERROR,
    GROUPS_CSV_CONFLICT_ERROR,
    GROUPS_CSV_EMPTY_CELL_ERROR,
    GROUPS_CSV_READ_ERROR,
    check_groups_csv,
)
from fairot.face._lock import LOCK_NAME, RUN_LOCKED_ERROR, hold_run_lock


def _faces(root, n_ids=4):
    rng = np.random.default_rng(0)
    for k in range(n_ids):
        (root / f"id{k}").mkdir(parents=True)
        for i in (1, 2):
            pixels = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / f"id{k}" / f"{i}.png")
    return root


def _config(tmp_path, csv_text=None, **overrides):
    faces = _faces(tmp_path / "faces")
    csv = tmp_path / "groups.csv"
    csv.write_text(csv_text or "identity,group\nid0,a\nid1,b\nid2,a\nid3,b\n")
    values = {
        "train_root": str(faces),
        "train_groups_csv": str(csv),
        "method": "arcface",
        "backbone": "mlp",
        "embedding_size": 4,
        "image_size": 8,
        "n_steps": 1,
        "batch_size": 4,
        "meta_batch_size": 4,
        "device": "cpu",
        "num_workers": 0,
        "checkpoint_every": 0,
        "out_dir": str(tmp_path / "run"),
    }
    return TrainConfig(**{**values, **overrides}), csv


def _message(template, **values):
    return re.escape(template.format(**values))


# -- 1. the group CSV ------------------------------------------------------------------------


def test_identity_in_two_groups_is_refused(tmp_path, capsys):
    text = "identity,group\nid0,a\nid1,b\nid2,a\nid3,b\nid1,a\n"
    config, csv = _config(tmp_path, text)
    expected = GROUPS_CSV_CONFLICT_ERROR.format(
        key="train_groups_csv", path=csv, identity="id1", first="b", line1=3, second="a", line2=6
    )
    with pytest.raises(ValueError, match=re.escape(expected)):
        train_from_config(config, progress=False)
    assert not (tmp_path / "run").exists()  # refused before anything was written
    # and through the CLI: one line on stderr, exit status 2, no traceback
    path = tmp_path / "config.json"
    path.write_text(json.dumps({k: v for k, v in vars(config).items()}))
    assert main(["face", "train", "--config", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "line", "column", "identity"),
    [
        ("identity,group\nid0,a\nid1,\nid2,a\nid3,b\n", 3, "group", "id1"),
        ("identity,group\nid0,a\nid1,b\nid2,  \nid3,b\n", 4, "group", "id2"),
        ("identity,group\nid0,a\nid1,b\nid2,a\nid3,NA\n", 5, "group", "id3"),
        ("identity,group\nid0,a\n,b\nid1,b\nid2,a\nid3,b\n", 3, "identity", None),
    ],
)
def test_empty_group_cell_is_refused(tmp_path, text, line, column, identity):
    config, csv = _config(tmp_path, text)
    expected = GROUPS_CSV_EMPTY_CELL_ERROR.format(
        key="train_groups_csv", path=csv, line=line, column=column, identity=identity
    )
    with pytest.raises(ValueError, match=re.escape(expected)):
        train_from_config(config, progress=False)


def test_same_group_twice_is_accepted_and_bad_files_are_named(tmp_path):
    csv = tmp_path / "g.csv"
    csv.write_text("identity,group\nid0,a\nid0,a\n")
    check_groups_csv(csv, "train_groups_csv")  # a repeated row agrees with itself
    csv.write_text("name,group\nid0,a\n")
    with pytest.raises(
        ValueError,
        match=_message(
            GROUPS_CSV_COLUMNS_ERROR, key="meta_groups_csv", path=csv, columns=["name", "group"]
        ),
    ):
        check_groups_csv(csv, "meta_groups_csv")
    missing = tmp_path / "absent.csv"
    prefix = GROUPS_CSV_READ_ERROR.format(key="train_groups_csv", path=missing, reason="@")
    with pytest.raises(ValueError, match=re.escape(prefix.split("@")[0])):
        check_groups_csv(missing, "train_groups_csv")


# -- 2. config bounds ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "what"),
    [
        ("seed", 2**64, f"an int in [0, {MAX_SEED}]"),
        ("seed", MAX_SEED + 1, f"an int in [0, {MAX_SEED}]"),
        ("seed", -1, f"an int in [0, {MAX_SEED}]"),
        ("embedding_size", 10**12, f"an int in [1, {MAX_EMBEDDING_SIZE}]"),
        ("embedding_size", 0, f"an int in [1, {MAX_EMBEDDING_SIZE}]"),
        ("scale", 1e308, f"a number in (0, {MAX_SCALE:g}]"),
        ("scale", MAX_SCALE * 1.01, f"a number in (0, {MAX_SCALE:g}]"),
        ("scale", 0.0, f"a number in (0, {MAX_SCALE:g}]"),
    ],
)
def test_out_of_range_config_values_name_the_key(tmp_path, capsys, key, value, what):
    path = tmp_path / "config.json"
    config = {"train_root": "x", "train_groups_csv": "y", "method": "arcface", "device": "cpu"}
    path.write_text(json.dumps({**config, key: value}))
    expected = CONFIG_TYPE_ERROR.format(key=key, what=what, value=value)
    with pytest.raises(ValueError, match=re.escape(expected)):
        load_config(path)
    assert main(["face", "train", "--config", str(path)]) == 2
    assert expected in capsys.readouterr().err


def test_bounds_are_what_torch_and_numpy_accept(tmp_path):
    # The greatest accepted seed seeds torch and numpy's legacy RandomState (the strictest).
    import torch

    torch.manual_seed(MAX_SEED)
    np.random.RandomState(MAX_SEED)
    with pytest.raises(ValueError):
        np.random.RandomState(MAX_SEED + 1)
    # scale * cos stays finite in float32 at the greatest accepted scale
    assert np.isfinite(np.float32(MAX_SCALE) * np.float32(-1.0))
    path = tmp_path / "config.json"
    limits = {"seed": MAX_SEED, "embedding_size": MAX_EMBEDDING_SIZE, "scale": MAX_SCALE}
    path.write_text(
        json.dumps({"train_root": "x", "train_groups_csv": "y", "method": "arcface", **limits})
    )
    config = load_config(path)
    assert (config.seed, config.embedding_size, config.scale) == tuple(limits.values())


# -- 3. the out_dir lock ---------------------------------------------------------------------

_HOLDER = """
import sys
from fairot.face._lock import hold_run_lock
with hold_run_lock(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def _hold_in_child(out_dir):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(out_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout.readline().strip() == "locked"
    return child


@pytest.mark.integration
def test_second_run_into_a_locked_out_dir_is_refused(tmp_path):
    config, _ = _config(tmp_path)
    out = tmp_path / "run"
    out.mkdir()
    child = _hold_in_child(out)
    try:
        holder = f"pid {child.pid} on {socket.gethostname()}"
        prefix = RUN_LOCKED_ERROR.format(path=out, holder=holder)
        with pytest.raises(ValueError, match=re.escape(prefix)):
            train_from_config(config, progress=False)
        assert not (out / "checkpoint.pt").exists()
    finally:
        child.stdin.close()
        child.wait(timeout=60)
        child.stdout.close()
    # the holder has ended: its lock is gone and this run trains
    trainer = train_from_config(config, progress=False)
    assert trainer.step_ == 1 and (out / "checkpoint.pt").exists()


def test_two_locks_in_one_process_and_a_stale_lock(tmp_path):
    busy = pytest.raises(ValueError, match="in use by another")
    with hold_run_lock(tmp_path), busy, hold_run_lock(tmp_path):
        pass
    # A lock file left by a dead process (any PID in it) holds no flock: it is taken over.
    (tmp_path / LOCK_NAME).write_text("pid 999999999 on elsewhere\n")
    with hold_run_lock(tmp_path) as path:
        assert path.read_text().startswith(f"pid {os.getpid()} on ")
