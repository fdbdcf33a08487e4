"""Triplet miners: return index tuples, never losses (pytorch-metric-learning's split).

The same objects as :mod:`fairot.torch.miners`, where they live, under the path face users know.
"""

from fairot.torch.miners import *  # noqa: F403
from fairot.torch.miners import __all__  # noqa: F401
