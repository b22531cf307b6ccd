# mypy: disable-error-code="no-any-return"
# (the Program is read duck-typed (it may be partially checked), so its fields are Any.)
"""Lowering: one `kernel fn` of a checked program + an instantiation -> `ir.Kernel`.

    lower_kernel(program, kernel_name, instantiation, arg_facts=None) -> ir.Kernel

- `program`: the type checker's `Program` (`tilelang.sema.program`). The
  lowering reads the kernel's and device functions' declarations, module
  constants and, where present, its side tables (literal types, call
  instantiations); it falls back to its own inference where a table has no
  entry, so it also works on a partially checked program.
- `instantiation`: const generic name -> int, type parameter name -> `DType`.
  Generics missing from it are inferred from `arg_facts`.
- `arg_facts`: tensor parameter name -> a fact object with `dtype`, `shape`
  (the run-time shape) and `tile` (a `&mut` partition's tile shape) - the host
  runtime's `ArgFact`. Only dtypes, ranks and tile shapes are used: the IR does
  not specialise on run-time sizes (they are not in the compile cache key).

What it does: const generics are substituted (every tile shape becomes ints);
device functions are inlined (their own generics inferred from the argument
shapes, or taken from `program.instantiations`); untyped literals take their
dtype from the other operand (as the checker settles them); scalars and
size-1 dims are broadcast with explicit `Broadcast` ops; `for`/`while` loops
turn the variables assigned in their bodies into loop-carried values; `if`
merges the variables its branches assign (and its value) into results; an
`if` on a compile-time condition lowers only the branch taken.
Compile-time integers (generics, `N / 4`, `x.partition([..])` shapes) fold in
Python with the wrapping and truncating rules of the IR. The builder runs with
CSE on: an identical pure op (constants, index arithmetic, `block_id` ...)
already defined in the current or an enclosing region is reused; loads never
are (a store may come between).

`break`/`continue` set flags (`%break`, `%continue`); a `for` whose body
may jump becomes a `while` over a carried counter that also stops on the
flag; an early `return` sets `%return` and assigns one result variable. After
a statement that may jump, the rest of its block runs under an `if` on the
flags, so the IR stays structured (no gotos for the backend to untangle).

The kernel is verified before it is returned. A construct the lowering does
not support yet (an early `return` of a tuple, a `let` without a value or a
scalar/tile type) is a
`TileError` E0701 located at the construct; anything else unexpected is an
`ICE`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilelang.diagnostics.codes.runtime import KERNEL_UNSUPPORTED
from tilelang.diagnostics.model import ICE, Diagnostic, TileError
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder, Frame
from tilelang.ir.verify import verify_kernel
from tilelang.source import Span
from tilelang.syntax import ast

I32 = DType.I32
BOOL = DType.BOOL


# ------------------------------------------------------------------ lowered values
@dataclass(frozen=True, slots=True)
class CVal:
    """A compile-time scalar: `dtype` None is an untyped literal (its dtype
    comes from the other operand, else i32 / f32)."""

    value: bool | int | float
    dtype: DType | None = None


@dataclass(frozen=True, slots=True)
class TensorRef:
    """A tensor parameter; `own` are the element offsets of a `&mut` param's
    own tile (None for `&` params)."""

    param: ir.TensorParam
    own: tuple[ir.Value, ...] | None


@dataclass(frozen=True, slots=True)
class ViewRef:
    """`x.partition([..])` inside a kernel: `tile` is the view's tile shape.
    `nested` views (of a `&mut` param) index tiles local to the own tile."""

    tensor: TensorRef
    tile: tuple[int, ...]
    nested: bool


@dataclass(frozen=True, slots=True)
class TupleVal:
    elems: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class ArrayVal:
    """`[a, b, c]`: a shape or a tile index."""

    elems: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class StrVal:
    value: str


UNIT = TupleVal(())

# Synthetic variables of the jump lowering; `%` keeps them apart from user names.
BRK, CONT, RET, RETV, ITER = "%break", "%continue", "%return", "%retval", "%iter"
LV = ir.Value | CVal | TensorRef | ViewRef | TupleVal | ArrayVal | StrVal

_BINOPS = {
    "+": ir.ElemOp.ADD, "-": ir.ElemOp.SUB, "*": ir.ElemOp.MUL, "/": ir.ElemOp.DIV,
    "%": ir.ElemOp.REM, "==": ir.ElemOp.EQ, "!=": ir.ElemOp.NE, "<": ir.ElemOp.LT,
    "<=": ir.ElemOp.LE, ">": ir.ElemOp.GT, ">=": ir.ElemOp.GE, "&": ir.ElemOp.AND,
    "|": ir.ElemOp.OR, "^": ir.ElemOp.XOR, "<<": ir.ElemOp.SHL, ">>": ir.ElemOp.SHR,
    "&&": ir.ElemOp.AND, "||": ir.ElemOp.OR,
}
_UNARY_MATH = {op.value: op for op in (
    ir.ElemOp.EXP, ir.ElemOp.EXP2, ir.ElemOp.LOG, ir.ElemOp.LOG2, ir.ElemOp.SQRT,
    ir.ElemOp.RSQRT, ir.ElemOp.ABS, ir.ElemOp.SIN, ir.ElemOp.COS, ir.ElemOp.TANH,
    ir.ElemOp.SIGMOID, ir.ElemOp.FLOOR, ir.ElemOp.CEIL)}
_REDUCE = {op.value: op for op in ir.ReduceOp}
_SCAN = {op.value: op for op in ir.ScanOp}

#: Built-in kernel operations this lowering implements, keyed like
#: `tilelang.intrinsics.signatures` (methods with a leading dot).
LOWERED_OPERATIONS = frozenset(
    {"block_id", "num_blocks", "zeros", "ones", "full", "arange", "fma", "maximum", "minimum",
     "where", "cumsum", "mma", "dot", "print", "assert", "atomic_add", "atomic_max",
     "store_unchecked", ".load", ".load_padded", ".store", ".load_like", ".num_tiles",
     ".partition", ".cumsum", ".reshape", ".broadcast", ".transpose", ".permute"}
    | set(_UNARY_MATH) | {"." + n for n in _UNARY_MATH}
    | set(_REDUCE) | {"." + n for n in _REDUCE}
)


class _Unsupported(Exception):
    def __init__(self, span: Span, what: str, help_: str = "") -> None:
        super().__init__(what)
        self.span = span
        self.what = what
        self.help = help_


def lower_kernel(program: Any, kernel_name: str, instantiation: Mapping[str, Any],
                 arg_facts: Mapping[str, Any] | None = None) -> ir.Kernel:
    """Lower one specialisation of kernel `kernel_name` (see the module docstring)."""
    decl = _find_fn(program, kernel_name, kernel=True)
    if decl is None:
        raise ICE(f"lower_kernel: no kernel `{kernel_name}` in the program")
    lw = _Lowerer(program, decl)
    try:
        kernel = lw.kernel(dict(instantiation), dict(arg_facts or {}))
    except _Unsupported as e:
        d = (Diagnostic.error(KERNEL_UNSUPPORTED, e.what)
             .primary(e.span, "not supported in a kernel yet")
             .secondary(decl.name.span, f"while compiling kernel `{decl.name.name}`"))
        if e.help:
            d = d.with_help(e.help)
        raise TileError(d) from None
    verify_kernel(kernel)
    return kernel


# ------------------------------------------------------------------ program access
def _modules(program: Any) -> list[Any]:
    mods = list(getattr(program, "modules", {}).values())
    root = getattr(program, "root", None)
    if root is not None and all(m is not root for m in mods):
        mods.insert(0, root)
    return mods


def _find_fn(program: Any, name: str, *, kernel: bool) -> ast.FnDecl | None:
    table = getattr(program, "kernels" if kernel else "functions", {}) or {}
    info = table.get(name)
    if info is not None:
        return info.decl
    short = name.rsplit("::", 1)[-1]
    for mod in _modules(program):
        for item in mod.ast.items:
            if isinstance(item, ast.FnDecl) and item.name.name == short and item.is_kernel == kernel:
                return item
    if not kernel:
        for qual, info in table.items():
            if qual.rsplit("::", 1)[-1] == short:
                return info.decl
    return None


def _find_const(program: Any, name: str) -> Any:
    consts = getattr(program, "consts", {}) or {}
    if name in consts:
        return consts[name]
    for qual, v in consts.items():
        if qual.rsplit("::", 1)[-1] == name:
            return v
    for mod in _modules(program):
        for item in mod.ast.items:
            if isinstance(item, ast.ConstDecl) and item.name.name == name:
                return item
    return None


# ------------------------------------------------------------------ the lowerer
class _Frame:
    """The lexical state of one function body being lowered (a kernel or an
    inlined device function)."""

    def __init__(self, generics: dict[str, int], type_params: dict[str, DType]) -> None:
        self.scopes: list[dict[str, Any]] = [{}]
        self.generics = generics
        self.type_params = type_params

    def lookup(self, name: str) -> dict[str, Any] | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope
        return None


class _Lowerer:
    def __init__(self, program: Any, decl: ast.FnDecl) -> None:
        self.program = program
        self.decl = decl
        self.b = Builder(decl.name.name, span=decl.span, cse=True)
        self.f = _Frame({}, {})
        self.tensors: dict[str, TensorRef] = {}
        self.inline_depth = 0

    # -------------------------------------------------------------- kernel
    def kernel(self, inst: dict[str, Any], facts: dict[str, Any]) -> ir.Kernel:
        decl = self.decl
        generics = {k: int(v) for k, v in inst.items() if isinstance(v, (int, np.integer))}
        tparams = {k: v for k, v in inst.items() if isinstance(v, DType)}
        self._infer_from_facts(decl, generics, tparams, facts)
        self.f = _Frame(generics, tparams)
        missing = [g.name.name for g in decl.generics
                   if g.is_const and g.name.name not in generics]
        if missing:
            raise ICE(f"lower_kernel: no value for const generic(s) {', '.join(missing)} "
                      f"of `{decl.name.name}`")
        mut_ranks: list[int] = []
        pending_own: list[ir.TensorParam] = []
        for p in decl.params:
            ty = p.ty
            if isinstance(ty, ast.RefType):
                dtype, dims = self._tensor_type(ty.inner)
                if ty.mutable:
                    tile = tuple(self._need_int(d, p.span) for d in dims)
                    tp = self.b.tensor_param(p.name.name, dtype, len(dims), mutable=True,
                                             tile_shape=tile, span=p.span)
                    mut_ranks.append(len(dims))
                    pending_own.append(tp)
                else:
                    sdims = tuple(None if d is None else self._need_int(d, p.span) for d in dims)
                    tp = self.b.tensor_param(p.name.name, dtype, len(dims), dims=sdims, span=p.span)
                    self.tensors[tp.name] = TensorRef(tp, None)
                self.f.scopes[0][p.name.name] = self.tensors.get(tp.name, tp)
            else:
                dtype = self._dtype(ty)
                v = self.b.scalar_param(p.name.name, dtype, span=p.span)
                self.f.scopes[0][p.name.name] = v
        if any(r > 3 for r in mut_ranks):
            raise _Unsupported(decl.span, "a `&mut` tensor parameter of rank above 3",
                               "the grid has at most 3 axes; reshape the tensor on the host")
        self.grid_rank = max([1, *mut_ranks])
        # Own-tile offsets are computed once at entry so every region can use them.
        for tp in pending_own:
            assert tp.tile_shape is not None
            offs = tuple(self.b.block_id(d) if t == 1 else
                         self.b.mul(self.b.block_id(d), self.b.const(t, I32), hint=f"{tp.name}_off{d}")
                         for d, t in enumerate(tp.tile_shape))
            ref = TensorRef(tp, offs)
            self.tensors[tp.name] = ref
            self.f.scopes[0][tp.name] = ref
        if RET in _jumps([decl.body]):
            self.f.scopes[0][RET] = CVal(False, BOOL)
        self.block(decl.body)
        hints = self._hints(decl)
        return self.b.finish(grid_rank=self.grid_rank, num_warps=hints.get("num_warps", 4),
                             num_stages=hints.get("stages", hints.get("num_stages", 2)),
                             instantiation=list(generics.items()))

    def _infer_from_facts(self, decl: ast.FnDecl, generics: dict[str, int],
                          tparams: dict[str, DType], facts: dict[str, Any]) -> None:
        names = {g.name.name for g in decl.generics}
        for p in decl.params:
            fact = facts.get(p.name.name)
            ty = p.ty
            if fact is None or not isinstance(ty, ast.RefType):
                continue
            inner = ty.inner
            if not (isinstance(inner, ast.NamedType) and len(inner.args) == 2):
                continue
            dt, shape = inner.args
            if isinstance(dt, ast.NamedType) and dt.name.name in names and dt.name.name not in tparams:
                tparams[dt.name.name] = fact.dtype
            if not isinstance(shape, ast.ShapeType):
                continue
            source = fact.tile if ty.mutable else fact.shape
            if source is None:
                continue
            for d, e in zip(shape.dims, source, strict=False):
                if isinstance(d, ast.Name) and d.ident.name in names and d.ident.name not in generics:
                    generics[d.ident.name] = int(e)

    def _hints(self, decl: ast.FnDecl) -> dict[str, int]:
        out: dict[str, int] = {}
        for attr in decl.attrs:
            if attr.name.name != "hints":
                continue
            for a in attr.args:
                if a.name is not None:
                    v = self.expr(a.value)
                    if isinstance(v, CVal) and isinstance(v.value, int):
                        out[a.name.name] = int(v.value)
        return out

    # -------------------------------------------------------------- types
    def _dtype(self, ty: ast.TypeExpr | ast.Expr) -> DType:
        if isinstance(ty, ast.NamedType) and not ty.args:
            name = ty.name.name
        elif isinstance(ty, ast.Name):
            name = ty.ident.name
        else:
            raise _Unsupported(ty.span, "this type is not a scalar element type here")
        if name in self.f.type_params:
            return self.f.type_params[name]
        dt = DType.parse(name)
        if dt is None:
            raise _Unsupported(ty.span, f"unknown element type `{name}`")
        return dt

    def _tensor_type(self, ty: ast.TypeExpr) -> tuple[DType, tuple[ast.Expr | None, ...]]:
        if (isinstance(ty, ast.NamedType) and ty.name.name in ("Tensor", "Tile")
                and len(ty.args) == 2 and isinstance(ty.args[1], ast.ShapeType)):
            return self._dtype(ty.args[0]), ty.args[1].dims
        raise _Unsupported(ty.span, "a kernel parameter must be a scalar, `&Tensor` or `&mut Tensor`")

    def _need_int(self, e: ast.Expr | None, span: Span) -> int:
        if e is None:
            raise _Unsupported(span, "a `?` dimension where a compile-time size is needed")
        v = self.expr(e)
        if isinstance(v, CVal) and isinstance(v.value, int) and not isinstance(v.value, bool):
            return int(v.value)
        raise _Unsupported(e.span, "this must be a compile-time integer")

    # -------------------------------------------------------------- helpers
    def mat(self, v: Any, dtype: DType | None = None, span: Span | None = None) -> ir.Value:
        """Materialise a scalar/tile value (a CVal becomes a `Const`)."""
        if isinstance(v, ir.Value):
            if dtype is not None and v.dtype is not dtype:
                return self.b.cast(v, dtype, span=span)
            return v
        if isinstance(v, CVal):
            dt = dtype or v.dtype or _default_dtype(v.value)
            return self.b.const(_convert_const(v.value, dt), dt, span=span)
        raise _Unsupported(span or self.decl.span, "expected a scalar or tile value here")

    def to_shape(self, v: ir.Value, shape: tuple[int, ...], span: Span | None = None) -> ir.Value:
        if v.shape == shape:
            return v
        if v.type.rank <= len(shape) and all(
                s == 1 or s == d for s, d in zip(reversed(v.shape), reversed(shape), strict=False)):
            return self.b.broadcast(v, shape, span=span)
        raise _Unsupported(span or self.decl.span,
                           f"cannot broadcast {list(v.shape)} to {list(shape)}")

    def as_index(self, v: Any, span: Span) -> ir.Value:
        x = self.mat(v, None, span)
        if not x.type.is_scalar or not x.dtype.is_int:
            raise _Unsupported(span, "an index must be an integer scalar")
        return x if x.dtype is I32 else self.b.cast(x, I32, span=span)

    def ints(self, v: Any, span: Span) -> tuple[int, ...]:
        if isinstance(v, ArrayVal):
            out = []
            for e in v.elems:
                if not (isinstance(e, CVal) and isinstance(e.value, int)):
                    raise _Unsupported(span, "a shape must be compile-time integers")
                out.append(int(e.value))
            return tuple(out)
        raise _Unsupported(span, "expected a shape `[..]`")

    def const_int(self, v: Any, span: Span) -> int:
        if isinstance(v, CVal) and isinstance(v.value, int) and not isinstance(v.value, bool):
            return int(v.value)
        raise _Unsupported(span, "this must be a compile-time integer")

    def unify(self, xs: Sequence[Any], span: Span) -> list[ir.Value]:
        """Materialise operands to one dtype (the first non-literal's) and one
        broadcast shape, as the checker types them."""
        dtype = None
        for x in xs:
            if isinstance(x, ir.Value):
                dtype = x.dtype
                break
        if dtype is None:
            for x in xs:
                if isinstance(x, CVal) and x.dtype is not None:
                    dtype = x.dtype
                    break
        vals = [self.mat(x, dtype if not isinstance(x, ir.Value) else None, span) for x in xs]
        shape = _broadcast_shapes([v.shape for v in vals], span)
        return [self.to_shape(v, shape, span) for v in vals]

    # -------------------------------------------------------------- statements
    def block(self, blk: ast.Block) -> Any:
        self.f.scopes.append({})
        try:
            return self.seq(blk.stmts, blk.tail)
        finally:
            self.f.scopes.pop()

    def seq(self, stmts: Sequence[ast.Stmt], tail: ast.Expr | None) -> Any:
        """Lower statements in order; after one that may `break`, `continue` or
        `return`, the rest runs under `if` the flags say execution goes on."""
        for i, st in enumerate(stmts):
            self.stmt(st)
            rest = stmts[i + 1:]
            if not _jumps([st]) or (not rest and tail is None):
                continue
            go = self._running()
            if isinstance(go, CVal):
                if not go.value:
                    return UNIT  # an unconditional jump: the rest is dead code
                continue
            span = rest[0].span if rest else tail.span  # type: ignore[union-attr]

            def then_fn(rest: Sequence[ast.Stmt] = rest) -> Any:
                self.f.scopes.append({})
                try:
                    return self.seq(rest, tail)
                finally:
                    self.f.scopes.pop()

            return self._lower_if(go, then_fn, lambda: UNIT, [*rest, tail], span)
        return self.expr(tail) if tail is not None else UNIT

    def _flag(self, name: str) -> Any:
        scope = self.f.lookup(name)
        return None if scope is None else scope[name]

    def _running(self) -> CVal | ir.Value:
        """False once a `break`, `continue` or `return` flag in scope is set."""
        stop: ir.Value | None = None
        for name in (BRK, CONT, RET):
            v = self._flag(name)
            if v is None or (isinstance(v, CVal) and not v.value):
                continue
            if isinstance(v, CVal):
                return CVal(False, BOOL)
            stop = v if stop is None else self.b.elementwise(ir.ElemOp.OR, stop, v)
        if stop is None:
            return CVal(True, BOOL)
        return self.b.elementwise(ir.ElemOp.NOT, stop)

    def _and_not_flags(self, c: ir.Value, names: Sequence[str], span: Span) -> ir.Value:
        for name in names:
            v = self._flag(name)
            if v is None or (isinstance(v, CVal) and not v.value):
                continue
            if isinstance(v, CVal):
                return self.b.const(False, BOOL, span=span)
            c = self.b.elementwise(ir.ElemOp.AND, c, self.b.elementwise(ir.ElemOp.NOT, v, span=span),
                                   span=span)
        return c

    def stmt(self, st: ast.Stmt) -> None:
        match st:
            case ast.Let(pattern=pat, ty=ty, value=val):
                if val is None:
                    # `let x: T;` is assigned before it is read (the checker
                    # makes sure): any value of T will do until then
                    self.bind(pat, self._zero_of(ty, st.span))
                    return
                v = self.expr(val)
                if ty is not None and isinstance(v, CVal):
                    v = CVal(_convert_const(v.value, self._dtype(ty)), self._dtype(ty))
                elif isinstance(v, CVal) and v.dtype is None and _is_mut(pat):
                    v = CVal(v.value, self._binding_dtype(pat, v))
                self.bind(pat, v)
            case ast.Assign(target=tgt, op=op, value=val):
                if not isinstance(tgt, ast.Name):
                    raise _Unsupported(tgt.span, "assignment to anything but a variable")
                scope = self.f.lookup(tgt.ident.name)
                if scope is None:
                    raise ICE(f"assignment to unknown `{tgt.ident.name}`")
                v = self.expr(val)
                if op != "=":
                    v = self.binary(op[:-1], scope[tgt.ident.name], v, st.span)
                old = scope[tgt.ident.name]
                if isinstance(old, ir.Value) and isinstance(v, CVal):
                    v = self.to_shape(self.mat(v, old.dtype, st.span), old.shape, st.span)
                elif isinstance(old, CVal) and isinstance(v, CVal) and old.dtype and not v.dtype:
                    v = CVal(_convert_const(v.value, old.dtype), old.dtype)
                scope[tgt.ident.name] = v
            case ast.ExprStmt(expr=e):
                self.expr(e)
            case ast.For():
                self.for_loop(st)
            case ast.While():
                self.while_loop(st)
            case ast.Return(value=val):
                scope = self.f.lookup(RET)
                if scope is None:
                    raise ICE("lowering: `return` without a return flag in scope")
                if val is not None:
                    v = self.expr(val)
                    rscope = self.f.lookup(RETV)
                    if rscope is not None:
                        old = rscope[RETV]
                        if isinstance(old, ir.Value) and isinstance(v, (ir.Value, CVal)):
                            v = self.to_shape(self.mat(v, old.dtype, st.span), old.shape, st.span)
                        rscope[RETV] = v
                scope[RET] = CVal(True, BOOL)
            case ast.Break() | ast.Continue():
                flag = BRK if isinstance(st, ast.Break) else CONT
                scope = self.f.lookup(flag)
                if scope is None:
                    raise ICE(f"lowering: `{flag[1:]}` outside a loop")
                scope[flag] = CVal(True, BOOL)
            case _:
                raise ICE(f"lowering: unexpected statement {type(st).__name__}")

    def _zero_of(self, ty: ast.TypeExpr | None, span: Span) -> Any:
        if isinstance(ty, ast.NamedType) and ty.name.name == "Tile":
            dtype, dims = self._tensor_type(ty)
            shape = tuple(self._need_int(d, span) for d in dims)
            return self.b.const(False if dtype is BOOL else 0, dtype, shape, span=span)
        if isinstance(ty, ast.NamedType) and not ty.args:
            dtype = self._dtype(ty)
            return CVal(False if dtype is BOOL else 0, dtype)
        raise _Unsupported(span, "a `let` without a value or a scalar or tile type",
                           "give the variable its initial value")

    def _binding_dtype(self, pat: ast.Pattern, v: CVal) -> DType:
        sym = _symbol(self.program, pat)
        ty = getattr(sym, "ty", None)
        dt = getattr(ty, "dtype", None)
        if isinstance(dt, DType):
            return dt
        return _default_dtype(v.value)

    def bind(self, pat: ast.Pattern, v: Any) -> None:
        match pat:
            case ast.NamePat(name=n):
                if isinstance(v, ir.Value):
                    v = self.b.name_last(v, n.name)
                self.f.scopes[-1][n.name] = v
            case ast.WildcardPat():
                pass
            case ast.TuplePat(elems=elems):
                if not isinstance(v, TupleVal) or len(v.elems) != len(elems):
                    raise _Unsupported(pat.span, "tuple pattern does not match the value")
                for p, x in zip(elems, v.elems, strict=True):
                    self.bind(p, x)
            case _:
                raise ICE(f"lowering: unexpected pattern {type(pat).__name__}")

    # -------------------------------------------------------------- control flow
    def _carried(self, body: ast.Block | Sequence[Any], extra: Sequence[str] = ()
                 ) -> list[tuple[dict[str, Any], str]]:
        out: list[tuple[dict[str, Any], str]] = []
        seen: set[str] = set()
        for name in [*_assigned_names(body), *extra]:
            if name in seen:
                continue
            seen.add(name)
            scope = self.f.lookup(name)
            if scope is not None and isinstance(scope[name], (ir.Value, CVal)):
                out.append((scope, name))
        return out

    def _carry_inits(self, carried: list[tuple[dict[str, Any], str]], span: Span) -> list[ir.Value]:
        inits = []
        for scope, name in carried:
            v = self.mat(scope[name], None, span)
            scope[name] = v
            inits.append(v)
        return inits

    def _yield_carried(self, carried: list[tuple[dict[str, Any], str]],
                       types: Sequence[ir.Type], span: Span) -> None:
        out = []
        for (scope, name), ty in zip(carried, types, strict=True):
            v = self.mat(scope[name], ty.dtype, span)
            out.append(self.to_shape(v, ty.shape, span))
        self.b.yield_(*out, span=span)

    def for_loop(self, st: ast.For) -> None:
        rng = st.iter
        if not isinstance(rng, ast.RangeExpr):
            raise _Unsupported(st.iter.span, "a kernel `for` loop must range over `a..b`")
        lo_v, hi_v = self.expr(rng.start), self.expr(rng.end)
        dt = next((x.dtype for x in (lo_v, hi_v) if isinstance(x, ir.Value)), None) or \
            next((x.dtype for x in (lo_v, hi_v) if isinstance(x, CVal) and x.dtype), None) or I32
        lo = self.mat(lo_v, dt, rng.span)
        hi = self.mat(hi_v, dt, rng.span)
        if rng.inclusive:
            hi = self.b.add(hi, self.b.const(1, dt), span=rng.span)
        if _jumps([st.body]) & {BRK, CONT, RET}:
            self._for_as_while(st, lo, hi)
            return
        step = self.b.const(1, dt, span=rng.span)
        carried = self._carried(st.body)
        inits = self._carry_inits(carried, st.span)
        iv = self.b.fresh(lo.type, _pat_name(st.pattern) or "i")
        args = [self.b.fresh(v.type, name) for v, (_, name) in zip(inits, carried, strict=True)]
        frame = self.b.open_region((iv, *args))
        for (scope, name), a in zip(carried, args, strict=True):
            scope[name] = a
        self.f.scopes.append({})
        self.bind(st.pattern, iv)
        self.block(st.body)
        self.f.scopes.pop()
        self._yield_carried(carried, [v.type for v in inits], st.span)
        region = self.b.close_region(frame)
        results = tuple(self.b.fresh(v.type, name) for v, (_, name) in zip(inits, carried, strict=True))
        self.b.emit(ir.For(results, lo, hi, step, tuple(inits), region, st.span))
        for (scope, name), r in zip(carried, results, strict=True):
            scope[name] = r

    def _for_as_while(self, st: ast.For, lo: ir.Value, hi: ir.Value) -> None:
        """A `for` whose body may `break`, `continue` or `return`: a `while` over
        a carried counter that stops when the break (or return) flag is set."""
        sp = st.span
        self.f.scopes.append({ITER: lo, BRK: CVal(False, BOOL)})

        def cond_fn() -> ir.Value:
            c = self.b.lt(self._flag(ITER), hi, span=sp)
            return self._and_not_flags(c, (BRK, RET), sp)

        def body_fn() -> None:
            self.f.scopes.append({CONT: CVal(False, BOOL)})
            scope = self.f.lookup(ITER)
            assert scope is not None
            i = scope[ITER]
            self.bind(st.pattern, i)
            # advance first, so `continue` cannot skip the increment
            scope[ITER] = self.b.add(i, self.b.const(1, i.dtype, span=sp), span=sp)
            self.block(st.body)
            self.f.scopes.pop()

        self._while(cond_fn, body_fn, [st.body], [ITER, BRK], sp)
        self.f.scopes.pop()

    def while_loop(self, st: ast.While) -> None:
        sp = st.span
        jumps = bool(_jumps([st.body]) & {BRK, CONT, RET})
        if jumps:
            self.f.scopes.append({BRK: CVal(False, BOOL)})

        def cond_fn() -> ir.Value:
            c = self.mat(self.expr(st.cond), BOOL, st.cond.span)
            if c.shape != ():
                raise _Unsupported(st.cond.span, "a `while` condition must be a bool scalar")
            return self._and_not_flags(c, (BRK, RET), sp) if jumps else c

        def body_fn() -> None:
            if jumps:
                self.f.scopes.append({CONT: CVal(False, BOOL)})
            self.block(st.body)
            if jumps:
                self.f.scopes.pop()

        self._while(cond_fn, body_fn, [st.cond, st.body], [BRK] if jumps else [], sp)
        if jumps:
            self.f.scopes.pop()

    def _while(self, cond_fn: Any, body_fn: Any, nodes: Sequence[Any], extra: Sequence[str],
               span: Span) -> None:
        carried = self._carried(nodes, extra)
        inits = self._carry_inits(carried, span)
        names = [name for _, name in carried]
        cargs = [self.b.fresh(v.type, _hint(n)) for v, n in zip(inits, names, strict=True)]
        cframe = self.b.open_region(cargs)
        for (scope, name), a in zip(carried, cargs, strict=True):
            scope[name] = a
        self.b.yield_(cond_fn(), span=span)
        cregion = self.b.close_region(cframe)
        bargs = [self.b.fresh(v.type, _hint(n)) for v, n in zip(inits, names, strict=True)]
        bframe = self.b.open_region(bargs)
        for (scope, name), a in zip(carried, bargs, strict=True):
            scope[name] = a
        body_fn()
        self._yield_carried(carried, [v.type for v in inits], span)
        bregion = self.b.close_region(bframe)
        results = tuple(self.b.fresh(v.type, _hint(n)) for v, n in zip(inits, names, strict=True))
        self.b.emit(ir.While(results, tuple(inits), cregion, bregion, span))
        for (scope, name), r in zip(carried, results, strict=True):
            scope[name] = r

    def if_expr(self, e: ast.If) -> Any:
        cond = self.expr(e.cond)
        if isinstance(cond, CVal):
            if cond.value:
                return self.block(e.then)
            if e.else_ is None:
                return UNIT
            return self.block(e.else_) if isinstance(e.else_, ast.Block) else self.if_expr(e.else_)
        c = self.mat(cond, BOOL, e.cond.span)
        if c.shape != ():
            raise _Unsupported(e.cond.span, "an `if` condition must be a bool scalar",
                               "use `where(cond, a, b)` to select between tiles")
        def then_fn() -> Any:
            return self.block(e.then)

        def else_fn() -> Any:
            if e.else_ is None:
                return UNIT
            return self.block(e.else_) if isinstance(e.else_, ast.Block) else self.if_expr(e.else_)

        return self._lower_if(c, then_fn, else_fn, [e.then, e.else_], e.span)

    def _lower_if(self, c: ir.Value, then_fn: Any, else_fn: Any, nodes: Sequence[Any],
                  span: Span) -> Any:
        """An `If` op whose branches are lowered by `then_fn`/`else_fn`; its
        results are the branches' value (when both give one) and every
        variable they changed (found among the names `nodes` assign)."""
        carried = self._carried([n for n in nodes if n is not None])
        before = [scope[name] for scope, name in carried]

        def branch(fn: Any) -> tuple[Frame, Any, list[Any]]:
            frame = self.b.open_region(())
            val = fn()
            self.b.close_region(frame)
            after = [scope[name] for scope, name in carried]
            for (scope, name), old in zip(carried, before, strict=True):
                scope[name] = old
            return frame, val, after

        tframe, tval, tafter = branch(then_fn)
        eframe, eval_, eafter = branch(else_fn)
        # Merge: the if's value (when both branches give a scalar/tile), then
        # every variable a branch changed.
        pairs: list[tuple[Any, Any]] = []
        tleaves, eleaves = _leaves(tval), _leaves(eval_)
        has_value = tleaves is not None and eleaves is not None and len(tleaves) == len(eleaves) \
            and _same_structure(tval, eval_)
        if has_value:
            pairs.extend(zip(tleaves, eleaves, strict=True))  # type: ignore[arg-type]
        changed = []
        for i, (old, t, f) in enumerate(zip(before, tafter, eafter, strict=True)):
            if t is old and f is old:
                continue
            changed.append(i)
            pairs.append((t, f))
        types = []
        for t, f in pairs:
            dtype = next((x.dtype for x in (t, f) if isinstance(x, ir.Value)), None) or \
                next((x.dtype for x in (t, f) if isinstance(x, CVal) and x.dtype), None)
            if dtype is None:
                dtype = _default_dtype(t.value if isinstance(t, CVal) else f.value)
            shape = _broadcast_shapes([x.shape if isinstance(x, ir.Value) else () for x in (t, f)],
                                      span)
            types.append(ir.Type(dtype, shape))
        for frame, idx in ((tframe, 0), (eframe, 1)):
            self.b.reopen(frame)
            vals = []
            for pair, ty in zip(pairs, types, strict=True):
                v = self.mat(pair[idx], ty.dtype, span)
                vals.append(self.to_shape(v, ty.shape, span))
            self.b.yield_(*vals, span=span)
            self.b.close_region(frame)
        results = tuple(self.b.fresh(t) for t in types)
        self.b.emit(ir.If(results, c, tframe.region(), eframe.region(), span))
        k = len(tleaves) if has_value else 0  # type: ignore[arg-type]
        for i, r in zip(changed, results[k:], strict=True):
            scope, name = carried[i]
            scope[name] = r
        if not has_value:
            return UNIT
        return _rebuild(tval, list(results[:k]))

    # -------------------------------------------------------------- expressions
    def expr(self, e: ast.Expr) -> Any:
        match e:
            case ast.IntLit(value=v, suffix=s):
                dt = DType.parse(s) if s else _literal_dtype(self.program, e)
                return CVal(_convert_const(v, dt) if dt else v, dt)
            case ast.FloatLit(value=v, suffix=s):
                dt = DType.parse(s) if s else _literal_dtype(self.program, e)
                return CVal(float(v), dt)
            case ast.BoolLit(value=v):
                return CVal(bool(v), BOOL)
            case ast.StrLit(value=v):
                return StrVal(v)
            case ast.Name(ident=ident):
                return self.name(ident.name, e)
            case ast.Path(segments=segs):
                return self.name(segs[-1].name, e)
            case ast.Binary(op=op, lhs=lhs, rhs=rhs):
                return self.binary(op, self.expr(lhs), self.expr(rhs), e.span)
            case ast.Unary(op=op, operand=x):
                return self.unary(op, self.expr(x), e.span)
            case ast.Cast(expr=x, ty=ty):
                return self.cast(self.expr(x), self._dtype(ty), e.span)
            case ast.Ref(expr=x):
                return self.expr(x)
            case ast.TupleExpr(elems=elems):
                return TupleVal(tuple(self.expr(x) for x in elems))
            case ast.ArrayExpr(elems=elems):
                return ArrayVal(tuple(self.expr(x) for x in elems))
            case ast.Field(receiver=r, field=fld):
                v = self.expr(r)
                if isinstance(v, (TupleVal, ArrayVal)) and fld.name.isdigit():
                    return v.elems[int(fld.name)]
                raise _Unsupported(e.span, "field access on this value")
            case ast.Index(receiver=r, index=i):
                v, idx = self.expr(r), self.expr(i)
                if isinstance(v, (TupleVal, ArrayVal)):
                    return v.elems[self.const_int(idx, i.span)]
                raise _Unsupported(e.span, "indexing this value")
            case ast.Block():
                return self.block(e)
            case ast.UnsafeBlock(body=body):
                return self.block(body)
            case ast.If():
                return self.if_expr(e)
            case ast.Call():
                return self.call(e)
            case ast.MethodCall():
                return self.method(e)
            case ast.RangeExpr() | ast.GraphBlock():
                raise _Unsupported(e.span, "this expression inside a kernel")
            case _:
                raise ICE(f"lowering: unexpected expression {type(e).__name__}")

    def name(self, name: str, node: ast.Expr) -> Any:
        scope = self.f.lookup(name)
        if scope is not None:
            return scope[name]
        if name in self.f.generics:
            return CVal(self.f.generics[name], I32)
        if name in self.tensors:
            return self.tensors[name]
        const = _find_const(self.program, name)
        if const is not None:
            if isinstance(const, ast.ConstDecl):
                v = self.expr(const.value)
                if const.ty is not None and isinstance(v, CVal):
                    dt = self._dtype(const.ty)
                    v = CVal(_convert_const(v.value, dt), dt)
                return v
            sym = _symbol(self.program, node)
            sdt = getattr(getattr(sym, "ty", None), "dtype", None)
            return CVal(const, sdt if isinstance(sdt, DType) else None)
        raise ICE(f"lowering: unknown name `{name}`")

    def binary(self, op: str, a: Any, b: Any, span: Span) -> Any:
        if isinstance(a, CVal) and isinstance(b, CVal):
            folded = _fold_binary(op, a, b)
            if folded is not None:
                return folded
        if op not in _BINOPS:
            raise ICE(f"lowering: unknown operator {op}")
        same = _int_identity(op, a, b)
        if same is not None:
            return same
        x, y = self.unify([a, b], span)
        return self.b.elementwise(_BINOPS[op], x, y, span=span)

    def unary(self, op: str, a: Any, span: Span) -> Any:
        if isinstance(a, CVal):
            if op == "-" and not isinstance(a.value, bool):
                return CVal(_convert_const(-a.value, a.dtype) if a.dtype else -a.value, a.dtype)
            if op == "!":
                if isinstance(a.value, bool):
                    return CVal(not a.value, BOOL)
                return CVal(_convert_const(~int(a.value), a.dtype or I32), a.dtype)
        x = self.mat(a, None, span)
        return self.b.elementwise(ir.ElemOp.NEG if op == "-" else ir.ElemOp.NOT, x, span=span)

    def cast(self, v: Any, dt: DType, span: Span) -> Any:
        if isinstance(v, CVal):
            return CVal(_convert_const(v.value, dt), dt)
        x = self.mat(v, None, span)
        return x if x.dtype is dt else self.b.cast(x, dt, span=span)

    # -------------------------------------------------------------- calls
    def _args(self, args: tuple[ast.Arg, ...]) -> list[Any]:
        return [self.expr(a.value) for a in args]

    def _turbofish_dtype(self, call: ast.Call | ast.MethodCall, default: DType | None) -> DType:
        if call.generics:
            return self._dtype(call.generics[0])
        ty = _program_type(self.program, call)
        dt = getattr(ty, "dtype", None)
        if isinstance(dt, DType):
            return dt
        if default is None:
            raise _Unsupported(call.span, "cannot tell the element type here",
                               "give it with a turbofish, e.g. `zeros::<f32>([..])`")
        return default

    def call(self, e: ast.Call) -> Any:
        callee = e.callee
        name = callee.ident.name if isinstance(callee, ast.Name) else callee.segments[-1].name
        sym = _symbol(self.program, e)
        kind = getattr(getattr(sym, "kind", None), "value", None)
        local = isinstance(callee, ast.Name) and self.f.lookup(name) is not None
        if not local and kind in ("fn", "kernel"):
            qual = getattr(sym, "qualname", None) or name
            decl = _find_fn(self.program, qual, kernel=False)
            if decl is not None:
                return self.inline(decl, e)
        if not local and kind is None:
            decl = _find_fn(self.program, name, kernel=False)
            if decl is not None and name not in _BUILTIN_NAMES:
                return self.inline(decl, e)
        return self.builtin(name, e)

    def builtin(self, name: str, e: ast.Call) -> Any:
        sp = e.span
        args = e.args
        if name in ("print", "assert"):
            vals = self._args(args)
            return self.print_(vals, sp) if name == "print" else self.device_assert(vals, e)
        vals = self._args(args)
        if name in ("block_id", "num_blocks"):
            axis = self.const_int(vals[0], sp)
            if not 0 <= axis < 3:
                raise _Unsupported(sp, f"grid axis {axis} (the grid has axes 0, 1 and 2)")
            self.grid_rank = max(self.grid_rank, axis + 1)
            return self.b.block_id(axis, span=sp) if name == "block_id" else \
                self.b.num_blocks(axis, span=sp)
        if name in ("zeros", "ones", "full"):
            shape = self.ints(vals[0], sp)
            dt = self._turbofish_dtype(e, None if name == "full" else DType.F32)
            if name == "full":
                fill = vals[1]
                if isinstance(fill, CVal):
                    return self.b.const(_convert_const(fill.value, dt), dt, shape, span=sp)
                return self.to_shape(self.mat(fill, dt, sp), shape, sp)
            return self.b.const(0 if name == "zeros" else 1, dt, shape, span=sp) if dt.is_int or \
                dt is BOOL else self.b.const(0.0 if name == "zeros" else 1.0, dt, shape, span=sp)
        if name == "arange":
            n = self.const_int(vals[0], sp)
            return self.b.arange(n, self._turbofish_dtype(e, I32), span=sp)
        if name in _UNARY_MATH:
            return self.b.elementwise(_UNARY_MATH[name], self._float_operand(vals[0], sp), span=sp)
        if name in ("maximum", "minimum"):
            x, y = self.unify(vals, sp)
            return self.b.elementwise(ir.ElemOp(name), x, y, span=sp)
        if name == "fma":
            x, y, z = self.unify(vals, sp)
            return self.b.elementwise(ir.ElemOp.FMA, x, y, z, span=sp)
        if name == "where":
            c = self.mat(vals[0], BOOL, sp)
            x, y = self.unify(vals[1:], sp)
            shape = _broadcast_shapes([c.shape, x.shape], sp)
            return self.b.elementwise(ir.ElemOp.WHERE, self.to_shape(c, shape, sp),
                                      self.to_shape(x, shape, sp), self.to_shape(y, shape, sp),
                                      span=sp)
        if name in _REDUCE:
            return self.reduce(name, vals[0], vals[1] if len(vals) > 1 else None, sp)
        if name in _SCAN:
            return self.scan(name, vals[0], vals[1] if len(vals) > 1 else CVal(0), sp)
        if name in ("mma", "dot"):
            a = self.mat(vals[0], None, sp)
            bb = self.mat(vals[1], None, sp)
            if name == "mma":
                acc = self.mat(vals[2], None, sp)
            else:
                acc_dt = DType.F32 if a.dtype in (DType.F16, DType.BF16) else a.dtype
                if a.type.rank != 2 or bb.type.rank != 2:
                    raise _Unsupported(sp, "`dot` of tiles that are not 2-D")
                acc = self.b.const(0.0 if acc_dt.is_float else 0, acc_dt,
                                   (a.shape[0], bb.shape[1]), span=sp)
            return self.b.mma(a, bb, acc, span=sp)
        if name in ("atomic_add", "atomic_max", "atomic_min"):
            return self.atomic(ir.AtomicOp(name), vals, sp)
        if name == "store_unchecked":
            t = self._tensor(vals[0], sp)
            offs = self._index_list(vals[1], sp)
            tile = self.mat(vals[2], t.param.dtype, sp)
            if tile.type.rank != t.param.rank:
                tile = self.b.reshape(tile, (1,) * (t.param.rank - tile.type.rank) + tile.shape, span=sp) \
                    if tile.type.rank < t.param.rank else tile
            self.b.store(t.param.name, offs, tile, span=sp)
            return UNIT
        raise _Unsupported(sp, f"`{name}` inside a kernel")

    def _float_operand(self, v: Any, span: Span) -> ir.Value:
        if isinstance(v, CVal) and v.dtype is None:
            return self.mat(CVal(float(v.value), DType.F32), None, span)
        return self.mat(v, None, span)

    def _tensor(self, v: Any, span: Span) -> TensorRef:
        if isinstance(v, TensorRef):
            return v
        raise _Unsupported(span, "expected a tensor parameter")

    def _index_list(self, v: Any, span: Span) -> tuple[ir.Value, ...]:
        if isinstance(v, ArrayVal):
            return tuple(self.as_index(x, span) for x in v.elems)
        return (self.as_index(v, span),)

    def reduce(self, name: str, x: Any, axis: Any, span: Span) -> ir.Value:
        v = self.mat(x, None, span)
        if v.dtype is BOOL:
            v = self.b.cast(v, I32, span=span)
        if axis is None:
            # no axis: over every element (a scalar result); argmax/argmin give
            # the row-major flat index
            if v.type.rank > 1:
                v = self.b.reshape(v, (v.type.numel,), span=span)
            if v.type.rank == 0:
                return v
            return self.b.reduce(_REDUCE[name], v, 0, span=span)
        a = self.const_int(axis, span)
        if a < 0:
            a += v.type.rank
        return self.b.reduce(_REDUCE[name], v, a, span=span)

    def scan(self, name: str, x: Any, axis: Any, span: Span) -> ir.Value:
        v = self.mat(x, None, span)
        a = self.const_int(axis, span)
        if a < 0:
            a += v.type.rank
        return self.b.scan(_SCAN[name], v, a, span=span)

    def atomic(self, op: ir.AtomicOp, vals: list[Any], span: Span) -> Any:
        t = self._tensor(vals[0], span)
        origin = self._index_list(vals[1], span)
        rank = t.param.rank
        if len(origin) != rank:
            raise _Unsupported(span, f"{len(origin)} indices for a rank-{rank} tensor")
        v = self.mat(vals[2], t.param.dtype, span)
        if v.type.is_scalar:
            self.b.atomic(op, t.param.name, origin, v, span=span)
            return UNIT
        # A tile value lands at `origin + position`: per-element index tiles.
        if v.type.rank < rank:
            v = self.b.reshape(v, (1,) * (rank - v.type.rank) + v.shape, span=span)
        idx = []
        for d in range(rank):
            idx.append(self.b.add(self.to_shape(origin[d], v.shape, span),
                                  self.iota(v.shape, d, span), span=span))
        self.b.atomic(op, t.param.name, idx, v, span=span)
        return UNIT

    def iota(self, shape: tuple[int, ...], axis: int, span: Span) -> ir.Value:
        """An i32 tile of `shape` holding each element's index along `axis`."""
        r = self.b.arange(shape[axis], I32, span=span)
        r = self.b.reshape(r, tuple(n if i == axis else 1 for i, n in enumerate(shape)), span=span)
        return self.to_shape(r, shape, span)

    def print_(self, vals: list[Any], span: Span) -> Any:
        parts: list[str | ir.Value] = []

        def put(v: Any) -> None:
            if isinstance(v, StrVal):
                parts.append(v.value)
            else:
                parts.append(self.mat(v, None, span))

        rest = list(vals)
        if rest and isinstance(rest[0], StrVal) and "{}" in rest[0].value and len(rest) > 1:
            pieces = rest.pop(0).value.split("{}")
            parts.append(pieces[0])
            for piece in pieces[1:]:
                if rest:
                    put(rest.pop(0))
                else:
                    parts.append("{}")
                parts.append(piece)
            for v in rest:
                parts.append(" ")
                put(v)
        else:
            for i, v in enumerate(rest):
                if i:
                    parts.append(" ")
                put(v)
        merged: list[str | ir.Value] = []
        for p in parts:
            if isinstance(p, str) and merged and isinstance(merged[-1], str):
                merged[-1] += p
            elif p != "":
                merged.append(p)
        self.b.print_(*merged, span=span)
        return UNIT

    def device_assert(self, vals: list[Any], e: ast.Call) -> Any:
        cond = vals[0]
        msg = vals[1].value if len(vals) > 1 and isinstance(vals[1], StrVal) else ""
        if isinstance(cond, CVal) and cond.value:
            return UNIT
        self.b.assert_(self.mat(cond, BOOL, e.span), msg, span=e.span)
        return UNIT

    # -------------------------------------------------------------- methods
    def method(self, e: ast.MethodCall) -> Any:
        name = e.method.name
        sp = e.span
        recv = self.expr(e.receiver)
        vals = self._args(e.args)
        if isinstance(recv, TensorRef):
            return self.tensor_method(recv, name, vals, e)
        if isinstance(recv, ViewRef):
            return self.view_method(recv, name, vals, e)
        if name in _UNARY_MATH:
            return self.b.elementwise(_UNARY_MATH[name], self._float_operand(recv, sp), span=sp)
        if name in _REDUCE:
            return self.reduce(name, recv, vals[0] if vals else None, sp)
        if name in _SCAN:
            return self.scan(name, recv, vals[0] if vals else CVal(0), sp)
        v = self.mat(recv, None, sp)
        if name == "reshape":
            shape = self.ints(vals[0], sp)
            if math.prod(shape) != v.type.numel:
                raise _Unsupported(sp, f"cannot reshape {list(v.shape)} to {list(shape)}")
            return self.b.reshape(v, shape, span=sp)
        if name == "broadcast":
            return self.to_shape(v, self.ints(vals[0], sp), sp)
        if name == "transpose":
            if v.type.rank != 2:
                raise _Unsupported(sp, "`transpose` of a tile that is not 2-D")
            return self.b.transpose(v, span=sp)
        if name == "permute":
            return self.b.permute(v, self.ints(vals[0], sp), span=sp)
        raise _Unsupported(sp, f"method `{name}` inside a kernel")

    def tensor_method(self, t: TensorRef, name: str, vals: list[Any], e: ast.MethodCall) -> Any:
        sp = e.span
        p = t.param
        if name == "load" and not vals:
            if t.own is None or p.tile_shape is None:
                # a `&` tensor with a static shape (`g: &Tensor<f32, [N]>`): the
                # checker allows loading all of it as one tile
                if p.dims and all(isinstance(d, int) and not isinstance(d, bool) for d in p.dims):
                    zero = [self.b.const(0, I32, span=sp) for _ in p.dims]
                    return self.b.load(p.name, zero, tuple(int(d) for d in p.dims), span=sp)  # type: ignore[arg-type]
                raise _Unsupported(sp, "`load()` without an index on a `&` tensor")
            return self.b.load(p.name, t.own, p.tile_shape, span=sp, hint=f"{p.name}_tile")
        if name == "store" and len(vals) == 1:
            if t.own is None or p.tile_shape is None:
                raise _Unsupported(sp, "`store` to a `&` tensor")
            tile = self.to_shape(self.mat(vals[0], p.dtype, sp), p.tile_shape, sp)
            self.b.store(p.name, t.own, tile, span=sp)
            return UNIT
        if name == "load_like":
            other = self._tensor(vals[0], sp)
            if other.own is None or other.param.tile_shape is None:
                raise _Unsupported(sp, "`load_like` of a tensor that is not a `&mut` parameter")
            if other.param.rank != p.rank:
                raise _Unsupported(sp, "`load_like` between tensors of different ranks")
            return self.b.load(p.name, other.own, other.param.tile_shape, span=sp)
        if name == "partition":
            tshape = self.ints(vals[0], sp)
            if len(tshape) != p.rank:
                raise _Unsupported(sp, f"a rank-{len(tshape)} partition of a rank-{p.rank} tensor")
            return ViewRef(t, tshape, nested=t.own is not None)
        raise _Unsupported(sp, f"method `{name}` on a tensor parameter")

    def view_method(self, v: ViewRef, name: str, vals: list[Any], e: ast.MethodCall) -> Any:
        sp = e.span
        p = v.tensor.param
        if name == "num_tiles":
            axis = self.const_int(vals[0], sp)
            if v.nested:
                assert p.tile_shape is not None
                return CVal(-(-p.tile_shape[axis] // v.tile[axis]), I32)
            if p.dims and p.dims[axis] is not None:
                return CVal(-(-int(p.dims[axis]) // v.tile[axis]), I32)  # type: ignore[arg-type]
            dim = self.b.tensor_dim(p.name, axis, span=sp)
            t = self.b.const(v.tile[axis], I32, span=sp)
            return self.b.div(self.b.add(dim, self.b.const(v.tile[axis] - 1, I32, span=sp), span=sp),
                              t, span=sp)
        if name in ("load", "load_padded", "store"):
            idx_arg = vals[1] if name == "store" else vals[0]
            raw = list(idx_arg.elems) if isinstance(idx_arg, ArrayVal) else [idx_arg]
            if len(raw) != p.rank:
                raise _Unsupported(sp, f"{len(raw)} tile indices for a rank-{p.rank} tensor")
            # a constant tile index gives a constant offset (no multiply)
            offs = [self.b.const(_convert_const(i.value * t, I32), I32, span=sp)
                    if isinstance(i, CVal) and isinstance(i.value, int) and not isinstance(i.value, bool)
                    else self.b.mul(self.as_index(i, sp), self.b.const(t, I32, span=sp), span=sp)
                    for i, t in zip(raw, v.tile, strict=True)]
            mask = None
            if v.nested:
                own = v.tensor.own
                assert own is not None and p.tile_shape is not None
                mask = self._inside_own(offs, v.tile, p.tile_shape, sp)
                offs = [self.b.add(o, base, span=sp) for o, base in zip(offs, own, strict=True)]
            if name == "store":
                tile = self.to_shape(self.mat(vals[0], p.dtype, sp), v.tile, sp)
                self.b.store(p.name, offs, tile, mask=mask, span=sp)
                return UNIT
            pad = None
            if name == "load_padded":
                pad = self.mat(vals[1], p.dtype, sp)
            return self.b.load(p.name, offs, v.tile, mask=mask, padding=pad, span=sp)
        raise _Unsupported(sp, f"method `{name}` on a tensor partition")

    def _inside_own(self, local: Sequence[ir.Value], tile: tuple[int, ...],
                    own: tuple[int, ...], span: Span) -> ir.Value:
        """Mask of the elements of a nested tile at `local` offsets that fall
        inside the own tile (a nested store never leaves the block's tile)."""
        mask: ir.Value | None = None
        for d, (o, n) in enumerate(zip(local, own, strict=True)):
            pos = self.b.add(self.to_shape(o, tile, span), self.iota(tile, d, span), span=span)
            lo = self.b.elementwise(ir.ElemOp.GE, pos, self.b.const(0, I32, tile, span=span),
                                    span=span)
            hi = self.b.elementwise(ir.ElemOp.LT, pos, self.b.const(n, I32, tile, span=span),
                                    span=span)
            m = self.b.elementwise(ir.ElemOp.AND, lo, hi, span=span)
            mask = m if mask is None else self.b.elementwise(ir.ElemOp.AND, mask, m, span=span)
        assert mask is not None
        return mask

    # -------------------------------------------------------------- inlining
    def inline(self, decl: ast.FnDecl, call: ast.Call) -> Any:
        if self.inline_depth > 64:
            raise _Unsupported(call.span, "device functions nested more than 64 deep (recursion?)")
        args = self._args(call.args)
        if len(args) != len(decl.params):
            raise ICE(f"lowering: `{decl.name.name}` called with {len(args)} arguments")
        generics, tparams = self._callee_generics(decl, call, args)
        saved = self.f
        self.f = _Frame(generics, tparams)
        self.inline_depth += 1
        try:
            for p, a in zip(decl.params, args, strict=True):
                if isinstance(a, CVal) and not isinstance(p.ty, ast.RefType):
                    try:
                        dt = self._dtype(p.ty)
                        a = CVal(_convert_const(a.value, dt), dt)
                    except _Unsupported:
                        pass
                elif isinstance(a, ir.Value) and isinstance(p.ty, ast.NamedType) and not p.ty.args:
                    dt = self._dtype(p.ty)
                    if a.dtype is not dt:
                        a = self.b.cast(a, dt, span=call.span)
                self.f.scopes[0][p.name.name] = a
            body = decl.body
            stmts = body.stmts
            tail: ast.Expr | None = body.tail
            if tail is None and stmts and isinstance(stmts[-1], ast.Return):
                tail = stmts[-1].value
                stmts = stmts[:-1]
            if RET not in _jumps(list(stmts)):
                self.f.scopes.append({})
                return self.seq(stmts, tail)
            # An early `return`: the rest of the body runs under "not returned
            # yet" and every return assigns one result variable of the
            # declared return type.
            self.f.scopes.append({RET: CVal(False, BOOL), RETV: self._return_init(decl, call)})
            if tail is not None:
                stmts = (*stmts, ast.Return(tail, tail.span))
            self.seq(stmts, None)
            return self._flag(RETV)
        finally:
            self.f = saved
            self.inline_depth -= 1

    def _return_init(self, decl: ast.FnDecl, call: ast.Call) -> Any:
        ret = decl.ret
        if ret is None or (isinstance(ret, ast.TupleType) and not ret.elems):
            return UNIT
        if isinstance(ret, ast.NamedType) and ret.name.name in ("Tile", "Tensor"):
            dtype, dims = self._tensor_type(ret)
            shape = tuple(self._need_int(d, ret.span) for d in dims)
            return self.b.const(False if dtype is BOOL else 0, dtype, shape, span=call.span)
        if isinstance(ret, ast.NamedType) and not ret.args:
            dtype = self._dtype(ret)
            return self.b.const(False if dtype is BOOL else 0, dtype, span=call.span)
        raise _Unsupported(decl.ret.span if decl.ret else call.span,
                           "an early `return` from a device function returning this type",
                           "return a scalar or a tile, or make the value the function's tail")

    def _callee_generics(self, decl: ast.FnDecl, call: ast.Call, args: list[Any]
                         ) -> tuple[dict[str, int], dict[str, DType]]:
        names = [g.name.name for g in decl.generics]
        consts = {g.name.name for g in decl.generics if g.is_const}
        generics: dict[str, int] = {}
        tparams: dict[str, DType] = {}
        # explicit turbofish
        for g, targ in zip(decl.generics, call.generics, strict=False):
            if g.is_const:
                generics[g.name.name] = self.const_int(self.expr(targ), call.span)  # type: ignore[arg-type]
            else:
                tparams[g.name.name] = self._dtype(targ)
        # from the argument types
        for p, a in zip(decl.params, args, strict=True):
            _unify_param(p.ty, a, consts, set(names) - consts, generics, tparams)
        # from the checker's table (symbolic in the caller's generics)
        inst = getattr(self.program, "instantiations", {}).get(call, {}) or {}
        for k, v in inst.items():
            if k in generics or k in tparams:
                continue
            if isinstance(v, DType):
                tparams[k] = v
            elif isinstance(v, int):
                generics[k] = v
            else:
                try:
                    from tilelang.sema.types import eval_dim

                    generics[k] = eval_dim(v, self.f.generics)
                except Exception:
                    pass
        missing = [n for n in names if n not in generics and n not in tparams]
        if missing:
            raise _Unsupported(call.span, f"cannot infer {', '.join(f'`{m}`' for m in missing)} "
                                          f"for the call of `{decl.name.name}`",
                               "give the generic arguments with a turbofish `::<..>`")
        return generics, tparams


# ------------------------------------------------------------------ pure helpers
_BUILTIN_NAMES = LOWERED_OPERATIONS


def _symbol(program: Any, node: Any) -> Any:
    fn = getattr(program, "symbol_of", None)
    return fn(node) if fn is not None else None


def _program_type(program: Any, node: Any) -> Any:
    fn = getattr(program, "type_of", None)
    return fn(node) if fn is not None else None


def _literal_dtype(program: Any, lit: ast.Expr) -> DType | None:
    """The dtype the checker settled an untyped literal to, only when it is a
    definite scalar type (so that context-free literals stay flexible)."""
    ty = _program_type(program, lit)
    dt = getattr(ty, "dtype", None)
    return dt if isinstance(dt, DType) else None


def _default_dtype(v: bool | int | float) -> DType:
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return I32
    return DType.F32


def _convert_const(v: bool | int | float, dt: DType | None) -> bool | int | float:
    """A Python value converted to `dt` like an IR `Cast` (ints wrap, floats to
    ints truncate and saturate, NaN -> 0)."""
    if dt is None:
        return v
    if dt is BOOL:
        return bool(v)
    if dt.is_int:
        if isinstance(v, float):
            if math.isnan(v):
                return 0
            info = np.iinfo(dt.np_dtype)
            if math.isinf(v):
                return int(info.max) if v > 0 else int(info.min)
            return max(int(info.min), min(int(info.max), int(v)))
        return dt.wrap(int(v))
    return float(v)


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _fold_binary(op: str, a: CVal, b: CVal) -> CVal | None:
    """Fold integer and boolean constant arithmetic; floats are left to the IR
    except for exact-looking cases that need no rounding decision."""
    x, y = a.value, b.value
    dt = a.dtype or b.dtype
    if isinstance(x, bool) and isinstance(y, bool):
        match op:
            case "&&" | "&":
                return CVal(x and y, BOOL)
            case "||" | "|":
                return CVal(x or y, BOOL)
            case "^" | "!=":
                return CVal(x != y, BOOL)
            case "==":
                return CVal(x == y, BOOL)
        return None
    if isinstance(x, bool) or isinstance(y, bool):
        return None
    cmp = {"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}
    if op in cmp:
        return CVal(bool(cmp[op]), BOOL)
    if isinstance(x, int) and isinstance(y, int) and (dt is None or dt.is_int):
        match op:
            case "+":
                r = x + y
            case "-":
                r = x - y
            case "*":
                r = x * y
            case "/":
                r = _trunc_div(x, y)
            case "%":
                r = x if y == 0 else x - y * _trunc_div(x, y)
            case "&":
                r = x & y
            case "|":
                r = x | y
            case "^":
                r = x ^ y
            case "<<":
                r = x << y if 0 <= y < 64 else 0
            case ">>":
                r = x >> y if 0 <= y < 64 else (0 if x >= 0 else -1)
            case _:
                return None
        return CVal(_convert_const(r, dt) if dt else r, dt)
    if dt is None or dt is DType.F64:
        # untyped or f64 float constants fold exactly like f64 arithmetic
        fx, fy = float(x), float(y)
        match op:
            case "+":
                return CVal(fx + fy, dt)
            case "-":
                return CVal(fx - fy, dt)
            case "*":
                return CVal(fx * fy, dt)
            case "/":
                if fy == 0.0:
                    return None
                return CVal(fx / fy, dt)
    return None


def _int_identity(op: str, a: Any, b: Any) -> ir.Value | None:
    """`x * 1`, `1 * x`, `x + 0`, `0 + x`, `x - 0` on an integer value is `x`
    (exact for integers; not for floats, where `-0.0 + 0.0` is `+0.0`)."""
    def is_const(v: Any, k: int) -> bool:
        return isinstance(v, CVal) and not isinstance(v.value, bool) and v.value == k \
            and isinstance(v.value, int)

    for x, c, ok_ops in ((a, b, ("*", "+", "-")), (b, a, ("*", "+"))):
        if (isinstance(x, ir.Value) and x.dtype.is_int and op in ok_ops
                and ((op == "*" and is_const(c, 1)) or (op in ("+", "-") and is_const(c, 0)))):
            return x
    return None


def _broadcast_shapes(shapes: Sequence[tuple[int, ...]], span: Span) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise _Unsupported(span, "shapes " + " and ".join(str(list(s)) for s in shapes)
                           + " do not broadcast") from None


def _is_mut(pat: ast.Pattern) -> bool:
    return isinstance(pat, ast.NamePat) and pat.mutable


def _pat_name(pat: ast.Pattern) -> str | None:
    return pat.name.name if isinstance(pat, ast.NamePat) else None


def _walk_jumps(nodes: Any) -> Iterator[str]:
    """Names assigned (`x = ..`, `x += ..`) anywhere inside `nodes`, in order,
    plus the flags a jump sets: `break`/`continue` of THIS loop level (not of
    loops nested inside), `return` at any depth."""
    roots = ([*nodes.stmts, nodes.tail] if isinstance(nodes, ast.Block) else list(nodes))
    stack: list[tuple[Any, bool]] = [(n, False) for n in reversed(roots)]
    while stack:
        n, nested = stack.pop()
        if n is None:
            continue
        match n:
            case ast.Assign(target=ast.Name(ident=ident)):
                yield ident.name
            case ast.Break() if not nested:
                yield BRK
            case ast.Continue() if not nested:
                yield CONT
            case ast.Return():
                yield RET
                yield RETV
        inner = nested or isinstance(n, (ast.For, ast.While))
        children: list[Any] = []
        for slot in getattr(type(n), "__slots__", ()):
            c = getattr(n, slot, None)
            if isinstance(c, tuple):
                children.extend(x for x in c if _is_node(x))
            elif _is_node(c):
                children.append(c)
        stack.extend((c, inner) for c in reversed(children))


def _assigned_names(nodes: Any) -> Iterator[str]:
    return _walk_jumps(nodes)


def _jumps(nodes: Any) -> set[str]:
    """The jump flags (`BRK`, `CONT`, `RET`) that `nodes` may set."""
    return {n for n in _walk_jumps(nodes) if n in (BRK, CONT, RET)}


def _leaves(v: Any) -> list[Any] | None:
    """The scalar/tile leaves of a value (tuples flattened), or None when it
    holds something an `if` cannot merge (a tensor, a view, unit)."""
    if isinstance(v, (ir.Value, CVal)):
        return [v]
    if isinstance(v, TupleVal) and v.elems:
        out: list[Any] = []
        for e in v.elems:
            sub = _leaves(e)
            if sub is None:
                return None
            out.extend(sub)
        return out
    return None


def _same_structure(a: Any, b: Any) -> bool:
    if isinstance(a, TupleVal) or isinstance(b, TupleVal):
        return (isinstance(a, TupleVal) and isinstance(b, TupleVal)
                and len(a.elems) == len(b.elems)
                and all(_same_structure(x, y) for x, y in zip(a.elems, b.elems, strict=True)))
    return True


def _rebuild(shape_of: Any, leaves: list[Any]) -> Any:
    if isinstance(shape_of, TupleVal):
        return TupleVal(tuple(_rebuild(e, leaves) for e in shape_of.elems))
    return leaves.pop(0)


def _hint(name: str) -> str:
    return name.lstrip("%")


def _is_node(x: Any) -> bool:
    return hasattr(x, "span") and type(x).__module__ == ast.__name__


def _unify_param(ty: ast.TypeExpr, arg: Any, consts: set[str], tnames: set[str],
                 generics: dict[str, int], tparams: dict[str, DType]) -> None:
    """Bind the callee's generics that appear bare in a parameter type from the
    argument's type (`Tile<T, [M, N]>` against an f32[4, 64] tile)."""
    if isinstance(ty, ast.RefType):
        ty = ty.inner
    if not isinstance(ty, ast.NamedType):
        return
    name = ty.name.name
    if name in tnames and not ty.args:
        dt = arg.dtype if isinstance(arg, ir.Value) else arg.dtype if isinstance(arg, CVal) else None
        if isinstance(dt, DType):
            tparams.setdefault(name, dt)
        return
    if name not in ("Tile", "Tensor") or len(ty.args) != 2:
        return
    dty, shape = ty.args
    if isinstance(arg, ir.Value):
        adt, ashape = arg.dtype, arg.shape
    elif isinstance(arg, TensorRef):
        adt = arg.param.dtype
        ashape = arg.param.tile_shape or tuple(d if d is not None else -1 for d in arg.param.dims)
    else:
        return
    if isinstance(dty, ast.NamedType) and dty.name.name in tnames:
        tparams.setdefault(dty.name.name, adt)
    if isinstance(shape, ast.ShapeType) and len(shape.dims) == len(ashape):
        for d, n in zip(shape.dims, ashape, strict=True):
            if isinstance(d, ast.Name) and d.ident.name in consts and n >= 0:
                generics.setdefault(d.ident.name, int(n))
