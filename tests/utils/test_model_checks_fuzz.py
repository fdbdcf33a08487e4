"""Fuzz of the tree checks of :func:`fairot.load_model` (issue 37): random tampering of a tree.

A real fitted ``DecisionTreeClassifier`` is saved, then one node's child, feature or threshold
is set to a random value (in range or not). Every file must either be refused
(``UntrustedModelError``) or load a model whose ``predict_proba`` equals an independent plain
Python walk of the same arrays (the oracle: no read outside the arrays, no endless loop).
"""

import io
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from fairot import load_model
from fairot.exceptions import UntrustedModelError
from fairot.utils import model_to_bytes

pytestmark = pytest.mark.fuzz

RNG = np.random.default_rng(1)
X = RNG.normal(size=(120, 3))
Y = (X[:, 0] + 0.5 * X[:, 2] > 0).astype(int)
DATA = model_to_bytes(DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, Y))


def _members():
    with zipfile.ZipFile(io.BytesIO(DATA)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


MEMBERS = _members()
NODES_NAME = next(
    name
    for name, content in MEMBERS.items()
    if name.endswith(".npy")
    and (np.load(io.BytesIO(content)).dtype.names or ())
    and "left_child" in np.load(io.BytesIO(content)).dtype.names
)
NODES = np.load(io.BytesIO(MEMBERS[NODES_NAME]))
VALUES_NAME = next(
    name
    for name, content in MEMBERS.items()
    if name.endswith(".npy")
    and np.load(io.BytesIO(content)).shape[:1] == (len(NODES),)
    and np.load(io.BytesIO(content)).ndim == 3
)
VALUES = np.load(io.BytesIO(MEMBERS[VALUES_NAME]))


def _with_nodes(nodes):
    buffer = io.BytesIO()
    np.save(buffer, nodes, allow_pickle=False)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in MEMBERS.items():
            archive.writestr(name, buffer.getvalue() if name == NODES_NAME else content)
    return out.getvalue()


def _walk(nodes, x):
    """The leaf of row ``x``: a plain walk of the node arrays, bounded by the node count."""
    node = 0
    for _ in range(len(nodes) + 1):
        left, right = int(nodes["left_child"][node]), int(nodes["right_child"][node])
        if left == -1:
            return node
        value = x[int(nodes["feature"][node])]
        node = left if value <= nodes["threshold"][node] else right
    raise AssertionError("the walk did not end: a cycle passed the checks")


INDICES = st.one_of(st.integers(-3, len(NODES) + 3), st.sampled_from([2**31 - 1, -(2**31)]))
THRESHOLDS = st.one_of(st.floats(-3, 3), st.sampled_from([np.nan, np.inf, -np.inf, 1e300, -1e300]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    node=st.integers(0, len(NODES) - 1),
    field=st.sampled_from(["left_child", "right_child", "feature", "threshold"]),
    data=st.data(),
)
def test_a_tampered_tree_is_refused_or_predicts_as_its_arrays_say(node, field, data):
    nodes = NODES.copy()
    nodes[field][node] = data.draw(THRESHOLDS if field == "threshold" else INDICES)
    try:
        model = load_model(_with_nodes(nodes))
    except UntrustedModelError:
        event("refused")
        return
    event("loaded")
    leaves = [_walk(nodes, x) for x in X]
    expected = VALUES[leaves, 0, :]
    expected = expected / expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.predict_proba(X), expected, rtol=1e-12)
