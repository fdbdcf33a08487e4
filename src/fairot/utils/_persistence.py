"""Load a fitted fairot model saved with ``skops.io`` without trusting what the file says.

``skops.io.load(f, trusted=skops.io.get_untrusted_types(file=f))`` trusts every type the file
lists, so a tampered file that names ``os.system`` or ``builtins.exec`` runs it at load. Here the
list of types is read from the same bytes that are then loaded (no window to swap the file), and
each name must pass :func:`is_allowed_type`:

- a class defined in fairot itself (``fairot.…``), resolved by import and checked to be defined
  where the name says (a name that only re-exports something, e.g. ``fairot.cli._io.Path``, is
  refused);
- a scikit-learn estimator class (a subclass of ``sklearn.base.BaseEstimator`` defined in
  ``sklearn.…``), or one of the few scikit-learn data containers listed in
  :data:`SKLEARN_DATA_TYPES` that tree models hold.

Functions, builtins and every other module are refused; the error lists the offending names.
skops itself already trusts NumPy arrays, dtypes and plain containers by default.

Three more checks, since the file is untrusted input:

- **size**: the zip's declared sizes are checked before anything is inflated (``schema.json`` at
  most :data:`MAX_SCHEMA_BYTES`, all members together at most :data:`MAX_UNCOMPRESSED_BYTES`),
  and ``schema.json`` is read through a bounded reader; a zip bomb is refused naming the limit;
- **trees**: scikit-learn's compiled tree structures (which skops itself refuses by default,
  because their node indices are never bounds-checked) are validated after skops builds them
  and before the model is returned (:mod:`fairot.utils._model_checks`);
- **version**: :func:`save_model` records the fairot version in the file (a ``fairot.json``
  member that skops ignores); a file that names fairot or scikit-learn classes this version
  does not have gets a message about versions (:data:`MSG_VERSION`), not about tampering.

An allowed type must also be rebuilt the way skops saves an estimator: an ``ObjectNode``
(``__new__`` then its state), a ``TypeNode`` (the class itself), skops' ``TreeNode``, or a
``TupleNode`` for a plain named tuple. A file that asks for one of
them through a constructor call (``ConstructorFromReduceNode`` calls ``cls(*args)`` with
arguments from the file) is refused too, so no class's ``__init__`` runs on file data.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

from fairot.exceptions import UntrustedModelError

from ._atomic import write_atomic
from ._model_checks import check_trees

__all__ = [
    "MAX_SCHEMA_BYTES",
    "MAX_UNCOMPRESSED_BYTES",
    "MSG_LAZY",
    "MSG_UNREADABLE",
    "MSG_VERSION",
    "SKLEARN_DATA_TYPES",
    "fairot_version",
    "is_allowed_type",
    "load_model",
    "model_to_bytes",
    "save_model",
]

#: The most bytes ``schema.json`` may inflate to (a fitted model's schema is kilobytes to a
#: few megabytes; its arrays are separate members).
MAX_SCHEMA_BYTES = 64 * 1024 * 1024
#: The most bytes all members of a model file may inflate to together.
MAX_UNCOMPRESSED_BYTES = 4 * 1024**3
#: The zip member where :func:`save_model` records who saved the file.
VERSION_MEMBER = "fairot.json"
MSG_TOO_LARGE = (
    "{source} is refused: {what} would inflate to {size:,} bytes, over the limit of {limit:,} "
    "bytes ({constant}); a fitted model's file is far smaller, so this one is corrupt or a zip "
    "bomb."
)
MSG_VERSION = (
    "{source} was saved by {saved}, this is fairot {current}: the file names {types}, which "
    "this version does not have. Refit the model with fairot {current} and save it with "
    "fairot.save_model, or load it with the fairot version that saved it{install}."
)

#: scikit-learn's compiled tree structures: state holders, not estimators, and not trusted by
#: skops by default.
SKLEARN_DATA_TYPES = frozenset(
    {
        "sklearn.tree._tree.Tree",
        "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    }
)

MSG_UNTRUSTED = (
    "{source} lists types that fairot.load_model will not load: {types}. fairot trusts only its "
    "own classes and scikit-learn estimators; a file naming anything else may run code when it is "
    "loaded. If you made this file yourself and know every listed type, load it with "
    "skops.io.load(path, trusted=[...]) naming those types."
)
MSG_LOADER = (
    "{source} asks to rebuild {types} by a constructor call; fairot.load_model rebuilds its own "
    "and scikit-learn's classes only from their saved state (as skops.io.dump writes them). The "
    "file was not written by skops.io.dump of a fairot model: it may have been tampered with."
)
#: How skops may rebuild an allowed type: from its state, as a class reference, or (for
#: scikit-learn's ``Tree``) by skops' own tree loader. Named tuples come as ``TupleNode``.
ALLOWED_LOADERS = frozenset({"ObjectNode", "TypeNode", "TreeNode"})
MSG_UNREADABLE = (
    "Cannot read the model: {source} is not a skops file that fairot.load_model can rebuild "
    "({reason}). Save models with fairot.save_model (as fairot mitigate does)."
)
MSG_OTHER_VERSION = (
    "It was saved by {saved}, this is fairot {current}: refit the model with this version, or "
    "load it with the version that saved it{install}."
)
MSG_LAZY = (
    "save_model stores computed values, and the model's attributes {names} are lazy Dask "
    "collections (one value per training row, from a fit on Dask collections): compute each "
    "into memory first, or save a model "
    "fitted in memory."
)
MSG_SOURCE = "model must be a path to a .skops file or its bytes; got {kind}."


def _resolve(name: str) -> Any:
    """The object that a dotted type name points to, or None when it does not resolve."""
    module_name, _, attribute = name.rpartition(".")
    if not module_name:
        return None
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return getattr(module, attribute, None)


def _package_class(name: str, package: str) -> type | None:
    """The class ``name`` when it is defined, under that very name, inside ``package``."""
    if not (name.startswith(package + ".")):
        return None
    obj = _resolve(name)
    if not isinstance(obj, type):
        return None
    if f"{obj.__module__}.{obj.__qualname__}" != name:
        return None
    return obj


def is_allowed_type(name: str) -> bool:
    """Whether :func:`load_model` may construct the type a skops file names ``name``.

    Parameters
    ----------
    name : str
        A fully qualified type name as listed by ``skops.io.get_untrusted_types``.

    Returns
    -------
    bool
        True for fairot's own classes, scikit-learn estimator classes and
        :data:`SKLEARN_DATA_TYPES`; False for everything else (functions, builtins, ``os``...).

    Examples
    --------
    >>> is_allowed_type("fairot.classification._cot.COTClassifier")
    True
    >>> is_allowed_type("os.system"), is_allowed_type("fairot.cli._io.Path")
    (False, False)
    """
    if name in SKLEARN_DATA_TYPES:
        return True
    if _package_class(name, "fairot") is not None:
        return True
    estimator = _package_class(name, "sklearn")
    if estimator is None:
        return False
    from sklearn.base import BaseEstimator

    return issubclass(estimator, BaseEstimator)


def _is_named_tuple(name: str) -> bool:
    """Whether ``name`` is a plain named tuple (its constructor only stores its fields)."""
    cls = _resolve(name)
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and hasattr(cls, "_fields")
        and "__init__" not in vars(cls)
    )


def _constructed_by_call(data: bytes, names: set[str]) -> list[str]:
    """The names among ``names`` that the file's tree rebuilds with another loader than state."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        schema = json.loads(archive.read("schema.json"))
    found, stack = set(), [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            name = f"{node.get('__module__')}.{node.get('__class__')}"
            loader = node.get("__loader__")
            if (
                name in names
                and loader not in ALLOWED_LOADERS
                and not (loader == "TupleNode" and _is_named_tuple(name))
            ):
                found.add(name)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return sorted(found)


def load_model(model: str | os.PathLike | bytes) -> Any:
    """Load a model saved with ``skops.io.dump``, trusting only fairot and scikit-learn types.

    Parameters
    ----------
    model : str, path-like or bytes
        The ``.skops`` file (as ``fairot mitigate`` writes ``model.skops``) or its bytes.

    Returns
    -------
    object
        The fitted estimator.

    Raises
    ------
    fairot.exceptions.UntrustedModelError
        When the file names any type outside :func:`is_allowed_type` (nothing of the file is
        constructed then; a fairot or scikit-learn class this install lacks, in a file of
        another fairot version, gets :data:`MSG_VERSION` instead), or holds a tree structure
        that fails the checks of :mod:`fairot.utils._model_checks`.
    ValueError
        When the zip would inflate beyond :data:`MAX_SCHEMA_BYTES` or
        :data:`MAX_UNCOMPRESSED_BYTES` (the message names the limit), or the bytes are not a
        skops file that can be rebuilt (not a zip, truncated, a malformed ``schema.json``;
        the message starts with "Cannot read the model" and, for a file another fairot
        version saved, says which).

    Examples
    --------
    >>> import numpy as np, skops.io
    >>> from sklearn.linear_model import LogisticRegression
    >>> from fairot.classification import QuantileParityPostProcessor
    >>> X = np.linspace(-1, 1, 40).reshape(-1, 1)
    >>> y, g = (X[:, 0] > 0).astype(int), np.tile([0, 1], 20)
    >>> model = QuantileParityPostProcessor(estimator=LogisticRegression()).fit(
    ...     X, y, sensitive_features=g)
    >>> loaded = load_model(skops.io.dumps(model))
    >>> same = loaded.predict(X, sensitive_features=g) == model.predict(X, sensitive_features=g)
    >>> bool(same.all())
    True
    """
    if isinstance(model, (bytes, bytearray)):
        data, source = bytes(model), "the model bytes"
    elif isinstance(model, (str, os.PathLike)):
        path = Path(model)
        data, source = path.read_bytes(), str(path)
    else:
        raise TypeError(MSG_SOURCE.format(kind=type(model).__name__))
    with _unreadable_as_value_error(source):
        saved_by = _check_archive(data, source)
    try:
        return _load_checked(data, source, saved_by)
    except (UntrustedModelError, _TooLargeError):
        raise
    except ValueError as error:  # MSG_UNREADABLE: name the version when another one saved it
        if saved_by is None or saved_by == fairot_version():
            raise
        saved, install = _saved_by(saved_by)
        note = MSG_OTHER_VERSION.format(saved=saved, current=fairot_version(), install=install)
        raise ValueError(f"{error} {note}") from error


def _load_checked(data: bytes, source: str, saved_by: str | None) -> Any:
    """The checks and the load of :func:`load_model`, once the archive's sizes passed."""
    import skops.io

    # Read the type list from the bytes that will be loaded: the file cannot change in between.
    with _unreadable_as_value_error(source):
        listed = skops.io.get_untrusted_types(data=data)
    refused = sorted(name for name in listed if not is_allowed_type(name))
    missing = [name for name in refused if _from_another_version(name)]
    if missing and saved_by != fairot_version():
        raise UntrustedModelError(_version_message(source, saved_by, missing), refused)
    if refused:
        raise UntrustedModelError(
            MSG_UNTRUSTED.format(source=source, types=", ".join(refused)), refused
        )
    with _unreadable_as_value_error(source):
        called = _constructed_by_call(data, set(listed))
    if called:
        raise UntrustedModelError(MSG_LOADER.format(source=source, types=", ".join(called)), called)
    with _unreadable_as_value_error(source):
        loaded = skops.io.loads(data, trusted=listed)
    check_trees(loaded, source)
    return loaded


def _lazy_attributes(model: Any) -> list[str]:
    """The attributes of ``model`` that are Dask collections, and such fields of its dataclasses.

    A fit on Dask collections keeps its per-row results lazy, ``program_.decisions`` among them.
    """
    found = []
    for name, value in getattr(model, "__dict__", {}).items():
        if hasattr(value, "__dask_graph__"):
            found.append(name)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            found += [
                f"{name}.{field.name}"
                for field in dataclasses.fields(value)
                if hasattr(getattr(value, field.name), "__dask_graph__")
            ]
    return found


def model_to_bytes(model: Any) -> bytes:
    """The bytes of ``skops.io.dumps(model)`` with the saving fairot version recorded.

    The version goes into a ``fairot.json`` member of the zip, which ``skops.io.load``
    ignores; :func:`load_model` reads it to tell a file from another fairot version from a
    tampered one.

    Examples
    --------
    >>> import zipfile, io, json
    >>> from sklearn.linear_model import LogisticRegression
    >>> data = model_to_bytes(LogisticRegression())
    >>> json.loads(zipfile.ZipFile(io.BytesIO(data)).read("fairot.json"))["fairot"] != ""
    True
    """
    import skops.io

    # A Dask collection would be stored as its task graph (skops refuses it with a TypeError
    # about a type it cannot save); name the attributes and what to do instead.
    lazy = _lazy_attributes(model)
    if lazy:
        raise ValueError(MSG_LAZY.format(names=", ".join(lazy)))
    buffer = io.BytesIO(skops.io.dumps(model))
    with zipfile.ZipFile(buffer, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        record = {"fairot": fairot_version(), "format": "skops"}
        archive.writestr(VERSION_MEMBER, json.dumps(record))
    return buffer.getvalue()


def save_model(model: Any, path: str | os.PathLike) -> None:
    """Save a fitted model to ``path`` (skops format, written atomically) for :func:`load_model`.

    Parameters
    ----------
    model : estimator
        A fitted fairot or scikit-learn estimator.
    path : str or path-like
        Usually ``model.skops``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.skops"
    >>> X, y = np.arange(6.0).reshape(-1, 1), np.arange(6) % 2
    >>> save_model(LogisticRegression().fit(X, y), path)
    >>> load_model(path).predict(X).shape
    (6,)
    """
    write_atomic(path, model_to_bytes(model))


def fairot_version() -> str:
    """The installed fairot's version, as its package metadata (and ``fairot.__version__``) say.

    Read from the metadata rather than imported from ``fairot``: the bottom floor imports
    nothing above it.

    Examples
    --------
    >>> import fairot
    >>> fairot_version() == fairot.__version__
    True
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fairot")
    except PackageNotFoundError:  # a source tree on sys.path, never installed
        return "unknown"


def _from_another_version(name: str) -> bool:
    """Whether a refused name is a fairot or scikit-learn class this install does not have."""
    return name.startswith(("fairot.", "sklearn.")) and _resolve(name) is None


def _saved_by(saved_by: str | None) -> tuple[str, str]:
    """Who saved the file, and how to install that version, for the messages."""
    if saved_by is None:
        return "a fairot version that recorded none (before fairot.save_model)", ""
    return f"fairot {saved_by}", f" (pip install 'fairot=={saved_by}')"


def _version_message(source: str, saved_by: str | None, missing: list[str]) -> str:
    saved, install = _saved_by(saved_by)
    return MSG_VERSION.format(
        source=source,
        saved=saved,
        current=fairot_version(),
        types=", ".join(missing),
        install=install,
    )


def _check_archive(data: bytes, source: str) -> str | None:
    """Refuse a zip that would inflate beyond the limits; the version that saved it, if any."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = archive.infolist()
        total = sum(member.file_size for member in members)
        if total > MAX_UNCOMPRESSED_BYTES:
            raise _too_large(source, "its members", total, "MAX_UNCOMPRESSED_BYTES")
        schema = archive.getinfo("schema.json")
        if schema.file_size > MAX_SCHEMA_BYTES:
            raise ValueError(
                _too_large(source, "schema.json", schema.file_size, "MAX_SCHEMA_BYTES")
            )
        # Declared sizes can lie: read at most one byte past the limit, whatever they say.
        with archive.open(schema) as f:
            head = f.read(MAX_SCHEMA_BYTES + 1)
        if len(head) > MAX_SCHEMA_BYTES:
            raise _too_large(source, "schema.json", len(head), "MAX_SCHEMA_BYTES")
        if VERSION_MEMBER not in archive.namelist():
            return None
        with archive.open(VERSION_MEMBER) as f:
            record = json.loads(f.read(4096))
    version = record.get("fairot") if isinstance(record, dict) else None
    return version if isinstance(version, str) else None


class _TooLargeError(ValueError):
    """A file over a size limit (said as such, not as an unreadable file)."""


def _too_large(source: str, what: str, size: int, constant: str) -> _TooLargeError:
    limit = globals()[constant]  # read when refusing: the limit in force (tests lower it)
    return _TooLargeError(
        MSG_TOO_LARGE.format(source=source, what=what, size=size, limit=limit, constant=constant)
    )


@contextlib.contextmanager
def _unreadable_as_value_error(source: str):
    """Any failure to parse the file becomes one ValueError that says so (MSG_UNREADABLE).

    The bytes are untrusted input: a truncated zip (``BadZipFile``), a missing
    ``schema.json`` or node field (``KeyError``), a node of the wrong shape (``AttributeError``,
    ``TypeError``), a number too long to parse or nesting too deep for ``json`` all mean the
    same to the caller. Only what :func:`load_model` itself refuses is an UntrustedModelError.
    """
    try:
        yield
    except (UntrustedModelError, _TooLargeError):
        raise
    except Exception as error:  # every parse failure of the untrusted bytes
        reason = f"{type(error).__name__}: {error}"[:300]
        raise ValueError(MSG_UNREADABLE.format(source=source, reason=reason)) from error
