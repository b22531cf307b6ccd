"""Semantic analysis: modules, name resolution, types (issue 2 item 6, issue 3).

Entry point: `check_program(root, sources, sink, loader=None) -> Program`
(see `program.py` for what a `Program` holds, `types.py` for the types,
`loader.py` for how `use` finds modules, `check.py` for the rules).

    sources, sink = SourceMap(), DiagnosticSink()
    module = parse(sources.add("add.tile", text), sink)
    program = check_program(module, sources, sink)
    program.type_of(expr)             # Type of any checked expression
    program.symbol_of(name_or_call)   # what a name / call / method refers to
    program.instantiations[call]      # {"B": 1024} for `add(z.partition([1024]), ..)`
    eval_dim(dim, {"B": 1024})        # a symbolic dimension's value
    subst_type(ty, {"B": 1024})       # a type specialised to an instantiation
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tilelang.sema.program import FnInfo, ModuleInfo, Program, Symbol, SymbolKind
from tilelang.sema.types import Dim, eval_dim, subst_type

if TYPE_CHECKING:
    from tilelang.sema.check import check_program
    from tilelang.sema.loader import ModuleLoader


def __getattr__(name: str) -> Any:
    # check.py imports the parser lazily through the loader; keep the import cheap.
    if name == "check_program":
        from tilelang.sema.check import check_program

        return check_program
    if name == "ModuleLoader":
        from tilelang.sema.loader import ModuleLoader

        return ModuleLoader
    raise AttributeError(name)


__all__ = [
    "Dim", "FnInfo", "ModuleInfo", "ModuleLoader", "Program", "Symbol", "SymbolKind",
    "check_program", "eval_dim", "subst_type",
]
