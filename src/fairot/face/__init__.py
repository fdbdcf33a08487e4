"""fairot.face: fair face recognition with MBN's meta-learned group margins (PyTorch).

Needs torch (install the ``torch`` extra). Losses, miners, samplers and the trainer are separate
pieces, as in pytorch-metric-learning; the generic ones live in :mod:`fairot.torch` and the
ones face users need are re-exported here:

- from :mod:`fairot.torch.losses`: Norm-Softmax, ArcFace, CosFace, MBN's :class:`GroupMarginLoss`
  and :class:`MetaSkewnessLoss` (margins in radians / cosine units, never degrees);
- from :mod:`fairot.torch.miners` and :mod:`fairot.torch.samplers`: :class:`HardestTripletMiner`,
  :class:`BalancedGroupSampler` and :class:`RandomBatchSampler`;
- :class:`MetaBalancedTrainer` — Algorithm 1 of MBN (and every baseline with the meta step off);
- :mod:`fairot.face.evaluation` — the LFW/RFW verification protocol per group, ROC, thresholds;
- data and models — :class:`FaceFolderDataset`, RFW pair lists, IResNet-18/34/50, an MLP, and the
  synthetic identity benchmark of ``fairot reproduce mbn-synthetic``.
"""

from fairot.torch.losses import (
    ArcFaceLoss,
    CosFaceLoss,
    GroupMarginLoss,
    MarginSoftmaxLoss,
    MetaBatchWarning,
    MetaSkewnessLoss,
    NormSoftmaxLoss,
    SkewnessResult,
    SoftmaxLoss,
)
from fairot.torch.miners import HardestTripletMiner
from fairot.torch.samplers import BalancedGroupSampler, RandomBatchSampler

from ._callbacks import Callback, History
from ._config import (
    TrainConfig,
    build_model,
    evaluate_pairs,
    load_config,
    load_pairs,
    train_from_config,
)
from ._data import FaceFolderDataset, embed_images, load_face_image, load_rfw_pairs, read_rfw_pairs
from ._memory import keep_freed_memory
from ._methods import METHODS, MethodSpec, make_method
from ._models import MLP, IResNet, iresnet18, iresnet34, iresnet50
from ._synthetic import (
    SCENARIOS,
    SyntheticFaces,
    SyntheticRun,
    make_synthetic_faces,
    run_synthetic_method,
)
from ._trainer import MetaBalancedTrainer

__all__ = [
    "METHODS",
    "MLP",
    "ArcFaceLoss",
    "BalancedGroupSampler",
    "Callback",
    "CosFaceLoss",
    "FaceFolderDataset",
    "GroupMarginLoss",
    "HardestTripletMiner",
    "History",
    "IResNet",
    "MarginSoftmaxLoss",
    "MetaBalancedTrainer",
    "MetaBatchWarning",
    "MetaSkewnessLoss",
    "MethodSpec",
    "NormSoftmaxLoss",
    "RandomBatchSampler",
    "SCENARIOS",
    "SkewnessResult",
    "SoftmaxLoss",
    "SyntheticFaces",
    "SyntheticRun",
    "TrainConfig",
    "build_model",
    "embed_images",
    "evaluate_pairs",
    "iresnet18",
    "iresnet34",
    "iresnet50",
    "keep_freed_memory",
    "load_config",
    "load_face_image",
    "load_pairs",
    "load_rfw_pairs",
    "make_method",
    "make_synthetic_faces",
    "read_rfw_pairs",
    "run_synthetic_method",
    "train_from_config",
]
