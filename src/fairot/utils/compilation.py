"""One log line when fairot's numba kernels take long to compile (a cold cache).

The kernels are compiled with ``cache=True``, so only the first use on a machine (or after an
upgrade) compiles them, which takes seconds to tens of seconds; later processes load them from
the cache in well under a second. A first call that seems to hang is the surprise this module
removes: once fairot's kernels have spent :data:`NOTICE_AFTER_S` seconds compiling in a process,
the logger ``"fairot.compile"`` (a child of ``"fairot"``) records one INFO line saying so. The
library only logs (silent unless the application shows INFO records); the command line shows the
line on stderr.

It listens to numba's ``"numba:compile"`` event, which numba triggers only on a cache miss (a
real compilation, never a load from the cache), and reacts only to kernels of fairot's modules.

Internal surface (used by the kernel modules and the command line): :func:`install_compile_notice`,
:class:`CompileNotice`, :data:`NOTICE_AFTER_S`, :data:`LOGGER_NAME`, :data:`MSG_COMPILING`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from numba.core import event

#: Seconds of compilation (summed over fairot's kernels) after which the line is logged.
NOTICE_AFTER_S = 3.0
LOGGER_NAME = "fairot.compile"
MSG_COMPILING = (
    "fairot: compiling numba kernels (first use on this machine or after an upgrade, about 5-30 "
    "s; cached in {cache} for later runs)..."
)

_installed: CompileNotice | None = None
_lock = threading.Lock()
_announce_lock = threading.Lock()


def _cache_folder() -> str:
    return os.environ.get("NUMBA_CACHE_DIR") or "numba's cache folder"


def _is_fairot_kernel(ev: Any) -> bool:
    dispatcher = (ev.data or {}).get("dispatcher")
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return module == "fairot" or module.startswith("fairot.")


class CompileNotice(event.Listener):
    """Listener of numba's compile events: logs :data:`MSG_COMPILING` once, when compiling is long.

    Compile time is summed over fairot's kernels (a fit compiles several, each of which may be
    short); nested compilations (a kernel compiling the kernels it calls) count once. A timer
    fires while the compilation is still running, so the line appears before the wait ends.

    Parameters
    ----------
    after_s : float, default=NOTICE_AFTER_S
        Seconds of compilation before the line is logged.
    logger : logging.Logger, optional
        Where the line goes; ``logging.getLogger("fairot.compile")`` by default.
    """

    def __init__(self, after_s: float = NOTICE_AFTER_S, logger: logging.Logger | None = None):
        self.after_s = after_s
        self.logger = logger if logger is not None else logging.getLogger(LOGGER_NAME)
        self.announced = False
        self.compiled_s = 0.0
        self._depth = 0
        self._started = 0.0
        self._timer: threading.Timer | None = None

    def _announce(self) -> None:
        with _announce_lock:
            if self.announced:
                return
            self.announced = True
        self.logger.info(MSG_COMPILING.format(cache=_cache_folder()))

    def on_start(self, ev: Any) -> None:
        """A compilation begins: start the clock (and the timer) at the outermost fairot kernel."""
        if not _is_fairot_kernel(ev):
            return
        self._depth += 1
        if self._depth > 1 or self.announced:
            return
        self._started = time.perf_counter()
        left = self.after_s - self.compiled_s
        if left <= 0:
            self._announce()
            return
        self._timer = threading.Timer(left, self._announce)
        self._timer.daemon = True
        self._timer.start()

    def on_end(self, ev: Any) -> None:
        """A compilation ends: stop the timer and add its duration."""
        if not _is_fairot_kernel(ev) or self._depth == 0:
            return
        self._depth -= 1
        if self._depth:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.compiled_s += time.perf_counter() - self._started


def install_compile_notice() -> CompileNotice:
    """Register the process's :class:`CompileNotice` with numba (once; later calls return it)."""
    global _installed
    with _lock:
        if _installed is None:
            _installed = CompileNotice()
            event.register("numba:compile", _installed)
        return _installed
