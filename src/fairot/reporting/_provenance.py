"""Where an audit comes from (date, versions, input, model, thresholds, command); glossary.

Internal surface: :func:`provenance`, :func:`file_provenance`, :data:`GLOSSARY`,
:data:`MIN_GROUP_SIZE_RATIONALE`.
"""

from __future__ import annotations

import datetime
import hashlib
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

DEPENDENCIES = ("numpy", "scipy", "scikit-learn", "pandas")
MIN_GROUP_SIZE_RATIONALE = (
    "a proportion measured on n rows has a standard error up to 0.5/sqrt(n): 0.09 at n = 30, "
    "so a 95% interval up to ±0.18 wide; below 30 rows a group's rates are mostly noise and "
    "would own the largest gap"
)
THRESHOLD_RATIONALE = (
    "a score above it is a positive decision; 0.5 is the COT paper's Err-.5 convention"
)

#: The papers' jargon, in plain words (shown in every rendering of the report).
GLOSSARY = {
    "Err-.5": "share of wrong decisions when a score above 0.5 means a positive decision.",
    "W1": (
        "Wasserstein-1 distance between two score distributions: the average distance a score "
        "travels when one distribution is moved onto the other in the cheapest way."
    ),
    "Wass1": "sum over groups of the W1 distance from the group's scores to their common "
    "barycenter (the distribution closest to all groups).",
    "SDD": "strong demographic disparity: sum over groups of the W1 distance from the group's "
    "scores to everyone's; equals the selection-rate gap summed over groups and averaged over "
    "all thresholds.",
    "SPDD": "strong pairwise demographic disparity: the same, summed over every pair of groups.",
    "SER": "skewed error ratio: the highest group error rate over the lowest (1 = equal errors).",
    "DP": "demographic parity: equal selection rates across groups at the threshold.",
    "EO": "equalized odds: equal true- and false-positive rates across groups.",
    "impact ratio": "a group's selection rate over the reference group's (the four-fifths "
    "rule flags values under 0.8).",
    "BC interval": "bias-corrected bootstrap interval: the percentile interval shifted by the "
    "replicates' bias so that it surrounds the estimate.",
    "Clopper-Pearson": "exact binomial interval of a proportion; never of zero width.",
}


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def provenance(
    *, model: str | None, thresholds: dict[str, Any], extra: dict[str, Any] | None
) -> dict[str, Any]:
    """Date (UTC, ISO 8601), versions, model, thresholds with rationale, and ``extra``."""
    import fairot

    out: dict[str, Any] = {
        "created_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "fairot": fairot.__version__,
        "python": platform.python_version(),
    }
    out.update({name: _version(name) for name in DEPENDENCIES})
    out["model"] = model if model else "not given"
    out["thresholds"] = thresholds
    if extra:
        out.update(extra)
    return out


def file_provenance(path: str | Path) -> dict[str, Any]:
    """Name, size in bytes and SHA-256 of an input file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fairot.reporting import file_provenance
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.csv"
    >>> _ = path.write_text("score")
    >>> info = file_provenance(path)
    >>> info["name"], info["size_bytes"], info["sha256"][:12]
    ('scores.csv', 5, 'a575b79868a2')
    """
    path = Path(path)
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"name": path.name, "size_bytes": path.stat().st_size, "sha256": digest.hexdigest()}
