r"""Strata of ``control_features`` for the post-processors: encoding and the small-strata policy.

Conditional demographic parity given legitimate control features :math:`C` (the same job level,
the same credit band) asks for parity *within* each stratum :math:`C = c`, not across them. A
post-processor fitted with ``control_features`` fits one map per stratum, exactly the map it
would fit on that stratum's rows alone, so that its tolerance :math:`\tau` applies within each
stratum; the metrics' ``control_features=`` measure the same thing (``fairot.metrics``).

A stratum's map rests on its (stratum, group) cells. A stratum where a cell has fewer than
:data:`~fairot.utils.groups.SMALL_GROUP_SIZE` rows (of positive weight), or where a group seen
at fit is missing, is *too small to fit*; the estimators' ``small_strata`` says what happens to
it: ``"pooled"`` maps its rows with the map fitted on all strata together (one warning naming
the strata), ``"error"`` raises, naming the strata and their cells' sizes. Strata unseen at fit
follow the same policy at prediction.

Every estimator with ``control_features`` uses these helpers, so that the forms accepted, the
policy and the messages are one.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np

from .groups import SMALL_GROUP_SIZE, GroupEncoding, sensitive_frame
from .sensitive import check_sensitive_features, resolve_sensitive_features

__all__ = [
    "POOLED",
    "SMALL_STRATA",
    "StrataFit",
    "check_control_at_predict",
    "encode_strata",
    "report_small_strata",
    "small_strata",
    "strata_codes",
]

SmallStrata = Literal["pooled", "error"]
#: The values of the estimators' ``small_strata`` parameter.
SMALL_STRATA = ("pooled", "error")
#: The code of a row whose stratum has no map of its own (too small at fit, or unseen).
POOLED = -1

MSG_CONTROL_REQUIRED = (
    "{estimator} was fitted with control_features: pass the stratum of every row of X as "
    "control_features (the same form as at fit), or refit without control_features."
)
MSG_DASK_CONTROL = (
    "control_features is not supported on Dask collections by {estimator}; compute the "
    "collections and fit in memory, or fit one model per stratum."
)
MSG_CONTROL_UNFITTED = (
    "control_features was given, but {estimator} was fitted without it: its map does not "
    "depend on strata. Refit with control_features=..., or drop the argument."
)
MSG_TOO_SMALL = (
    "{n} {strata} of control_features too small to fit a map of {its} own "
    "(a (stratum, group) cell needs {size} rows or more, and every group must be present): "
    "{details}."
)
MSG_POOLED = " Their rows are mapped with the map fitted on all strata together."
MSG_ERROR = " Merge small strata, collect more rows, or pass small_strata='pooled'."
MSG_UNSEEN = (
    "control_features contains {n} {noun} not seen at fit time: {strata} (seen strata: {known})."
)
MSG_UNSEEN_POOLED = " Their rows are mapped with the map fitted on all strata together."
MSG_UNSEEN_ERROR = (
    " Refit with rows of those strata, or pass small_strata='pooled' to map them with the map "
    "fitted on all strata together."
)


class StrataFit:
    """What a fit with ``control_features`` records: the strata, and which have their own map.

    Parameters
    ----------
    encoding : GroupEncoding
        The strata seen at fit (:func:`encode_strata`).
    columns : list of str or None
        The columns of ``X`` the strata were read from, if they were named.
    fitted : ndarray of bool of shape (n_strata,)
        Whether each stratum has a map of its own (else it is mapped with the pooled map).

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.utils.strata import StrataFit, encode_strata
    >>> fit = StrataFit(encode_strata(["a", "b", "a"], 3), None, np.array([True, False]))
    >>> fit.names, fit.pooled_names
    (['a', 'b'], ['b'])
    """

    def __init__(self, encoding: GroupEncoding, columns: list[str] | None, fitted: np.ndarray):
        self.encoding = encoding
        self.columns = columns
        self.fitted = np.asarray(fitted, dtype=bool)

    @property
    def labels(self) -> list:
        """The strata's labels (a tuple of values for several columns)."""
        return list(self.encoding.labels)

    @property
    def names(self) -> list[str]:
        """The strata's readable names."""
        return list(self.encoding.names)

    @property
    def pooled_names(self) -> list[str]:
        """Names of the strata mapped with the map fitted on all strata together."""
        return [n for n, f in zip(self.encoding.names, self.fitted, strict=True) if not f]


def encode_strata(control_features: Any, n_samples: int, X: Any = None) -> GroupEncoding:
    """The strata of ``control_features`` (its data, or column name(s) of a DataFrame ``X``).

    Accepts every form of ``sensitive_features``: one column (array, list, Series), several
    (DataFrame, 2-D array, dict: each combination of values is a stratum), or column names of a
    DataFrame ``X``. Missing values and a length other than ``n_samples`` raise, naming
    ``control_features``.

    Parameters
    ----------
    control_features : array-like, DataFrame, dict, str or list of str
    n_samples : int
        The number of rows of ``X``.
    X : array-like or DataFrame, optional
        The estimator's input, when names of its columns are allowed.

    Returns
    -------
    GroupEncoding
        The strata (one stratum is allowed).

    Examples
    --------
    >>> from fairot.utils.strata import encode_strata
    >>> encode_strata(["low", "high", "low"], 3).names
    ['high', 'low']
    """
    data, _ = resolve_sensitive_features(X, control_features, name="control_features")
    return check_sensitive_features(data, n_samples, name="control_features", min_groups=1)


def small_strata(
    strata_codes: np.ndarray,
    strata_names: list[str],
    group_codes: np.ndarray,
    group_names: list[str],
    sample_weight: np.ndarray | None = None,
) -> dict[int, str]:
    """The strata too small to fit a map of their own, with why, by stratum index.

    Parameters
    ----------
    strata_codes : ndarray of int of shape (n_samples,)
        Each row's stratum among ``strata_names``.
    strata_names : list of str
    group_codes : ndarray of int of shape (n_samples,)
        Each row's group among ``group_names`` (the groups of all strata together).
    group_names : list of str
    sample_weight : ndarray of shape (n_samples,), optional
        Rows of zero weight do not count.

    Returns
    -------
    dict
        ``{stratum index: "name (group: count rows, ...)"}`` for every stratum where a group
        is missing or has fewer than :data:`~fairot.utils.groups.SMALL_GROUP_SIZE` rows.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.utils.strata import small_strata
    >>> strata = np.repeat([0, 1], [40, 12])
    >>> groups = np.r_[np.tile([0, 1], 20), np.zeros(12, dtype=int)]
    >>> small_strata(strata, ["a", "b"], groups, ["F", "M"])
    {1: "'b' (F: 12 rows, M: 0 rows)"}
    """
    counted = np.ones(group_codes.shape[0], dtype=bool)
    if sample_weight is not None:
        counted = np.asarray(sample_weight) > 0
    cells = np.zeros((len(strata_names), len(group_names)), dtype=np.int64)
    np.add.at(cells, (strata_codes[counted], group_codes[counted]), 1)
    out = {}
    for s, counts in enumerate(cells):
        if np.any(counts < SMALL_GROUP_SIZE):
            sizes = ", ".join(
                f"{g}: {int(c)} rows" for g, c in zip(group_names, counts, strict=True)
            )
            out[s] = f"{strata_names[s]!r} ({sizes})"
    return out


def report_small_strata(reasons: dict[int, str], policy: SmallStrata, *, stacklevel: int) -> None:
    """Warn once (``"pooled"``) or raise (``"error"``) for the strata of :func:`small_strata`.

    Examples
    --------
    >>> from fairot.utils.strata import report_small_strata
    >>> report_small_strata({}, "error", stacklevel=1)  # nothing too small: nothing to say
    """
    if not reasons:
        return
    message = MSG_TOO_SMALL.format(
        n=len(reasons),
        strata=_noun(len(reasons)),
        its="its" if len(reasons) == 1 else "their",
        size=SMALL_GROUP_SIZE,
        details="; ".join(reasons.values()),
    )
    if policy == "error":
        raise ValueError(message + MSG_ERROR)
    warnings.warn(message + MSG_POOLED, UserWarning, stacklevel=stacklevel + 1)


def check_control_at_predict(fit: StrataFit | None, control_features: Any, estimator: str) -> Any:
    """``control_features`` of a prediction call, checked against the fit; names read from X.

    Returns the argument to pass to :func:`strata_codes` (the fitted column names when the
    strata were named as columns of ``X`` at fit and ``control_features`` is omitted), or
    ``None`` for a model fitted without strata. Omitting the strata of a model fitted with
    them, or giving strata to one fitted without, raises.
    """
    if fit is None:
        if control_features is not None:
            raise ValueError(MSG_CONTROL_UNFITTED.format(estimator=estimator))
        return None
    if control_features is None:
        if fit.columns is None:
            raise ValueError(MSG_CONTROL_REQUIRED.format(estimator=estimator))
        return fit.columns
    return control_features


def strata_codes(
    fit: StrataFit,
    control_features: Any,
    n_samples: int,
    X: Any,
    policy: SmallStrata,
    *,
    stacklevel: int,
) -> np.ndarray:
    """Each row's stratum index at prediction, or :data:`POOLED` for the pooled map.

    A stratum too small at fit maps with the pooled map; a stratum unseen at fit follows
    ``policy`` (``"pooled"``: the pooled map, with a warning naming the strata; ``"error"``:
    raises, naming them).
    """
    data, _ = resolve_sensitive_features(X, control_features, name="control_features")
    frame = sensitive_frame(data, "control_features")
    if len(frame) != n_samples:
        raise ValueError(
            f"control_features has {len(frame)} rows but X has {n_samples}; pass the stratum "
            "of every row of X."
        )
    codes = fit.encoding.encode(frame, "control_features", unseen="mark")
    unseen = codes < 0
    if np.any(unseen):
        distinct = frame[unseen].drop_duplicates()
        labels = [
            values[0] if len(values) == 1 else values
            for values in (
                tuple(v.item() if isinstance(v, np.generic) else v for v in row)
                for row in distinct.itertuples(index=False)
            )
        ]
        message = MSG_UNSEEN.format(
            n=len(labels), noun=_noun(len(labels)), strata=labels, known=fit.names
        )
        if policy == "error":
            raise ValueError(message + MSG_UNSEEN_ERROR)
        warnings.warn(message + MSG_UNSEEN_POOLED, UserWarning, stacklevel=stacklevel + 1)
    fitted = np.append(fit.fitted, False)  # index -1: the unseen rows
    return np.where(fitted[codes], codes, POOLED)


def _noun(n: int) -> str:
    return "stratum" if n == 1 else "strata"
