"""Embedding networks: insightface's IResNet (18/34/50) for 112x112 faces and an MLP for vectors.

The IResNet follows the architecture of ArcFace [1]_ used by MBN [2]_ ("the similar ResNet-34
architecture described in [18]"): a BN-Conv-BN-PReLU-Conv-BN residual unit, four stages with
stride 2, then BN-Dropout-FC-BN to a 512-d embedding. Written here (no torchvision dependency).

References
----------
.. [1] Deng, J., Guo, J., Xue, N. and Zafeiriou, S. "ArcFace: Additive Angular Margin Loss for Deep
   Face Recognition", CVPR (2019).
.. [2] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["MLP", "IResNet", "iresnet18", "iresnet34", "iresnet50"]

INPUT_SIZE_ERROR = "input_size must be a positive multiple of 16 (e.g. 112); got {value!r}."
SIZES_ERROR = "{name} must be positive integers; got {value!r}."


class _IBasicBlock(nn.Module):
    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.bn1 = nn.BatchNorm2d(inplanes, eps=1e-5)
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes, eps=1e-5)
        self.prelu = nn.PReLU(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes, eps=1e-5)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes, eps=1e-5),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.bn3(self.conv2(self.prelu(self.bn2(self.conv1(self.bn1(x))))))
        identity = x if self.downsample is None else self.downsample(x)
        return out + identity


class IResNet(nn.Module):
    """Improved ResNet of insightface for aligned face crops.

    Parameters
    ----------
    layers : sequence of 4 int
        Residual units per stage: (2, 2, 2, 2) for IResNet-18, (3, 4, 6, 3) for 34,
        (3, 4, 14, 3) for 50.
    embedding_size : int, default=512
        Dimension of the output embedding.
    input_size : int, default=112
        Side of the square input image (a multiple of 16).
    dropout : float, default=0.0
        Dropout before the embedding layer.
    in_channels : int, default=3

    Notes
    -----
    Inputs are ``(n, in_channels, input_size, input_size)`` float tensors, normalised as in the
    paper, (pixel - 127.5) / 128 — :class:`~fairot.face.FaceFolderDataset` does that.

    Examples
    --------
    >>> import torch
    >>> from fairot.face import IResNet
    >>> model = IResNet((1, 1, 1, 1), embedding_size=8, input_size=16).eval()
    >>> model(torch.zeros(2, 3, 16, 16)).shape
    torch.Size([2, 8])
    """

    def __init__(
        self,
        layers: Sequence[int],
        *,
        embedding_size: int = 512,
        input_size: int = 112,
        dropout: float = 0.0,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        if isinstance(input_size, bool) or not isinstance(input_size, int):
            raise ValueError(INPUT_SIZE_ERROR.format(value=input_size))
        if input_size < 16 or input_size % 16:
            raise ValueError(INPUT_SIZE_ERROR.format(value=input_size))
        if len(layers) != 4 or any(int(n) < 1 for n in layers) or embedding_size < 1:
            raise ValueError(SIZES_ERROR.format(name="layers and embedding_size", value=layers))
        self.embedding_size = embedding_size
        self.conv1 = nn.Conv2d(in_channels, 64, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(64, eps=1e-5)
        self.prelu = nn.PReLU(64)
        stages, inplanes = [], 64
        for planes, n_blocks in zip((64, 128, 256, 512), layers, strict=True):
            blocks = [_IBasicBlock(inplanes, planes, stride=2)]
            blocks += [_IBasicBlock(planes, planes) for _ in range(int(n_blocks) - 1)]
            stages.append(nn.Sequential(*blocks))
            inplanes = planes
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.bn2 = nn.BatchNorm2d(512, eps=1e-5)
        self.dropout = nn.Dropout(p=dropout)
        side = input_size // 16
        self.fc = nn.Linear(512 * side * side, embedding_size)
        self.features = nn.BatchNorm1d(embedding_size, eps=1e-5)
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Embeddings of shape (n, embedding_size)."""
        x = self.prelu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.dropout(torch.flatten(self.bn2(x), 1))
        return self.features(self.fc(x))


def iresnet18(**kwargs) -> IResNet:
    """IResNet-18; keyword arguments as :class:`IResNet`.

    Examples
    --------
    >>> from fairot.face import iresnet18
    >>> iresnet18(embedding_size=8, input_size=16).layer3[0].conv1.out_channels
    256
    """
    return IResNet((2, 2, 2, 2), **kwargs)


def iresnet34(**kwargs) -> IResNet:
    """IResNet-34 (the paper's backbone); keyword arguments as :class:`IResNet`.

    Examples
    --------
    >>> from fairot.face import iresnet34
    >>> iresnet34(embedding_size=8, input_size=16).layer3[0].conv1.out_channels
    256
    """
    return IResNet((3, 4, 6, 3), **kwargs)


def iresnet50(**kwargs) -> IResNet:
    """IResNet-50; keyword arguments as :class:`IResNet`.

    Examples
    --------
    >>> from fairot.face import iresnet50
    >>> iresnet50(embedding_size=8, input_size=16).layer3[0].conv1.out_channels
    256
    """
    return IResNet((3, 4, 14, 3), **kwargs)


class MLP(nn.Module):
    """A small embedding network for vector inputs (the synthetic benchmark).

    Parameters
    ----------
    in_features : int
    embedding_size : int, default=64
    hidden_sizes : sequence of int, default=(256, 256)
        Widths of the hidden Linear-BatchNorm-PReLU layers.

    Examples
    --------
    >>> import torch
    >>> from fairot.face import MLP
    >>> MLP(10, embedding_size=4, hidden_sizes=(16,))(torch.zeros(3, 10)).shape
    torch.Size([3, 4])
    """

    def __init__(
        self,
        in_features: int,
        *,
        embedding_size: int = 64,
        hidden_sizes: Sequence[int] = (256, 256),
    ) -> None:
        super().__init__()
        sizes = [in_features, *hidden_sizes, embedding_size]
        if any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in sizes):
            raise ValueError(
                SIZES_ERROR.format(name="in_features and the layer sizes", value=sizes)
            )
        layers: list[nn.Module] = []
        for n_in, n_out in zip(sizes[:-2], sizes[1:-1], strict=True):
            layers += [nn.Linear(n_in, n_out), nn.BatchNorm1d(n_out), nn.PReLU(n_out)]
        layers.append(nn.Linear(sizes[-2], sizes[-1]))
        self.net = nn.Sequential(*layers)
        self.embedding_size = embedding_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Embeddings of shape (n, embedding_size)."""
        return self.net(x)
