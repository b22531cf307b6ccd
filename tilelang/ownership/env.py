"""What the ownership checker needs to know about the program, in one place.

`ProgramView` adapts the type checker's `Program` (`tilelang.sema`): every
function of every loaded module with the contexts it was checked in (host,
kernel), what a call names, the semantic type of an expression or a binding,
the instantiation of a kernel call. The type predicates below say what a
type holds as far as borrows are concerned (a tensor owned by value, a
reference to one, a partition, a handle, a graph), looking through tuples
but never behind a reference.

Invariant: the checker asks the program only through this class, so a change
in the `Program` interface touches one file. The ownership checker needs a
`Program`: names and types decide what a value is, never spelling.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tilelang.syntax import ast


# ---------------------------------------------------------------- type predicates
def _cls(ty: object) -> str:
    return type(ty).__name__


def holds(ty: object, kinds: tuple[str, ...]) -> bool:
    """`ty` holds a value of one of the type classes `kinds` (`"TensorT"`,
    `"HandleT"`, ...) directly or in a tuple, not behind a reference."""
    name = _cls(ty)
    if name in kinds:
        return True
    if name == "TupleT":
        for e in getattr(ty, "elems", ()):  # a loop: `any(<generator>)` recursed through C (3.12's limit)
            if holds(e, kinds):
                return True
        return False
    return False


def is_affine(ty: object) -> bool:
    """Binding it to another name moves it: owned tensors, handles, graphs."""
    return holds(ty, ("TensorT", "HandleT", "GraphT"))


def is_tensor(ty: object) -> bool:
    return _cls(ty) == "TensorT"


def is_tensor_ref(ty: object) -> bool:
    return _cls(ty) == "RefT" and _cls(getattr(ty, "inner", None)) == "TensorT"


def has_tensor_ref(ty: object) -> bool:
    """A reference to a tensor, directly or inside a tuple."""
    if is_tensor_ref(ty):
        return True
    if _cls(ty) == "TupleT":
        return any(has_tensor_ref(e) for e in getattr(ty, "elems", ()))
    return False


def tuple_elems(ty: object) -> tuple[object, ...] | None:
    return tuple(getattr(ty, "elems", ())) if _cls(ty) == "TupleT" else None


def type_ast_has_ref(te: ast.TypeExpr | None) -> ast.RefType | None:
    """The first `&`/`&mut` tensor reference written in a type annotation."""
    match te:
        case ast.RefType(inner=inner):
            if isinstance(inner, ast.NamedType) and inner.name.name == "Tensor":
                return te
            return type_ast_has_ref(inner)
        case ast.TupleType(elems=elems):
            for e in elems:
                r = type_ast_has_ref(e)
                if r is not None:
                    return r
    return None


# ---------------------------------------------------------------- the view
class ProgramView:
    def __init__(self, program: Any) -> None:
        if isinstance(program, ast.Module) or not hasattr(program, "modules"):
            raise TypeError("the ownership checker needs the type checker's `Program`")
        self.program = program
        self.modules: list[ast.Module] = [m.ast for m in program.modules.values()]
        root = getattr(program, "root", None)
        self.root: ast.Module | None = getattr(root, "ast", None)

    # -- functions ------------------------------------------------------------
    def infos(self) -> Iterator[Any]:
        """Every kernel and function of every module (`FnInfo`)."""
        yield from self.program.kernels.values()
        yield from self.program.functions.values()

    def kernels(self) -> list[Any]:
        return list(self.program.kernels.values())

    def host_fns(self) -> list[Any]:
        return [i for i in self.program.functions.values() if "host" in i.contexts]

    def device_fns(self) -> list[Any]:
        return [i for i in self.program.functions.values() if "kernel" in i.contexts]

    def info_of(self, decl: ast.FnDecl) -> Any:
        for info in self.infos():
            if info.decl is decl:
                return info
        return None

    def callee(self, call: ast.Call) -> ast.FnDecl | None:
        """The user fn or kernel a call names (None for builtins)."""
        info = self.program.callee_of(call)
        return info.decl if info is not None else None

    def callee_info(self, call: ast.Call) -> Any:
        return self.program.callee_of(call)

    # -- types and symbols ------------------------------------------------------
    def type_of(self, expr: object) -> object:
        return self.program.type_of(expr)

    def symbol_of(self, node: object) -> Any:
        return self.program.symbol_of(node)

    def binding_type(self, node: object) -> object:
        """The type of the variable a `NamePat` or `Param` binds."""
        sym = self.program.symbol_of(node)
        return getattr(sym, "ty", None)

    def instantiation(self, call: ast.Call) -> dict[str, int]:
        v = self.program.instantiations.get(call)
        if isinstance(v, dict):
            return {k: x for k, x in v.items() if isinstance(x, int) and not isinstance(x, bool)}
        return {}

    def const_value(self, name: ast.Name) -> object:
        """The value of a module constant a name refers to (None otherwise)."""
        sym = self.program.symbol_of(name)
        if sym is not None and getattr(sym.kind, "value", None) == "const":
            return sym.value
        return None
