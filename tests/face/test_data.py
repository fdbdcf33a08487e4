import re

import numpy as np
import pytest
import torch
from PIL import Image

from fairot.face import MLP, FaceFolderDataset, MetaBalancedTrainer, iresnet18, make_method
from fairot.face._data import (
    MISSING_GROUP_ERROR,
    embed_images,
    load_face_image,
    load_rfw_pairs,
    read_rfw_pairs,
)


def _folder(tmp_path, n_ids=4, per_id=3, size=16):
    rng = np.random.default_rng(0)
    root = tmp_path / "faces"
    rows = ["identity,group"]
    for k in range(n_ids):
        name = f"m.{k:03d}"
        (root / name).mkdir(parents=True)
        for i in range(1, per_id + 1):
            pixels = rng.integers(0, 256, size=(size, size, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / name / f"{name}_{i:04d}.png")
        rows.append(f"{name},{'Tone I' if k % 2 == 0 else 'Tone II'}")
    csv = tmp_path / "groups.csv"
    csv.write_text("\n".join(rows) + "\n")
    return root, csv


def test_face_folder_dataset_reads_identities_groups_and_normalises(tmp_path):
    root, csv = _folder(tmp_path)
    ds = FaceFolderDataset(root, csv)
    assert len(ds) == 12 and ds.n_classes == 4
    assert ds.group_names == ["Tone I", "Tone II"]
    assert ds.labels.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert ds.groups.tolist() == [0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1]
    image, label, group = ds[4]
    raw = np.asarray(Image.open(ds.paths[4]).convert("RGB"), dtype=np.float32)
    np.testing.assert_allclose(image.numpy(), (raw.transpose(2, 0, 1) - 127.5) / 128)
    assert (label, group) == (1, 1)
    resized = FaceFolderDataset(root, csv, image_size=32)
    assert resized[0][0].shape == (3, 32, 32)


def test_face_folder_dataset_trains_with_the_trainer(tmp_path):
    root, csv = _folder(tmp_path)
    ds = FaceFolderDataset(root, csv, transform=lambda t: t.flatten())
    spec = make_method("arcface", n_classes=4, embedding_size=4, n_groups=2, scale=8.0)
    trainer = MetaBalancedTrainer(
        MLP(3 * 16 * 16, embedding_size=4, hidden_sizes=(8,)), spec.loss, random_state=0
    )
    trainer.fit(ds, n_steps=2, batch_size=6)
    assert trainer.step_ == 2


def test_missing_group_is_named(tmp_path):
    root, csv = _folder(tmp_path)
    csv.write_text("identity,group\nm.000,A\n")
    with pytest.raises(ValueError, match=re.escape(MISSING_GROUP_ERROR.split("{")[0])):
        FaceFolderDataset(root, csv)
    with pytest.raises(ValueError, match="must be a directory"):
        FaceFolderDataset(tmp_path / "nowhere")


def test_rfw_pair_lists(tmp_path):
    root, _ = _folder(tmp_path)
    race_root = tmp_path / "rfw"
    (race_root / "txts" / "African").mkdir(parents=True)
    (race_root / "data").mkdir()
    (race_root / "data" / "African").symlink_to(root)
    (race_root / "txts" / "African" / "African_pairs.txt").write_text(
        "m.000\t1\t2\nm.000\t3\tm.001\t1\n"
    )
    pairs = load_rfw_pairs(race_root, races=("African",))
    assert pairs["is_same"].tolist() == [True, False]
    assert pairs["group"].tolist() == ["African", "African"]
    assert pairs.loc[1, "path2"].name == "m.001_0001.jpg"
    bad = tmp_path / "bad.txt"
    bad.write_text("m.000 1\n")
    with pytest.raises(ValueError, match="an RFW pair line is"):
        read_rfw_pairs(bad, root)
    # the png crops of the folder are read through the pair paths with the right extension
    pairs_png = read_rfw_pairs(race_root / "txts/African/African_pairs.txt", root, extension=".png")
    net = iresnet18(embedding_size=8, input_size=16)
    emb = embed_images(net, list(pairs_png["path1"]), batch_size=1, flip=True)
    assert emb.shape == (2, 8)
    direct = load_face_image(pairs_png.loc[0, "path1"])
    net.eval()
    with torch.no_grad():
        x = torch.from_numpy(direct)[None]
        expected = net(x) + net(torch.flip(x, dims=[3]))
    np.testing.assert_allclose(emb[0], expected[0].numpy(), rtol=1e-5, atol=1e-5)
