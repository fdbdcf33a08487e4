"""The margin losses' old private path: they live in :mod:`fairot.torch.losses` now.

Re-exports only, for the face modules and pickles that name ``fairot.face._margin_losses``
(a whole-module ``torch.save`` records each class by module path). New code imports
:mod:`fairot.torch.losses`, and the messages from :mod:`fairot.torch.checks`.
"""

from fairot.torch.checks import *  # noqa: F403
from fairot.torch.distances import unit_rows  # noqa: F401
from fairot.torch.losses import *  # noqa: F403
