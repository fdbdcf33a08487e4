r"""In-processing for ``fairot mitigate --method cot|dot|fair-mlp|rate``: fair models from features.

The model's inputs are feature columns of the table (``--features``, by default every column but
the label, sensitive, control and weight columns): numeric columns standardised,
the others one-hot encoded (a category absent from the fitted rows encodes as all zeros). The
sensitive columns are never inputs: they name the groups at fit only, so the fitted model
scores new rows from their features alone. The raw model is the unaware logistic regression on
those inputs, :math:`\theta^*` of the paper, from which ``cot`` and ``dot`` start
(:class:`~fairot.classification.COTClassifier`, :class:`~fairot.classification.DOTClassifier`);
``fair-mlp`` trains :class:`fairot.torch.FairMLPClassifier` (PyTorch) on the same inputs;
``rate`` fits :class:`~fairot.classification.RateConstrainedClassifier` (the attribute-blind
plug-in rule under a rate budget, ``--max-difference`` or ``--min-ratio``) with a logistic or a
boosted probability model (``--probability-model``; its probabilities calibrated by
``calibration="auto"``), and ``--confidence`` for a margin chosen at a stated confidence.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairot.cli._holdout import Rows
from fairot.cli._io import (
    check_no_missing,
    label_column,
    numeric_column,
    read_table,
    require_columns,
    split_columns,
)

IN_PROCESSING = ("cot", "dot", "fair-mlp", "rate")
PROBABILITY_MODELS = ("logistic", "boosted")
MSG_RATE_BUDGET = (
    "--method rate needs its budget: exactly one of --max-difference (the largest difference of "
    "the groups' rates, e.g. 0.05) or --min-ratio (the lowest ratio of the groups' rates, e.g. "
    "0.8 for the four-fifths rule)"
)
MSG_RATE_ONLY = "--{name} is for --method rate; not --method {method}"
MSG_RATE_TAU = (
    "--tau is a fraction of the raw disparity kept; --method rate takes its budget as "
    "--max-difference or --min-ratio"
)
MSG_RATE_FIT = "--method rate cannot fit this budget: {reason}"
MSG_NEEDS_LABEL = "--method {method} trains a classifier on the features: pass --label COL"
MSG_NO_SCORE = (
    "--score is for the post-processors (dpp, regression); --method {method} trains its own "
    "model on --features (the raw model is the unaware logistic regression on them)"
)
MSG_EXCLUDED = "--features names {column!r}, the {role} column; it cannot be a model input{why}"
MSG_NO_FEATURES = (
    "{path} has no feature column left besides the label, sensitive, control and weight "
    "columns; pass --features COL,COL"
)
MSG_NEEDS_TORCH = (
    "--method fair-mlp needs PyTorch, which is not installed ({reason}); install it with "
    "pip install 'fairot[torch]', or use --method cot or --method dot"
)
MSG_DIVERGED = "--method {method} diverged: {reason}"
MSG_CONTROL = (
    "--control is not supported with --method {method}: conditional parity within strata is "
    "implemented for the post-processors only (--method dpp or regression)"
)
MSG_COUNT_OPTION = "--{name} must be a positive integer; got {value}"


@dataclass(frozen=True)
class Features:
    """The model's input columns, by kind (decided on ``--data``)."""

    numeric: tuple[str, ...]
    categorical: tuple[str, ...]

    @property
    def columns(self) -> list[str]:
        """Every input column, numeric first."""
        return [*self.numeric, *self.categorical]

    def describe(self, sensitive: list[str]) -> str:
        """One line for the report: the inputs, how they are encoded, and what is not an input."""
        parts = []
        if self.numeric:
            parts.append(f"{len(self.numeric)} numeric, standardised: {', '.join(self.numeric)}")
        if self.categorical:
            parts.append(
                f"{len(self.categorical)} categorical, one-hot encoded: "
                f"{', '.join(self.categorical)}"
            )
        return (
            f"Model inputs ({'; '.join(parts)}). The sensitive column(s) "
            f"{', '.join(sensitive)} are not inputs: they define the groups at fit only."
        )


def select_features(frame: pd.DataFrame, args: argparse.Namespace, path: Path) -> Features:
    """The ``--features`` columns (or every other column), refusing the sensitive and label."""
    from fairot.cli import CLIError
    from fairot.cli._options import control_columns

    roles = {args.label: ("label", "")}
    for column in control_columns(args):
        roles[column] = ("--control", "")
    if args.sample_weight:
        roles[args.sample_weight] = ("--sample-weight", "")
    for column in split_columns(args.sensitive):
        roles[column] = (
            "sensitive",
            " (the model is fitted unaware of the groups, which it sees at fit only)",
        )
    if args.features:
        columns = split_columns(args.features)
        require_columns(frame, columns, path)
        for column in columns:
            if column in roles:
                role, why = roles[column]
                raise CLIError(MSG_EXCLUDED.format(column=column, role=role, why=why))
    else:
        columns = [c for c in frame.columns if c not in roles]
        if not columns:
            raise CLIError(MSG_NO_FEATURES.format(path=path))
    columns = list(dict.fromkeys(columns))
    numeric = tuple(
        c
        for c in columns
        if pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c])
    )
    return Features(numeric, tuple(c for c in columns if c not in numeric))


def feature_frame(frame: pd.DataFrame, features: Features, path: Path) -> pd.DataFrame:
    """The input columns as the model reads them: numbers as floats, categories as text."""
    require_columns(frame, features.columns, path)
    check_no_missing(frame, features.columns, path)
    out = {}
    for column in features.numeric:
        if pd.api.types.is_bool_dtype(frame[column]):
            out[column] = frame[column].to_numpy(dtype=float)
        else:
            out[column] = numeric_column(frame, column, path)
    for column in features.categorical:
        out[column] = frame[column].astype(str).str.strip().to_numpy(dtype=object)
    return pd.DataFrame(out, columns=features.columns)


def read_rows(
    args: argparse.Namespace, path: Path, features: Features | None = None
) -> tuple[pd.DataFrame, Rows, Features]:
    """The labelled rows of a table for in-processing (features, labels, groups)."""
    from fairot.cli import CLIError
    from fairot.cli._options import control_columns

    sensitive = split_columns(args.sensitive)
    text = [*sensitive, *control_columns(args)]
    if features is not None:
        # Categories are text in every table, as in --data (no "01" read as the number 1).
        text += list(features.categorical)
    frame = read_table(path, args.sep, text_columns=text)
    if not args.label:
        raise CLIError(MSG_NEEDS_LABEL.format(method=args.method))
    require_columns(frame, [*sensitive, args.label], path)
    check_no_missing(frame, sensitive, path)
    labels = label_column(frame, args.label, path, args.pos_label)
    features = features or select_features(frame, args, path)
    groups = frame[sensitive].reset_index(drop=True)
    rows = Rows(None, labels, groups, None, feature_frame(frame, features, path))
    return frame, rows, features


def read_apply(
    args: argparse.Namespace, path: Path, features: Features
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``--apply`` table and its model inputs (the sensitive columns are not needed)."""
    frame = read_table(path, args.sep, text_columns=list(features.categorical))
    return frame, feature_frame(frame, features, path)


def _preprocessor(features: Features):
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    return ColumnTransformer(
        [
            ("numeric", StandardScaler(), list(features.numeric)),
            (
                "categorical",
                OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                list(features.categorical),
            ),
        ],
        sparse_threshold=0.0,
    )


def add_rate_arguments(p: argparse.ArgumentParser) -> None:
    """``--max-difference`` / ``--min-ratio`` and ``--probability-model`` of ``--method rate``."""
    budget = p.add_mutually_exclusive_group()
    budget.add_argument(
        "--max-difference",
        type=float,
        metavar="D",
        help="rate: the budget as the largest difference of the groups' rates under "
        "--constraint (fairlearn's max - min), e.g. 0.05",
    )
    budget.add_argument(
        "--min-ratio",
        type=float,
        metavar="R",
        help="rate: the budget as the lowest ratio of the groups' rates (0.8: the four-fifths "
        "rule)",
    )
    p.add_argument(
        "--probability-model",
        choices=PROBABILITY_MODELS,
        help="rate: the model of P(group, label | x): logistic (default) or boosted "
        "(HistGradientBoostingClassifier, the richer and slower; its cross-fitted "
        "probabilities are calibrated by a sigmoid map, calibration='auto')",
    )
    p.add_argument(
        "--confidence",
        type=float,
        metavar="C",
        help="rate: choose the margin so that the one-sided C bound (e.g. 0.9) of the rule's "
        "population disparity, estimated from the training rows, is within the budget",
    )


def check_rate_options(args: argparse.Namespace) -> None:
    """Refuse a rate option without ``--method rate``, and ``--method rate`` without a budget."""
    from fairot.cli import CLIError

    options = ("max_difference", "min_ratio", "probability_model", "confidence")
    if args.method != "rate":
        for name in options:
            if getattr(args, name) is not None:
                flag = name.replace("_", "-")
                raise CLIError(MSG_RATE_ONLY.format(name=flag, method=args.method))
        return
    if args.tau is not None:
        raise CLIError(MSG_RATE_TAU)
    if args.max_difference is None and args.min_ratio is None:
        raise CLIError(MSG_RATE_BUDGET)


def _rate_estimator(args: argparse.Namespace) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    from fairot.classification import RateConstrainedClassifier

    if args.probability_model == "boosted":
        # Early stopping on a tenth of the rows, as the frontier study's limit curve: the rule
        # reads the model's probabilities, which an unstopped ensemble makes overconfident.
        probabilities = HistGradientBoostingClassifier(
            early_stopping=True, random_state=args.random_state
        )
    else:
        probabilities = LogisticRegression(max_iter=1000)
    return RateConstrainedClassifier(
        estimator=probabilities,
        constraint=args.constraint,
        max_difference=args.max_difference,
        min_ratio=args.min_ratio,
        confidence=args.confidence,
        random_state=args.random_state,
    )


def _fair_estimator(args: argparse.Namespace, start) -> Any:
    from fairot.cli import CLIError

    if args.method == "rate":
        return _rate_estimator(args)
    options: dict[str, Any] = {
        "constraint": args.constraint,
        "tau": 0.0 if args.tau is None else args.tau,
        "random_state": args.random_state,
    }
    if args.method == "fair-mlp":
        try:
            from fairot.torch import FairMLPClassifier
        except ImportError as exc:
            raise CLIError(MSG_NEEDS_TORCH.format(reason=exc)) from None
        if args.n_epochs is not None:
            options["n_epochs"] = args.n_epochs
        return FairMLPClassifier(**options)
    from sklearn.frozen import FrozenEstimator

    from fairot.classification import COTClassifier, DOTClassifier

    if args.n_updates is not None:
        options["n_updates"] = args.n_updates
    cls = COTClassifier if args.method == "cot" else DOTClassifier
    # Started from the fitted unaware model as it is: theta* is the "before" of the report.
    return cls(estimator=FrozenEstimator(start), **options)


@dataclass
class Fitted:
    """The unaware and the fair model (each a pipeline from the raw table) and fit warnings."""

    raw: Any
    fair: Any
    warnings: list[str]


def fit(args: argparse.Namespace, rows: Rows, features: Features) -> Fitted:
    """Fit the encoder, the unaware logistic regression, then the fair model from it."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    from fairot.cli import CLIError
    from fairot.cli._postprocess import caught_warnings
    from fairot.exceptions import DivergenceError

    encoder = _preprocessor(features).fit(rows.features)
    X = encoder.transform(rows.features)
    with caught_warnings() as said:
        unaware = LogisticRegression().fit(X, rows.labels, sample_weight=rows.weights)
        model = _fair_estimator(args, unaware)
        try:
            model.fit(X, rows.labels, sensitive_features=rows.sensitive, sample_weight=rows.weights)
        except DivergenceError as exc:
            raise CLIError(MSG_DIVERGED.format(method=args.method, reason=exc)) from None
        except ValueError as exc:
            # The rate classifier's refusals of the budget (negative, NaN, infeasible, a group
            # with one label under equalized odds) are the user's to fix: one line, exit 2.
            if args.method != "rate":
                raise
            raise CLIError(MSG_RATE_FIT.format(reason=exc)) from None
    return Fitted(
        raw=Pipeline([("features", encoder), ("model", unaware)]),
        fair=Pipeline([("features", encoder), ("model", model)]),
        warnings=said,
    )


def scores(model, features: pd.DataFrame) -> np.ndarray:
    """The positive-class scores of a fitted pipeline on input columns."""
    return model.predict_proba(features)[:, 1]


def describe_models(args: argparse.Namespace, fitted: Fitted) -> str:
    """One line for the report: which model is before and which after."""
    model = fitted.fair.named_steps["model"]
    if args.method == "rate":
        budget = (
            f"max_difference={model.max_difference:g}"
            if model.max_difference is not None
            else f"min_ratio={model.min_ratio:g}"
        )
        if model.confidence is not None:
            budget += f", confidence={model.confidence:g} (margin_={model.margin_:.4f})"
        budget += f", calibration_={model.calibration_!r}"
        return (
            "Before: the unaware LogisticRegression() on those inputs; after: "
            f"RateConstrainedClassifier(constraint={args.constraint!r}, {budget}, "
            f"estimator={type(model.estimator).__name__}, random_state={args.random_state}), "
            "the attribute-blind plug-in rule 2 eta(x) - 1 - sum_k mu_k w_k(x) > 0 with "
            "cross-fitted multipliers (the budget holds on the fitted rows' cross-fitted "
            "probabilities; the audit below measures it on the held-out rows)."
        )
    settings = f"constraint={args.constraint!r}, tau={model.tau:g}"
    settings += f", random_state={args.random_state}"
    if args.method == "fair-mlp":
        return (
            "Before: the unaware LogisticRegression() on those inputs; after: "
            f"FairMLPClassifier({settings}, n_epochs={model.n_epochs}), an MLP trained with the "
            "Wasserstein parity penalty (a different model class from the before column). "
            "No model.skops: skops cannot save its torch network; score new rows with --apply."
        )
    name = type(model).__name__
    return (
        "Before: the unaware LogisticRegression() on those inputs (theta*); after: "
        f"{name}({settings}, n_updates={model.n_updates}) started from it."
    )
