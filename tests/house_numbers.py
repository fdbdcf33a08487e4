"""The house in numbers, for the table of ``docs/architecture.md``.

Counts, for the source tree under ``ROOT`` (default: this checkout): modules and lines of
``src/fairot``, modules past 490 lines (the old cap's neighbourhood), the call sites of the group
parsers, the reads and writes of another object's private state (the walk of
``tests/test_architecture.py``), the sort calls outside ``fairot.transport`` (``sort``,
``argsort``, ``lexsort``: the rows each module orders for its own purpose), and the source
modules with a test module of the same name in the mirrored folder (``src/fairot/pkg/_mod.py``
-> ``tests/pkg/test_mod.py``). Run it on two checkouts to compare (``git worktree add
/tmp/before REV``).

Run as ``python -m tests.house_numbers [ROOT]``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from tests.test_architecture import _foreign_private_state

#: The functions that turn raw ``sensitive_features`` into groups.
GROUP_PARSERS = ("check_sensitive_features", "resolve_sensitive_features", "sensitive_frame")
#: The calls that sort an array (NumPy's functions and the array and list methods).
SORTS = ("sort", "argsort", "lexsort")


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def numbers(root: Path) -> dict[str, int]:
    """The counts of the module docstring for the checkout at ``root``."""
    src = root / "src" / "fairot"
    files = sorted(src.rglob("*.py"))
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in files}
    lengths = [len(path.read_text(encoding="utf-8").splitlines()) for path in files]
    calls = {
        path: [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
        for path, tree in trees.items()
    }
    parse_sites = sum(
        _called_name(call) in GROUP_PARSERS for found in calls.values() for call in found
    )
    sorts_outside_transport = sum(
        _called_name(call) in SORTS
        for path, found in calls.items()
        if path.relative_to(src).parts[0] != "transport"
        for call in found
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
        "sort calls outside transport": sorts_outside_transport,
        "modules with a mirrored test module": mirrored,
        "modules other than __init__": len(modules),
    }


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    for name, value in numbers(root).items():
        print(f"{name}: {value}")
