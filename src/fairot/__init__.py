"""fairot: measure and remove group unfairness with optimal transport and meta-learning.

Subpackages
-----------
metrics
    Fairness metrics of the three seed papers (Wass1, SDD, SPDD, W_p gaps, STD, SER) and
    :func:`~fairot.metrics.fairness_report`.
transport
    The one-dimensional optimal-transport core shared by every method.
datasets
    Loaders for Adult, German Credit, Communities & Crime (shipped) and ACS income.
classification
    COT, DOT and quantile post-processing (DPP) for strong demographic parity.
regression
    Approximate demographic parity for regression under a Wasserstein tolerance.
verification
    Face verification per group on pair scores: FMR and FNMR at one threshold, DET curves,
    the LFW/RFW 10-fold protocol.
face
    Meta-learned group margins (MBN) for face recognition (needs the ``torch`` extra).
experiments
    The papers' studies, run by ``fairot reproduce``.
"""

import hashlib as _hashlib
import os as _os
import stat as _stat
import sys as _sys
import tempfile as _tempfile
import warnings as _warnings

__version__ = "0.1.0.dev0"

__all__ = ["__version__", "load_model", "save_model"]


def __getattr__(name: str):
    # ``fairot.load_model`` without importing scikit-learn or skops at ``import fairot``.
    if name in ("load_model", "save_model"):
        import fairot.utils

        return getattr(fairot.utils, name)
    raise AttributeError(f"module 'fairot' has no attribute {name!r}")


def _writable(path: str) -> bool:
    """Whether ``path`` (or, when missing, its nearest existing folder) accepts new files."""
    while not _os.path.exists(path):
        parent = _os.path.dirname(path)
        if parent == path:
            return False
        path = parent
    return _os.path.isdir(path) and _os.access(path, _os.W_OK | _os.X_OK)


def _blocked_cache_subfolder(cache: str) -> str | None:
    """A folder numba would use inside ``cache`` for fairot's kernels that it cannot write.

    numba caches the kernels of a source folder ``D`` in ``cache/<name of D>_<sha1 of D>``
    (``numba.core.caching._CacheLocator.get_suitable_cache_subpath``); when that path exists
    but is not a folder this user can write, compiling fails with numba's traceback, even
    though ``cache`` itself is writable.
    """
    package = _os.path.dirname(_os.path.abspath(__file__))
    for folder, _, files in _os.walk(package):
        if not any(name.endswith(".py") for name in files):
            continue
        digest = _hashlib.sha1(folder.encode()).hexdigest()
        sub = _os.path.join(cache, f"{_os.path.basename(folder)}_{digest}")
        if _os.path.lexists(sub) and not (
            _os.path.isdir(sub) and _os.access(sub, _os.W_OK | _os.X_OK)
        ):
            return sub
    return None


def _private_folder(path: str) -> bool:
    """Whether ``path`` is a real folder owned by this user that nobody else can write.

    numba loads pickled index files from its cache folder, so a folder that another local user
    created first (or can write into) would let that user run code as this one.
    """
    try:
        info = _os.lstat(path)
    except OSError:
        return False
    if not _stat.S_ISDIR(info.st_mode):  # lstat: a symbolic link is not a folder here
        return False
    if hasattr(_os, "getuid") and info.st_uid != _os.getuid():
        return False
    return info.st_mode & (_stat.S_IWGRP | _stat.S_IWOTH) == 0 and _os.access(
        path, _os.W_OK | _os.X_OK
    )


def _safe_cache_folder() -> str:
    """The current user's private numba cache folder under the temporary directory.

    The per-user name ``fairot-numba-cache-<uid>`` is reused across runs only when it passes
    :func:`_private_folder`; it is created with mode 0700 (an existing folder is re-checked after
    the race between check and create). When someone else prepared that path, a fresh private
    ``mkdtemp`` folder is used instead: never a folder this user does not control.
    """
    owner = getattr(_os, "getuid", lambda: "user")()
    predictable = _os.path.join(_tempfile.gettempdir(), f"fairot-numba-cache-{owner}")
    try:
        _os.mkdir(predictable, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return _tempfile.mkdtemp(prefix="fairot-numba-cache-")
    if _private_folder(predictable):
        return predictable
    _warnings.warn(MSG_UNSAFE_CACHE.format(path=predictable), RuntimeWarning, stacklevel=3)
    return _tempfile.mkdtemp(prefix="fairot-numba-cache-")


MSG_UNSAFE_CACHE = (
    "fairot: not using the numba cache folder {path}: it is not a private folder of this user "
    "(another user may have created it or can write into it); compiling into a fresh private "
    "folder instead. Remove that folder, or set NUMBA_CACHE_DIR to a folder only you can write."
)
MSG_UNWRITABLE_CACHE_SUBFOLDER = (
    "fairot: numba's cache folder {folder} inside NUMBA_CACHE_DIR={path} cannot be written by "
    "this user; using the private folder {fallback} instead. Set NUMBA_CACHE_DIR to a folder "
    "you can write, or remove that folder."
)
MSG_UNWRITABLE_CACHE = (
    "fairot: NUMBA_CACHE_DIR={path} cannot be written by this user; using the private folder "
    "{fallback} instead. Set NUMBA_CACHE_DIR to a folder you can write."
)


def _ensure_numba_cache_dir() -> None:
    """Give numba a writable cache folder when neither the install nor $HOME is writable.

    The kernels are compiled with ``cache=True``; numba stores the cache next to the sources or
    in ``~/.cache/numba`` and raises ``RuntimeError`` at import when it can use neither (a
    read-only container install is normal in production). Then the cache goes to a private
    per-user folder under the temporary directory (:func:`_safe_cache_folder`). An explicit
    ``NUMBA_CACHE_DIR`` wins when this user can write it and the folders numba would use inside
    it (:func:`_blocked_cache_subfolder`); otherwise one warning line says so and the private
    folder is used, rather than numba's traceback at import.
    """
    explicit = _os.environ.get("NUMBA_CACHE_DIR")
    if explicit:
        blocked = _blocked_cache_subfolder(explicit) if _writable(explicit) else explicit
        if blocked is None:
            return
        fallback = _safe_cache_folder()
        message = (
            MSG_UNWRITABLE_CACHE.format(path=explicit, fallback=fallback)
            if blocked == explicit
            else MSG_UNWRITABLE_CACHE_SUBFOLDER.format(
                folder=blocked, path=explicit, fallback=fallback
            )
        )
        _warnings.warn(message, RuntimeWarning, stacklevel=2)
    else:
        user_cache = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(
            _os.path.expanduser("~"), ".cache"
        )
        package = _os.path.dirname(_os.path.abspath(__file__))
        if _writable(package) or _writable(_os.path.join(user_cache, "numba")):
            return
        fallback = _safe_cache_folder()
    _os.environ["NUMBA_CACHE_DIR"] = fallback
    # numba reads the variable when it is imported; if it already was, set its config too.
    config = _sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = fallback


_ensure_numba_cache_dir()
