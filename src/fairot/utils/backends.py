"""The backend registry: how a public function hands Dask collections to ``fairot.dask``.

The core packages (``metrics``, ``classification``, ``regression``) never import ``fairot.dask``:
that package sits on a higher floor and builds on their public seams. Instead a public function
asks :func:`any_dask` whether an argument is a Dask collection (by duck typing, so that neither
dask nor ``fairot.dask`` is imported when no collection was given) and, if so, calls
:func:`dispatch` with the name of the operation. :func:`dispatch` loads the backend module by
name on first use and calls the implementation it registered under that name.

The protocol a backend module implements is one mapping, ``IMPLEMENTATIONS``, from operation
names (``"metric"``, ``"QuantileParityPostProcessor.fit"``, ...) to callables. An operation the
backend does not implement raises :class:`NotImplementedError` naming it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

#: The backend of each kind of collection, loaded by module name on first use.
BACKEND_MODULES: dict[str, str] = {"dask": "fairot.dask"}

MSG_NO_IMPLEMENTATION = (
    "{operation} is not implemented for {kind} collections; compute them into memory first."
)


def is_dask_collection(value: Any) -> bool:
    """Whether ``value`` is a Dask collection (an array, Series, DataFrame, bag or delayed).

    Duck typing on the Dask collection protocol (``__dask_graph__`` returning a graph), as
    ``dask.is_dask_collection`` does, so that nothing is imported for in-memory inputs.

    Examples
    --------
    >>> import numpy as np
    >>> is_dask_collection(np.zeros(3))
    False
    """
    if isinstance(value, type):
        return False
    graph = getattr(type(value), "__dask_graph__", None)
    if graph is None:
        return False
    try:
        return value.__dask_graph__() is not None
    except (AttributeError, TypeError):
        return False


def any_dask(*values: Any) -> bool:
    """Whether any of ``values`` is a Dask collection (``None`` counts as not)."""
    return any(is_dask_collection(v) for v in values if v is not None)


def backend(kind: str = "dask") -> ModuleType:
    """The backend module for collections of ``kind``, imported on first use."""
    try:
        module_name = BACKEND_MODULES[kind]
    except KeyError:
        raise ValueError(f"kind must be one of {sorted(BACKEND_MODULES)}; got {kind!r}.") from None
    return importlib.import_module(module_name)


def dispatch(operation: str, *args: Any, kind: str = "dask", **kwargs: Any) -> Any:
    """Run ``operation`` of the ``kind`` backend on ``args`` and ``kwargs``.

    Parameters
    ----------
    operation : str
        A name the backend lists in its ``IMPLEMENTATIONS`` mapping.
    *args, **kwargs
        Passed to the implementation unchanged.
    kind : str, default="dask"
        Which backend.

    Returns
    -------
    object
        What the implementation returns.
    """
    implementations: Mapping[str, Callable[..., Any]] = backend(kind).IMPLEMENTATIONS
    try:
        implementation = implementations[operation]
    except KeyError:
        raise NotImplementedError(
            MSG_NO_IMPLEMENTATION.format(operation=operation, kind=kind.capitalize())
        ) from None
    return implementation(*args, **kwargs)
