"""Small helpers shared by every package (the bottom floor: imports nothing from fairot).

- :func:`atomic_write` / :func:`write_atomic` — files that are either the old or the complete new
  content, never truncated (checkpoints, CLI outputs).
"""

from ._atomic import atomic_write, write_atomic

__all__ = ["atomic_write", "write_atomic"]
