"""fairot.face: fair face recognition with MBN's meta-learned group margins (PyTorch).

The only part of fairot that imports torch (install the ``torch`` extra). Losses, miners and the
trainer are separate pieces, as in pytorch-metric-learning:

- :mod:`fairot.face.losses` — Norm-Softmax, ArcFace, CosFace, MBN's :class:`GroupMarginLoss` and
  :class:`MetaSkewnessLoss` (margins in radians / cosine units, never degrees);
- :mod:`fairot.face.miners` — :class:`HardestTripletMiner`;
- :class:`MetaBalancedTrainer` — Algorithm 1 of MBN (and every baseline with the meta step off);
- :mod:`fairot.face.evaluation` — the LFW/RFW verification protocol per group, ROC, thresholds;
- data and models — :class:`FaceFolderDataset`, RFW pair lists, IResNet-18/34/50, an MLP, and the
  synthetic identity benchmark of ``fairot reproduce mbn-synthetic``.
"""

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
from ._margin_losses import (
    ArcFaceLoss,
    CosFaceLoss,
    GroupMarginLoss,
    MarginSoftmaxLoss,
    NormSoftmaxLoss,
    SoftmaxLoss,
)
from ._memory import keep_freed_memory
from ._methods import METHODS, MethodSpec, make_method
from ._miners import HardestTripletMiner
from ._models import MLP, IResNet, iresnet18, iresnet34, iresnet50
from ._samplers import BalancedGroupSampler, RandomBatchSampler
from ._skewness import MetaBatchWarning, MetaSkewnessLoss, SkewnessResult
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
