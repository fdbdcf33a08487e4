"""What every fairot training loop shares: callback hooks and all-or-nothing checkpoints.

:class:`~fairot.torch.FairTrainer` (floor 3) and :class:`~fairot.face.MetaBalancedTrainer`
(floor 5, the face application) both derive from :class:`CheckpointedTrainer` and call the hooks
of :class:`Callback`. A trainer says what its state is (:meth:`CheckpointedTrainer.state_dict`
and :meth:`CheckpointedTrainer.load_state_dict`, and the keys every checkpoint of it holds); the
base writes it atomically, reads it back verified and loads it all or nothing, so that a run
killed at any moment resumes from its last checkpoint exactly as if it had never stopped.
"""

from __future__ import annotations

import copy
from numbers import Integral
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sklearn.utils import check_random_state

from fairot.utils import atomic_write, remove_stale_temporaries

__all__ = [
    "CHECKPOINT_FIT_ERROR",
    "CHECKPOINT_READ_ERROR",
    "Callback",
    "CheckpointedTrainer",
    "first_line",
    "read_checkpoint",
    "resolve_seed",
]

CHECKPOINT_READ_ERROR = (
    "checkpoint {path} cannot be read ({reason}); it is truncated, corrupt or not a fairot "
    "checkpoint. Delete it to start afresh, or point to another one."
)
CHECKPOINT_FIT_ERROR = (
    "checkpoint {path} does not fit this trainer: {reason}. It was written for another model, "
    "loss or method; build the trainer with the arguments that wrote it."
)


def first_line(exc: BaseException) -> str:
    r"""The first line of an exception's message, or its type's name when it has none.

    Examples
    --------
    >>> from fairot.torch.training import first_line
    >>> first_line(RuntimeError("size mismatch\n\tfor fc.weight")), first_line(KeyError())
    ('size mismatch', 'KeyError')
    """
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def resolve_seed(random_state) -> int:
    """One integer seed from ``random_state``, read as scikit-learn reads it.

    A trainer that seeds numpy generators and torch's needs an integer; an int is kept (the same
    run as before for the same seed), ``None`` or a ``RandomState`` instance go through
    :func:`sklearn.utils.check_random_state` and give a fresh (or a continued) draw.

    Examples
    --------
    >>> from fairot.torch.training import resolve_seed
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
    >>> from fairot.torch.training import Callback
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
    path: str | Path, keys: tuple[str, ...] = (), *, map_location=None
) -> dict[str, Any]:
    """Read a checkpoint written by :meth:`CheckpointedTrainer.save_checkpoint`, verified.

    Parameters
    ----------
    path : str or Path
    keys : tuple of str, default=()
        Keys the checkpoint must hold (the trainer's ``CHECKPOINT_KEYS``).
    map_location : str or torch.device, optional
        As :func:`torch.load`.

    Returns
    -------
    dict
        The trainer's ``state_dict()``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is truncated, corrupt or not a trainer checkpoint (the message names it).

    Examples
    --------
    >>> import tempfile, pathlib, torch
    >>> from fairot.torch.training import read_checkpoint
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
    try:
        # weights_only=False: a checkpoint holds NumPy generator states and Python containers;
        # the file is one this trainer (or the user) wrote.
        state = torch.load(path, map_location=map_location, weights_only=False)
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
    >>> from fairot.torch.training import CheckpointedTrainer
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
        """Write :meth:`state_dict` to ``path`` atomically (``torch.save``).

        The new checkpoint goes to a temporary file in the same folder, is flushed to disk and
        only then replaces ``path``: a process killed mid-write leaves the previous checkpoint
        intact, never a truncated one. Callbacks' ``on_checkpoint`` hooks run first, so that
        what they persist (``history.csv``) is never behind the checkpoint.
        """
        path = Path(path)
        self.run_callbacks("on_checkpoint", path)
        with atomic_write(path, "wb") as f:
            torch.save(self.state_dict(), f)
        # One trainer writes this path: temporaries beside it are from a killed run.
        remove_stale_temporaries(path)

    def load_checkpoint(self, path: str | Path):
        """Load a checkpoint written by :meth:`save_checkpoint`; returns ``self``.

        Raises
        ------
        FileNotFoundError
            If ``path`` does not exist.
        ValueError
            If the file is truncated or corrupt, or was written for another model, loss or
            method; the message names the file. The trainer is then left as it was.
        """
        path = Path(path)
        state = read_checkpoint(
            path, self.CHECKPOINT_KEYS, map_location=self.checkpoint_map_location()
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
