"""The house rules of ``src/fairot``, read from every import statement (docs/architecture.md).

An AST walk of the source, so that imports inside functions count as much as those at the top:

- no circle of imports between packages, nor between modules;
- no module imports an underscore name (module or attribute) from another package;
- each package imports only its own floor or lower ones;
- no module reads or writes another object's private attribute (``obj._x`` where ``_x`` is an
  attribute some class sets on ``self`` in another module): a helper that needs an object's
  private state is a method of that object, or takes explicit arguments;
- a module longer than the soft budget is reported (a warning, not a failure): one idea per
  module is the measure, not a line count.
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "fairot"
#: Not a cap: a module past it is listed, as a place to ask whether it holds one idea.
SOFT_LINE_BUDGET = 800

#: The floors of docs/architecture.md: a package imports only packages on lower floors. Within a
#: floor the order is the diagram's: on floor 0 ``utils`` raises ``exceptions``' errors.
FLOORS = {
    "exceptions": 0,
    "utils": 0.5,
    "transport": 1,
    "datasets": 1,
    "metrics": 2,
    "classification": 3,
    "regression": 3,
    "torch": 3,
    "verification": 3,
    "dask": 4,
    "reporting": 4,
    "face": 5,
    "experiments": 6,
    "cli": 7,
    "__main__": 8,
}


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def _imports(path: Path) -> list[tuple[str, str | None, int]]:
    """``(module, name or None, line)`` for every fairot import of the file at ``path``."""
    name, is_package = _module_name(path)
    package = name if is_package else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found += [(module, alias.name, node.lineno) for alias in node.names]
    return [imp for imp in found if imp[0] == "fairot" or imp[0].startswith("fairot.")]


MODULES = {_module_name(p)[0]: p for p in sorted(SRC.rglob("*.py"))}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _target(module: str, name: str | None) -> str:
    """The module an import loads: ``from a import b`` loads ``a.b`` when that is a module."""
    if name and f"{module}.{name}" in MODULES:
        return f"{module}.{name}"
    return module


def _graph() -> dict[str, set[str]]:
    return {
        module: {_target(m, n) for m, n, _ in _imports(path)} - {module}
        for module, path in MODULES.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components


def test_the_walk_sees_imports_inside_functions():
    # The walk must count a function-level import, or a lazy circle would pass unseen.
    path = SRC / "utils" / "backends.py"
    assert any(module == "fairot.utils.backends" for module in MODULES)
    assert "importlib" in path.read_text(encoding="utf-8")
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_circle_between_modules():
    assert _cycles(_graph()) == []


def test_no_circle_between_packages():
    packages: dict[str, set[str]] = {}
    for module, targets in _graph().items():
        for target in targets:
            if _package(module) != _package(target) and _package(target):
                packages.setdefault(_package(module), set()).add(_package(target))
    assert _cycles(packages) == []


def test_each_package_imports_only_lower_floors():
    assert set(FLOORS) >= {_package(m) for m in MODULES if _package(m)}
    upward = []
    for module, path in MODULES.items():
        own = _package(module)
        for target_module, name, line in _imports(path):
            target = _package(_target(target_module, name))
            if own and target and target != own and FLOORS[target] >= FLOORS[own]:
                upward.append(f"{module}:{line} imports {target_module} (floor of {target})")
    assert upward == []


def test_no_private_name_across_packages():
    private = []
    for module, path in MODULES.items():
        for target_module, name, line in _imports(path):
            if _package(target_module) == _package(module):
                continue
            parts = target_module.split(".")[1:] + ([name] if name else [])
            if any(p.startswith("_") and not p.startswith("__") for p in parts):
                private.append(f"{module}:{line} imports {target_module}.{name}")
    assert private == []


def _private_state_owners(trees: dict[Path, ast.AST]) -> dict[str, set[Path]]:
    """For each ``_name``: the files in which a class assigns ``self._name`` (or ``cls._name``)."""
    owners: dict[str, set[Path]] = {}
    for path, tree in trees.items():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Store)
                    and isinstance(node.value, ast.Name)
                    and node.value.id in ("self", "cls")
                    and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                ):
                    owners.setdefault(node.attr, set()).add(path)
    return owners


def _foreign_private_state(trees: dict[Path, ast.AST], base: Path = SRC) -> list[str]:
    owners = _private_state_owners(trees)
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or node.attr not in owners:
                continue
            value = node.value
            if isinstance(value, ast.Name) and value.id in ("self", "cls"):
                continue
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "super":
                continue
            if path not in owners[node.attr]:
                found.append(f"{path.relative_to(base)}:{node.lineno} {ast.unparse(node)}")
    return found


def test_the_private_state_walk_sees_a_friend_module():
    owner = ast.parse("class A:\n    def __init__(self):\n        self._x = 1\n")
    friend = ast.parse("def peek(a):\n    return a._x\n")
    own_use = ast.parse("class B:\n    def f(self):\n        return self._x\n")
    trees = {SRC / "a.py": owner, SRC / "friend.py": friend, SRC / "b.py": own_use}
    assert _foreign_private_state(trees) == ["friend.py:2 a._x"]


def test_no_module_touches_another_objects_private_state():
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in MODULES.values()}
    assert _foreign_private_state(trees) == []


@pytest.mark.filterwarnings("default::UserWarning")
def test_long_modules_are_listed_not_refused():
    lengths = {
        str(path.relative_to(SRC)): len(path.read_text(encoding="utf-8").splitlines())
        for path in MODULES.values()
    }
    long = {name: n for name, n in lengths.items() if n > SOFT_LINE_BUDGET}
    if long:
        warnings.warn(
            f"modules past {SOFT_LINE_BUDGET} lines (one idea each?): {long}",
            UserWarning,
            stacklevel=1,
        )
    assert len(lengths) == len(MODULES)


def test_no_tracker_numbers_in_the_source():
    # The source says why in its own words; the tracker's numbering is not the reader's.
    found = [
        f"{path.relative_to(SRC)}:{number}"
        for path in MODULES.values()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bissues? \d+", line, flags=re.IGNORECASE)
    ]
    assert found == []
