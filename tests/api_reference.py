"""Render ``docs/api.md``: every public name of fairot with its signature.

A module is public when no part of its dotted path starts with an underscore; its public names
are its ``__all__`` where it has one, else the functions and classes it defines without a
leading underscore. ``tests/test_api_reference.py`` compares the file with this rendering, so a
signature cannot change without the reference; ``make api`` rewrites the file.

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


def extra_missing(module: str) -> str | None:
    """The optional dependency ``module`` needs and that is not installed, if any."""
    top = ".".join(module.split(".")[:2])
    extra = EXTRAS.get(top)
    if extra is not None and importlib.util.find_spec(extra) is None:
        return extra
    return None


def _public_names(module) -> list[str]:
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
    out = [
        "# API reference",
        "",
        "Every public name of fairot with its signature, generated from the code by",
        "`python -m tests.api_reference --write` (`make api`). `tests/test_api_reference.py`",
        "fails when a signature changes without this file. The prose lives in the docstrings",
        "(`make docs` builds them) and in the other pages of `docs/`.",
    ]
    for module_name in public_modules():
        out += ["", f"## `{module_name}`", ""]
        missing = extra_missing(module_name)
        if missing is not None:
            out.append(f"(needs the optional dependency `{missing}`)")
            continue
        module = importlib.import_module(module_name)
        names = _public_names(module)
        if not names:
            out.append("(no public names of its own)")
        for name in names:
            out += _object_lines(name, getattr(module, name))
    return "\n".join(out) + "\n"


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
