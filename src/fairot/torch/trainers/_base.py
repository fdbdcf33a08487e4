"""What every fairot training loop shares: callback hooks and all-or-nothing checkpoints.

:class:`~fairot.torch.FairTrainer` (floor 3) and :class:`~fairot.face.MetaBalancedTrainer`
(floor 5, the face application) both derive from :class:`CheckpointedTrainer` and call the hooks
of :class:`Callback`. A trainer says what its state is (:meth:`CheckpointedTrainer.state_dict`
and :meth:`CheckpointedTrainer.load_state_dict`, and the keys every checkpoint of it holds); the
base writes it atomically, reads it back verified and loads it all or nothing, so that a run
killed at any moment resumes from its last checkpoint exactly as if it had never stopped.

A checkpoint holds tensors and plain data only (dicts, lists, tuples, str, int, float, bool,
None): :meth:`CheckpointedTrainer.save_checkpoint` refuses anything else, and
:func:`read_checkpoint` loads with ``torch.load(weights_only=True)``, so a crafted file (a pickle
whose ``__reduce__`` calls ``os.system``) is refused before anything of it runs. Beside every
checkpoint goes its manifest (:func:`manifest_path`: the file's SHA-256 and the fairot version
that wrote it); a checkpoint that does not match its manifest is refused, and a reader that
must only resume from checkpoints fairot wrote (``fairot face train``) requires one.
"""

from __future__ import annotations

import copy
import pickle
from numbers import Integral
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sklearn.utils import check_random_state

from fairot.utils import atomic_write, remove_stale_temporaries

from ._checkpoint_files import (
    CHECKPOINT_MANIFEST_ERROR,
    CHECKPOINT_MISMATCH_ERROR,
    CHECKPOINT_NO_MANIFEST_ERROR,
    CHECKPOINT_STATE_ERROR,
    CHECKPOINT_UNSAFE_ERROR,
    HashingWriter,
    first_line,
    manifest_hashes,
    manifest_path,
    plain_state,
    unsafe_globals,
    verify_manifest,
    write_manifest,
)

__all__ = [
    "CHECKPOINT_FIT_ERROR",
    "CHECKPOINT_MANIFEST_ERROR",
    "CHECKPOINT_MISMATCH_ERROR",
    "CHECKPOINT_NO_MANIFEST_ERROR",
    "CHECKPOINT_READ_ERROR",
    "CHECKPOINT_STATE_ERROR",
    "CHECKPOINT_UNSAFE_ERROR",
    "Callback",
    "CheckpointedTrainer",
    "first_line",
    "manifest_path",
    "plain_state",
    "read_checkpoint",
    "resolve_seed",
    "verify_manifest",
]

CHECKPOINT_READ_ERROR = (
    "checkpoint {path} cannot be read ({reason}); it is truncated, corrupt or not a fairot "
    "checkpoint. Delete it to start afresh, or point to another one."
)
CHECKPOINT_FIT_ERROR = (
    "checkpoint {path} does not fit this trainer: {reason}. It was written for another model, "
    "loss or method; build the trainer with the arguments that wrote it."
)


def resolve_seed(random_state) -> int:
    """One integer seed from ``random_state``, read as scikit-learn reads it.

    A trainer that seeds numpy generators and torch's needs an integer; an int is kept (the same
    run as before for the same seed), ``None`` or a ``RandomState`` instance go through
    :func:`sklearn.utils.check_random_state` and give a fresh (or a continued) draw.

    Examples
    --------
    >>> from fairot.torch.trainers import resolve_seed
    >>> resolve_seed(7), isinstance(resolve_seed(None), int)
    (7, True)
    """
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


class Callback:
    """Base class of training callbacks: override any hook; each receives the trainer.

    :class:`~fairot.face.MetaBalancedTrainer` counts steps and calls :meth:`on_step_end` after
    each; :class:`~fairot.torch.FairTrainer` counts epochs and calls :meth:`on_epoch_end` after
    each. Both call :meth:`on_fit_start`, :meth:`on_checkpoint` and :meth:`on_fit_end`.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from fairot.torch import FairTrainer, WassersteinParityPenalty
    >>> from fairot.torch.trainers import Callback
    >>> class Epochs(Callback):
    ...     def __init__(self):
    ...         self.seen = []
    ...     def on_epoch_end(self, trainer, record):
    ...         self.seen.append(record["epoch"])
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 200)
    >>> X = np.column_stack([rng.normal(a, 1.0), a]).astype(np.float32)
    >>> y = (X[:, 0] > 0.5).astype(np.float32)
    >>> _ = torch.manual_seed(0)
    >>> epochs = Epochs()
    >>> trainer = FairTrainer(torch.nn.Linear(2, 1), WassersteinParityPenalty(2, method="dot"),
    ...                       n_epochs=3, warmup_epochs=1, batch_size=64, random_state=0,
    ...                       callbacks=[epochs])
    >>> _ = trainer.fit(X, y, a)
    >>> epochs.seen
    [0, 1, 2]
    """

    def on_fit_start(self, trainer: Any) -> None:
        """Called when the trainer's ``fit`` starts (or resumes)."""

    def on_step_end(self, trainer: Any, record: dict[str, Any]) -> None:
        """Called after every step of a step-counting trainer with what the step measured."""

    def on_epoch_end(self, trainer: Any, record: dict[str, Any]) -> None:
        """Called after every epoch of an epoch-counting trainer with its history row."""

    def on_fit_end(self, trainer: Any) -> None:
        """Called when the trainer's ``fit`` returns."""

    def on_checkpoint(self, trainer: Any, path: Path) -> None:
        """Called just before a checkpoint is written to ``path``.

        Persist here what must never be behind the checkpoint (a resumed run continues from
        it): if the process dies between this hook and the checkpoint, the resumed run redoes
        the steps after the previous checkpoint, so what was written here may be ahead of it,
        never behind.
        """


def read_checkpoint(
    path: str | Path,
    keys: tuple[str, ...] = (),
    *,
    map_location=None,
    require_manifest: bool = False,
) -> dict[str, Any]:
    """Read a checkpoint written by :meth:`CheckpointedTrainer.save_checkpoint`, verified.

    The file is loaded with ``torch.load(weights_only=True)``: tensors and plain containers
    are rebuilt, and a file that asks for anything else (a class, a function such as
    ``os.system``) is refused before any of it runs. When a manifest lies beside the file
    (:func:`manifest_path`), the file's SHA-256 must be one it lists.

    Parameters
    ----------
    path : str or Path
    keys : tuple of str, default=()
        Keys the checkpoint must hold (the trainer's ``CHECKPOINT_KEYS``).
    map_location : str or torch.device, optional
        As :func:`torch.load`.
    require_manifest : bool, default=False
        Refuse a checkpoint without a manifest (a run that resumes only from its own
        checkpoints, as ``fairot face train`` does).

    Returns
    -------
    dict
        The trainer's ``state_dict()``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is truncated, corrupt, not a trainer checkpoint, holds anything but
        tensors and plain data, or does not match its manifest (the message names it).

    Examples
    --------
    >>> import tempfile, pathlib, torch
    >>> from fairot.torch.trainers import read_checkpoint
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "c.pt"
    >>> torch.save({"epoch": 3}, path)
    >>> read_checkpoint(path, ("epoch",))["epoch"]
    3
    >>> _ = path.write_bytes(b"torn")
    >>> read_checkpoint(path)
    Traceback (most recent call last):
    ...
    ValueError: checkpoint ... cannot be read (...); it is truncated, corrupt or not a ...
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist.")
    verify_manifest(path, required=require_manifest)
    try:
        # weights_only=True, stated: TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD cannot override it.
        state = torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:  # what weights_only raises for a refused global
        raise ValueError(
            CHECKPOINT_UNSAFE_ERROR.format(path=path, types=unsafe_globals(path, exc))
        ) from None
    except Exception as exc:  # torch raises many types for a torn zip or pickle
        raise ValueError(CHECKPOINT_READ_ERROR.format(path=path, reason=first_line(exc))) from None
    if not isinstance(state, dict) or any(k not in state for k in keys):
        reason = "missing keys" if isinstance(state, dict) else f"holds a {type(state).__name__}"
        raise ValueError(CHECKPOINT_READ_ERROR.format(path=path, reason=reason))
    return state


class CheckpointedTrainer:
    """Callbacks and checkpoints of a training loop; a subclass says what its state is.

    A subclass sets ``callbacks`` (a list of :class:`Callback`) and ``CHECKPOINT_KEYS``, and
    defines :meth:`state_dict` and :meth:`load_state_dict`; it may override
    :meth:`checkpoint_map_location` (where a loaded checkpoint's tensors go).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fairot.torch.trainers import CheckpointedTrainer
    >>> class Counter(CheckpointedTrainer):
    ...     CHECKPOINT_KEYS = ("count",)
    ...     def __init__(self):
    ...         self.callbacks, self.count = [], 0
    ...     def state_dict(self):
    ...         return {"count": self.count}
    ...     def load_state_dict(self, state):
    ...         if not isinstance(state["count"], int):
    ...             raise TypeError("count must be an int")
    ...         self.count = state["count"]
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "counter.pt"
    >>> first = Counter(); first.count = 7; first.save_checkpoint(path)
    >>> Counter().load_checkpoint(path).count
    7
    """

    #: Keys every checkpoint of this trainer holds (checked when one is read).
    CHECKPOINT_KEYS: tuple[str, ...] = ()
    callbacks: list[Callback]

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume at the identical next step."""
        raise NotImplementedError

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` (into a trainer built with the same arguments)."""
        raise NotImplementedError

    def checkpoint_map_location(self) -> torch.device | str | None:
        """Where :meth:`load_checkpoint` puts the checkpoint's tensors (default: as saved)."""
        return None

    def run_callbacks(self, hook: str, *args: Any) -> None:
        """Call ``hook`` of every callback with the trainer and ``args``."""
        for callback in self.callbacks:
            getattr(callback, hook)(self, *args)

    def save_checkpoint(self, path: str | Path) -> None:
        """Write :meth:`state_dict` to ``path`` atomically (``torch.save``), with its manifest.

        The new checkpoint goes to a temporary file in the same folder, is flushed to disk and
        only then replaces ``path``: a process killed mid-write leaves the previous checkpoint
        intact, never a truncated one. Callbacks' ``on_checkpoint`` hooks run first, so that
        what they persist (``history.csv``) is never behind the checkpoint.

        The manifest (:func:`manifest_path`) records the checkpoint's SHA-256. It is rewritten
        atomically to list the new digest beside the previous one before the new checkpoint
        replaces the old, and the new one alone after: whenever the process dies, the
        checkpoint on disk is one its manifest lists.

        Raises
        ------
        TypeError
            If :meth:`state_dict` holds anything but tensors and plain data (such a
            checkpoint could not be read back with ``weights_only=True``).
        """
        path = Path(path)
        state = plain_state(self.state_dict())
        self.run_callbacks("on_checkpoint", path)
        manifest = manifest_path(path)
        previous: list[str] = []
        if path.exists() and manifest.exists():
            try:
                previous = manifest_hashes(manifest)[:1]
            except ValueError:  # a torn or foreign manifest is replaced, not trusted
                previous = []
        with atomic_write(path, "wb") as f:
            writer = HashingWriter(f)
            torch.save(state, writer)
            digest = writer.digest.hexdigest()
            write_manifest(path, [digest, *previous])
        write_manifest(path, [digest])
        # One trainer writes this path: temporaries beside it are from a killed run.
        remove_stale_temporaries(path)
        remove_stale_temporaries(manifest)

    def load_checkpoint(self, path: str | Path, *, require_manifest: bool = False):
        """Load a checkpoint written by :meth:`save_checkpoint`; returns ``self``.

        Parameters
        ----------
        path : str or Path
        require_manifest : bool, default=False
            Refuse a checkpoint without its manifest (see :func:`read_checkpoint`).

        Raises
        ------
        FileNotFoundError
            If ``path`` does not exist.
        ValueError
            If the file is truncated or corrupt, holds anything but tensors and plain data,
            does not match its manifest, or was written for another model, loss or method;
            the message names the file. The trainer is then left as it was.
        """
        path = Path(path)
        state = read_checkpoint(
            path,
            self.CHECKPOINT_KEYS,
            map_location=self.checkpoint_map_location(),
            require_manifest=require_manifest,
        )
        before = copy.deepcopy(self.state_dict())
        try:
            self.load_state_dict(state)
        except (RuntimeError, ValueError, KeyError, TypeError) as exc:
            self.load_state_dict(before)  # all or nothing: no half-loaded trainer
            raise ValueError(
                CHECKPOINT_FIT_ERROR.format(path=path, reason=first_line(exc))
            ) from None
        return self
