"""Range and type checks of a :class:`~fairot.face.TrainConfig`, before any data is read.

Internal surface (used by ``_config``): :data:`CONFIG_TYPE_ERROR`, :data:`MAX_SEED`,
:data:`MAX_EMBEDDING_SIZE`, :data:`MAX_SCALE`, :func:`check_config_values`.
"""

from __future__ import annotations

import math

from ._trainer_checks import check_device

CONFIG_TYPE_ERROR = "config key {key!r} must be {what}; got {value!r}."

#: numpy's legacy seeding (``np.random.seed``, ``RandomState``) and many tools that re-seed
#: workers take 32-bit seeds only; torch takes 64 bits. One range that every consumer accepts.
MAX_SEED = 2**32 - 1
#: An iresnet's last layer has 25,088 x embedding_size float32 weights: 6.6 GB at 2**16, far
#: beyond the 512 of the papers; larger asks are typos that would end in an allocation failure.
MAX_EMBEDDING_SIZE = 2**16
#: Logits are ``scale * cos``; float32 resolves a cosine to ~1.2e-7, so at scale 1e4 the logits
#: are off by ~1e-3 already and beyond that rounding, not the data, drives the loss (and far
#: above, float32 overflows to inf). Practice uses 30 to 64.
MAX_SCALE = 1e4

#: Counts of the config and their least and greatest values.
_COUNT_KEYS = {
    "embedding_size": (1, MAX_EMBEDDING_SIZE),
    "image_size": (1, None),
    "n_steps": (0, None),
    "batch_size": (1, None),
    "meta_batch_size": (1, None),
    "meta_every": (1, None),
    "num_workers": (0, None),
    "checkpoint_every": (0, None),
    "seed": (0, MAX_SEED),
}
_POSITIVE_KEYS = {"learning_rate": None, "margin_learning_rate": None, "scale": MAX_SCALE}
_NON_NEGATIVE_KEYS = ("momentum", "weight_decay", "gamma")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_config_values(config) -> None:
    """Raise one ``ValueError`` naming the first config key of the wrong type or range."""

    def fail(key, what):
        raise ValueError(CONFIG_TYPE_ERROR.format(key=key, what=what, value=getattr(config, key)))

    for key, (low, high) in _COUNT_KEYS.items():
        value = getattr(config, key)
        if not _is_int(value) or value < low or (high is not None and value > high):
            fail(key, f"an int >= {low}" if high is None else f"an int in [{low}, {high}]")
    for key, high in _POSITIVE_KEYS.items():
        value = getattr(config, key)
        if not _is_number(value) or not value > 0 or (high is not None and value > high):
            fail(key, "a finite number > 0" if high is None else f"a number in (0, {high:g}]")
    for key in _NON_NEGATIVE_KEYS:
        if not _is_number(getattr(config, key)) or getattr(config, key) < 0:
            fail(key, "a finite number >= 0")
    if config.selection_margin is not None and not _is_number(config.selection_margin):
        fail("selection_margin", "a finite number or null")
    for key in ("lr_milestones", "margin_milestones", "anchor_groups"):
        value = getattr(config, key)
        if not isinstance(value, list) or not all(_is_int(v) and v >= 0 for v in value):
            fail(key, "a list of ints >= 0")
    for key in ("reuse_lookahead_gradient", "resume"):
        if not isinstance(getattr(config, key), bool):
            fail(key, "true or false")
    for key in ("method", "backbone", "meta_gradient", "device", "out_dir"):
        if not isinstance(getattr(config, key), str):
            fail(key, "a string")
    check_device(config.device)
