"""Training callbacks of :class:`~fairot.face.MetaBalancedTrainer`.

:class:`Callback` is the base every fairot trainer calls (:class:`fairot.torch.trainers.Callback`):
override any hook; :class:`History` records what each step measured. Internal surface (used by
``_config``): :class:`CsvHistory`, the history ``fairot face train`` keeps in ``history.csv``.

Examples
--------
A callback that stops nothing and counts the steps:

>>> import torch
>>> from fairot.face import MLP, Callback, GroupMarginLoss, MetaBalancedTrainer
>>> from fairot.face import MetaSkewnessLoss
>>> class CountSteps(Callback):
...     def __init__(self):
...         self.steps = 0
...     def on_step_end(self, trainer, record):
...         self.steps += 1
>>> _ = torch.manual_seed(0)
>>> x = torch.randn(64, 8); y = torch.arange(16).repeat(4); g = y % 4
>>> counter = CountSteps()
>>> trainer = MetaBalancedTrainer(
...     MLP(8, embedding_size=4, hidden_sizes=(16,)),
...     GroupMarginLoss(16, 4, 4, anchor_loss="softmax"),
...     meta_loss=MetaSkewnessLoss(), callbacks=[counter], random_state=0)
>>> _ = trainer.fit((x, y, g), (x, y, g), n_steps=3, batch_size=16, meta_batch_size=16)
>>> counter.steps
3
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from fairot.torch.trainers import Callback
from fairot.utils import write_atomic

from ._distributed import rank_and_world

__all__ = ["Callback", "CsvHistory", "History"]

EVERY_ERROR = "every must be an int >= 1; got {value!r}."
HISTORY_GAP_WARNING = (
    "{path} holds {n_rows} rows for the {step} steps of the checkpoint; the resumed history "
    "misses the others."
)

_PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3


class History(Callback):
    """Record the margins, the skewness :math:`B^g`, the losses and per-group training accuracy.

    Parameters
    ----------
    every : int, default=1
        Keep one record every ``every`` steps.

    Attributes
    ----------
    records : list of dict
        One dict per kept step (see :meth:`~fairot.face.MetaBalancedTrainer.train_step`).

    Examples
    --------
    >>> import torch
    >>> from fairot.face import MLP, GroupMarginLoss, History, MetaBalancedTrainer, MetaSkewnessLoss
    >>> _ = torch.manual_seed(0)
    >>> x = torch.randn(64, 8); y = torch.arange(16).repeat(4); g = y % 4
    >>> history = History(every=2)
    >>> trainer = MetaBalancedTrainer(
    ...     MLP(8, embedding_size=4, hidden_sizes=(16,)),
    ...     GroupMarginLoss(16, 4, 4, anchor_loss="softmax"),
    ...     meta_loss=MetaSkewnessLoss(), callbacks=[history], random_state=0)
    >>> _ = trainer.fit((x, y, g), (x, y, g), n_steps=4, batch_size=16, meta_batch_size=16)
    >>> frame = history.to_frame()
    >>> frame["step"].tolist(), [c for c in frame.columns if c.startswith("margin_")]
    ([0, 2], ['margin_0', 'margin_1', 'margin_2', 'margin_3'])
    """

    def __init__(self, every: int = 1) -> None:
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(EVERY_ERROR.format(value=every))
        self.every = every
        self.records: list[dict[str, Any]] = []

    def on_step_end(self, trainer, record):  # noqa: D102
        if record["step"] % self.every == 0:
            self.records.append(record)

    def to_frame(self) -> pd.DataFrame:
        """One row per kept step, the per-group lists spread over one column per group.

        Returns
        -------
        pandas.DataFrame
            Columns ``step, loss, meta_loss, learning_rate`` then ``margin_<g>``, ``bias_<g>`` (NaN
            where the meta step did not measure it) and ``train_acc_<g>``.
        """
        rows = []
        for rec in self.records:
            row = {k: rec[k] for k in ("step", "loss", "meta_loss", "learning_rate")}
            for key, prefix in (
                ("margins", "margin"),
                ("group_bias", "bias"),
                ("group_accuracy", "train_acc"),
            ):
                for gi, value in enumerate(rec.get(key, [])):
                    row[f"{prefix}_{gi}"] = value
            rows.append(row)
        frame = pd.DataFrame(rows)
        return frame.astype({c: float for c in frame.columns if c != "step"}) if rows else frame

    def __len__(self) -> int:
        return len(self.records)


class CsvHistory(History):
    """History persisted to ``history.csv`` at every checkpoint, never behind it.

    ``on_checkpoint`` writes the file (atomically) before the trainer writes its checkpoint, so
    the file holds at least the checkpoint's steps; a resumed run keeps the rows before its first
    step (:meth:`resume_from`) and appends the rest, so that the file ends up exactly as an
    uninterrupted run's: no row lost, none repeated.
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.previous: pd.DataFrame | None = None

    def resume_from(self, step: int) -> None:
        """Keep the rows of ``history.csv`` for the steps before ``step``."""
        if step == 0:
            return
        frame = pd.DataFrame()
        if self.path.exists():
            # Kept rows must be rewritten with the very digits they were read with: pandas >= 3
            # parses floats exactly; older pandas needs the round-trip parser (deprecated in 3).
            exact = {} if _PANDAS_3 else {"float_precision": "round_trip"}
            frame = pd.read_csv(self.path, **exact)
            frame = frame[frame["step"] < step].reset_index(drop=True)
        steps = frame["step"].tolist() if len(frame) else []
        if steps != list(range(step)):
            warnings.warn(
                HISTORY_GAP_WARNING.format(path=self.path, n_rows=len(frame), step=step),
                UserWarning,
                stacklevel=2,
            )
        self.previous = frame if len(frame) else None

    def to_frame(self) -> pd.DataFrame:  # noqa: D102
        new = super().to_frame()
        if self.previous is None:
            return new
        if not len(new):
            return self.previous
        return pd.concat([self.previous, new], ignore_index=True)

    def write(self) -> None:
        """Rewrite ``history.csv`` atomically (rank 0 only under torch.distributed)."""
        if rank_and_world()[0] == 0:
            write_atomic(self.path, self.to_frame().to_csv(index=False))

    def on_checkpoint(self, trainer, path):  # noqa: D102
        self.write()

    def on_fit_end(self, trainer):  # noqa: D102
        self.write()
