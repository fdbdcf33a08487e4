"""Checkpoints hold tensors and plain data only, and match the manifest written beside them.

A crafted checkpoint (a pickle whose ``__reduce__`` calls ``os.system``) is refused before any of
it runs: the marker file its payload would create never exists. The oracle of "nothing ran" is
the file system, not fairot.
"""

import hashlib
import json
import os
import pickle
import re
import sys

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairot.torch.trainers import (
    CHECKPOINT_MISMATCH_ERROR,
    CHECKPOINT_NO_MANIFEST_ERROR,
    CHECKPOINT_UNSAFE_ERROR,
    CheckpointedTrainer,
    manifest_path,
    read_checkpoint,
    verify_manifest,
)
from fairot.torch.trainers import _base as training


def template_regex(template: str) -> str:
    """A regex matching ``template`` with any text in each ``{placeholder}``."""
    return ".*".join(re.escape(part) for part in re.split(r"\{[^}]*\}", template))


class _Payload:
    """Unpickling it runs a shell command that creates ``marker``."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"{sys.executable} -c \"open({str(self.marker)!r}, 'w')\"",))


class _Counter(CheckpointedTrainer):
    CHECKPOINT_KEYS = ("count", "weights")

    def __init__(self):
        self.callbacks, self.count, self.weights = [], 0, torch.zeros(3)

    def state_dict(self):
        return {"count": self.count, "weights": self.weights.clone()}

    def load_state_dict(self, state):
        self.count, self.weights = int(state["count"]), state["weights"].clone()


def _crafted(path, marker, how):
    state = {"count": 1, "weights": torch.ones(3), "extra": _Payload(marker)}
    if how == "zip":
        torch.save(state, path)
    elif how == "legacy":
        torch.save(state, path, _use_new_zipfile_serialization=False)
    else:  # a bare pickle named checkpoint.pt, of the protocol torch.load reads or the default
        protocol = 2 if how == "pickle2" else pickle.DEFAULT_PROTOCOL
        path.write_bytes(pickle.dumps(state, protocol=protocol))


UNSAFE = template_regex(CHECKPOINT_UNSAFE_ERROR)


@pytest.mark.parametrize("how", ["zip", "legacy", "pickle2", "pickle"])
def test_a_crafted_checkpoint_is_refused_and_nothing_runs(tmp_path, monkeypatch, how):
    marker = tmp_path / "ran"
    path = tmp_path / "checkpoint.pt"
    _crafted(path, marker, how)
    assert not marker.exists()
    # a protocol torch's safe unpickler does not read is refused as unreadable, unrun
    refused = UNSAFE if how != "pickle" else f"{UNSAFE}|cannot be read"
    with pytest.raises(ValueError, match=refused) as caught:
        read_checkpoint(path)
    assert str(path) in str(caught.value)
    if how == "zip":  # the refused global is named (read statically from the pickle)
        assert "posix.system" in str(caught.value) or "os.system" in str(caught.value)
    trainer = _Counter()
    with pytest.raises(ValueError, match=refused):
        trainer.load_checkpoint(path)
    assert trainer.count == 0 and not marker.exists()
    # the environment switch that turns torch's default off cannot reopen the hole
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(ValueError, match=refused):
        read_checkpoint(path)
    assert not marker.exists()


def test_a_checkpoint_with_numpy_objects_is_refused_by_name(tmp_path):
    # What fairot wrote before checkpoints held plain data only: a NumPy generator key.
    path = tmp_path / "old.pt"
    torch.save({"count": 1, "weights": torch.ones(3), "rng": np.zeros(4, np.uint32)}, path)
    with pytest.raises(ValueError, match=UNSAFE) as caught:
        read_checkpoint(path)
    assert "numpy" in str(caught.value)


def test_save_writes_a_manifest_that_matches_and_resume_checks_it(tmp_path):
    path = tmp_path / "checkpoint.pt"
    first = _Counter()
    first.count, first.weights = 7, torch.arange(3.0)
    first.save_checkpoint(path)
    record = json.loads(manifest_path(path).read_text())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()  # oracle: hashlib on the bytes
    assert record["sha256"] == [digest] and record["checkpoint"] == "checkpoint.pt"
    assert verify_manifest(path) == digest
    loaded = _Counter().load_checkpoint(path, require_manifest=True)
    assert loaded.count == 7 and torch.equal(loaded.weights, torch.arange(3.0))
    # every value a weights-only load gives back is a tensor or plain data
    assert torch.load(path, weights_only=True)["count"] == 7


def test_a_changed_checkpoint_does_not_match_its_manifest(tmp_path):
    path = tmp_path / "checkpoint.pt"
    trainer = _Counter()
    trainer.save_checkpoint(path)
    other = _Counter()
    other.count = 99
    torch.save(other.state_dict(), path)  # a valid checkpoint, but not the one fairot wrote
    with pytest.raises(ValueError, match=template_regex(CHECKPOINT_MISMATCH_ERROR)):
        _Counter().load_checkpoint(path)
    with pytest.raises(ValueError, match=template_regex(CHECKPOINT_MISMATCH_ERROR)):
        read_checkpoint(path)


def test_a_missing_manifest_is_refused_only_when_required(tmp_path):
    path = tmp_path / "checkpoint.pt"
    _Counter().save_checkpoint(path)
    manifest_path(path).unlink()
    assert _Counter().load_checkpoint(path).count == 0
    with pytest.raises(ValueError, match=template_regex(CHECKPOINT_NO_MANIFEST_ERROR)):
        _Counter().load_checkpoint(path, require_manifest=True)


@pytest.mark.parametrize(
    "content", [b"", b"{", b"[]", b'{"format": "x", "sha256": ["a"]}', b"x" * 70_000]
)
def test_a_malformed_manifest_is_one_clear_error(tmp_path, content):
    path = tmp_path / "checkpoint.pt"
    _Counter().save_checkpoint(path)
    manifest_path(path).write_bytes(content)
    with pytest.raises(ValueError, match="checkpoint manifest .* cannot be read"):
        read_checkpoint(path)


@pytest.mark.parametrize("fail_at", [1, 2])
def test_a_run_killed_between_checkpoint_and_manifest_still_resumes(tmp_path, monkeypatch, fail_at):
    """Die at either manifest write of the second checkpoint: what is on disk still matches."""
    path = tmp_path / "checkpoint.pt"
    trainer = _Counter()
    trainer.save_checkpoint(path)
    trainer.count = 5
    real, calls = training.write_manifest, []

    def dying(*args):
        calls.append(args)
        if len(calls) == fail_at:
            raise KeyboardInterrupt  # as a kill would, mid-save
        real(*args)

    monkeypatch.setattr(training, "write_manifest", dying)
    with pytest.raises(KeyboardInterrupt):
        trainer.save_checkpoint(path)
    monkeypatch.setattr(training, "write_manifest", real)
    resumed = _Counter().load_checkpoint(path, require_manifest=True)
    assert resumed.count == (0 if fail_at == 1 else 5)


def test_save_refuses_a_state_it_could_not_read_back(tmp_path):
    class Bad(_Counter):
        def state_dict(self):
            return {**super().state_dict(), "rng": np.random.default_rng(0)}

    with pytest.raises(TypeError, match="tensors and plain data only"):
        Bad().save_checkpoint(tmp_path / "c.pt")
    assert not (tmp_path / "c.pt").exists()


FLIPS = st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4)


@pytest.mark.fuzz
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(flips=FLIPS)
def test_a_corrupted_checkpoint_is_a_dict_or_one_clear_error(tmp_path_factory, flips):
    folder = tmp_path_factory.mktemp("fuzz")
    path, marker = folder / "checkpoint.pt", folder / "ran"
    _crafted(path, marker, "zip")  # a payload inside: corruption must not make it run
    data = bytearray(path.read_bytes())
    for at, byte in flips:
        data[at % len(data)] = byte
    path.write_bytes(bytes(data))
    try:
        state = read_checkpoint(path)
    except ValueError as error:
        assert str(path) in str(error)
    else:
        assert isinstance(state, dict)
    assert not marker.exists()
