"""``fairot face train``'s config bounds: an out-of-range value is one message naming the key,
and the bounds are what torch and NumPy accept."""

import json
import re

import numpy as np
import pytest

from fairot.cli import main
from fairot.face import load_config
from fairot.face._config_checks import (
    CONFIG_TYPE_ERROR,
    MAX_EMBEDDING_SIZE,
    MAX_SCALE,
    MAX_SEED,
)


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
