"""The batch samplers' old private path: they live in :mod:`fairot.torch.samplers` now.

Re-exports only, for the face modules and pickles that name ``fairot.face._samplers``.
"""

from fairot.torch.samplers import *  # noqa: F403
