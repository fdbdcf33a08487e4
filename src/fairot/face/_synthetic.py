r"""A synthetic identity benchmark with groups that differ in training share and in difficulty.

No face data with skin-tone labels can be had offline, so ``fairot reproduce mbn-synthetic`` runs
MBN on vectors that behave like face crops of several demographic groups:

- every identity has a prototype :math:`c \in \mathbb{R}^k` living in a **group-specific identity
  subspace** :math:`U_g \subset \mathbb{R}^{d}` (the groups share part of it, ``subspace_overlap``),
  so the features that tell identities apart differ between groups — what a network learns mostly
  from one group transfers only partly to the others;
- an image of the identity is :math:`z = U_g (c + \sigma_g \varepsilon) + \tau \nu`: within-identity
  noise :math:`\sigma_g` (the group's *intrinsic* difficulty) plus nuisance variation :math:`\nu`
  shared by all groups (pose, light);
- the input is :math:`x = \tanh(W_2\,\mathrm{relu}(W_1 z + b_1))`, a fixed random nonlinear map.

Training identities are split between groups by ``train_share`` (7:1:1:1 is the paper's most skewed
simulated split, Table IV of [1]_); a separate balanced set of meta identities and held-out test
identities with genuine/impostor pairs per group complete it. Three presets isolate the two causes
of a group being harder:

================  ==================  ==============================  =========================
``scenario``      ``train_share``     ``noise`` (:math:`\sigma_g`)     what makes groups 1-3 hard
================  ==================  ==============================  =========================
representation    7:1:1:1             equal                           few training identities
noise             1:1:1:1             increasing                      intrinsic noise
mixed             7:1:1:1             increasing                      both
================  ==================  ==============================  =========================

References
----------
.. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
import torch

from fairot.torch.losses import MetaBatchWarning

from ._evaluation import GroupVerification, group_verification
from ._pairs import sample_pairs

__all__ = [
    "SCENARIOS",
    "SyntheticFaces",
    "SyntheticRun",
    "make_synthetic_faces",
    "run_synthetic_method",
]

SCENARIOS: dict[str, dict[str, tuple[float, ...]]] = {
    "representation": {"train_share": (7, 1, 1, 1), "noise": (0.35, 0.35, 0.35, 0.35)},
    "noise": {"train_share": (1, 1, 1, 1), "noise": (0.3, 0.38, 0.44, 0.5)},
    "mixed": {"train_share": (7, 1, 1, 1), "noise": (0.3, 0.38, 0.44, 0.5)},
}
SCENARIO_ERROR = "scenario must be one of {names} or None; got {value!r}."
SHARE_ERROR = "{name} must be {n_groups} positive numbers (one per group); got {value!r}."
COUNT_ERROR = "{name} must be an int >= {low}; got {value!r}."
DIM_ERROR = "identity_dim={identity_dim} must not exceed latent_dim={latent_dim}."
OVERLAP_ERROR = "subspace_overlap must be in [0, 1]; got {value!r}."


@dataclass
class SyntheticFaces:
    """The synthetic benchmark: training, meta and test sets as tensors, plus test pairs.

    Attributes
    ----------
    train, meta : tuple of Tensor
        ``(inputs, labels, groups)``; the meta identities are new people (their labels number
        them within the meta set).
    test : tuple of Tensor
        ``(inputs, labels, groups)`` of held-out identities.
    pairs : pandas.DataFrame
        Test verification pairs: columns ``i``, ``j`` (rows of ``test``), ``is_same``, ``group``.
    n_classes : int
        Number of training identities.
    n_groups : int
    group_counts : ndarray of shape (n_groups,)
        Training images per group.
    config : dict
        The generating parameters.

    Examples
    --------
    :func:`make_synthetic_faces` returns one; the meta set is balanced (4 identities of 4 images
    in each group):

    >>> import numpy as np
    >>> from fairot.face import make_synthetic_faces
    >>> data = make_synthetic_faces(
    ...     "representation", n_train_identities=40, images_per_identity=4, n_meta_identities=4,
    ...     n_test_identities=5, images_per_test_identity=2, n_pairs=10, random_state=0)
    >>> inputs, labels, groups = data.meta
    >>> np.bincount(groups.numpy()).tolist(), data.n_features
    ([16, 16, 16, 16], 64)
    """

    train: tuple[torch.Tensor, torch.Tensor, torch.Tensor]
    meta: tuple[torch.Tensor, torch.Tensor, torch.Tensor]
    test: tuple[torch.Tensor, torch.Tensor, torch.Tensor]
    pairs: pd.DataFrame
    n_classes: int
    n_groups: int
    group_counts: np.ndarray
    config: dict = field(default_factory=dict)

    @property
    def n_features(self) -> int:
        """Input dimension."""
        return int(self.train[0].shape[1])


def _check_count(value, name: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(COUNT_ERROR.format(name=name, low=low, value=value))
    return int(value)


def _positive_vector(value, name: str, n_groups: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != (n_groups,) or not np.all(np.isfinite(arr)) or not np.all(arr > 0):
        raise ValueError(SHARE_ERROR.format(name=name, n_groups=n_groups, value=value))
    return arr


def make_synthetic_faces(
    scenario: Literal["representation", "noise", "mixed"] | None = "representation",
    *,
    n_groups: int = 4,
    train_share: Sequence[float] | None = None,
    noise: Sequence[float] | None = None,
    n_train_identities: int = 800,
    images_per_identity: int = 10,
    n_meta_identities: int = 30,
    n_test_identities: int = 100,
    images_per_test_identity: int = 6,
    n_pairs: int = 1000,
    latent_dim: int = 32,
    identity_dim: int = 8,
    subspace_overlap: float = 0.0,
    nuisance: float = 0.5,
    n_features: int = 64,
    random_state: int | None = 0,
) -> SyntheticFaces:
    r"""Generate the synthetic identity benchmark.

    Parameters
    ----------
    scenario : {"representation", "noise", "mixed"} or None, default="representation"
        Preset of ``train_share`` and ``noise`` (see the module docstring); explicit arguments
        override it. ``None`` requires both.
    n_groups : int, default=4
        Presets are for 4 groups.
    train_share : sequence of float, optional
        Relative number of training identities per group.
    noise : sequence of float, optional
        Within-identity noise :math:`\sigma_g` per group (relative to unit-variance prototypes).
    n_train_identities : int, default=800
    images_per_identity : int, default=10
    n_meta_identities : int, default=30
        Per group (the meta set is balanced).
    n_test_identities : int, default=100
        Per group.
    images_per_test_identity : int, default=6
    n_pairs : int, default=1000
        Genuine and as many impostor test pairs per group.
    latent_dim, identity_dim : int, default=32, 8
        :math:`d` and :math:`k`.
    subspace_overlap : float in [0, 1], default=0.0
        Weight of the shared component of the group identity subspaces.
    nuisance : float, default=0.5
        :math:`\tau`, scale of the nuisance variation shared by all groups.
    n_features : int, default=64
        Input dimension.
    random_state : int or None, default=0

    Returns
    -------
    SyntheticFaces

    Examples
    --------
    The "representation" preset splits 40 training identities 7:1:1:1 (28, 4, 4, 4 identities of
    4 images each); test pairs are balanced (10 genuine and 10 impostor pairs per group):

    >>> from fairot.face import make_synthetic_faces
    >>> data = make_synthetic_faces(
    ...     "representation", n_train_identities=40, images_per_identity=4, n_meta_identities=4,
    ...     n_test_identities=5, images_per_test_identity=2, n_pairs=10, random_state=0)
    >>> data.group_counts.tolist()
    [112, 16, 16, 16]
    >>> tuple(data.train[0].shape), data.n_classes, data.pairs.groupby("group").size().tolist()
    ((160, 64), 40, [20, 20, 20, 20])
    """
    if scenario is not None and scenario not in SCENARIOS:
        raise ValueError(SCENARIO_ERROR.format(names=tuple(SCENARIOS), value=scenario))
    n_groups = _check_count(n_groups, "n_groups", 2)
    preset = SCENARIOS.get(scenario, {}) if n_groups == 4 else {}
    train_share = _positive_vector(
        train_share if train_share is not None else preset.get("train_share"),
        "train_share",
        n_groups,
    )
    noise = _positive_vector(noise if noise is not None else preset.get("noise"), "noise", n_groups)
    n_train_identities = _check_count(n_train_identities, "n_train_identities", n_groups)
    images_per_identity = _check_count(images_per_identity, "images_per_identity", 2)
    n_meta_identities = _check_count(n_meta_identities, "n_meta_identities", 2)
    n_test_identities = _check_count(n_test_identities, "n_test_identities", 2)
    images_per_test_identity = _check_count(images_per_test_identity, "images_per_test_identity", 2)
    latent_dim = _check_count(latent_dim, "latent_dim", 2)
    identity_dim = _check_count(identity_dim, "identity_dim", 1)
    if identity_dim > latent_dim:
        raise ValueError(DIM_ERROR.format(identity_dim=identity_dim, latent_dim=latent_dim))
    if not 0.0 <= subspace_overlap <= 1.0:
        raise ValueError(OVERLAP_ERROR.format(value=subspace_overlap))

    rng = np.random.default_rng(random_state)
    shared = rng.normal(size=(latent_dim, identity_dim))
    bases = []
    for _ in range(n_groups):
        mixed = subspace_overlap * shared + (1 - subspace_overlap) * rng.normal(
            size=(latent_dim, identity_dim)
        )
        bases.append(np.linalg.qr(mixed)[0])
    hidden = 4 * n_features
    w1 = rng.normal(size=(hidden, latent_dim)) / np.sqrt(latent_dim)
    b1 = rng.normal(scale=0.5, size=hidden)
    w2 = rng.normal(size=(n_features, hidden)) / np.sqrt(hidden / 2)

    def observe(group: int, prototypes: np.ndarray, per_identity: int) -> np.ndarray:
        c = np.repeat(prototypes, per_identity, axis=0)
        eps = rng.normal(size=c.shape)
        z = (c + noise[group] * eps) @ bases[group].T
        z += nuisance * rng.normal(size=z.shape) / np.sqrt(latent_dim / identity_dim)
        return np.tanh(np.maximum(z @ w1.T + b1, 0.0) @ w2.T)

    def build(ids_per_group: Sequence[int], per_identity: int, first_label: int):
        xs, labels, groups = [], [], []
        label = first_label
        for g, n_ids in enumerate(ids_per_group):
            prototypes = rng.normal(size=(n_ids, identity_dim))
            xs.append(observe(g, prototypes, per_identity))
            labels.append(np.repeat(np.arange(label, label + n_ids), per_identity))
            groups.append(np.full(n_ids * per_identity, g))
            label += n_ids
        return (
            torch.as_tensor(np.concatenate(xs), dtype=torch.float32),
            torch.as_tensor(np.concatenate(labels), dtype=torch.long),
            torch.as_tensor(np.concatenate(groups), dtype=torch.long),
        )

    share = train_share / train_share.sum()
    ids = np.maximum(2, np.round(share * n_train_identities).astype(int))
    train = build(ids, images_per_identity, 0)
    meta = build([n_meta_identities] * n_groups, images_per_identity, 0)
    test = build([n_test_identities] * n_groups, images_per_test_identity, 0)
    pairs = sample_pairs(test[1].numpy(), test[2].numpy(), n_pairs, n_pairs, random_state=rng)
    config = {
        "scenario": scenario,
        "train_share": train_share.tolist(),
        "noise": noise.tolist(),
        "train_identities_per_group": ids.tolist(),
        "images_per_identity": images_per_identity,
        "n_meta_identities": n_meta_identities,
        "n_test_identities": n_test_identities,
        "n_pairs": n_pairs,
        "latent_dim": latent_dim,
        "identity_dim": identity_dim,
        "subspace_overlap": subspace_overlap,
        "nuisance": nuisance,
        "n_features": n_features,
        "random_state": random_state,
    }
    return SyntheticFaces(
        train=train,
        meta=meta,
        test=test,
        pairs=pairs,
        n_classes=int(ids.sum()),
        n_groups=n_groups,
        group_counts=np.bincount(train[2].numpy(), minlength=n_groups),
        config=config,
    )


@dataclass
class SyntheticRun:
    """One method trained and evaluated on a :class:`SyntheticFaces` draw.

    Attributes
    ----------
    report : GroupVerification
        Per-group verification accuracy on the test pairs, mean, STD, SER.
    history : pandas.DataFrame
        :meth:`History.to_frame` of the training run (margins, skewness, training accuracy).
    initial_margins : ndarray of shape (n_groups,) or None
        Effective margin of each group before training (the anchors' fixed margin, 0 for a
        Norm-Softmax anchor), for losses with per-group margins; ``None`` otherwise.

    Examples
    --------
    :func:`run_synthetic_method` returns one; MBN(arc) starts every group at 0.3 rad (the
    anchors' fixed margin and the start of the learned ones, see :data:`~fairot.face.METHODS`):

    >>> from fairot.face import make_synthetic_faces, run_synthetic_method
    >>> data = make_synthetic_faces(
    ...     "representation", n_train_identities=40, images_per_identity=4, n_meta_identities=4,
    ...     n_test_identities=5, images_per_test_identity=2, n_pairs=10, random_state=0)
    >>> run = run_synthetic_method(
    ...     data, "mbn-arc", n_steps=2, batch_size=32, hidden_sizes=(16,), embedding_size=8)
    >>> run.initial_margins.tolist(), list(run.report.by_group.index)
    ([0.3, 0.3, 0.3, 0.3], [0, 1, 2, 3])
    """

    report: GroupVerification
    history: pd.DataFrame
    initial_margins: np.ndarray | None = None


def run_synthetic_method(
    data: SyntheticFaces,
    method: str = "arcface",
    *,
    fixed_margins: Sequence[float] | None = None,
    n_steps: int = 1500,
    batch_size: int = 128,
    learning_rate: float = 0.1,
    margin_learning_rate: float = 0.1,
    scale: float = 30.0,
    embedding_size: int = 64,
    hidden_sizes: Sequence[int] = (256, 256),
    seed: int = 0,
    sampling_seed: int | None = None,
    n_threads: int | None = 1,
) -> SyntheticRun:
    r"""Train one method of :data:`~fairot.face.METHODS` on the benchmark and evaluate it.

    An :class:`~fairot.face.MLP` is trained with :class:`~fairot.face.MetaBalancedTrainer` (SGD,
    momentum 0.9, weight decay 5e-4, learning rate divided by 10 at 60% and 85% of the steps, the
    margin learning rate likewise), then the test pairs are verified per group.

    Parameters
    ----------
    data : SyntheticFaces
    method : str, default="arcface"
        One of :data:`~fairot.face.METHODS`; ignored when ``fixed_margins`` is given.
    fixed_margins : sequence of float, optional
        Train ArcFace with these fixed per-group margins (radians) instead.
    n_steps, batch_size, learning_rate : int, int, float
    margin_learning_rate : float, default=0.1
        :math:`\beta` of the MBN variants.
    scale : float, default=30.0
    embedding_size : int, default=64
    hidden_sizes : sequence of int, default=(256, 256)
    seed : int, default=0
        Seeds the initialisation of the model and of the loss's class weights, and the batch
        samplers unless ``sampling_seed`` is given.
    sampling_seed : int, optional
        Seeds the training and meta batch samplers (and torch's generator during training);
        defaults to ``seed``.
    n_threads : int or None, default=1
        Torch threads during the run (restored afterwards); small MLPs gain nothing from more.

    Returns
    -------
    SyntheticRun

    Examples
    --------
    Five ArcFace steps on a tiny draw (a smoke run: accuracies mean nothing here):

    >>> from fairot.face import make_synthetic_faces, run_synthetic_method
    >>> data = make_synthetic_faces(
    ...     "representation", n_train_identities=40, images_per_identity=4, n_meta_identities=4,
    ...     n_test_identities=5, images_per_test_identity=2, n_pairs=10, random_state=0)
    >>> run = run_synthetic_method(
    ...     data, "arcface", n_steps=5, batch_size=32, hidden_sizes=(16,), embedding_size=8)
    >>> run.report.by_group["n_pairs"].tolist(), len(run.history)
    ([20, 20, 20, 20], 5)
    """
    from fairot.torch.losses import GroupMarginLoss

    from ._callbacks import History
    from ._methods import make_method
    from ._models import MLP
    from ._trainer import MetaBalancedTrainer, logger

    threads = torch.get_num_threads()
    if n_threads is not None:
        torch.set_num_threads(n_threads)
    level = logger.level
    try:
        # The loss's class weights are drawn here too: seeding before building it keeps a run
        # independent of whatever ran before it in the process.
        torch.manual_seed(seed)
        if fixed_margins is not None:
            loss = GroupMarginLoss(
                data.n_classes,
                embedding_size,
                data.n_groups,
                anchor_groups=(),
                init_margin=list(fixed_margins),
                scale=scale,
                margin_bounds=(0.0, max(0.8, float(np.max(fixed_margins)))),
            )
            loss.margins.requires_grad_(False)
            meta_loss, group_weights = None, None
        else:
            spec = make_method(
                method,
                n_classes=data.n_classes,
                embedding_size=embedding_size,
                n_groups=data.n_groups,
                group_counts=data.group_counts,
                scale=scale,
            )
            loss, meta_loss, group_weights = spec.loss, spec.meta_loss, spec.group_weights
        initial_margins = (
            loss.group_margins().detach().numpy().copy()
            if isinstance(loss, GroupMarginLoss)
            else None
        )
        model = MLP(data.n_features, embedding_size=embedding_size, hidden_sizes=hidden_sizes)
        history = History()
        milestones = (int(0.6 * n_steps), int(0.85 * n_steps))
        trainer = MetaBalancedTrainer(
            model,
            loss,
            meta_loss=meta_loss,
            group_weights=group_weights,
            learning_rate=learning_rate,
            lr_milestones=milestones,
            margin_learning_rate=margin_learning_rate,
            margin_milestones=milestones,
            callbacks=[history],
            random_state=seed if sampling_seed is None else sampling_seed,
        )
        # Margins at a bound show in the history; a skipped meta step shows as NaN skewness.
        logger.setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MetaBatchWarning)
            trainer.fit(data.train, data.meta, n_steps=n_steps, batch_size=batch_size)
        emb = trainer.embed(data.test[0]).numpy()
    finally:
        logger.setLevel(level)
        torch.set_num_threads(threads)
    pairs = data.pairs
    report = group_verification(
        emb[pairs["i"].to_numpy()],
        emb[pairs["j"].to_numpy()],
        pairs["is_same"].to_numpy(),
        pairs["group"].to_numpy(),
    )
    return SyntheticRun(report, history.to_frame(), initial_margins)
