"""Face data on disk: one folder of aligned crops per identity, a group CSV, RFW pair lists.

Images are read with Pillow and NumPy (no torchvision) and normalised as in MBN [1]_ and ArcFace:
RGB pixels in [0, 255] become (pixel - 127.5) / 128, channels first.

References
----------
.. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from PIL import Image

__all__ = [
    "IMAGE_EXTENSIONS",
    "FaceFolderDataset",
    "embed_images",
    "load_face_image",
    "load_rfw_pairs",
    "read_rfw_pairs",
]

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp")
ROOT_ERROR = "root {root!s} must be a directory holding one sub-folder of images per identity."
EMPTY_ERROR = "no images with extensions {ext} were found under {root!s}."
CSV_COLUMNS_ERROR = "groups_csv must have the columns 'identity' and 'group'; got {columns}."
MISSING_GROUP_ERROR = (
    "groups_csv gives no group for {n} identities, e.g. {examples}; every identity folder needs "
    "a row."
)
PAIR_LINE_ERROR = (
    "{path!s}, line {line}: an RFW pair line is 'name i j' (genuine) or 'name1 i name2 j' "
    "(impostor); got {text!r}."
)
IMAGE_SIZE_ERROR = "image_size must be a positive int or None; got {value!r}."


def load_face_image(path: str | Path, image_size: int | None = None) -> np.ndarray:
    """Read one aligned face crop as a normalised float32 array of shape (3, H, W).

    Parameters
    ----------
    path : path
    image_size : int, optional
        Resize to ``image_size x image_size`` (bilinear) when the crop has another size.

    Returns
    -------
    ndarray of shape (3, H, W), float32, values (pixel - 127.5) / 128

    Examples
    --------
    >>> import os, tempfile
    >>> from PIL import Image
    >>> from fairot.face import load_face_image
    >>> path = os.path.join(tempfile.mkdtemp(), "face.png")
    >>> Image.new("RGB", (8, 8), (255, 128, 0)).save(path)
    >>> image = load_face_image(path, image_size=4)
    >>> image.shape, image[:, 0, 0].tolist()
    ((3, 4, 4), [0.99609375, 0.00390625, -0.99609375])
    """
    with Image.open(path) as img:
        img = img.convert("RGB")
        if image_size is not None and img.size != (image_size, image_size):
            img = img.resize((image_size, image_size), Image.BILINEAR)
        arr = np.asarray(img, dtype=np.float32)
    return np.ascontiguousarray(((arr - 127.5) / 128.0).transpose(2, 0, 1))


class FaceFolderDataset(torch.utils.data.Dataset):
    r"""A training set stored as ``root/<identity>/<image>`` with a CSV mapping identity to group.

    Parameters
    ----------
    root : path
        One sub-folder of aligned crops per identity (BUPT-Balancedface / Globalface layout after
        alignment to 112x112).
    groups_csv : path, optional
        CSV with columns ``identity`` and ``group`` (e.g. skin tone or race); without it every
        identity is in group 0.
    image_size : int, optional
        Resize crops to this side.
    transform : callable, optional
        Applied to the image tensor (e.g. a random horizontal flip).

    Attributes
    ----------
    identities : list of str
        Sorted identity folder names; ``labels`` index into it.
    group_names : list
        Sorted group labels; ``groups`` index into it.
    paths : list of Path
    labels : ndarray of int64, shape (n_images,)
    groups : ndarray of int64, shape (n_images,)

    Examples
    --------
    >>> import os, tempfile
    >>> from PIL import Image
    >>> from fairot.face import FaceFolderDataset
    >>> root = tempfile.mkdtemp()
    >>> for identity in ("ann", "bob"):
    ...     os.makedirs(os.path.join(root, "train", identity))
    ...     for k in range(2):
    ...         Image.new("RGB", (8, 8)).save(os.path.join(root, "train", identity, f"{k}.png"))
    >>> with open(os.path.join(root, "groups.csv"), "w") as f:
    ...     _ = f.write("identity,group\nann,light\nbob,dark\n")
    >>> data = FaceFolderDataset(os.path.join(root, "train"), os.path.join(root, "groups.csv"))
    >>> len(data), data.n_classes, data.group_names, data.groups.tolist()
    (4, 2, ['dark', 'light'], [1, 1, 0, 0])
    >>> image, label, group = data[2]
    >>> tuple(image.shape), label, group
    ((3, 8, 8), 1, 0)
    """

    def __init__(
        self,
        root: str | Path,
        groups_csv: str | Path | None = None,
        *,
        image_size: int | None = None,
        transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> None:
        root = Path(root)
        if not root.is_dir():
            raise ValueError(ROOT_ERROR.format(root=root))
        if image_size is not None and (
            isinstance(image_size, bool) or not isinstance(image_size, int) or image_size < 1
        ):
            raise ValueError(IMAGE_SIZE_ERROR.format(value=image_size))
        self.root = root
        self.image_size = image_size
        self.transform = transform
        folders = sorted(p for p in root.iterdir() if p.is_dir())
        paths, labels = [], []
        identities = []
        for folder in folders:
            images = sorted(
                p for p in folder.iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS and p.is_file()
            )
            if not images:
                continue
            identities.append(folder.name)
            paths += images
            labels += [len(identities) - 1] * len(images)
        if not paths:
            raise ValueError(EMPTY_ERROR.format(ext=IMAGE_EXTENSIONS, root=root))
        self.identities = identities
        self.paths = paths
        self.labels = np.asarray(labels, dtype=np.int64)
        if groups_csv is None:
            self.group_names = [0]
            identity_group = np.zeros(len(identities), dtype=np.int64)
        else:
            table = pd.read_csv(groups_csv, dtype={"identity": str})
            if not {"identity", "group"} <= set(table.columns):
                raise ValueError(CSV_COLUMNS_ERROR.format(columns=list(table.columns)))
            mapping = dict(zip(table["identity"], table["group"], strict=True))
            missing = [name for name in identities if name not in mapping]
            if missing:
                raise ValueError(MISSING_GROUP_ERROR.format(n=len(missing), examples=missing[:3]))
            names = [mapping[name] for name in identities]
            self.group_names = sorted(set(names), key=str)
            code = {g: i for i, g in enumerate(self.group_names)}
            identity_group = np.asarray([code[g] for g in names], dtype=np.int64)
        self.groups = identity_group[self.labels]

    @property
    def n_classes(self) -> int:
        """Number of identities."""
        return len(self.identities)

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int, int]:
        image = torch.from_numpy(load_face_image(self.paths[index], self.image_size))
        if self.transform is not None:
            image = self.transform(image)
        return image, int(self.labels[index]), int(self.groups[index])


def read_rfw_pairs(
    pairs_file: str | Path, images_root: str | Path, *, group=None, extension: str = ".jpg"
) -> pd.DataFrame:
    r"""Read an RFW-style pair list (``<race>_pairs.txt``).

    Each line is ``name i j`` for a genuine pair (images ``name/name_000i.jpg`` and
    ``name/name_000j.jpg``) or ``name1 i name2 j`` for an impostor pair, as in LFW's
    ``pairs.txt``; whitespace-separated.

    Parameters
    ----------
    pairs_file : path
    images_root : path
        Folder holding one sub-folder per identity.
    group : optional
        Value of the ``group`` column (e.g. the race of this list).
    extension : str, default=".jpg"

    Returns
    -------
    pandas.DataFrame
        Columns ``path1``, ``path2``, ``is_same``, ``group``, in file order (the protocol's folds
        are contiguous blocks of this order).

    Examples
    --------
    >>> import os, tempfile
    >>> from fairot.face import read_rfw_pairs
    >>> pairs_file = os.path.join(tempfile.mkdtemp(), "Asian_pairs.txt")
    >>> with open(pairs_file, "w") as f:
    ...     _ = f.write("m.01 1 2\nm.01 1 m.02 3\n")
    >>> pairs = read_rfw_pairs(pairs_file, "data/Asian", group="Asian")
    >>> [p.as_posix() for p in pairs["path2"]], pairs["is_same"].tolist()
    (['data/Asian/m.01/m.01_0002.jpg', 'data/Asian/m.02/m.02_0003.jpg'], [True, False])
    """
    images_root = Path(images_root)
    rows = []
    lines = Path(pairs_file).read_text().splitlines()
    for number, text in enumerate(lines, start=1):
        parts = text.split()
        if not parts:
            continue
        try:
            if len(parts) == 3:
                name1, i, name2, j, same = parts[0], int(parts[1]), parts[0], int(parts[2]), True
            elif len(parts) == 4:
                name1, i, name2, j, same = parts[0], int(parts[1]), parts[2], int(parts[3]), False
            else:
                raise ValueError
        except ValueError:
            raise ValueError(
                PAIR_LINE_ERROR.format(path=pairs_file, line=number, text=text)
            ) from None
        rows.append(
            (
                images_root / name1 / f"{name1}_{i:04d}{extension}",
                images_root / name2 / f"{name2}_{j:04d}{extension}",
                same,
                group,
            )
        )
    return pd.DataFrame(rows, columns=["path1", "path2", "is_same", "group"])


def load_rfw_pairs(
    rfw_root: str | Path,
    races: Sequence[str] = ("African", "Asian", "Caucasian", "Indian"),
) -> pd.DataFrame:
    r"""All RFW pair lists of an extracted RFW test set, with the race as the group.

    Expects the released layout ``rfw_root/txts/<race>/<race>_pairs.txt`` and
    ``rfw_root/data/<race>/<identity>/<identity>_000k.jpg``; use :func:`read_rfw_pairs` for
    another layout.

    Parameters
    ----------
    rfw_root : path
        The ``test`` folder of RFW.
    races : sequence of str

    Returns
    -------
    pandas.DataFrame
        As :func:`read_rfw_pairs`, one block per race.

    Examples
    --------
    >>> import os, tempfile
    >>> from fairot.face import load_rfw_pairs
    >>> root = tempfile.mkdtemp()
    >>> for race in ("African", "Indian"):
    ...     os.makedirs(os.path.join(root, "txts", race))
    ...     with open(os.path.join(root, "txts", race, f"{race}_pairs.txt"), "w") as f:
    ...         _ = f.write("m.01 1 2\n")
    >>> load_rfw_pairs(root, races=("African", "Indian"))["group"].tolist()
    ['African', 'Indian']
    """
    root = Path(rfw_root)
    frames = [
        read_rfw_pairs(root / "txts" / race / f"{race}_pairs.txt", root / "data" / race, group=race)
        for race in races
    ]
    return pd.concat(frames, ignore_index=True)


@torch.no_grad()
def embed_images(
    model: torch.nn.Module,
    paths: Sequence[str | Path],
    *,
    image_size: int | None = None,
    batch_size: int = 128,
    device: str | torch.device = "cpu",
    flip: bool = False,
) -> np.ndarray:
    """Embeddings of image files, shape (n, embedding_size), in evaluation mode.

    Parameters
    ----------
    model : nn.Module
    paths : sequence of paths
    image_size : int, optional
    batch_size : int, default=128
    device : str or torch.device, default="cpu"
    flip : bool, default=False
        Add the embedding of the horizontally flipped image (the usual test-time augmentation).

    Returns
    -------
    ndarray of float32

    Examples
    --------
    >>> import os, tempfile
    >>> import torch
    >>> from PIL import Image
    >>> from fairot.face import MLP, embed_images
    >>> folder = tempfile.mkdtemp()
    >>> paths = [os.path.join(folder, f"{k}.png") for k in range(3)]
    >>> for path in paths:
    ...     Image.new("RGB", (4, 4)).save(path)
    >>> model = torch.nn.Sequential(torch.nn.Flatten(), MLP(48, embedding_size=5))
    >>> embed_images(model, paths, batch_size=2).shape
    (3, 5)
    """
    model.eval()
    out = []
    paths = list(paths)
    for start in range(0, len(paths), batch_size):
        batch = np.stack(
            [load_face_image(p, image_size) for p in paths[start : start + batch_size]]
        )
        x = torch.from_numpy(batch).to(device)
        emb = model(x)
        if flip:
            emb = emb + model(torch.flip(x, dims=[3]))
        out.append(emb.float().cpu().numpy())
    return np.concatenate(out) if out else np.empty((0, 0), dtype=np.float32)
