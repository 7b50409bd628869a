"""The import structure of `src/expvid`: product code never imports the test fakes, and no new
import circle between modules appears (imports inside functions and TYPE_CHECKING blocks count:
a circle hidden in a function is still a circle)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: Circles that are being taken apart elsewhere (issue 31, the recipes/CLI/platform restructuring).
#: Remove an entry once its circle is gone; never add one.
KNOWN_CIRCLES = {
    frozenset(
        {
            "expvid.cli.build",
            "expvid.cli.build_gate",
            "expvid.cli.build_promqa",
            "expvid.cli.build_scivideobench",
        }
    ),
    frozenset(
        {
            "expvid.platform.services.importer",
            "expvid.platform.services.procedural_import",
            "expvid.platform.services.upstream",
        }
    ),
    frozenset(
        {
            "expvid.construction.recipes.scivideobench.estimate",
            "expvid.construction.recipes.scivideobench.pipeline",
        }
    ),
}


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


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]
