"""The one writer of result folders: JSON-ready values, figures as PNG, every file atomic.

An audit (:meth:`fairot.reporting.Audit.write`) and a study
(:meth:`fairot.experiments.StudyResult.write`) both write a folder of text files and PNG figures.
Both go through :func:`write_artifacts`, which renders everything *before* the first write (a
figure that fails to render leaves no half-written folder) and writes each file with
:func:`fairot.utils.write_atomic` (complete or absent, never truncated). :func:`jsonable` turns the
numbers of either into plain JSON (NumPy scalars to Python, NaN to ``null``, infinities to
``"inf"``).
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fairot.utils import write_atomic

__all__ = ["figure_png", "jsonable", "write_artifacts"]

#: Resolution of every PNG a result folder holds.
PNG_DPI = 110


def jsonable(value: Any) -> Any:
    """``value`` with every container, NumPy scalar and non-finite float made plain JSON.

    Parameters
    ----------
    value : object
        Nested dicts, lists and tuples of numbers, strings, NumPy scalars or anything else
        (written as its ``str``).

    Returns
    -------
    object
        Dict keys as strings, NaN as ``None``, infinities as ``"inf"`` / ``"-inf"``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.reporting.artifacts import jsonable
    >>> jsonable({"a": np.float64(0.5), 1: [float("nan"), float("inf")]})
    {'a': 0.5, '1': [None, 'inf']}
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return jsonable(value.item())
        except (ValueError, TypeError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def figure_png(figure: Any, *, dpi: int = PNG_DPI) -> bytes:
    r"""A matplotlib figure as PNG bytes (tight bounding box).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from fairot.reporting.artifacts import figure_png
    >>> figure_png(Figure(figsize=(1, 1)))[:4]
    b'\x89PNG'
    """
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()


def write_artifacts(
    out_dir: str | Path,
    files: Mapping[str, str | bytes],
    figures: Mapping[str, Any] | None = None,
) -> Path:
    r"""Write ``files`` and one ``<key>.png`` per figure to ``out_dir``, each file atomically.

    Parameters
    ----------
    out_dir : str or path-like
        Folder, created when missing.
    files : mapping of str to str or bytes
        File name to content (text is written as UTF-8).
    figures : mapping of str to matplotlib.figure.Figure, optional
        Written as ``<key>.png``; all are rendered before the first file is written.

    Returns
    -------
    pathlib.Path
        The folder.

    Examples
    --------
    >>> import tempfile
    >>> from fairot.reporting.artifacts import write_artifacts
    >>> out = write_artifacts(tempfile.mkdtemp(), {"notes.md": "# done\n"})
    >>> (out / "notes.md").read_text()
    '# done\n'
    """
    out = Path(out_dir)
    rendered = dict(files)
    for key, figure in (figures or {}).items():
        rendered[f"{key}.png"] = figure_png(figure)
    out.mkdir(parents=True, exist_ok=True)
    for name, data in rendered.items():
        write_atomic(out / name, data)
    return out
