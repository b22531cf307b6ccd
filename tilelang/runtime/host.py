"""The host evaluator: a tree-walking interpreter for host `fn`s.

It walks the checked AST of `main` (and the host functions it calls) with the
type checker's `Program` (helper C) at hand: `symbol_of` says what a call
names when imports are involved, `type_of` gives literals and scalar results
their element type (so `i32` arithmetic wraps as it does in the compiled
program), `instantiations` gives the const generics the checker inferred for
a kernel call. Where the program has no answer (an untyped literal, a side
table entry missing) it falls back on the dynamic value: untyped integers are
Python ints and floats Python floats until they meet a typed value.

Host values: `Tensor`, `Partition` (`runtime/tensor.py`), `Operation`,
`Handle`, `Graph` (`runtime/launch.py`), scalars (NumPy scalars when typed,
Python numbers when not), `bool`, `str`, tuples, shapes (Python lists of int)
and `()` for the unit value.

The builtins of BRIEF §5 live in `runtime/builtins.py` (host arithmetic in
`runtime/host_ops.py`); this module does the language. Guarantees: a user
error raises `TileError` with a located diagnostic (E07xx, E05xx) and leaves
no half-done kernel work; host arithmetic reads its operands and never moves
them; a kernel call builds an `Operation` and runs nothing until `.sync()`,
`.launch()` or a graph replay.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from tilelang.diagnostics.codes import runtime as rcodes
from tilelang.diagnostics.model import ICE, Diagnostic, TileError
from tilelang.dtypes import DType, LiteralFloat, let_literal
from tilelang.interp import numeric as num
from tilelang.ownership.facts import OwnershipFacts
from tilelang.runtime import builtins as bi
from tilelang.runtime import host_domains as domains
from tilelang.runtime import host_instances as instances
from tilelang.runtime import host_ops as ops
from tilelang.runtime.declared import declared_diagnostic, declared_mismatch
from tilelang.runtime.host_args import bind_params, bind_types, explicit_generics
from tilelang.runtime.launch import Graph, Handle, LaunchArg, Operation, Runtime, bind_launch
from tilelang.runtime.tensor import TUNER_PICKS, Partition, Tensor
from tilelang.runtime.tile_counts import check_group_counts, check_tile_counts
from tilelang.sema.program import Program, Symbol, SymbolKind
from tilelang.sema.types import ScalarT, TensorT, TypeParam
from tilelang.source import SourceMap, Span
from tilelang.syntax import ast

_ARITH = frozenset(("+", "-", "*", "/", "%", "&", "|", "^"))


# ---------------------------------------------------------------- control flow
class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


UNIT: tuple[()] = ()


@dataclass(slots=True)
class _Scope:
    vars: dict[str, Any]
    parent: _Scope | None

    def lookup(self, name: str) -> _Scope | None:
        s: _Scope | None = self
        while s is not None:
            if name in s.vars:
                return s
            s = s.parent
        return None


@dataclass(frozen=True, slots=True)
class FnRef:
    """A function or kernel item used as a value (the callee of a call)."""

    decl: ast.FnDecl
    key: str  # qualified name, as `Program` knows it


def _let_literals(pat: ast.Pattern, value: ast.Expr, v: Any, program: Any, scope: _Scope) -> Any:
    """An untyped `let`'s value with each float literal bound to an immutable name held as written
    (`dtypes.LiteralFloat`, rounded at each read by `instances.name_value`): `let c = 0.1;`, `let q =
    sqrt(2.0);`, `let b = c * 3.0;`, and the elements of `let (dt, g) = (0.01, 9.81);`, as the kernels'
    lowering holds them (`control._let_literals`)."""
    if isinstance(pat, ast.NamePat):
        def named(node: Any) -> float | None:  # an earlier untyped `let`'s, else an untyped float constant's
            sym = program.symbol_of(node)
            if sym is not None and sym.kind is SymbolKind.LOCAL and isinstance(node, ast.Name):
                s = scope.lookup(node.ident.name)
                held = s.vars[node.ident.name] if s is not None else None
                return held if isinstance(held, LiteralFloat) else None
            return program.untyped_float_const(node)

        def call(node: Any, args: list[int | float]) -> float | None:
            return num.literal_math(program.builtin_called(node), args)

        return v if pat.mutable else (let_literal(value, named, call) or v)
    if isinstance(pat, ast.TuplePat) and isinstance(value, ast.TupleExpr) and isinstance(v, tuple) \
            and len(pat.elems) == len(value.elems) == len(v):
        return tuple(_let_literals(p, e, x, program, scope)
                     for p, e, x in zip(pat.elems, value.elems, v, strict=True))
    return v


# ---------------------------------------------------------------- the evaluator
class HostEvaluator:
    def __init__(self, program: Program, root: ast.Module, sources: SourceMap, runtime: Runtime,
                 out: IO[str] | None = None, ownership: OwnershipFacts | None = None) -> None:
        self.program = program
        self.root = root
        self.sources = sources
        self.runtime = runtime
        self.out = out if out is not None else sys.stdout
        self.ownership = ownership
        self._recording: list[list[Operation]] = []
        self._items = self._collect_items()
        self._const_values: dict[str, Any] = {}
        self.main_locals: dict[str, Any] = {}
        self._main_body: ast.Block | None = None
        # the element types of the type parameters of the host function running now (`fn f<T>`)
        self._types: dict[str, DType] = {}
        self.lets: dict[Any, ast.Expr] | None = None  # `host_instances.let_values`
        # id(node) -> (node, whether it is const generics' arithmetic: `host_instances.generic_arith`)
        self.generic_nodes: dict[int, tuple[Any, bool]] = {}
        self.cast_depth = 0  # inside a cast's operand, in a generic instance (`host_instances.literal`)
        self.builtins = bi.Builtins(self)

    # -- items ---------------------------------------------------------------
    def _collect_items(self) -> dict[str, Any]:
        items: dict[str, Any] = {}
        for module in self._modules():
            for item in module.items:
                if isinstance(item, (ast.FnDecl, ast.ConstDecl)):
                    items.setdefault(item.name.name, item)
        for item in self.root.items:  # the root module wins
            if isinstance(item, (ast.FnDecl, ast.ConstDecl)):
                items[item.name.name] = item
        return items

    def _modules(self) -> list[ast.Module]:
        return [m.ast for m in self.program.all_modules()]

    def find_main(self) -> ast.FnDecl | None:
        item = next((i for i in self.root.items
                     if isinstance(i, ast.FnDecl) and i.name.name == "main" and not i.is_kernel), None)
        return item

    def run_main(self, main: ast.FnDecl) -> Any:
        """Run `main`; afterwards `main_locals` holds the variables of its body
        (tests compare them with NumPy)."""
        self._main_body = main.body
        with np.errstate(all="ignore"):  # IEEE specials are defined results, not warnings
            return self.call_fn(FnRef(main, "main"), [], main.span)

    def run_statements(self, stmts: list[Any], env: dict[str, Any]) -> Any:
        """Run top-level statements against `env` (variable name -> value),
        the variables an earlier run left (the REPL keeps them between
        entries): `let`s bind into `env` itself, assignments update it. An
        element that is an expression rather than a statement is evaluated
        and its value returned (the REPL's shown tail); otherwise `()`.
        A `return` ends the run early. On an exception `env` keeps what the
        statements before it bound: callers that want all or nothing pass a
        copy."""
        scope = _Scope(env, None)
        value: Any = UNIT
        with np.errstate(all="ignore"):  # IEEE specials are defined results, not warnings
            try:
                for s in stmts:
                    if isinstance(s, (ast.Let, ast.Assign, ast.ExprStmt, ast.For, ast.While,
                                      ast.Return, ast.Break, ast.Continue)):
                        self.exec_stmt(s, scope)
                        value = UNIT
                    else:
                        value = self.eval(s, scope)
            except _Return as r:
                value = r.value
        return value

    # -- program queries ---------------------------------------------------------
    def scalar_dtype(self, node: Any) -> DType | None:
        ty = self.program.type_of(node)
        return self.elem_dtype(ty.dtype) if isinstance(ty, ScalarT) else None

    def elem_dtype(self, d: Any) -> DType | None:
        """An element type the checker settled, a type parameter (`T`) read
        as the running function's call binds it, or None."""
        if isinstance(d, DType):
            return d
        return self._types.get(d.name) if isinstance(d, TypeParam) else None

    def dtype_named(self, name: str) -> DType | None:
        """The element type a type name in the source means here: `f16`, or
        a type parameter of the running function."""
        return DType.parse(name) or self._types.get(name)

    @staticmethod
    def fn_ref(decl: ast.FnDecl, key: str) -> FnRef:
        return FnRef(decl, key)

    def _resolve_callee(self, callee: ast.Name | ast.Path, call: ast.Call) -> FnRef | None:
        sym = self.program.symbol_of(callee) or self.program.symbol_of(call)
        decl = sym.decl if sym is not None and isinstance(sym.decl, ast.FnDecl) else None
        key = None if sym is None else sym.qualname if sym.qualname is not None else sym.name
        name = callee.ident.name if isinstance(callee, ast.Name) else callee.segments[-1].name
        if decl is None:
            item = self._items.get(name)
            if isinstance(item, ast.FnDecl):
                decl = item
        if decl is None:
            return None
        return FnRef(decl, key or decl.name.name)

    # -- functions -------------------------------------------------------------
    def call_fn(self, fn: FnRef, args: list[Any], span: Span, explicit: dict[str, Any] | None = None) -> Any:
        decl = fn.decl
        if len(args) != len(decl.params):
            raise _unsupported(Diagnostic.error("ICE", f"`{decl.name.name}` takes {len(decl.params)} arguments but {len(args)} were given")
                .primary(span, "called here").secondary(decl.name.span, "defined here"))
        # tensors' run-time shapes against the declared ones; the const generics they bind
        scope = _Scope(bind_params(self.program, decl, fn.key, args, span, explicit), None)
        outer, self._types = self._types, bind_types(decl, args, span, explicit)
        try:
            for p, v in zip(decl.params, args, strict=False):  # element types and ranks (sizes: `bind_params`)
                if (found := declared_mismatch(p.ty, v, lambda e: None, self.dtype_named)) is not None:
                    raise TileError(declared_diagnostic(found, f"argument `{p.name.name}` of `{decl.name.name}`",
                                                        p.ty, span, f"in `{decl.name.name}`", argument=True))
            for p, v in zip(decl.params, args, strict=False):
                if isinstance(p.ty, ast.NamedType):
                    dt = self.dtype_named(p.ty.name.name)
                    if dt is not None:
                        v = ops.to_scalar(v, dt)
                scope.vars[p.name.name] = v
            try:
                result = self.eval_block(decl.body, scope)
            except _Return as r:
                result = r.value
            except TileError as e:
                if self._types:
                    _name_the_instance(e, decl, span, self._types)
                _name_the_call(e, decl, span)
                raise
            except RecursionError:
                raise TileError(Diagnostic.error(
                    rcodes.HOST_STACK_OVERFLOW, f"`{decl.name.name}` recursed too deeply: the host stack overflowed")
                    .primary(span, "this call is one too many")
                    .secondary(decl.name.span, f"`{decl.name.name}` is defined here")
                    .with_help("make sure the recursion reaches its base case, or use a loop")) from None
            if isinstance(decl.ret, ast.NamedType):
                dt = self.dtype_named(decl.ret.name.name)
                if dt is not None and result is not UNIT:
                    result = ops.to_scalar(result, dt)
            if decl.ret is not None and \
                    (found := declared_mismatch(decl.ret, result, self._size_of(scope), self.dtype_named)):
                raise TileError(declared_diagnostic(found, f"the result of `{decl.name.name}`", decl.ret, span,
                                                    f"in `{decl.name.name}`'s result type"))
        finally:
            self._types = outer
        return result

    # -- statements ------------------------------------------------------------
    def eval_block(self, block: ast.Block, parent: _Scope | None) -> Any:
        scope = _Scope({}, parent)
        for stmt in block.stmts:
            self.exec_stmt(stmt, scope)
        value = UNIT if block.tail is None else self.eval(block.tail, scope)
        if block is self._main_body:
            self.main_locals = dict(scope.vars)
        return value

    def exec_stmt(self, stmt: ast.Stmt, scope: _Scope) -> None:
        san = getattr(getattr(self.runtime, "inflight", None), "sanitizer", None)
        saved = None
        if san is not None:  # where a host access the sanitizer reports happens
            saved, san.host_span = san.host_span, stmt.span
        try:
            self._exec_stmt(stmt, scope)
        except TileError as e:
            if type(e) is not TileError or all(d.labels for d in e.diagnostics):
                raise
            # a device's error that names no place (a CUDA call of an upload,
            # a download, an allocation): the innermost statement that met it
            located = TileError(*(d if d.labels else d.primary(stmt.span, "while running this statement")
                                  for d in e.diagnostics))
            raise located.with_traceback(e.__traceback__) from None
        except (MemoryError, ValueError) as e:
            # NumPy could not allocate a tensor (MemoryError), or its byte size
            # does not even fit in the address space (this ValueError): the
            # program's sizes, not a bug in tilec.
            if isinstance(e, ValueError) and "array is too big" not in str(e):
                raise
            why = str(e) if isinstance(e, MemoryError) else "the tensor's size in bytes exceeds the address space"
            raise TileError(Diagnostic.error(
                rcodes.HOST_OUT_OF_MEMORY, "out of memory: this statement needs more memory than is available")
                .primary(stmt.span, "ran out of memory here")
                .note(why or "the allocation failed")
                .with_help("use smaller tensors (check the shapes: one of n elements of `f32` takes 4n bytes)")
                ) from None
        finally:
            if san is not None:
                san.host_span = saved

    def _exec_stmt(self, stmt: ast.Stmt, scope: _Scope) -> None:
        match stmt:
            case ast.Let(pattern=pat, value=value):
                v = UNIT if value is None else self.eval(value, scope)
                if stmt.ty is not None and isinstance(stmt.ty, ast.NamedType):
                    dt = self.dtype_named(stmt.ty.name.name)
                    if dt is not None:
                        v = ops.to_scalar(v, dt)
                elif stmt.ty is None and value is not None:
                    v = _let_literals(pat, value, v, self.program, scope)
                if stmt.ty is not None and value is not None and \
                        (found := declared_mismatch(stmt.ty, v, self._size_of(scope), self.dtype_named)):
                    name = pat.name.name if isinstance(pat, ast.NamePat) else None
                    raise TileError(declared_diagnostic(found, f"`{name}`" if name else "the value of this `let`",
                                                        stmt.ty, value.span, "in the `let`"))
                self.bind(pat, v, scope)
            case ast.Assign():
                self.exec_assign(stmt, scope)
            case ast.ExprStmt(expr=e):
                v = self.eval(e, scope)
                if self._recording and isinstance(v, Operation):
                    self._recording[-1].append(v)
            case ast.For(pattern=pat, iter=it, body=body):
                self.exec_for(pat, it, body, scope)
            case ast.While(cond=cond, body=body):
                while self.truth(self.eval(cond, scope)):
                    try:
                        self.eval_block(body, scope)
                    except _Break:
                        break
                    except _Continue:
                        continue
            case ast.Return(value=value):
                raise _Return(UNIT if value is None else self.eval(value, scope))
            case ast.Break():
                raise _Break()
            case ast.Continue():
                raise _Continue()
            case _:
                raise TypeError(f"unknown statement {stmt!r}")

    def exec_for(self, pat: ast.Pattern, it: ast.Expr, body: ast.Block, scope: _Scope) -> None:
        if isinstance(it, ast.RangeExpr):
            lo = self.eval(it.start, scope)
            hi = self.eval(it.end, scope)
            dt = self.scalar_dtype(it.start) or self.scalar_dtype(it.end)
            stop = int(hi) + (1 if it.inclusive else 0)
            values: Any = range(int(lo), stop)
        else:
            seq = self.eval(it, scope)
            dt = None
            values = list(seq) if isinstance(seq, (list, tuple, range)) else None
            if values is None:
                raise _unsupported(Diagnostic.error("ICE", "cannot iterate over this value")
                                .primary(it.span, "not a range"))
        for i in values:
            inner = _Scope({}, scope)
            self.bind(pat, ops.to_scalar(i, dt) if dt is not None else i, inner)
            try:
                self.eval_block(body, inner)
            except _Break:
                break
            except _Continue:
                continue

    def bind(self, pat: ast.Pattern, value: Any, scope: _Scope) -> None:
        match pat:
            case ast.NamePat(name=name):
                scope.vars[name.name] = value
            case ast.WildcardPat():
                pass
            case ast.TuplePat(elems=elems):
                vals = tuple(value)
                for p, v in zip(elems, vals, strict=False):
                    self.bind(p, v, scope)
            case _:
                raise TypeError(f"unknown pattern {pat!r}")

    def exec_assign(self, stmt: ast.Assign, scope: _Scope) -> None:
        target = stmt.target
        if stmt.op == "=":
            value = self.eval(stmt.value, scope)
        else:
            current = self.eval(target, scope)
            rhs = self.eval(stmt.value, scope)
            op = stmt.op[:-1]
            if isinstance(current, Tensor):
                # Compound assignment on a tensor writes in place, so a graph or
                # a `&mut` holder that captured it sees the new values.
                result = ops.binary(op, current, rhs, stmt.op_span, stmt.span, self.scalar_dtype(stmt.target))
                if isinstance(result, Tensor) and (result.shape != current.shape or result.dtype != current.dtype):
                    # a right side whose shape is known only now (`load_npy`) may broadcast the
                    # result past the variable's own shape: the write in place cannot hold it
                    name = f"`{target.ident.name}`" if isinstance(target, ast.Name) else "the target"
                    raise TileError(Diagnostic.error(
                        rcodes.HOST_SHAPE,
                        f"`{stmt.op}` would change {name} from `{current.type_name()}` to `{result.type_name()}`")
                        .primary(stmt.span, "a compound assignment writes the tensor in place")
                        .with_help(f"make the right side fit {list(current.shape)} (`.reshape([..])`, a slice), "
                                   f"or bind the result to a new variable: `let r = {name.strip('`')} "
                                   f"{op} ..;`"))
                current.write(result.numpy())
                return
            value = ops.binary(op, current, rhs, stmt.op_span, stmt.span, self.scalar_dtype(stmt.target))
        self.store(target, value, scope)

    def store(self, target: ast.Expr, value: Any, scope: _Scope) -> None:
        match target:
            case ast.Name(ident=ident):
                s = scope.lookup(ident.name)
                if s is None:
                    scope.vars[ident.name] = value
                else:
                    dt = ops.scalar_dtype_of(s.vars[ident.name])
                    if dt is not None and not isinstance(value, (Tensor, list, tuple)):
                        value = ops.to_scalar(value, dt)
                    s.vars[ident.name] = value
            case ast.Index(receiver=recv, index=idx):
                container = self.eval(recv, scope)
                i = int(self.eval(idx, scope))
                if not isinstance(container, list):
                    raise _unsupported(Diagnostic.error("ICE", "cannot assign into this value")
                                    .primary(target.span, "not a shape"))
                container[i] = value
            case _:
                raise _unsupported(Diagnostic.error("ICE", "cannot assign to this expression")
                                .primary(target.span, "not a variable"))

    # -- expressions -----------------------------------------------------------
    def eval(self, e: ast.Expr, scope: _Scope) -> Any:
        match e:
            case ast.IntLit() | ast.FloatLit():
                return instances.literal(self, e)
            case ast.BoolLit(value=v):
                return bool(v)
            case ast.StrLit(value=v):
                return v
            case ast.Name(ident=ident):
                if ident.name == "_":  # a tile dimension the autotuner picks (sema: nowhere else)
                    return TUNER_PICKS
                return instances.name_value(self, e, self.lookup(ident.name, e, scope))
            case ast.Path(segments=segs):
                sym = self._builtin_symbol(e)
                if sym is not None:
                    return self._builtin_const(sym, e)  # `f32::MAX`: never a local's value
                # an item of a module, never a local of its last segment's name (round 21: `std::math::PI` after
                # `let PI = 3.0;` was 3.0 on the host, pi in kernels)
                return self.lookup(segs[-1].name, e, _Scope({}, None))
            case ast.Call():
                return self.eval_call(e, scope)
            case ast.MethodCall():
                return self.eval_method(e, scope)
            case ast.Field(receiver=recv, field=f):
                v = self.eval(recv, scope)
                if f.name.isdigit() and isinstance(v, (tuple, list)):
                    return v[int(f.name)]
                raise _unsupported(Diagnostic.error("ICE", f"no field `{f.name}` on this value")
                                .primary(f.span, "unknown field"))
            case ast.Index(receiver=recv, index=idx):
                v = self.eval(recv, scope)
                if isinstance(v, Tensor):
                    if isinstance(idx, ast.RangeExpr):
                        lo, hi = int(self.eval(idx.start, scope)), int(self.eval(idx.end, scope))
                        return ops.slice_tensor(v, lo, hi + (1 if idx.inclusive else 0), idx, self.runtime.device)
                    return ops.index_tensor(v, int(self.eval(idx, scope)), idx, self.runtime.device)
                i = int(self.eval(idx, scope))
                if isinstance(v, (list, tuple)):
                    if not -len(v) <= i < len(v) or i < 0:
                        raise TileError(Diagnostic.error(
                            rcodes.HOST_SHAPE, f"index {i} is out of range for a shape of {len(v)} dimensions")
                            .primary(idx.span, "out of range")
                                        .with_help(f"a shape of {len(v)} dimensions has indices 0..{len(v)}"))
                    return v[i]
                raise _unsupported(Diagnostic.error("ICE", "cannot index this value")
                                .primary(e.span, "not a shape or tuple"))
            case ast.Unary(op="-", operand=ast.IntLit() as lit) if self._types:
                return ops.unary("-", instances.literal(self, lit, negated=True), e.span, self.scalar_dtype(e))
            case ast.Unary(op=op, operand=operand):
                v = self.eval(operand, scope)
                instances.generic_neg(self, e, v, scope)
                return ops.unary(op, v, e.span, instances.result_dtype(self, e, v))
            case ast.Binary(op="&&" | "||", lhs=l, rhs=r) if isinstance(self.program.type_of(e), TensorT):
                # of `bool` tensors: element-wise, both sides evaluated, as on tiles
                a = self.eval(l, scope)
                return ops.binary("&" if e.op == "&&" else "|", a, self.eval(r, scope), e.op_span, e.span, None)
            case ast.Binary(op="&&", lhs=l, rhs=r):
                return self.truth(self.eval(l, scope)) and self.truth(self.eval(r, scope))
            case ast.Binary(op="||", lhs=l, rhs=r):
                return self.truth(self.eval(l, scope)) or self.truth(self.eval(r, scope))
            case ast.Binary(op=op, lhs=l, rhs=r):
                a = self.eval(l, scope)
                b = self.eval(r, scope)
                if op in ("<<", ">>"):
                    if self._types:
                        instances.instance_shift(self, e, b)
                    else:
                        instances.constant_shift(self, e, b)
                elif self._types and op in _ARITH:
                    instances.check_operands(self, e, a, b)
                    a, b = instances.cast_operands(self, e, a, b)
                instances.generic_arith(self, e, a, b, scope)
                return ops.binary(op, a, b, e.op_span, e.span, instances.result_dtype(self, e, a, b))
            case ast.Cast(expr=inner, ty=ty):
                if self._types:  # a generic instance: the operand's float literals stay floats (`_literal`)
                    self.cast_depth += 1
                    try:
                        v = self.eval(inner, scope)
                    finally:
                        self.cast_depth -= 1
                else:
                    v = self.eval(inner, scope)
                name = ty.name.name if isinstance(ty, ast.NamedType) else None
                dt = self.dtype_named(name or "")
                if dt is None:
                    raise _unsupported(Diagnostic.error("ICE", "cannot cast to this type on the host")
                                    .primary(ty.span, "not an element type"))
                return ops.cast(v, dt)
            case ast.Ref(expr=inner):
                # A reference to a tensor is the tensor itself: the checker has
                # already proved the borrow sound.
                return self.eval(inner, scope)
            case ast.TupleExpr(elems=elems):
                return tuple([self.eval(x, scope) for x in elems])  # a list: no C recursion
            case ast.ArrayExpr(elems=elems):
                return [self.eval(x, scope) for x in elems]
            case ast.RangeExpr(start=s, end=t, inclusive=inc):
                lo, hi = int(self.eval(s, scope)), int(self.eval(t, scope))
                return list(range(lo, hi + (1 if inc else 0)))
            case ast.Block():
                return self.eval_block(e, scope)
            case ast.If(cond=cond, then=then, else_=else_):
                if self.truth(self.eval(cond, scope)):
                    return self.eval_block(then, scope)
                if else_ is None:
                    return UNIT
                if isinstance(else_, ast.If):
                    return self.eval(else_, scope)
                return self.eval_block(else_, scope)
            case ast.UnsafeBlock(body=body):
                return self.eval_block(body, scope)
            case ast.GraphBlock(body=body):
                self._recording.append([])
                try:
                    self.eval_block(body, scope)
                finally:
                    recorded = self._recording.pop()
                return Graph(recorded, self.runtime)
            case _:
                raise TypeError(f"unknown expression {e!r}")

    def truth(self, v: Any) -> bool:
        if isinstance(v, Tensor):
            return bool(v.numpy().all())
        return bool(v)

    def _builtin_symbol(self, node: ast.Expr) -> Symbol | None:
        """The symbol of the built-in constant (`inf`, `f32::MAX`) that `node`
        names, if it names one."""
        sym = self.program.symbol_of(node)
        return sym if sym is not None and sym.kind is SymbolKind.CONST and sym.decl is None else None

    def _builtin_const(self, sym: Symbol, node: ast.Expr) -> Any:
        """A built-in constant's value in the type the checker settled."""
        d = self.scalar_dtype(node) or (sym.ty.dtype if isinstance(sym.ty, ScalarT) else None)
        if isinstance(sym.value, float) and isinstance(d, DType) and not d.is_float \
                and instances.instance_type(self, node) is not None:
            return sym.value  # `inf` read as an instance's integer `T`: a float (`instances.name_value`)
        return ops.to_scalar(sym.value, d) if isinstance(d, DType) else sym.value

    def lookup(self, name: str, node: ast.Expr, scope: _Scope) -> Any:
        s = scope.lookup(name)
        if s is not None:
            return s.vars[name]
        builtin = self._builtin_symbol(node)
        if builtin is not None:
            return self._builtin_const(builtin, node)  # `inf`, `nan`
        if name in self._const_values:
            return self._const_values[name]
        sym = self.program.symbol_of(node)
        if sym is not None and sym.kind is SymbolKind.CONST and sym.value is not None:
            d = sym.ty.dtype if isinstance(sym.ty, ScalarT) else None
            if isinstance(sym.value, float) and isinstance(sym.decl, ast.ConstDecl) and sym.decl.ty is None:
                d = self.scalar_dtype(node) or d  # an untyped float constant: its use's type, as a literal's
                if isinstance(d, DType) and not d.is_float and instances.instance_type(self, node) is not None:
                    d = None  # read as an instance's integer `T`: a float still (`instances.name_value`)
            return ops.to_scalar(sym.value, d) if isinstance(d, DType) else sym.value
        if sym is not None and sym.kind in (SymbolKind.FN, SymbolKind.KERNEL) and isinstance(sym.decl, ast.FnDecl):
            return FnRef(sym.decl, sym.qualname or name)
        item = self._items.get(name)
        if isinstance(item, ast.ConstDecl):
            value = self._const_value(item)
            self._const_values[name] = value
            return value
        if isinstance(item, ast.FnDecl):
            return FnRef(item, item.name.name)
        raise _unsupported(Diagnostic.error("ICE", f"`{name}` has no value here")
                        .primary(node.span, "not defined at run time"))

    def _const_value(self, item: ast.ConstDecl) -> Any:
        if item.name.name in self.program.consts:
            return self.program.consts[item.name.name]
        v = self.eval(item.value, _Scope({}, None))
        if isinstance(item.ty, ast.NamedType):
            dt = DType.parse(item.ty.name.name)
            if dt is not None:
                v = ops.to_scalar(v, dt)
        return v

    # -- calls -------------------------------------------------------------------
    def eval_call(self, call: ast.Call, scope: _Scope) -> Any:
        callee = call.callee
        name = callee.ident.name if isinstance(callee, ast.Name) else callee.segments[-1].name
        sym = self.program.symbol_of(call) or self.program.symbol_of(callee)
        kind = sym.kind.value if sym is not None else None
        if kind == "builtin" or (kind is None and name in bi.HOST_FUNCTIONS
                                 and not isinstance(self._items.get(name), ast.FnDecl)):
            return self.builtins.call(name, call, scope)
        fn = self._resolve_callee(callee, call)
        if fn is None:
            raise _unsupported(Diagnostic.error("ICE", f"`{name}` cannot be called in host code")
                            .primary(callee.span, "not a host function"))
        if fn.decl.is_kernel:
            return self.make_operation(fn, call, scope)
        if any(_is_tile_param(p) for p in fn.decl.params):
            raise _unsupported(Diagnostic.error("ICE", f"device function `{name}` cannot run on the host")
                .primary(call.span, "called from host code")
                .secondary(fn.decl.name.span, "it works on tiles")
                .with_help("call it from a kernel"))
        args = [self.eval(a.value, scope) for a in call.args]
        inst = self.program.instantiations.get(call)
        given: dict[str, Any] = explicit_generics(inst, scope)
        # the element types the checker settled for the callee's type parameters (the caller's own `T` read now)
        given.update({k: d for k, v in (inst or {}).items() if (d := self.elem_dtype(v)) is not None})
        return self.call_fn(fn, args, call.span, given)

    def make_operation(self, fn: FnRef, call: ast.Call, scope: _Scope) -> Operation:
        decl = fn.decl
        args = [LaunchArg(self.eval(a.value, scope), a.value.span, self._snippet(a.value.span))
                for a in call.args]
        generics: dict[str, tuple[Any, Span]] = {}
        const_params = list(decl.generics)
        for g, arg in zip(const_params, call.generics, strict=False):
            if g.is_const:
                if isinstance(arg, ast.NamedType) and not arg.args:
                    # `k::<COLS>(..)`: a constant's name parses as a type name.
                    value = self.lookup(arg.name.name, ast.Name(arg.name, arg.span), scope)
                else:
                    value = self.eval(arg, scope)  # type: ignore[arg-type]
                generics[g.name.name] = (int(value), arg.span)
            elif isinstance(arg, ast.NamedType):
                dt = self.dtype_named(arg.name.name)
                if dt is not None:
                    generics[g.name.name] = (dt, arg.span)
        static = self.program.instantiation_of(call)
        inferred: dict[str, Any] = {str(k): int(v) for k, v in static.items()
                    if isinstance(v, (int, np.integer)) and not isinstance(v, bool)}
        # element types the checker took from typed scalars (`a: T` given an `f16`)
        inferred.update({str(k): d for k, v in static.items() if (d := self.elem_dtype(v)) is not None})
        writes_for = getattr(self.ownership, "writes_for", None)
        writes = writes_for(fn.key) if writes_for is not None else frozenset()
        atomics = self.ownership.atomics_for(fn.key) if writes else {}

        def make(args: list[LaunchArg], generics: dict[str, tuple[Any, Span]]) -> Operation:
            bound = bind_launch(decl, args, call.span, generics, self._eval_dim, inferred)
            self.check_deferred(call.span, fn, bound)
            return Operation(decl, fn.key, bound, call.span, self.runtime, writes, atomics)

        if any(isinstance(a.value, Partition) and TUNER_PICKS in a.value.tile for a in args):
            from tilelang.tuner.launch import tuned_operation

            # every candidate is built by `make`: the same checks as any launch
            tuned: Operation = tuned_operation(self, decl, call, args, generics, make, writes)
            return tuned
        return make(args, generics)

    def _snippet(self, span: Span) -> str | None:
        try:
            text = self.sources.snippet(span)
        except Exception:  # a span outside the known sources: no quote, not an error
            return None
        return text if text and "\n" not in text and len(text) <= 60 else None

    def _size_of(self, scope: _Scope) -> Callable[[ast.Expr], int | None]:
        """A written dimension's value as a type's names read: the function's const generics (its outermost
        scope, where a body's `let N = 5;` is not) and the module's constants; None where it has none (for
        `declared.declared_mismatch`)."""
        root = scope
        while root.parent is not None:
            root = root.parent

        def size(expr: ast.Expr) -> int | None:
            try:
                v = self.eval(expr, root)
            except (TileError, ICE):
                return None
            return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else None
        return size

    def _eval_dim(self, expr: ast.Expr, env: dict[str, Any]) -> int | None:
        scope = _Scope({k: v for k, v in env.items() if isinstance(v, int)}, None)
        try:
            return int(self.eval(expr, scope))
        except (TileError, ICE):  # a name with no value yet: an unbound generic
            return None

    def check_deferred(self, launch: Span, fn: FnRef, bound: Any) -> None:
        """Evaluate the facts the ownership checker deferred to launch time
        (`OwnershipFacts.launch_checks`, e.g. nested tile indices in range),
        and that no dimension passes the kernel's tile counts (E0514), nor the groups of its `last_block`
        or queue `i32` (E0515)."""
        check_tile_counts(self.program, fn.decl, bound.args, launch)
        check_group_counts(fn.decl, tuple(bound.grid), launch)
        if self.ownership is None:
            return
        checks_for = self.ownership.checks_for
        # the checks of this kernel, by its qualified name: a kernel of the same short name in
        # another module has its own (taking those was an internal error, or a wrong check)
        key = fn.key
        if key not in self.program.kernels:
            key = next((q for q, info in self.program.kernels.items() if info.decl is fn.decl), key)
        checks = checks_for(key)
        if not checks:
            return
        env: dict[str, int] = {}
        for k, v in self.program.consts.items():
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                env[str(k).split("::")[-1]] = int(v)
        for k, v in bound.instantiation.items():
            if isinstance(v, (int, np.integer)):
                env[k] = int(v)
        grid = tuple(bound.grid) + (1,) * (3 - len(bound.grid))
        for axis, n in enumerate(grid[:3]):
            env[f"num_blocks({axis})"] = int(n)
        for check in checks:
            try:
                ok = check.holds(env)
            except KeyError as e:
                raise ICE(f"launch-time check of `{fn.key}` names {e}, which the runtime does not know") from e
            if not ok:
                raise TileError(check.diagnostic(env, launch))

    # -- methods -----------------------------------------------------------------
    def eval_method(self, mc: ast.MethodCall, scope: _Scope) -> Any:
        recv = self.eval(mc.receiver, scope)
        name = mc.method.name
        if isinstance(recv, Operation):
            if name == "sync":
                if self._recording:
                    self._recording[-1].append(recv)
                    return UNIT
                recv.sync()
                return UNIT
            if name == "launch":
                if self._recording:
                    self._recording[-1].append(recv)
                    return Handle(recv, None, self.runtime, done=True)
                return recv.launch()
        if isinstance(recv, Handle) and name == "wait":
            recv.wait()
            return UNIT
        if isinstance(recv, Graph) and name == "replay":
            recv.replay()
            return UNIT
        return self.builtins.method(name, recv, mc, scope)


def _is_tile_param(p: ast.Param) -> bool:
    ty = p.ty
    if isinstance(ty, ast.RefType):
        ty = ty.inner
    return isinstance(ty, ast.NamedType) and ty.name.name == "Tile"


def _unsupported(diag: Diagnostic) -> ICE:
    """Host code the checker accepted but the evaluator cannot run: a bug in
    tilec (the checker and the evaluator disagree), reported as one."""
    return ICE(f"the host evaluator cannot run this: {diag.message}")


def _name_the_instance(e: TileError, decl: ast.FnDecl, call: Span, types: dict[str, DType]) -> None:
    """An error only this instance of a generic function has (E0204, E0201,
    E0227: `host_domains`) gets the call that makes the instance as a second
    label, as a kernel instance's error gets its launch. Once: the innermost."""
    if not e.diagnostics:
        return
    d = e.diagnostics[0]
    if domains.GENERIC_NOTE not in d.notes or any(not lab.primary for lab in d.labels):
        return
    shown = ", ".join(f"{k} = {v.value}" for k, v in types.items())
    e.diagnostics = (d.secondary(call, f"the call that makes this instance of `{decl.name.name}`, with {shown}"),
                     *e.diagnostics[1:])


def _name_the_call(e: TileError, decl: ast.FnDecl, call: Span) -> None:
    """A run-time error inside a function of another file (`std::math::cdiv(10, 0)`
    divides by zero in stdlib/std/math.tile) gets the user's call as a second label:
    the place shown is otherwise one the user did not write. Once: the first call
    out of that file names it."""
    if not e.diagnostics:
        return
    d = e.diagnostics[0]
    primary = d.primary_span
    if primary is None or primary.file == call.file or any(lab.span.file == call.file for lab in d.labels):
        return
    e.diagnostics = (d.secondary(call, f"in this call of `{decl.name.name}`"), *e.diagnostics[1:])
