"""Small helpers shared by every package (the bottom floor: imports nothing from fairot).

- :func:`atomic_write` / :func:`write_atomic` — files that are either the old or the complete new
  content, never truncated (checkpoints, CLI outputs); :func:`remove_stale_temporaries` clears
  what a writer killed mid-write left behind.
- :class:`ScoreColumn` — an identity model whose score is a column of ``X`` (post-process
  scores that come from elsewhere, as ``fairot mitigate`` does).
"""

from ._atomic import atomic_write, remove_stale_temporaries, write_atomic
from ._score_column import ScoreColumn

__all__ = ["ScoreColumn", "atomic_write", "remove_stale_temporaries", "write_atomic"]
