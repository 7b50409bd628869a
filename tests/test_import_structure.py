"""The import structure of `src/expvid`: product code never imports the test fakes, and no new
import circle appears, between modules or between packages (`expvid.X`: `suites`, `hub`,
`construction`, ...). Imports inside functions and TYPE_CHECKING blocks count: a circle hidden in a
function is still a circle. The package layers are drawn in docs/architecture.md."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: Module circles still being taken apart: none since issue 31 (8 before it). Remove an entry once
#: its circle is gone; never add one.
KNOWN_CIRCLES: frozenset[frozenset[str]] = frozenset()

#: Package circles still being taken apart: none since issue 31 (one spanning nine packages before it:
#: audit, cli, construction, export, hub, platform, run, suites, view). Same rule.
KNOWN_PACKAGE_CIRCLES: frozenset[frozenset[str]] = frozenset()


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The expvid modules `name` imports (a package's submodule when one is named, else the package)."""
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([base] if base else [])])
            candidates = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
            ]
        else:
            continue
        for target in candidates:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target.startswith("expvid") and target != name and not name.startswith(target + "."):
                targets.add(target)
    return targets


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(frozenset(component))
    return circles


def test_product_code_imports_no_fakes() -> None:
    modules = _modules()
    offenders = {
        name: sorted(t for t in _imports(name, path, modules) if t.startswith("expvid.fakes"))
        for name, path in modules.items()
        if not name.startswith("expvid.fakes")
    }
    assert not {name: targets for name, targets in offenders.items() if targets}


def test_no_new_import_circle_between_modules() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    circles = _circles(graph)
    new = [sorted(circle) for circle in circles if circle not in KNOWN_CIRCLES]
    assert not new, f"modules that import each other (move the shared code below them): {new}"


def _package(module: str) -> str:
    """The top-level package a module belongs to (`expvid.suites.promqa.suite` -> `suites`)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for name, targets in graph.items():
        edges = packages.setdefault(_package(name), set())
        edges |= {_package(target) for target in targets} - {_package(name)}
    return packages


def test_no_new_import_circle_between_packages() -> None:
    modules = _modules()
    graph = _package_graph({name: _imports(name, path, modules) for name, path in modules.items()})
    circles = _circles(graph)
    new = [sorted(circle) for circle in circles if circle not in KNOWN_PACKAGE_CIRCLES]
    assert not new, f"packages that import each other (move the shared code below them): {new}"


def test_the_package_graph_joins_modules_by_package() -> None:
    graph = _package_graph(
        {
            "expvid.hub.summary": {"expvid.platform.exporter"},
            "expvid.platform.exporter": {"expvid.suites.base"},
            "expvid.suites.base": {"expvid.hub.layouts"},
            "expvid.hub.layouts": set(),
        }
    )
    assert _circles(graph) == [frozenset({"hub", "platform", "suites"})]


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]
