"""``fairot face train`` refuses a bad group CSV (an identity in two groups, an empty cell, a
missing column or file) with one clear message naming the file, the line and the identity."""

import json
import re

import numpy as np
import pytest
from PIL import Image

from fairot.cli import main
from fairot.face import TrainConfig, train_from_config
from fairot.face._groups_csv import (
    GROUPS_CSV_COLUMNS_ERROR,
    GROUPS_CSV_CONFLICT_ERROR,
    GROUPS_CSV_EMPTY_CELL_ERROR,
    GROUPS_CSV_READ_ERROR,
    check_groups_csv,
)


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
