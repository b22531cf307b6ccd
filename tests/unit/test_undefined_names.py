"""No module under `tilelang/` or `benchmarks/` reads a global name it never
defines or imports.

A name that is neither bound at module level, imported, nor a builtin is a
NameError waiting on the path that reads it; on a path only a GPU takes (a TMA
descriptor's bytes read through an unimported `ctypes`, left behind when
runtime/cuda.py was split) CI would never see it. Python's own symbol tables
decide what each function reads from the module scope, so nested functions,
classes, comprehensions, `global` and `nonlocal` follow the language's rules.
"""

from __future__ import annotations

import builtins
import symtable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([*(ROOT / "tilelang").rglob("*.py"), *(ROOT / "benchmarks").glob("*.py")])
MODULE_NAMES = {"__file__", "__name__", "__doc__", "__spec__", "__loader__", "__package__",
                "__path__", "__builtins__", "__annotations__", "__dict__", "__debug__"}


def _tables(table: symtable.SymbolTable):  # type: ignore[no-untyped-def]
    yield table
    for child in table.get_children():
        yield from _tables(child)


def undefined_globals(source: str, name: str) -> set[str]:
    """The global names `source` reads but never binds (module level, `global`
    assignments anywhere, imports) and which are no builtins."""
    top = symtable.symtable(source, name, "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    tables = list(_tables(top))
    for t in tables[1:]:
        bound |= {s.get_name() for s in t.get_symbols()
                  if s.is_declared_global() and (s.is_assigned() or s.is_imported())}
    read: set[str] = set()
    for t in tables:
        for s in t.get_symbols():
            if not s.is_referenced():
                continue
            if t is top or s.is_global():
                read.add(s.get_name())
    return {n for n in read - bound if not hasattr(builtins, n) and n not in MODULE_NAMES}


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_every_global_name_a_module_reads_is_defined(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    if "import *" in source:
        pytest.skip("a star import binds names symtable cannot see")
    assert undefined_globals(source, str(path)) == set()


def test_the_check_finds_an_unimported_module() -> None:
    src = "import os\n\ndef f():\n    return ctypes.string_at(os.getpid(), 1)\n"
    assert undefined_globals(src, "m.py") == {"ctypes"}
    assert undefined_globals("import ctypes\n" + src, "m.py") == set()


def test_the_check_follows_scopes() -> None:
    src = ("def f(a):\n    b = a\n    def g():\n        return b + len([c for c in range(a)])\n"
           "    return g\n\nclass K:\n    x = 1\n    def m(self):\n        global Y\n        Y = 2\n"
           "\ndef h():\n    return Y + Z\n")
    assert undefined_globals(src, "m.py") == {"Z"}
