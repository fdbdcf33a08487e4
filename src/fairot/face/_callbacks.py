"""Training callbacks of :class:`~fairot.face.MetaBalancedTrainer`.

:class:`Callback` is the base every fairot trainer calls (:class:`fairot.torch.training.Callback`):
override any hook; :class:`History` records what each step measured.

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

from typing import Any

import pandas as pd

from fairot.torch.training import Callback

__all__ = ["Callback", "History"]

EVERY_ERROR = "every must be an int >= 1; got {value!r}."


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
