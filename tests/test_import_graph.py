"""The import graph between math2's packages: no arrow runs back up the layers, no circle.

The layers follow DESIGN.md, lowest first: a package may import only packages of lower layers.
Every import counts — at the top of a module or inside a function — except those under
`if TYPE_CHECKING:` (they never run). A new package must be given its layer here.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "math2"

LAYERS: list[set[str]] = [
    {"<root>", "errors"},
    {"util", "store"},
    {"lean", "llm", "sources"},  # verification, model calls, the manifest
    {"config"},  # the settings (they hold math2.lean's limits)
    {"data"},  # external data sets at their pins; the shallow git fetch of a pinned commit
    {"runs", "crosswalk", "judging"},  # the run engine; nodes and edges; the judge's question
    {"importers"},
    {"retrieval"},  # search (its embedding is a run)
    {"services"},  # the role services: clients, checker, retriever, writer
    {"checks"},
    {"roles"},
    {"eval", "audit", "report"},
    # exports and the reward (they refuse benchmark items: eval's registry); `math2 import`
    {"datasets", "import_source"},
    {"web", "build"},
    {"cli"},
    {"__main__"},
]
LAYER = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<root>"


def _imports(path: Path, module: str) -> set[str]:
    """The modules `path` imports, relative imports resolved, TYPE_CHECKING blocks left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for n in ast.walk(node))
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                found.add(".".join([*base, *([node.module] if node.module else [])]))
            elif node.module:
                found.add(node.module)
    return found


def package_edges(root: Path) -> dict[tuple[str, str], list[str]]:
    """(importer package, imported package) -> the module imports that make the arrow."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    top = root.name
    for path in sorted(root.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        module = _module(path, root)
        for target in _imports(path, module):
            if target != top and not target.startswith(top + "."):
                continue
            a, b = _package(module), _package(target)
            if a != b:
                edges[(a, b)].append(f"{module} imports {target}")
    return edges


def back_arrows(edges: dict[tuple[str, str], list[str]]) -> list[str]:
    """Every arrow to a package of the same or a higher layer (or one with no layer)."""
    bad = []
    for (a, b), why in sorted(edges.items()):
        if a not in LAYER or b not in LAYER:
            bad.append(f"{a} -> {b}: {a if a not in LAYER else b} has no layer in LAYERS")
        elif LAYER[b] >= LAYER[a]:
            bad.append(f"{a} (layer {LAYER[a]}) -> {b} (layer {LAYER[b]}): {why[0]}")
    return bad


def cycles(edges: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one package (Tarjan)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_walk_sees_the_packages():
    edges = package_edges(SRC)
    # the arrows the house is built on are seen (a walk that found nothing would pass vacuously)
    for arrow in [
        ("roles", "checks"),
        ("checks", "judging"),
        ("roles", "services"),
        ("cli", "roles"),
    ]:
        assert arrow in edges, arrow
    packages = {a for a, _ in edges} | {b for _, b in edges}
    assert len(packages) >= 20


def test_no_arrow_runs_back_up():
    assert back_arrows(package_edges(SRC)) == []


def test_no_circle_spans_packages():
    assert cycles(package_edges(SRC)) == []


def test_checks_do_not_import_the_roles():
    edges = package_edges(SRC)
    assert ("checks", "roles") not in edges
    assert ("judging", "roles") not in edges


def test_a_back_arrow_and_a_circle_are_found(tmp_path):
    """The checks fail on a tree that has what they look for."""
    root = tmp_path / "math2"
    for pkg, body in {
        "store": "from math2.roles.formalize import x\n",  # store (layer 1) -> roles
        "roles": "def f():\n    from math2.store import y\n",  # inside a function: counts
        "llm": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from math2.cli import z\n",
    }.items():
        (root / pkg).mkdir(parents=True)
        (root / pkg / "__init__.py").write_text(body)
    (root / "__init__.py").write_text("")
    edges = package_edges(root)
    assert ("llm", "cli") not in edges  # TYPE_CHECKING only
    bad = back_arrows(edges)
    assert len(bad) == 1 and bad[0].startswith("store (layer 1) -> roles"), bad
    assert cycles(edges) == [["roles", "store"]]
