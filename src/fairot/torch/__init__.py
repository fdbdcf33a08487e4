"""Strong demographic parity for any differentiable model, in PyTorch.

The COT paper (Chiappa and Pacchiano, 2021) adjusts a logistic model; this package turns its
objective into a loss term for any network:

- :class:`WassersteinParityPenalty` — an ``nn.Module``: ``penalty(scores, groups)`` is the sum
  over groups of the (COT dual, exact DOT, or Sinkhorn) :math:`W_1` to a target distribution;
- :class:`FairTrainer` — the loop: group-balanced batches, a ``lam`` schedule, a fixed target
  after a warm-up, early stopping on validation Wass1, history;
- :class:`FairMLPClassifier` — a scikit-learn classifier
  (``fit(X, y, *, sensitive_features, sample_weight=None)``) training an MLP with the penalty.

The penalty and the trainers have rooms of their own: :mod:`fairot.torch.penalty` and
:mod:`fairot.torch.trainers` (:class:`FairTrainer`, and the callback and checkpoint base it
shares with :class:`fairot.face.MetaBalancedTrainer`); this package re-exports the three classes
above, which is what a user imports from it.

Beside them, generic metric-learning building blocks, laid out as in pytorch-metric-learning:
:mod:`fairot.torch.losses` (margin-softmax heads: Norm-Softmax, ArcFace, CosFace, MBN's group
margins, and MBN's meta skewness loss), :mod:`fairot.torch.miners` (triplet index tuples) and
:mod:`fairot.torch.samplers` (group-balanced and random batches); :mod:`fairot.face` builds its
face-recognition application on them.

Importing ``fairot`` does not import torch; only this package does.
"""

from fairot.torch._estimator import FairMLPClassifier
from fairot.torch.penalty import WassersteinParityPenalty
from fairot.torch.trainers import FairTrainer

__all__ = ["FairMLPClassifier", "FairTrainer", "WassersteinParityPenalty"]
