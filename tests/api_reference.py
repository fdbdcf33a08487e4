"""Render ``docs/api.md``: every public name of fairot with its signature.

A module is importable without an underscore when no part of its dotted path starts with one;
its names are its ``__all__`` where it has one, else the functions and classes it defines
without a leading underscore. Of those modules, the API is a deliberate choice: the command line
(``fairot.cli``), the studies (``fairot.experiments``, no stability promise), the checks and
messages shared between packages (``*.checks``), the helpers under ``fairot.utils.*`` and the
result-folder writer are internal: listed by name and count, without signatures.
``tests/test_api_reference.py`` compares the file with this rendering, so a signature cannot
change without the reference; ``make api`` rewrites the file.

Run as ``python -m tests.api_reference [--write]``.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "fairot"
REFERENCE = ROOT / "docs" / "api.md"

# Optional extras: without them these modules cannot be imported, and the reference says so.
EXTRAS = {"fairot.face": "torch", "fairot.torch": "torch", "fairot.dask": "dask"}


def public_modules() -> list[str]:
    """Dotted names of the public modules and packages under ``src/fairot``, sorted."""
    names = []
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] == "__main__" or any(p.startswith("_") for p in parts):
            continue
        names.append(".".join(parts))
    return sorted(names)


#: The internal modules: importable (a sibling package needs their plain names) but not API.
INTERNAL_PACKAGES = ("fairot.cli", "fairot.experiments")
INTERNAL_MODULES = (
    "fairot.classification.rate_rows",
    "fairot.metrics.plotting",
    "fairot.metrics.reductions",
    "fairot.regression.scores",
    "fairot.reporting.artifacts",
)

#: The surface before the choice was made (the last version that documented every importable
#: name): names and modules.
NAMES_BEFORE, MODULES_BEFORE = 432, 46


def is_internal(module: str) -> bool:
    """Whether ``module`` is importable but not part of the API (see the module docstring)."""
    return (
        any(module == p or module.startswith(p + ".") for p in INTERNAL_PACKAGES)
        or module in INTERNAL_MODULES
        or module.startswith("fairot.utils.")
        or module.rpartition(".")[2] == "checks"
    )


def extra_missing(module: str) -> str | None:
    """The optional dependency ``module`` needs and that is not installed, if any."""
    top = ".".join(module.split(".")[:2])
    extra = EXTRAS.get(top)
    if extra is not None and importlib.util.find_spec(extra) is None:
        return extra
    return None


def public_names(module) -> list[str]:
    if hasattr(module, "__all__"):
        return sorted(module.__all__)
    return sorted(
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == module.__name__
    )


def _signature(obj) -> str:
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
    # Object reprs with an address would change from run to run.
    return re.sub(r" at 0x[0-9a-f]+", "", text)


def _class_lines(cls) -> list[str]:
    lines = [f"- class `{cls.__name__}{_signature(cls)}`"]
    for name, member in sorted(vars(cls).items()):
        if name.startswith("_"):
            continue
        if isinstance(member, property):
            lines.append(f"  - property `{name}`")
        elif isinstance(member, (staticmethod, classmethod)):
            lines.append(f"  - `{name}{_signature(member.__func__)}`")
        elif inspect.isfunction(member):
            lines.append(f"  - `{name}{_signature(member)}`")
    return lines


def _object_lines(name: str, obj) -> list[str]:
    if inspect.isclass(obj):
        return _class_lines(obj)
    if callable(obj):
        return [f"- `{name}{_signature(obj)}`"]
    return [f"- `{name}`: {type(obj).__name__}"]


def render() -> str:
    """The text of ``docs/api.md`` for the installed code."""
    sections: list[str] = []
    internal: list[str] = []
    counted = {"api": [0, 0], "internal": [0, 0]}  # names, modules
    for module_name in public_modules():
        missing = extra_missing(module_name)
        names = [] if missing else public_names(importlib.import_module(module_name))
        kind = "internal" if is_internal(module_name) else "api"
        counted[kind][0] += len(names)
        counted[kind][1] += 1
        if kind == "internal":
            plural = "" if len(names) == 1 else "s"
            count = f"needs `{missing}`" if missing else f"{len(names)} name{plural}"
            internal.append(f"- `{module_name}` ({count})")
            continue
        sections += ["", f"## `{module_name}`", ""]
        if missing is not None:
            sections.append(f"(needs the optional dependency `{missing}`)")
            continue
        module = importlib.import_module(module_name)
        if not names:
            sections.append("(no public names of its own)")
        for name in names:
            sections += _object_lines(name, getattr(module, name))
    (api_names, api_modules), (internal_names, internal_modules) = (
        counted["api"],
        counted["internal"],
    )
    out = [
        "# API reference",
        "",
        "Every public name of fairot with its signature, generated from the code by",
        "`python -m tests.api_reference --write` (`make api`). `tests/test_api_reference.py`",
        "fails when a signature changes without this file. The prose lives in the docstrings",
        "(`make docs` builds them) and in the other pages of `docs/`.",
        "",
        "## What is public",
        "",
        f"The API is {api_names} names in {api_modules} modules: what a user imports to measure,",
        "mitigate, report and train. It was chosen, not accumulated: before the choice every",
        f"importable name counted ({NAMES_BEFORE} names in {MODULES_BEFORE} modules). The",
        f"{internal_names} names of the {internal_modules} internal modules below stay importable",
        "(a sibling package needs their plain names, and the command line runs them) but carry no",
        "promise: the command line (`fairot.cli`; its promise is the commands and their options),",
        "the studies (`fairot.experiments`: results may change with every version), the checks",
        "and messages shared between packages (`*.checks`), the helpers under `fairot.utils.*` and",
        "the result-folder writer, and the rate program's rows that the Dask backend partitions",
        "(`fairot.classification.rate_rows`).",
        "",
        *internal,
    ]
    return "\n".join(out + sections) + "\n"


def write(path: Path = REFERENCE) -> None:
    """Write the reference atomically (a temporary file in the same folder, then a rename)."""
    text = render()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".api-", suffix=".md")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        write()
    else:
        sys.stdout.write(render())
