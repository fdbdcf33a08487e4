"""Margin-softmax training losses and MBN's meta skewness loss (PyTorch ``nn.Module`` s).

The same objects as :mod:`fairot.torch.losses`, where they live, under the path face users know.
All margins are in radians (ArcFace) or cosine units (CosFace), never degrees.
"""

from fairot.torch.losses import *  # noqa: F403
from fairot.torch.losses import __all__  # noqa: F401
