"""The strong-demographic-parity penalty as a PyTorch loss term: one room, one idea.

:class:`WassersteinParityPenalty` (``_penalty.py``) is the ``nn.Module`` a training loop adds to
its loss: the sum over groups (or (group, label) cells) of the :math:`W_1` of the group's scores
to a target distribution, by COT's stochastic dual (Algorithm 1 of the COT paper), exact DOT or
Sinkhorn. Around it, private rooms: ``_checks.py`` (its input checks and messages),
``_cache.py`` (what it keeps between calls), ``_cells.py`` and ``_cells_cot.py`` (one target per
cell), and the torch kernels ``_cot.py`` (one COT call as a pure function, with its closed-form
gradient), ``_features.py`` (the random Fourier feature map) and ``_transport.py`` (group
quantiles, barycenter, exact 1-D :math:`W_1`, log-domain Sinkhorn). The training loop
(:class:`fairot.torch.FairTrainer`) and the estimator use it from :mod:`fairot.torch`.
"""

from fairot.torch.penalty._penalty import WassersteinParityPenalty

__all__ = ["WassersteinParityPenalty"]
