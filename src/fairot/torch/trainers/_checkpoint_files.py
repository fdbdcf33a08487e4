"""What a checkpoint may hold, and the manifest that says fairot wrote it.

A checkpoint holds tensors and plain data only (:func:`plain_state`), so that
``torch.load(weights_only=True)`` rebuilds it without running anything from the file. Beside it
goes its manifest (:func:`manifest_path`): its SHA-256 and the fairot version that wrote it,
checked by :func:`verify_manifest` before a checkpoint is loaded.

Internal surface (used and re-exported by :mod:`fairot.torch.trainers`): the functions in
``__all__``, :class:`HashingWriter`, :func:`manifest_hashes`, :func:`write_manifest`,
:func:`unsafe_globals` and the message constants.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from fairot.utils import fairot_version, write_atomic

__all__ = ["first_line", "manifest_path", "plain_state", "verify_manifest"]

CHECKPOINT_UNSAFE_ERROR = (
    "checkpoint {path} is refused: it holds {types}, not only tensors and plain data, and "
    "fairot loads checkpoints with torch.load(weights_only=True) so that no code in a file runs. "
    "fairot never writes such a checkpoint (an older fairot version may have; or the file was "
    "crafted). Delete it to start afresh, or point to another one."
)
CHECKPOINT_NO_MANIFEST_ERROR = (
    "checkpoint {path} has no manifest ({manifest} is missing): fairot resumes only from a "
    "checkpoint it wrote itself, with its SHA-256 in the manifest beside it. Delete the "
    "checkpoint (or set resume to false) to start afresh, or choose another out_dir."
)
CHECKPOINT_MISMATCH_ERROR = (
    "checkpoint {path} does not match its manifest {manifest} (SHA-256 {actual}, the manifest "
    "lists {expected}): it was truncated, edited or replaced after fairot wrote it. Delete the "
    "checkpoint and its manifest (or set resume to false) to start afresh, or choose another "
    "out_dir."
)
CHECKPOINT_MANIFEST_ERROR = (
    "checkpoint manifest {manifest} cannot be read ({reason}). Delete the checkpoint and its "
    "manifest (or set resume to false) to start afresh, or choose another out_dir."
)
CHECKPOINT_STATE_ERROR = (
    "a checkpoint holds tensors and plain data only; the state's {where} is a {kind}."
)
#: Suffix of a checkpoint's manifest: ``checkpoint.pt`` -> ``checkpoint.pt.manifest.json``.
MANIFEST_SUFFIX = ".manifest.json"
#: A manifest is a few hundred bytes; a bigger file is not one.
MANIFEST_MAX_BYTES = 64 * 1024
_MANIFEST_FORMAT = "fairot-checkpoint-manifest"
#: The non-container values a checkpoint may hold (``torch.load(weights_only=True)`` rebuilds
#: them without running code from the file).
_PLAIN = (
    *(str, bytes, bytearray, int, float, complex, bool, type(None)),
    *(torch.Size, torch.dtype, torch.device, torch.memory_format, torch.layout),
)
_MAPPINGS = (dict, OrderedDict, Counter)


def first_line(exc: BaseException) -> str:
    r"""The first line of an exception's message, or its type's name when it has none.

    Examples
    --------
    >>> from fairot.torch.trainers import first_line
    >>> first_line(RuntimeError("size mismatch\n\tfor fc.weight")), first_line(KeyError())
    ('size mismatch', 'KeyError')
    """
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def manifest_path(path: str | Path) -> Path:
    """The manifest beside a checkpoint: its name with ``.manifest.json`` appended.

    Examples
    --------
    >>> from fairot.torch.trainers import manifest_path
    >>> manifest_path("run/checkpoint.pt").as_posix()
    'run/checkpoint.pt.manifest.json'
    """
    path = Path(path)
    return path.with_name(path.name + MANIFEST_SUFFIX)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def manifest_hashes(manifest: Path) -> list[str]:
    """The SHA-256 digests a manifest accepts (one; two while a new checkpoint replaces one)."""
    try:
        with manifest.open("rb") as f:
            raw = f.read(MANIFEST_MAX_BYTES + 1)
        if len(raw) > MANIFEST_MAX_BYTES:
            raise ValueError(f"larger than {MANIFEST_MAX_BYTES} bytes")
        record = json.loads(raw)
        hashes = record["sha256"] if isinstance(record, dict) else None
        if record.get("format") != _MANIFEST_FORMAT or not (
            isinstance(hashes, list)
            and hashes
            and all(isinstance(h, str) and len(h) == 64 for h in hashes)
        ):
            raise ValueError("not a fairot checkpoint manifest")
    except (OSError, ValueError, KeyError, AttributeError) as exc:
        raise ValueError(
            CHECKPOINT_MANIFEST_ERROR.format(manifest=manifest, reason=first_line(exc))
        ) from None
    return hashes


def write_manifest(path: Path, hashes: list[str]) -> None:
    record = {
        "format": _MANIFEST_FORMAT,
        "checkpoint": path.name,
        "sha256": hashes,
        "fairot": fairot_version(),
    }
    write_atomic(manifest_path(path), json.dumps(record, indent=2) + "\n")


def verify_manifest(path: str | Path, *, required: bool = True) -> str | None:
    """Check a checkpoint against the manifest :meth:`~CheckpointedTrainer.save_checkpoint` wrote.

    Parameters
    ----------
    path : str or Path
        The checkpoint.
    required : bool, default=True
        Whether a missing manifest is an error; when False, a checkpoint without one passes
        (and the function returns None), but one that contradicts its manifest never does.

    Returns
    -------
    str or None
        The checkpoint's SHA-256 (hexadecimal), or None when there is no manifest and none
        is required.

    Raises
    ------
    ValueError
        When the manifest is missing (``required``), unreadable, or lists another SHA-256.

    Examples
    --------
    >>> import tempfile, pathlib, torch
    >>> from fairot.torch.trainers import verify_manifest
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "c.pt"
    >>> torch.save({"epoch": 3}, path)
    >>> verify_manifest(path, required=False) is None
    True
    >>> verify_manifest(path)
    Traceback (most recent call last):
    ...
    ValueError: checkpoint ... has no manifest (... is missing): fairot resumes only ...
    """
    path = Path(path)
    manifest = manifest_path(path)
    if not manifest.exists():
        if required:
            raise ValueError(CHECKPOINT_NO_MANIFEST_ERROR.format(path=path, manifest=manifest))
        return None
    hashes = manifest_hashes(manifest)
    actual = _sha256(path)
    if actual not in hashes:
        raise ValueError(
            CHECKPOINT_MISMATCH_ERROR.format(
                path=path, manifest=manifest, actual=actual, expected=" or ".join(hashes)
            )
        )
    return actual


def plain_state(state: Any, at: str = "") -> Any:
    """``state`` with NumPy's double, integer and bool scalars as Python's; refuses the rest.

    A checkpoint holds tensors and plain data only (what ``torch.load(weights_only=True)``
    rebuilds without running code). Schedulers and history rows often hold NumPy scalars
    (``numpy.float64`` pickles through NumPy's globals): those whose value a Python ``int``,
    ``float`` or ``bool`` holds exactly are converted; anything else raises.

    Raises
    ------
    TypeError
        Naming where in the state the offending value is and its type.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.torch.trainers import plain_state
    >>> plain_state({"step": 3, "lr": [np.float64(0.5)]})
    {'step': 3, 'lr': [0.5]}
    >>> plain_state({"rng": np.zeros(2)})
    Traceback (most recent call last):
    ...
    TypeError: a checkpoint holds tensors and plain data only; the state's ['rng'] is a ...
    """
    kind = type(state)
    if kind in _MAPPINGS:
        for key in state:
            if type(key) not in _PLAIN:
                name = f"{type(key).__module__}.{type(key).__qualname__}"
                raise TypeError(CHECKPOINT_STATE_ERROR.format(where=f"{at} key", kind=name))
        return kind((key, plain_state(item, f"{at}[{key!r}]")) for key, item in state.items())
    if kind in (list, tuple, set):
        return kind(plain_state(item, f"{at}[{i}]") for i, item in enumerate(state))
    if kind in _PLAIN or isinstance(state, torch.Tensor):
        return state
    # type(), not isinstance: a NumPy double is a float subclass that pickles through NumPy.
    if kind in (np.float64, np.bool_) or (
        isinstance(state, np.integer) and np.iinfo(kind).bits <= 64
    ):
        return state.item()
    name = f"{kind.__module__}.{kind.__qualname__}"
    raise TypeError(CHECKPOINT_STATE_ERROR.format(where=at or "whole", kind=name))


def unsafe_globals(path: Path, exc: BaseException) -> str:
    """The names of the globals a refused checkpoint asks for (read statically, never run)."""
    try:
        names = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    except Exception:  # a legacy (non-zip) pickle: torch's own first line names the global
        names = []
    return ", ".join(sorted(names)) if names else f"something else ({first_line(exc)})"


class HashingWriter:
    """A write-only file that hashes what passes through it (``torch.save`` only writes)."""

    def __init__(self, f) -> None:
        self.f = f
        self.digest = hashlib.sha256()

    def write(self, data) -> int:
        self.digest.update(data)
        return self.f.write(data)

    def flush(self) -> None:
        self.f.flush()
