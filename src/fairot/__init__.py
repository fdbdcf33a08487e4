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
face
    Meta-learned group margins (MBN) for face recognition (needs the ``torch`` extra).
experiments
    The papers' studies, run by ``fairot reproduce``.
"""

import os as _os
import sys as _sys
import tempfile as _tempfile

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]


def _writable(path: str) -> bool:
    """Whether ``path`` (or, when missing, its nearest existing folder) accepts new files."""
    while not _os.path.exists(path):
        parent = _os.path.dirname(path)
        if parent == path:
            return False
        path = parent
    return _os.path.isdir(path) and _os.access(path, _os.W_OK | _os.X_OK)


def _ensure_numba_cache_dir() -> None:
    """Give numba a writable cache folder when neither the install nor $HOME is writable.

    The kernels are compiled with ``cache=True``; numba stores the cache next to the sources or
    in ``~/.cache/numba`` and raises ``RuntimeError`` at import when it can use neither (a
    read-only container install is normal in production). Then the cache goes to a per-user
    folder under the temporary directory instead. An explicit ``NUMBA_CACHE_DIR`` always wins.
    """
    if _os.environ.get("NUMBA_CACHE_DIR"):
        return
    user_cache = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(
        _os.path.expanduser("~"), ".cache"
    )
    package = _os.path.dirname(_os.path.abspath(__file__))
    if _writable(package) or _writable(_os.path.join(user_cache, "numba")):
        return
    owner = getattr(_os, "getuid", lambda: "user")()
    fallback = _os.path.join(_tempfile.gettempdir(), f"fairot-numba-cache-{owner}")
    _os.environ["NUMBA_CACHE_DIR"] = fallback
    # numba reads the variable when it is imported; if it already was, set its config too.
    config = _sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = fallback


_ensure_numba_cache_dir()
