"""The shape of the tree (issue 13): small modules and classes, no import cycles.

A newcomer who wants to change one rule should not have to read thousands of
lines of one class to know what they may touch, so under `tilelang/`:

- no module is over 1,000 lines and no class over 700 lines (the backend
  included: its LLVM emitter is one mixin per concern under
  `backend/codegen/`). An exemption needs its reason in ARCHITECTURE.md.
- no two modules import each other, directly or through others.
- the tree's other Python (tests/, benchmarks/, examples/) keeps the module
  size limit too.

What counts as an import, and why:

- every `import` / `from .. import` statement, wherever it is: at module
  level, inside a function (a lazy import is still a dependency: it runs the
  first time the function does), and under `if TYPE_CHECKING:` (a module
  that names another's types depends on it; a `Protocol` states what it
  needs without importing the other side);
- importing `a.b.c` runs `a/b/__init__.py` first, so it depends on `a.b` too
  (an `__init__` that imports its submodules eagerly can close a loop that no
  single statement shows);
- except a module importing one of its own ancestor packages: Python has
  begun initialising the package before any of its submodules runs, and a
  package whose `__init__` registers its submodules while they read a name
  from it is the normal shape of a package (`diagnostics/codes/`).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tilelang"
MAX_MODULE_LINES = 1000
MAX_CLASS_LINES = 700
EXEMPT: tuple[str, ...] = ()  # relative paths (prefixes); each with its reason in ARCHITECTURE.md


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _limited() -> list[Path]:
    return [p for p in _sources() if not _rel(p).startswith(EXEMPT)]


def _module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@pytest.mark.parametrize("path", _limited(), ids=_rel)
def test_no_module_over_1000_lines(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_MODULE_LINES, (
        f"tilelang/{_rel(path)} has {lines} lines (at most {MAX_MODULE_LINES}): split it by concern"
    )


ROOT = PACKAGE.parent
# the rest of the tree's Python (test helpers such as the LLVM IR simulator
# `tests/backend/llsim*.py`, the tests themselves, benchmarks, examples) keeps
# the same size limit: llsim had grown to 1,980 lines in one module
OTHERS = sorted(p for d in ("tests", "benchmarks", "examples") for p in (ROOT / d).rglob("*.py"))


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_outside_the_package_over_1000_lines(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_MODULE_LINES, (
        f"{path.relative_to(ROOT).as_posix()} has {lines} lines (at most {MAX_MODULE_LINES}): split it by concern"
    )


@functools.cache
def _statements(path: Path) -> tuple[tuple[tuple[str, int], ...], tuple[ast.Import | ast.ImportFrom, ...]]:
    """Each class of the module at `path` with its length in lines, and its import statements: what the
    class-size and import-cycle tests read, from one parse a process (the parse of the package's 331 modules,
    ~3.4 CPU-s, was paid by both; only these small facts are kept, not the trees)."""
    classes, imports = [], []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            classes.append((node.name, node.end_lineno - node.lineno + 1))  # type: ignore[operator]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
    return tuple(classes), tuple(imports)


@pytest.mark.parametrize("path", _limited(), ids=_rel)
def test_no_class_over_700_lines(path: Path) -> None:
    big = [f"{name} ({n} lines)" for name, n in _statements(path)[0] if n > MAX_CLASS_LINES]
    assert not big, f"tilelang/{_rel(path)}: {', '.join(big)} (at most {MAX_CLASS_LINES} lines a class)"


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module name -> the modules of `root`'s package it imports (the rules in
    the module docstring)."""
    files = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _statements(path)[1]:
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.add(sub if sub in files else base)
        deps: set[str] = set()
        for target in targets:
            parts = target.split(".")
            for k in range(1, len(parts) + 1):  # the target and the packages around it
                prefix = ".".join(parts[:k])
                if prefix in files and prefix != name and not name.startswith(prefix + "."):
                    deps.add(prefix)
        graph[name] = deps
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _path_in(cycle: list[str], graph: dict[str, set[str]]) -> str:
    """One loop through a cycle's modules, to show in the failure."""
    members = set(cycle)
    start = cycle[0]
    path = [start]
    seen = {start}
    node = start
    while True:
        nxt = sorted(graph[node] & members)
        step = next((n for n in nxt if n == start and len(path) > 1), None) or next(
            (n for n in nxt if n not in seen), None
        )
        if step is None or step == start:
            return " -> ".join([*path, start])
        path.append(step)
        seen.add(step)
        node = step


def test_no_import_cycles() -> None:
    graph = import_graph()
    cycles = import_cycles(graph)
    assert not cycles, "import cycles between modules:\n" + "\n".join(
        f"  {', '.join(c)}  (e.g. {_path_in(c, graph)})" for c in cycles
    )


def test_the_cycle_rules_see_what_they_claim(tmp_path: Path) -> None:
    """The graph counts function-local, TYPE_CHECKING and package-__init__
    edges, and exempts imports of a module's own ancestor packages."""
    pkg = tmp_path / "p"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from p import a\n")  # registers a submodule
    (pkg / "a.py").write_text("from p import b\n")
    (pkg / "b.py").write_text("def f():\n    from p.sub.c import g\n")
    (pkg / "sub" / "__init__.py").write_text("from p.sub import d\n")
    (pkg / "sub" / "c.py").write_text("g = 1\n")
    (pkg / "sub" / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.b import f\n"
    )
    graph = import_graph(pkg)
    assert graph["p.a"] == {"p.b"}  # `p` itself is a's ancestor: exempt
    assert graph["p.b"] == {"p.sub", "p.sub.c"}  # a lazy import, and the package around it
    assert graph["p.sub.d"] == {"p.b"}  # a TYPE_CHECKING import
    assert import_cycles(graph) == [["p.b", "p.sub", "p.sub.d"]]
