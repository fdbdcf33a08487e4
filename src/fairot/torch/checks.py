"""Argument and batch validators of the metric-learning losses and miners, with their messages.

One place for every check that :mod:`fairot.torch.losses` and :mod:`fairot.torch.miners` make, so
that a scalar argument, a batch of embeddings, labels, group codes or sample weights is refused
with the same message wherever it enters. The message constants are public: tests and callers
match errors against them, and :mod:`fairot.face` re-exports them under their old path.

Checks of *types, shapes and emptiness* are always made (they are free). Checks of *values* (NaN,
ranges) cost one reduction and, on a GPU, one device synchronisation each; they run only when the
caller's ``validate`` is true.
"""

from __future__ import annotations

import math

import torch

__all__ = [
    "ANCHORS_ERROR",
    "ANCHOR_ERROR",
    "BOUNDS_ERROR",
    "EMBEDDINGS_SHAPE_ERROR",
    "EMBEDDINGS_TYPE_ERROR",
    "EMPTY_BATCH_ERROR",
    "FINITE_POSITIVE_ERROR",
    "GAMMA_ERROR",
    "GROUPS_RANGE_ERROR",
    "GROUPS_REQUIRED_ERROR",
    "GROUPS_SHAPE_ERROR",
    "INIT_MARGIN_ERROR",
    "KIND_ERROR",
    "LABELS_RANGE_ERROR",
    "LABELS_SHAPE_ERROR",
    "MARGIN_ERROR",
    "META_EMBEDDINGS_ERROR",
    "MINER_INPUT_ERROR",
    "NONFINITE_EMBEDDINGS_ERROR",
    "NONFINITE_MARGINS_ERROR",
    "N_GROUPS_ERROR",
    "POSITIVE_ERROR",
    "REDUCTION_ERROR",
    "SAMPLE_WEIGHT_ERROR",
    "SELECTION_MARGIN_ERROR",
    "check_batch",
    "check_count",
    "check_embeddings",
    "check_groups",
    "check_labels",
    "check_number",
    "weighted_mean",
]

# -- scalar arguments ------------------------------------------------------------------------
POSITIVE_ERROR = "{name} must be a positive number; got {value!r}."
FINITE_POSITIVE_ERROR = "{name} must be a finite positive number; got {value!r}."
MARGIN_ERROR = "margin must be a finite number >= 0; got {value!r}."
GAMMA_ERROR = "gamma must be a finite non-negative number; got {value!r}."
SELECTION_MARGIN_ERROR = "selection_margin must be a finite number or None; got {value!r}."
N_GROUPS_ERROR = "n_groups must be None or an int >= 1; got {value!r}."
KIND_ERROR = "{name} must be one of {options}; got {value!r}."
REDUCTION_ERROR = "reduction must be one of ('sum', 'abs', 'squared'); got {value!r}."

# -- group margins (GroupMarginLoss) and anchors (MetaSkewnessLoss) ----------------------------
BOUNDS_ERROR = "margin_bounds must be (low, high) with 0 <= low <= high; got {value!r}."
INIT_MARGIN_ERROR = (
    "init_margin must be a float or one value per group (n_groups={n_groups}), each within "
    "margin_bounds={bounds} for the learnable groups; got {value!r}."
)
ANCHOR_ERROR = (
    "anchor_groups must be distinct group codes in [0, n_groups={n_groups}) and leave at least one "
    "group with a learnable margin; got {value!r}."
)
ANCHORS_ERROR = "anchor_groups must be a non-empty sequence of distinct group codes; got {value!r}."
NONFINITE_MARGINS_ERROR = (
    "{name}'s margins contain NaN or inf ({values}); they were set or trained outside the loss: "
    "train them through margin_parameters() with a finite learning rate."
)

# -- batches -----------------------------------------------------------------------------------
EMBEDDINGS_TYPE_ERROR = (
    "embeddings must be a floating-point torch.Tensor (float16, bfloat16, float32 or float64); "
    "got {value}. Convert with torch.as_tensor(x, dtype=torch.float32)."
)
EMPTY_BATCH_ERROR = "{name}: the batch is empty (0 samples); a mean over no sample is undefined."
NONFINITE_EMBEDDINGS_ERROR = (
    "embeddings contain NaN or inf ({count} values); check the model's output, lower the learning "
    "rate, or pass validate=False to skip this check in a hot loop."
)
EMBEDDINGS_SHAPE_ERROR = "embeddings must have shape (n_samples, {expected}); got {shape}."
META_EMBEDDINGS_ERROR = "embeddings must have shape (n_samples, dim); got {shape}."
LABELS_SHAPE_ERROR = "labels must be a 1-D integer tensor of length {n}; got shape {shape}."
LABELS_RANGE_ERROR = "labels must lie in [0, n_classes={n_classes}); got values in [{lo}, {hi}]."
GROUPS_REQUIRED_ERROR = "group_codes is required by {name}: one integer group code per sample."
GROUPS_SHAPE_ERROR = (
    "group_codes of {name} must be integer group codes of shape ({n},); got dtype {dtype} and "
    "shape {shape}."
)
GROUPS_RANGE_ERROR = (
    "group_codes must be codes in [0, n_groups={n_groups}) (n_groups=None: any code >= 0); got "
    "values in [{lo}, {hi}]."
)
SAMPLE_WEIGHT_ERROR = (
    "sample_weight must be a finite non-negative 1-D tensor of length {n} with a positive sum."
)
MINER_INPUT_ERROR = (
    "embeddings must be 2-D (n_samples, dim) and labels/group_codes 1-D integer tensors of "
    "length n_samples; got embeddings {emb}, labels {lab}, group_codes {grp}."
)


def check_count(value: object, name: str, message: str = POSITIVE_ERROR) -> int:
    """``value`` if it is an ``int >= 1`` (not a bool); else ``ValueError(message)``.

    Parameters
    ----------
    value : object
        The argument to check.
    name : str
        Its name, for ``{name}`` in the message.
    message : str, default=POSITIVE_ERROR
        Template with ``{value}`` (and optionally ``{name}``).

    Returns
    -------
    int

    Examples
    --------
    >>> from fairot.torch.checks import check_count
    >>> check_count(3, "n_classes")
    3
    >>> check_count(True, "n_classes")
    Traceback (most recent call last):
    ...
    ValueError: n_classes must be a positive number; got True.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(message.format(name=name, value=value))
    return value


def check_number(
    value: object, message: str, *, low: float | None = None, strict: bool = False, **fields
) -> float:
    """``value`` as a float if it is a finite real number (not a bool) ``>= low``.

    Parameters
    ----------
    value : object
        The argument to check: an ``int`` or a ``float`` (NumPy floats included).
    message : str
        Template of the error, formatted with ``value=value`` and ``fields``.
    low : float, optional
        Lower bound; none when omitted.
    strict : bool, default=False
        Require ``value > low`` rather than ``value >= low``.
    **fields
        Further placeholders of ``message`` (e.g. ``name``).

    Returns
    -------
    float

    Examples
    --------
    >>> from fairot.torch.checks import FINITE_POSITIVE_ERROR, check_number
    >>> check_number(2, FINITE_POSITIVE_ERROR, low=0.0, strict=True, name="scale")
    2.0
    >>> check_number(float("inf"), FINITE_POSITIVE_ERROR, low=0.0, strict=True, name="scale")
    Traceback (most recent call last):
    ...
    ValueError: scale must be a finite positive number; got inf.
    """
    # ``value == value`` is False for NaN; comparing with inf (not math.isfinite) accepts any int.
    ok = (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and value == value
        and abs(value) != math.inf
    )
    if ok and low is not None:
        ok = value > low if strict else value >= low
    if not ok:
        raise ValueError(message.format(value=value, **fields))
    return float(value)


def check_embeddings(embeddings: object, name: str, *, validate: bool) -> None:
    """Refuse anything but a non-empty floating-point tensor; with ``validate``, NaN and inf.

    Parameters
    ----------
    embeddings : object
    name : str
        The caller's name, for the empty-batch message.
    validate : bool
        Also check that every value is finite (one device synchronisation).

    Examples
    --------
    >>> import torch
    >>> from fairot.torch.checks import check_embeddings
    >>> check_embeddings(torch.zeros(2, 3), "loss", validate=True)
    >>> check_embeddings(torch.zeros(0, 3), "loss", validate=False)
    Traceback (most recent call last):
    ...
    ValueError: loss: the batch is empty (0 samples); a mean over no sample is undefined.
    """
    if not torch.is_tensor(embeddings) or not embeddings.is_floating_point():
        value = (
            f"a {embeddings.dtype} tensor"
            if torch.is_tensor(embeddings)
            else f"{type(embeddings).__module__}.{type(embeddings).__name__}"
        )
        raise TypeError(EMBEDDINGS_TYPE_ERROR.format(value=value))
    if embeddings.ndim >= 1 and embeddings.shape[0] == 0:
        raise ValueError(EMPTY_BATCH_ERROR.format(name=name))
    if validate and not bool(torch.isfinite(embeddings).all()):
        count = int((~torch.isfinite(embeddings)).sum())
        raise ValueError(NONFINITE_EMBEDDINGS_ERROR.format(count=count))


def check_labels(labels: torch.Tensor, n: int) -> None:
    """Refuse labels that are not a 1-D integer tensor of length ``n``.

    Examples
    --------
    >>> import torch
    >>> from fairot.torch.checks import check_labels
    >>> check_labels(torch.tensor([0, 1]), 2)
    >>> check_labels(torch.tensor([0.0, 1.0]), 2)
    Traceback (most recent call last):
    ...
    ValueError: labels must be a 1-D integer tensor of length 2; got shape (2,).
    """
    if labels.ndim != 1 or labels.shape[0] != n or labels.is_floating_point():
        raise ValueError(LABELS_SHAPE_ERROR.format(n=n, shape=tuple(labels.shape)))


def check_batch(
    embeddings: object,
    labels: object,
    embedding_size: int,
    n_classes: int,
    *,
    name: str = "loss",
    validate: bool = True,
) -> torch.Tensor:
    """Check a classification batch: embeddings of width ``embedding_size``, labels in range.

    Parameters
    ----------
    embeddings : Tensor of shape (n_samples, embedding_size)
    labels : array-like of shape (n_samples,)
        Integer class labels.
    embedding_size, n_classes : int
        What the loss was built for.
    name : str, default="loss"
        The caller's name, for the messages.
    validate : bool, default=True
        Also check values: finite embeddings, labels in ``[0, n_classes)``.

    Returns
    -------
    Tensor of shape (n_samples,)
        ``labels`` as a tensor on the embeddings' device.

    Examples
    --------
    >>> import torch
    >>> from fairot.torch.checks import check_batch
    >>> check_batch(torch.zeros(2, 3), [0, 4], 3, 5).tolist()
    [0, 4]
    >>> check_batch(torch.zeros(2, 3), torch.tensor([0, 5]), 3, 5)
    Traceback (most recent call last):
    ...
    ValueError: labels must lie in [0, n_classes=5); got values in [0, 5].
    """
    # The type first: a clear error for a NumPy array before ``embeddings.device`` is read.
    check_embeddings(embeddings, name, validate=False)
    labels = torch.as_tensor(labels, device=embeddings.device)
    if validate:
        check_embeddings(embeddings, name, validate=True)
    if embeddings.ndim != 2 or embeddings.shape[1] != embedding_size:
        raise ValueError(
            EMBEDDINGS_SHAPE_ERROR.format(expected=embedding_size, shape=tuple(embeddings.shape))
        )
    check_labels(labels, embeddings.shape[0])
    if validate and (int(labels.min()) < 0 or int(labels.max()) >= n_classes):
        raise ValueError(
            LABELS_RANGE_ERROR.format(
                n_classes=n_classes, lo=int(labels.min()), hi=int(labels.max())
            )
        )
    return labels


def check_groups(
    groups: object, n: int, n_groups: int | None, name: str, *, validate: bool = True
) -> torch.Tensor:
    """``groups`` as a tensor of ``n`` integer group codes, in ``[0, n_groups)`` with ``validate``.

    Parameters
    ----------
    groups : array-like of shape (n,) or None
        ``None`` is refused: the caller needs one code per sample.
    n : int
        Number of samples of the batch.
    n_groups : int or None
        Number of groups; ``None`` accepts any code >= 0.
    name : str
        The caller's name, for the messages.
    validate : bool, default=True
        Also check the codes' range (one device synchronisation).

    Returns
    -------
    Tensor of shape (n,)

    Examples
    --------
    >>> from fairot.torch.checks import check_groups
    >>> check_groups([0, 2, 1], 3, 3, "loss").tolist()
    [0, 2, 1]
    >>> check_groups([0, 3, 1], 3, 3, "loss")
    Traceback (most recent call last):
    ...
    ValueError: group_codes must be codes in [0, n_groups=3) ... got values in [0, 3].
    """
    if groups is None:
        raise ValueError(GROUPS_REQUIRED_ERROR.format(name=name))
    groups = torch.as_tensor(groups)
    if (
        groups.ndim != 1
        or groups.shape[0] != n
        or groups.is_floating_point()
        or groups.is_complex()
        or groups.dtype == torch.bool
    ):
        raise ValueError(
            GROUPS_SHAPE_ERROR.format(name=name, n=n, dtype=groups.dtype, shape=tuple(groups.shape))
        )
    if not validate or not groups.numel():
        return groups
    low, high = int(groups.min()), int(groups.max())
    if low < 0 or (n_groups is not None and high >= n_groups):
        raise ValueError(GROUPS_RANGE_ERROR.format(n_groups=n_groups, lo=low, hi=high))
    return groups


def weighted_mean(
    losses: torch.Tensor, sample_weight: object = None, *, validate: bool = True
) -> torch.Tensor:
    r"""Mean of ``losses``, or :math:`\sum_j v_j L_j / \sum_j v_j` with checked weights.

    Parameters
    ----------
    losses : Tensor of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights with a positive, finite sum.
    validate : bool, default=True
        Check the weights' values (their shape is always checked).

    Returns
    -------
    Tensor
        Scalar, in ``losses``' dtype promoted to float32 at least when weighted.

    Examples
    --------
    >>> import torch
    >>> from fairot.torch.checks import weighted_mean
    >>> weighted_mean(torch.tensor([1.0, 3.0]), torch.tensor([3.0, 1.0])).item()
    1.5
    """
    if sample_weight is None:
        return losses.mean()
    # float32 at least: half-precision weights overflow their sum at 65504.
    dtype = torch.promote_types(losses.dtype, torch.float32)
    sample_weight = torch.as_tensor(sample_weight, dtype=dtype, device=losses.device)
    if sample_weight.shape != losses.shape:
        raise ValueError(SAMPLE_WEIGHT_ERROR.format(n=losses.shape[0]))
    if validate:
        total = float(sample_weight.sum())
        # NaN fails every comparison, so ask for what is valid rather than refuse what is not.
        if not (bool((sample_weight >= 0).all()) and math.isfinite(total) and total > 0):
            raise ValueError(SAMPLE_WEIGHT_ERROR.format(n=losses.shape[0]))
    return (sample_weight * losses).sum() / sample_weight.sum()
