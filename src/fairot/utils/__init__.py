"""Small helpers shared by every package (the bottom floor: imports nothing from fairot).

- :func:`atomic_write` / :func:`write_atomic` — files that are either the old or the complete new
  content, never truncated (checkpoints, CLI outputs); :func:`remove_stale_temporaries` clears
  what a writer killed mid-write left behind.
"""

from ._atomic import atomic_write, remove_stale_temporaries, write_atomic

__all__ = ["atomic_write", "remove_stale_temporaries", "write_atomic"]
