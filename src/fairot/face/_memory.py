"""Keep freed memory for reuse on CPU, as CUDA's caching allocator does on a GPU.

glibc's ``malloc`` hands every block over 32 MiB back to the kernel when it is freed, so a CPU
training loop page-faults its activations in again at every step. That costs an MBN step far more
than a plain one (it holds and allocates several times the memory; see ``docs/benchmarks.md``).
PyTorch's CPU launcher (``torch.backends.xeon.run_cpu``) swaps in jemalloc or tcmalloc for the same
reason; ``fairot face train`` on CPU calls :func:`keep_freed_memory` instead, and a script can do
the same, or set ``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=2147483647`` in the environment.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

__all__ = ["keep_freed_memory"]

# glibc's <malloc.h>
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_NEVER_TRIM = 2**31 - 1


def keep_freed_memory() -> bool:
    """Make this process's glibc ``malloc`` keep freed memory for reuse (no mmap, no trimming).

    Process-wide and irreversible: the resident memory stays at its peak. Call it once at the
    start of a CPU training script.

    Returns
    -------
    bool
        True when glibc took both settings; False elsewhere (macOS, Windows, musl), where
        nothing changes.

    Examples
    --------
    Call it once at the start of a CPU training script (here in a child process, since it changes
    the allocator of the whole process):

    >>> import subprocess, sys
    >>> code = "from fairot.face import keep_freed_memory; print(keep_freed_memory())"
    >>> out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    >>> out.stdout.strip() in {"True", "False"}
    True
    """
    if platform.system() != "Linux":
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    if not hasattr(libc, "mallopt"):
        return False
    return bool(libc.mallopt(_M_MMAP_MAX, 0)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, _NEVER_TRIM))
