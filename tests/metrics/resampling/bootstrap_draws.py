"""A pure-Python reference of the bootstrap's draws: the oracle for the compiled ones.

Replicate ``b`` of ``bootstrap_intervals(..., random_state=seed)`` draws from its own SplitMix64
stream (Steele, Lea and Flood, OOPSLA 2014), seeded by the ``b``-th of the ``n_bootstrap``
unsigned 64-bit integers that ``numpy.random.default_rng(seed)`` gives first; in every cell
(intersectional group, by increasing code), ``n_c`` times, a uniform index into the cell's rows
sorted by score (stable), read by Lemire's multiply-and-reject method (ACM TOMACS 2019) from
the 32-bit halves of the stream's outputs (high half first).
Written here from the papers with Python integers, independently of the numba kernels.
"""

from __future__ import annotations

import numpy as np

_MASK = 2**64 - 1


def _splitmix(state: int) -> tuple[int, int]:
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def _halves(state: int):
    # Every 64-bit output as two 32-bit words: its high half, then its low half.
    while True:
        state, word = _splitmix(state)
        yield word >> 32
        yield word & 0xFFFFFFFF


def _below(words, bound: int) -> int:
    # Accept the high half of (32 random bits) x bound unless its low half is below 2**32 mod
    # bound: then every value in [0, bound) has exactly floor(2**32 / bound) accepted preimages.
    while True:
        product = next(words) * bound
        if (product & 0xFFFFFFFF) >= (2**32 - bound) % bound:
            return product >> 32


def reference_rows(scores, cells, n_bootstrap: int, seed: int) -> np.ndarray:
    """Row indices (n_bootstrap, n) of the replicates: position ``i`` keeps row ``i``'s cell."""
    scores, cells = np.asarray(scores), np.asarray(cells)
    seeds = np.random.default_rng(seed).integers(0, 2**64, size=n_bootstrap, dtype=np.uint64)
    take = np.empty((n_bootstrap, scores.shape[0]), dtype=np.intp)
    for b, first in enumerate(seeds):
        words = _halves(_splitmix(int(first))[0])
        for cell in np.unique(cells):
            positions = np.flatnonzero(cells == cell)
            by_score = positions[np.argsort(scores[positions], kind="stable")]
            picks = []
            for _ in range(positions.shape[0]):
                k = _below(words, positions.shape[0])
                picks.append(by_score[k])
            take[b, positions] = picks
    return take
