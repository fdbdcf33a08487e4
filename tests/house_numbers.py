"""The house in numbers, for the table of ``docs/architecture.md``.

Counts, for the source tree under ``ROOT`` (default: this checkout): modules and lines of
``src/fairot``, modules past 490 lines (the old cap's neighbourhood), the call sites of the group
parsers, the reads and writes of another object's private state (the walk of
``tests/test_architecture.py``), and the source modules with a test module of the same name in
the mirrored folder (``src/fairot/pkg/_mod.py`` -> ``tests/pkg/test_mod.py``). Run it on two
checkouts to compare (``git worktree add /tmp/before REV``).

Run as ``python -m tests.house_numbers [ROOT]``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from tests.test_architecture import _foreign_private_state

#: The functions that turn raw ``sensitive_features`` into groups.
GROUP_PARSERS = ("check_sensitive_features", "resolve_sensitive_features", "sensitive_frame")


def numbers(root: Path) -> dict[str, int]:
    """The counts of the module docstring for the checkout at ``root``."""
    src = root / "src" / "fairot"
    files = sorted(src.rglob("*.py"))
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in files}
    lengths = [len(path.read_text(encoding="utf-8").splitlines()) for path in files]
    calls = [
        node for tree in trees.values() for node in ast.walk(tree) if isinstance(node, ast.Call)
    ]
    parse_sites = sum(
        1
        for call in calls
        if (
            call.func.attr
            if isinstance(call.func, ast.Attribute)
            else getattr(call.func, "id", None)
        )
        in GROUP_PARSERS
    )
    modules = [path for path in files if path.name != "__init__.py"]
    mirrored = sum(
        (root / "tests" / p.relative_to(src).parent / f"test_{p.stem.lstrip('_')}.py").exists()
        for p in modules
    )
    return {
        "modules": len(files),
        "lines": sum(lengths),
        "modules past 490 lines": sum(n > 490 for n in lengths),
        "call sites of the group parsers": parse_sites,
        "foreign private-state reads and writes": len(_foreign_private_state(trees, src)),
        "modules with a mirrored test module": mirrored,
        "modules other than __init__": len(modules),
    }


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    for name, value in numbers(root).items():
        print(f"{name}: {value}")
