"""What the ownership checker needs to know about the program, in one place.

`ProgramView` adapts the type checker's `Program` (helper C, `tilelang.sema`)
or, for tests and for robustness, a bare `ast.Module`: kernel and function
declarations by name, and (when a `Program` is there) the type of an
expression reduced to the few kinds ownership cares about (`Kind`).

Invariant: the checker asks the program only through this class, so a change
in the `Program` interface touches one file.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any

from tilelang.syntax import ast


class Kind(Enum):
    """What a host value is, as far as borrows are concerned."""

    TENSOR = "tensor"  # owned tensor data (affine)
    PARTITION = "partition"  # `t.partition([..])`: a mutable borrow waiting for a launch
    REF = "ref"  # `&t` / `&mut t`
    OP = "op"  # a kernel call not yet run
    HANDLE = "handle"  # `.launch()`'s result (affine; must be waited)
    GRAPH = "graph"  # `graph { .. }` (affine; holds captures)
    OTHER = "other"  # scalars, shapes, strings, unit: Copy, untracked


def type_kind(ty: TypeLikeAst | None) -> tuple[Kind, bool]:
    """Kind of a declared type and whether it is a `&mut` reference."""
    match ty:
        case ast.RefType(mutable=m, inner=inner):
            k, _ = type_kind(inner)
            return (Kind.TENSOR if k is Kind.TENSOR else Kind.OTHER), m
        case ast.NamedType(name=n):
            return (Kind.TENSOR if n.name == "Tensor" else Kind.OTHER), False
        case _:
            return Kind.OTHER, False


TypeLikeAst = ast.NamedType | ast.ShapeType | ast.RefType | ast.TupleType


def _class_kind(ty: object) -> Kind | None:
    name = type(ty).__name__
    if name == "TupleT":
        # A tuple holding tensors is tracked as one coarse place (its fields are
        # not told apart): moving it or using a field uses the whole tuple.
        elems = getattr(ty, "elems", ())
        return Kind.TENSOR if any(_class_kind(e) is Kind.TENSOR for e in elems) else None
    return {
        "TensorT": Kind.TENSOR,
        "PartitionT": Kind.PARTITION,
        "RefT": Kind.REF,
        "OpT": Kind.OP,
        "HandleT": Kind.HANDLE,
        "GraphT": Kind.GRAPH,
    }.get(name)


def _decls(obj: Any) -> Iterable[ast.FnDecl]:
    """FnDecls inside whatever a Program keeps (dicts, lists, wrappers)."""
    if obj is None:
        return
    values = obj.values() if isinstance(obj, dict) else obj
    for v in values:
        if isinstance(v, ast.FnDecl):
            yield v
        else:
            d = getattr(v, "decl", None) or getattr(v, "node", None)
            if isinstance(d, ast.FnDecl):
                yield d


class ProgramView:
    def __init__(self, program: Any) -> None:
        self.program = None if isinstance(program, ast.Module) else program
        modules: list[ast.Module] = []
        if isinstance(program, ast.Module):
            modules.append(program)
        else:
            root = getattr(program, "root", None) or getattr(program, "module", None)
            if isinstance(root, ast.Module):
                modules.append(root)
            mods = getattr(program, "modules", None)
            for m in mods.values() if isinstance(mods, dict) else mods or ():
                m = (
                    m
                    if isinstance(m, ast.Module)
                    else getattr(m, "ast", None)
                    or getattr(m, "module", None)
                    or getattr(m, "root", None)
                )
                if isinstance(m, ast.Module) and all(m is not x for x in modules):
                    modules.append(m)
        self.root: ast.Module | None = modules[0] if modules else None
        self.modules = modules
        self.fns: dict[str, ast.FnDecl] = {}
        self.consts: dict[str, ast.ConstDecl] = {}
        # Later modules never shadow the root's names.
        for m in reversed(modules):
            for item in m.items:
                if isinstance(item, ast.FnDecl):
                    self.fns[item.name.name] = item
                elif isinstance(item, ast.ConstDecl):
                    self.consts[item.name.name] = item
        if self.program is not None:
            for attr in ("kernels", "functions"):
                for d in _decls(getattr(self.program, attr, None)):
                    self.fns.setdefault(d.name.name, d)

    # -- declarations -------------------------------------------------------
    def root_fns(self) -> list[ast.FnDecl]:
        return [i for i in self.root.items if isinstance(i, ast.FnDecl)] if self.root else []

    def all_fns(self) -> list[ast.FnDecl]:
        seen: list[ast.FnDecl] = []
        for m in self.modules:
            seen.extend(i for i in m.items if isinstance(i, ast.FnDecl))
        return seen

    def callee(self, call: ast.Call) -> ast.FnDecl | None:
        """The user fn or kernel a call names (None for builtins)."""
        if self.program is not None:
            sym = self._symbol(call) or self._symbol(call.callee)
            for attr in ("decl", "node"):
                d = getattr(sym, attr, None)
                if isinstance(d, ast.FnDecl):
                    return d
            if isinstance(sym, ast.FnDecl):
                return sym
        match call.callee:
            case ast.Name(ident=i):
                return self.fns.get(i.name)
            case ast.Path(segments=segs):
                return self.fns.get(segs[-1].name)

    # -- types --------------------------------------------------------------
    def kind_of(self, expr: ast.Expr) -> Kind | None:
        """The kind the type checker gives `expr`, or None when unknown."""
        if self.program is None:
            return None
        type_of = getattr(self.program, "type_of", None)
        if type_of is None:
            return None
        try:
            ty = type_of(expr)
        except Exception:  # NOTE: a missing entry is not our error to report
            return None
        if ty is None:
            return None
        k = _class_kind(ty)
        if k is Kind.REF:
            inner = getattr(ty, "inner", None)
            return Kind.REF if _class_kind(inner) is Kind.TENSOR else Kind.OTHER
        return k if k is not None else Kind.OTHER

    def binding_kind(self, pat: ast.NamePat) -> Kind | None:
        """The kind of the variable a `let` pattern binds, from its symbol's type."""
        if self.program is None:
            return None
        ty = getattr(self._symbol(pat), "ty", None)
        if ty is None:
            return None
        k = _class_kind(ty)
        if k is Kind.REF:
            return None  # a reference's target is what matters; not known from the type
        return k

    def instantiation(self, call: ast.Call) -> dict[str, int]:
        inst = getattr(self.program, "instantiations", None) if self.program else None
        if isinstance(inst, dict):
            v = inst.get(call)
            if isinstance(v, dict):
                return {k: x for k, x in v.items() if isinstance(x, int)}
        return {}

    def _symbol(self, node: object) -> object:
        sym_of = getattr(self.program, "symbol_of", None)
        if sym_of is None:
            return None
        try:
            return sym_of(node)
        except Exception:
            return None
