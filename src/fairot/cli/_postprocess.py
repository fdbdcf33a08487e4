"""Post-processing for ``fairot mitigate --method dpp|regression``: the user's scores are the model.

``--method dpp`` fits :class:`~fairot.classification.QuantileParityPostProcessor` (every group's
scores mapped onto their barycenter: strong demographic parity, or ``1 - τ`` of the way there
with ``--tau``); ``--method regression`` fits
:class:`~fairot.regression.WassersteinFairRegressor` (every pair of groups within ε in W_p, or
τ times the current gap). Both wrap :class:`fairot.utils.ScoreColumn`, so the user's scores are
the model. A score map reads no label at prediction, so it can equalise the score distributions
of the groups but not those given the label: ``--constraint`` other than demographic parity is
refused here and left to the in-processing methods (:mod:`fairot.cli._inprocess`). With
``--control`` both fit one map per stratum (conditional parity), and ``--small-strata`` says what
becomes of a stratum too small for a map of its own (:mod:`fairot.utils.strata`).
"""

from __future__ import annotations

import argparse
import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from fairot.cli._holdout import Rows
from fairot.cli._io import check_no_missing, numeric_column, require_columns, split_columns

POST_PROCESSING = ("dpp", "regression")
MSG_CONSTRAINT = (
    "--constraint {constraint} cannot be met by --method {method}: a score map reads no label at "
    "prediction, so it can equalise the groups' score distributions (demographic parity) but "
    "not their distributions given Y; use --method cot or --method dot, which fit a model to "
    "{constraint}"
)
MSG_NEEDS_SCORE = "--method {method} post-processes a column of scores: pass --score COL"


@contextlib.contextmanager
def caught_warnings() -> Iterator[list[str]]:
    """Collect the warnings of a fit as distinct lines (for stderr and the report's notes).

    A command prints one line per problem; Python's warning display (file, line, source) is for
    library users, and a warning turned into an error (``-W error``) would end in a traceback.
    """
    lines: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield lines
    lines.extend(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))


def fit(args: argparse.Namespace, rows: Rows):
    """Fit the post-processor of ``--method`` on the rows' scores, groups, strata and weights."""
    from sklearn.frozen import FrozenEstimator

    from fairot.utils import ScoreColumn

    scores, labels, sensitive, weights = rows.scores, rows.labels, rows.sensitive, rows.weights
    X = scores[:, None]
    if args.method == "dpp":
        from fairot.classification import QuantileParityPostProcessor

        # Labels do not enter quantile post-processing; without them, a placeholder with both
        # classes (the upper half of the scores) gives the classifier its two classes.
        y = labels if labels is not None else (np.argsort(np.argsort(scores)) >= len(scores) // 2)
        y = np.asarray(y, dtype=int)
        # ScoreColumn's fit takes no weights; frozen, it is the same model and the weights go to
        # the group quantiles only.
        scorer = ScoreColumn() if weights is None else FrozenEstimator(ScoreColumn().fit(X, y))
        model = QuantileParityPostProcessor(
            estimator=scorer,
            tau=0.0 if args.tau is None else args.tau,
            small_strata=args.small_strata or "pooled",
        )
        return model.fit(
            X,
            y,
            sensitive_features=sensitive,
            control_features=rows.control,
            sample_weight=weights,
        )
    from fairot.regression import WassersteinFairRegressor

    model = WassersteinFairRegressor(
        estimator=FrozenEstimator(ScoreColumn().fit(X)),
        p=np.inf if args.p == "inf" else int(args.p),
        tau=args.tau,
        epsilon=args.epsilon,
        small_strata=args.small_strata or "pooled",
    )
    # With the squared cost the responses do not enter the adjustment; the scores stand in.
    model.fit(
        X,
        scores if labels is None else labels,
        sensitive_features=sensitive,
        control_features=rows.control,
        sample_weight=weights,
    )
    return model


def predict(
    model,
    method: str,
    scores: np.ndarray,
    sensitive: pd.DataFrame,
    control: pd.DataFrame | None = None,
) -> np.ndarray:
    """The adjusted scores of rows (scores, their sensitive columns and strata)."""
    X = scores[:, None]
    if method == "dpp":
        return model.predict_proba(X, sensitive_features=sensitive, control_features=control)[:, 1]
    return model.predict(X, sensitive_features=sensitive, control_features=control)


def adjust(model, args: argparse.Namespace, frame: pd.DataFrame, path: Path) -> np.ndarray:
    """The adjusted scores of the ``--apply`` table (its scores, groups and strata)."""
    from fairot.cli._cmd_audit import MSG_SCORE_RANGE
    from fairot.cli._options import read_control

    columns = split_columns(args.sensitive)
    require_columns(frame, [args.score, *columns], path)
    scores = numeric_column(frame, args.score, path)
    check_no_missing(frame, columns, path)
    if args.method == "dpp" and (scores.min() < 0 or scores.max() > 1):
        from fairot.cli import CLIError

        raise CLIError(
            MSG_SCORE_RANGE.format(column=args.score, low=scores.min(), high=scores.max())
        )
    control = read_control(frame, args.control, path)
    return predict(model, args.method, scores, frame[columns], control)
