"""Hypothesis fuzz of the face losses' public boundary: a finite loss or one of our clear errors.

Never a NaN/inf loss, never an exception from deep inside torch, never a changed input. The
``fairot face train`` config and group-CSV checks: a loaded config within its bounds, or one of
our messages, never a traceback.
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fairot.face import _config as cfg
from fairot.face import _config_checks as checks
from fairot.face import _groups_csv as gcsv
from fairot.face import _meta_gradients as meta_gradients
from fairot.face import _methods as methods
from fairot.face import _trainer_checks as trainer_checks
from fairot.face import load_config
from fairot.torch import checks as ml
from fairot.torch import losses
from fairot.torch.losses import _skewness as sk
from tests.helpers import fills_template, message_constants

pytestmark = pytest.mark.fuzz

D, C, K = 4, 5, 3
OUR_MESSAGES = message_constants((ml, sk), suffix="_ERROR")
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def _ours(message: str) -> bool:
    """Whether ``message`` is one of the modules' error constants, placeholders filled."""
    return fills_template(message, OUR_MESSAGES)


values = st.one_of(
    st.floats(-1e4, 1e4, allow_nan=False, width=32),
    st.sampled_from([0.0, float("nan"), float("inf"), -float("inf"), 1e-30, 6e4]),
)


@st.composite
def batches(draw):
    n = draw(st.integers(0, 8))
    width = draw(st.sampled_from([D, D, D, D - 1]))
    emb = draw(hnp.arrays(np.float64, (n, width), elements=values))
    labels = draw(hnp.arrays(np.int64, (n,), elements=st.integers(-1, C)))
    groups = draw(hnp.arrays(np.int64, (n,), elements=st.integers(-1, K)))
    weight = draw(
        st.none() | hnp.arrays(np.float64, (n,), elements=st.sampled_from([0.0, 1.0, 2.5, -1.0]))
    )
    return emb, labels, groups, weight


def _check(call, inputs):
    copies = [t.clone() if torch.is_tensor(t) else t for t in inputs]
    try:
        value = call(*inputs)
    except (ValueError, TypeError) as exc:
        assert _ours(str(exc)), f"unclear error: {exc!r}"
        return
    finally:
        for before, after in zip(copies, inputs, strict=True):
            if torch.is_tensor(after):
                assert torch.equal(before, after) or (
                    torch.isnan(before).any() and torch.equal(before.isnan(), after.isnan())
                )
    assert bool(torch.isfinite(value)), f"silent {value}"


@given(
    batch=batches(),
    kind=st.sampled_from(["arc", "cos"]),
    anchor=st.sampled_from(["arc", "cos", "softmax"]),
    dtype=st.sampled_from(sorted(DTYPES)),
    as_numpy=st.booleans(),
)
def test_group_margin_loss_is_finite_or_clearly_refused(batch, kind, anchor, dtype, as_numpy):
    emb, labels, groups, weight = batch
    torch.manual_seed(0)
    loss = losses.GroupMarginLoss(C, D, K, kind=kind, anchor_loss=anchor, init_margin=0.2)
    x = emb if as_numpy else torch.as_tensor(emb).to(DTYPES[dtype])
    sample_weight = None if weight is None else torch.as_tensor(weight)
    _check(
        lambda e, y, g: loss(e, y, g, sample_weight=sample_weight),
        (x, torch.as_tensor(labels), torch.as_tensor(groups)),
    )


@given(batch=batches(), dtype=st.sampled_from(sorted(DTYPES)), n_groups=st.sampled_from([None, K]))
def test_meta_skewness_loss_is_finite_or_clearly_refused(batch, dtype, n_groups):
    emb, labels, groups, _ = batch
    meta = losses.MetaSkewnessLoss(selection_margin=None, n_groups=n_groups)
    x = torch.as_tensor(emb).to(DTYPES[dtype])
    with warnings.catch_warnings():
        # expected on batches without positive pairs; any other warning still fails the test
        warnings.simplefilter("ignore", losses.MetaBatchWarning)
        _check(meta, (x, torch.as_tensor(labels), torch.as_tensor(groups)))


@given(
    scale=st.one_of(st.floats(allow_nan=True), st.integers(-3, 3), st.booleans()),
    margin=st.one_of(st.floats(allow_nan=True), st.integers(-3, 3)),
)
def test_constructors_accept_only_finite_positive_numbers(scale, margin):
    try:
        loss = losses.CosFaceLoss(C, D, margin=margin, scale=scale)
    except ValueError as exc:
        assert _ours(str(exc)), f"unclear error: {exc!r}"
        return
    assert np.isfinite(loss.scale) and loss.scale > 0
    assert np.isfinite(loss.margin) and loss.margin >= 0


# -- ``fairot face train`` configs (issue 19): validation only, no training ------------------


CONFIG_MESSAGES = message_constants(
    (cfg, checks, gcsv, methods, trainer_checks, meta_gradients), suffix="_ERROR"
)


def _ours_config(message: str) -> bool:
    return fills_template(message, CONFIG_MESSAGES)


hostile = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, 2**32 - 1, 2**32, 2**64, 10**12, 65536, 65537]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, 1e4, 1e4 + 1, 64.0, -0.0]),
    st.booleans(),
    st.none(),
    st.text(max_size=5),
    st.lists(st.integers(-2, 3), max_size=3),
)
KEYS = [
    "seed",
    "embedding_size",
    "scale",
    "image_size",
    "n_steps",
    "batch_size",
    "learning_rate",
    "momentum",
    "selection_margin",
    "anchor_groups",
    "resume",
    "method",
    "device",
    "lr",
]


@given(values=st.dictionaries(st.sampled_from(KEYS), hostile, max_size=4))
def test_face_config_loads_or_is_clearly_refused(tmp_path_factory, values):
    base = {"train_root": "x", "train_groups_csv": "y", "method": "arcface", "device": "cpu"}
    path = tmp_path_factory.mktemp("cfg") / "config.json"
    path.write_text(json.dumps({**base, **values}))
    try:
        config = load_config(path)
    except ValueError as exc:
        assert _ours_config(str(exc)), f"unclear error: {exc!r}"
        return
    assert 0 <= config.seed <= checks.MAX_SEED
    assert 1 <= config.embedding_size <= checks.MAX_EMBEDDING_SIZE
    assert 0 < config.scale <= checks.MAX_SCALE


cells = st.sampled_from(["a", "b", "", " ", "NA", "nan", "id0", "id1", "id2", "1"])


@given(rows=st.lists(st.tuples(cells, cells), max_size=6), header=st.booleans())
def test_groups_csv_is_accepted_only_when_one_group_per_identity(tmp_path_factory, rows, header):
    path = tmp_path_factory.mktemp("csv") / "groups.csv"
    head = "identity,group" if header else "name,group"
    path.write_text("\n".join([head, *(f"{i},{g}" for i, g in rows)]) + "\n")
    try:
        gcsv.check_groups_csv(path, "train_groups_csv")
    except ValueError as exc:
        assert _ours_config(str(exc)), f"unclear error: {exc!r}"
        return
    # accepted: the oracle, pandas' own reading, has no missing cell and one group per identity
    table = pd.read_csv(path, dtype={"identity": str})
    assert header and not table.isna().any().any()
    assert (table.groupby("identity")["group"].nunique() <= 1).all()
