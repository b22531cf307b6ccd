"""Statements and control flow: blocks, `let`, assignment, loops, `if`, jumps.

Decides how structured control flow becomes IR regions: `for` over a range
becomes an `ir.For` and `while` an `ir.While`, each carrying the variables
its body assigns; `if` becomes an `ir.If` whose results are its value and
every variable a branch changed (an `if` on a compile-time condition lowers
only the branch taken). `break`, `continue` and `return` set flags; a `for`
whose body may jump becomes a `while` over a counter that also stops on the
flag, and after a statement that may jump the rest of its block runs under
an `if` on the flags, so the IR stays structured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tilelang import lastblock
from tilelang.diagnostics.model import ICE
from tilelang.dtypes import DType, LiteralFloat, let_literal
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Frame
from tilelang.ir.lower.claims import claim_dims
from tilelang.ir.lower.context import LowerCx
from tilelang.ir.lower.fold import broadcast_shapes, convert_const, default_dtype
from tilelang.ir.lower.jumps import assigned_names, jump_flags
from tilelang.ir.lower.operators import lower_binary
from tilelang.ir.lower.values import (
    BOOL,
    BRK,
    CONT,
    END,
    I32,
    ITER,
    QTILE,
    RET,
    RETV,
    UNIT,
    CVal,
    StrVal,
    TensorRef,
    TupleVal,
    Unsupported,
    ViewRef,
)
from tilelang.sema.program import SymbolKind
from tilelang.share_queue import STATIC
from tilelang.share_queue import axis_of as queue_axis
from tilelang.share_queue import kind_of as walk_kind
from tilelang.source import Span
from tilelang.syntax import ast


def lower_block(cx: LowerCx, blk: ast.Block) -> Any:
    cx.f.scopes.append({})
    try:
        return lower_seq(cx, blk.stmts, blk.tail)
    finally:
        cx.f.scopes.pop()


def lower_seq(cx: LowerCx, stmts: Sequence[ast.Stmt], tail: ast.Expr | None) -> Any:
    """Lower statements in order; after one that may `break`, `continue` or
    `return`, the rest runs under `if` the flags say execution goes on."""
    for i, st in enumerate(stmts):
        lower_stmt(cx, st)
        rest = stmts[i + 1:]
        if not jump_flags([st]) or (not rest and tail is None):
            continue
        go = _running(cx)
        if isinstance(go, CVal):
            if not go.value:
                return UNIT  # an unconditional jump: the rest is dead code
            continue
        span = rest[0].span if rest else tail.span  # type: ignore[union-attr]

        def then_fn(rest: Sequence[ast.Stmt] = rest) -> Any:
            cx.f.scopes.append({})
            try:
                return lower_seq(cx, rest, tail)
            finally:
                cx.f.scopes.pop()

        return lower_if(cx, go, then_fn, lambda: UNIT, [*rest, tail], span)
    return cx.expr(tail) if tail is not None else UNIT


def _running(cx: LowerCx) -> CVal | ir.Value:
    """False once a `break`, `continue` or `return` flag in scope is set."""
    stop: ir.Value | None = None
    for name in (BRK, CONT, RET):
        v = cx.flag(name)
        if v is None or (isinstance(v, CVal) and not v.value):
            continue
        if isinstance(v, CVal):
            return CVal(False, BOOL)
        stop = v if stop is None else cx.b.elementwise(ir.ElemOp.OR, stop, v)
    if stop is None:
        return CVal(True, BOOL)
    return cx.b.elementwise(ir.ElemOp.NOT, stop)


def _and_not_flags(cx: LowerCx, c: ir.Value, names: Sequence[str], span: Span) -> ir.Value:
    for name in names:
        v = cx.flag(name)
        if v is None or (isinstance(v, CVal) and not v.value):
            continue
        if isinstance(v, CVal):
            return cx.b.const(False, BOOL, span=span)
        c = cx.b.elementwise(ir.ElemOp.AND, c, cx.b.elementwise(ir.ElemOp.NOT, v, span=span),
                             span=span)
    return c


def lower_stmt(cx: LowerCx, st: ast.Stmt) -> None:
    match st:
        case ast.Let(pattern=pat, ty=ty, value=val):
            if val is None:
                # `let x: T;` is assigned before it is read (the checker
                # makes sure): any value of T will do until then
                bind_pattern(cx, pat, _zero_of(cx, ty, st.span))
                return
            if ty is None and isinstance(pat, ast.NamePat) and not pat.mutable \
                    and isinstance(lit := _let_literals(pat, val, None, cx), CVal):
                bind_pattern(cx, pat, lit)  # its value is known (`let q = sqrt(2.0);`): no operation to lower
                return
            v = cx.expr(val)
            if ty is not None and isinstance(v, CVal):
                # `let c: T = 2.0;` with an integer `T`: E0201 as at the literal's other uses (it
                # was converted to 2 without a word; the host's instance and `let c: i16 = 2.0;` refuse)
                cx.check_literal(v, cx.dtype(ty), val.span)
                v = CVal(convert_const(v.value, cx.dtype(ty)), cx.dtype(ty))
            elif isinstance(v, CVal) and v.dtype is None and _is_mut(pat):
                v = CVal(v.value, _binding_dtype(cx, pat, v))
            elif ty is None:
                v = _let_literals(pat, val, v, cx)
            elif isinstance(v, (TensorRef, TupleVal)):  # `let t: &Tensor<f32, [16]> = x;` (hrev29)
                name = _pat_name(pat)
                claim_dims(cx, ty, v, val.span, f"the `let` of `{name}`" if name else "this `let`", "its type",
                           "in the `let`")
            bind_pattern(cx, pat, v)
        case ast.Assign(target=tgt, op=op, value=val):
            if not isinstance(tgt, ast.Name):
                raise Unsupported(tgt.span, "assignment to anything but a variable")
            scope = cx.f.lookup(tgt.ident.name)
            if scope is None:
                raise ICE(f"assignment to unknown `{tgt.ident.name}`")
            v = cx.expr(val)
            if op != "=":
                v = lower_binary(cx, op[:-1], scope[tgt.ident.name], v, st.span)
            old = scope[tgt.ident.name]
            if isinstance(old, ir.Value) and isinstance(v, CVal):
                v = cx.to_shape(cx.mat(v, old.dtype, st.span), old.shape, st.span)
            elif isinstance(old, CVal) and isinstance(v, CVal) and old.dtype and not v.dtype:
                v = CVal(convert_const(v.value, old.dtype), old.dtype)
            scope[tgt.ident.name] = v
        case ast.ExprStmt(expr=e):
            cx.expr(e)
        case ast.For():
            lower_for(cx, st)
        case ast.While():
            lower_while(cx, st)
        case ast.Return(value=val):
            scope = cx.f.lookup(RET)
            if scope is None:
                raise ICE("lowering: `return` without a return flag in scope")
            if val is not None:
                v = cx.expr(val)
                rscope = cx.f.lookup(RETV)
                if rscope is not None:
                    old = rscope[RETV]
                    if isinstance(old, ir.Value) and isinstance(v, (ir.Value, CVal)):
                        v = cx.to_shape(cx.mat(v, old.dtype, st.span), old.shape, st.span)
                    rscope[RETV] = v
            scope[RET] = CVal(True, BOOL)
        case ast.Break() | ast.Continue():
            flag = BRK if isinstance(st, ast.Break) else CONT
            scope = cx.f.lookup(flag)
            if scope is None:
                raise ICE(f"lowering: `{flag[1:]}` outside a loop")
            scope[flag] = CVal(True, BOOL)
        case _:
            raise ICE(f"lowering: unexpected statement {type(st).__name__}")


def _zero_of(cx: LowerCx, ty: ast.TypeExpr | None, span: Span) -> Any:
    if isinstance(ty, ast.NamedType) and ty.name.name == "Tile":
        dtype, dims = cx.tensor_type(ty)
        shape = tuple(cx.need_int(d, span) for d in dims)
        return cx.b.const(False if dtype is BOOL else 0, dtype, shape, span=span)
    if isinstance(ty, ast.NamedType) and not ty.args:
        dtype = cx.dtype(ty)
        return CVal(False if dtype is BOOL else 0, dtype)
    if isinstance(ty, ast.TupleType) and ty.elems:  # `let p: (f32, f32);`: carried element by element
        return TupleVal(tuple(_zero_of(cx, t, span) for t in ty.elems))
    raise Unsupported(span, "a `let` without a value or a scalar or tile type",
                      "give the variable its initial value")


def _binding_dtype(cx: LowerCx, pat: ast.Pattern, v: CVal) -> DType:
    sym = cx.program.symbol_of(pat)
    ty = getattr(sym, "ty", None)
    dt = getattr(ty, "dtype", None)
    if isinstance(dt, DType):
        return dt
    return default_dtype(v.value)


def _let_literals(pat: ast.Pattern, value: ast.Expr, v: Any, cx: LowerCx) -> Any:
    """An untyped `let`'s value with each float literal bound to an immutable name held as written, untyped
    (`dtypes.LiteralFloat`: each read rounds it to its type, `exprs._read_as`), as the host holds it
    (`runtime/host._let_literals`): `let c = 0.1;`, `let q = sqrt(2.0);`, `let b = c * 3.0;`, the elements of
    `let (dt, g) = (0.01, 9.81);`."""
    if isinstance(pat, ast.NamePat):
        lit = None if pat.mutable else let_literal(value, lambda n: _float_named(cx, n), _float_call(cx.program))
        return CVal(lit, None) if lit is not None else v
    if isinstance(pat, ast.TuplePat) and isinstance(value, ast.TupleExpr) and isinstance(v, TupleVal) \
            and len(pat.elems) == len(value.elems) == len(v.elems):
        return TupleVal(tuple(_let_literals(p, e, x, cx)
                              for p, e, x in zip(pat.elems, value.elems, v.elems, strict=True)))
    return v


def _float_named(cx: LowerCx, node: Any) -> float | None:
    """The f64 value an untyped float name holds (`dtypes.let_literal`'s `const`): an earlier untyped `let`'s
    `LiteralFloat`, an untyped float module constant's value, else None."""
    sym = cx.program.symbol_of(node)
    if sym is not None and sym.kind is SymbolKind.LOCAL and isinstance(node, ast.Name):
        scope = cx.f.lookup(node.ident.name)
        held = scope[node.ident.name] if scope is not None else None
        return held.value if isinstance(held, CVal) and isinstance(held.value, LiteralFloat) else None
    return cx.program.untyped_float_const(node)


def _float_call(program: Any) -> Callable[[Any, list[int | float]], float | None]:
    """`dtypes.let_literal`'s `call`: a float built-in of untyped numbers in f64, as the interpreter computes it."""
    def call(node: Any, args: list[int | float]) -> float | None:
        from tilelang.interp.numeric import literal_math  # the interpreter's f64 math; imported where needed
        return literal_math(program.builtin_called(node), args)
    return call


def bind_pattern(cx: LowerCx, pat: ast.Pattern, v: Any) -> None:
    match pat:
        case ast.NamePat(name=n):
            if isinstance(v, ir.Value):
                v = cx.b.name_last(v, n.name)
            cx.f.scopes[-1][n.name] = v
        case ast.WildcardPat():
            pass
        case ast.TuplePat(elems=elems):
            if not isinstance(v, TupleVal) or len(v.elems) != len(elems):
                raise Unsupported(pat.span, "tuple pattern does not match the value")
            for p, x in zip(elems, v.elems, strict=True):
                bind_pattern(cx, p, x)
        case _:
            raise ICE(f"lowering: unexpected pattern {type(pat).__name__}")


class _Slot:
    """One scalar or tile a loop or an `if` carries: variable `name` of `scope`, or, for a
    variable holding a tuple (`let mut p = (m, l);`), the leaf at `path` in it."""

    __slots__ = ("name", "path", "scope")

    def __init__(self, scope: dict[str, Any], name: str, path: tuple[int, ...] = ()) -> None:
        self.scope, self.name, self.path = scope, name, path

    def get(self) -> Any:
        v = self.scope[self.name]
        for i in self.path:
            v = v.elems[i]
        return v

    def set(self, x: Any) -> None:
        self.scope[self.name] = _replace_at(self.scope[self.name], self.path, x)

    @property
    def hint(self) -> str:
        return self.name + "".join(f".{i}" for i in self.path)


def _replace_at(v: Any, path: tuple[int, ...], x: Any) -> Any:
    if not path:
        return x
    assert isinstance(v, TupleVal)
    i = path[0]
    return TupleVal((*v.elems[:i], _replace_at(v.elems[i], path[1:], x), *v.elems[i + 1:]))


def _leaf_paths(v: Any, at: tuple[int, ...] = ()) -> list[tuple[int, ...]] | None:
    """The paths of a value's scalar/tile leaves (tuples flattened), or None when it holds
    something no region can carry (a tensor, a view, a string)."""
    if isinstance(v, (ir.Value, CVal)):
        return [at]
    if isinstance(v, TupleVal):
        out: list[tuple[int, ...]] = []
        for i, e in enumerate(v.elems):
            sub = _leaf_paths(e, (*at, i))
            if sub is None:
                return None
            out.extend(sub)
        return out
    return None


class _Carried(list[_Slot]):
    """What a loop or an `if` carries (`_carried`), and the variables it cannot carry that
    its body names in an assignment (`fixed`: scope, name, value before), which `hold`
    checks are still what they were."""

    fixed: list[tuple[dict[str, Any], str, Any]]

    def hold(self, span: Span) -> None:
        """Refuse a body that assigned a variable no region can carry (a tensor view, a
        string): its value would leak past the branch or the loop, whatever the condition
        (an assignment to a `let` of the same name inside the body is not one)."""
        for scope, name, old in self.fixed:
            if scope[name] is not old:
                scope[name] = old
                raise Unsupported(span, f"assigning `{name}` (not a number, tile or tuple of them) inside a "
                                  "branch or loop", "assign it before the branch or loop, or bind a new name "
                                  "with `let` in each branch")


def _carried(cx: LowerCx, body: ast.Block | Sequence[Any], extra: Sequence[str] = ()) -> _Carried:
    """What a loop or an `if` over `body` carries: every scalar or tile variable it may
    assign, each leaf of a tuple variable (`p = (p.0 + 1.0, p.1)` in a loop: each element a
    carried value; tuples were not carried, and `if c { p = (1.0, s); }` set `p` whatever
    `c` was)."""
    out = _Carried()
    out.fixed = []
    seen: set[str] = set()
    for name in [*assigned_names(body), *extra]:
        if name in seen:
            continue
        seen.add(name)
        scope = cx.f.lookup(name)
        if scope is None:
            continue
        v = scope[name]
        paths = _leaf_paths(v)
        if paths is not None:
            out.extend(_Slot(scope, name, p) for p in paths)
        elif v is not UNIT:
            out.fixed.append((scope, name, v))
    return out


def _carry_inits(cx: LowerCx, carried: list[_Slot], span: Span) -> list[ir.Value]:
    inits = []
    for slot in carried:
        v = cx.mat(slot.get(), None, span)
        slot.set(v)
        inits.append(v)
    return inits


def _yield_carried(cx: LowerCx, carried: list[_Slot], types: Sequence[ir.Type], span: Span) -> None:
    out = []
    for slot, ty in zip(carried, types, strict=True):
        v = cx.mat(slot.get(), ty.dtype, span)
        out.append(cx.to_shape(v, ty.shape, span))
    cx.b.yield_(*out, span=span)


def lower_for(cx: LowerCx, st: ast.For) -> None:
    rng = st.iter
    axis = queue_axis(rng)
    if axis is not None:
        _lower_queue(cx, st, axis, static=walk_kind(rng) == STATIC)
        return
    if not isinstance(rng, ast.RangeExpr):
        raise Unsupported(st.iter.span, "a kernel `for` loop must range over `a..b`")
    lo_v, hi_v = cx.expr(rng.start), cx.expr(rng.end)
    dt = next((x.dtype for x in (lo_v, hi_v) if isinstance(x, ir.Value)), None) or \
        next((x.dtype for x in (lo_v, hi_v) if isinstance(x, CVal) and x.dtype), None) or I32
    lo = cx.mat(lo_v, dt, rng.span)
    hi = cx.mat(hi_v, dt, rng.span)
    if rng.inclusive:
        if not (isinstance(hi_v, CVal) and dt.wrap(int(hi_v.value) + 1) == int(hi_v.value) + 1):
            # `a..=b` ends before the type's largest value, whatever `b` is
            # only at run time: a `while` that stops after the round of `b`
            # (`b + 1` would wrap to the type's smallest value and run none)
            _for_as_while(cx, st, lo, hi, inclusive=True)
            return
        hi = cx.b.add(hi, cx.b.const(1, dt), span=rng.span)
    if jump_flags([st.body]) & {BRK, CONT, RET}:
        _for_as_while(cx, st, lo, hi)
        return
    step = cx.b.const(1, dt, span=rng.span)

    def body(iv: ir.Value) -> None:
        bind_pattern(cx, st.pattern, iv)
        lower_block(cx, st.body)

    _emit_for(cx, st, lo, hi, step, "i", st.span, body)


def _emit_for(cx: LowerCx, st: ast.For, lo: ir.Value, hi: ir.Value, step: ir.Value, default_name: str,
              span: Span, body: Callable[[ir.Value], None]) -> None:
    """An `ir.For` from `lo` to `hi` by `step` whose body `body(iv)` lowers;
    the variables the body assigns are carried through the loop."""
    carried = _carried(cx, st.body)
    inits = _carry_inits(cx, carried, span)
    iv = cx.b.fresh(lo.type, _pat_name(st.pattern) or default_name)
    cx.b.loops[iv.id] = (lo, hi)
    args = [cx.b.fresh(v.type, slot.hint) for v, slot in zip(inits, carried, strict=True)]
    frame = cx.b.open_region((iv, *args))
    for slot, a in zip(carried, args, strict=True):
        slot.set(a)
    cx.f.scopes.append({})
    body(iv)
    cx.f.scopes.pop()
    carried.hold(span)
    _yield_carried(cx, carried, [v.type for v in inits], span)
    region = cx.b.close_region(frame)
    results = tuple(cx.b.fresh(v.type, slot.hint) for v, slot in zip(inits, carried, strict=True))
    cx.b.emit(ir.For(results, lo, hi, step, tuple(inits), region, span))
    for slot, r in zip(carried, results, strict=True):
        slot.set(r)


def _for_as_while(cx: LowerCx, st: ast.For, lo: ir.Value, hi: ir.Value, inclusive: bool = False) -> None:
    """A `for` whose body may `break`, `continue` or `return`: a `while` over
    a carried counter that stops when the break (or return) flag is set.
    `inclusive` (`lo..=hi`, `hi` possibly the type's largest value): it runs
    while the counter is at most `hi` and stops after the round of `hi`
    itself (a carried flag; the counter's increment past `hi` may wrap)."""
    sp = st.span
    cx.f.scopes.append({ITER: lo, BRK: CVal(False, BOOL), **({END: CVal(False, BOOL)} if inclusive else {})})

    def cond_fn() -> ir.Value:
        it = cx.flag(ITER)
        if inclusive:
            c = cx.b.elementwise(ir.ElemOp.LE, it, hi, span=sp)
            return _and_not_flags(cx, c, (BRK, RET, END), sp)
        c = cx.b.lt(it, hi, span=sp)
        return _and_not_flags(cx, c, (BRK, RET), sp)

    def body_fn() -> None:
        cx.f.scopes.append({CONT: CVal(False, BOOL)})
        scope = cx.f.lookup(ITER)
        assert scope is not None
        i = scope[ITER]
        bind_pattern(cx, st.pattern, i)
        # advance first, so `continue` cannot skip the increment
        scope[ITER] = cx.b.add(i, cx.b.const(1, i.dtype, span=sp), span=sp)
        if inclusive:
            scope[END] = cx.b.elementwise(ir.ElemOp.EQ, i, hi, span=sp)
        lower_block(cx, st.body)
        cx.f.scopes.pop()

    _while(cx, cond_fn, body_fn, [st.body], [ITER, BRK, *([END] if inclusive else [])], sp)
    cx.f.scopes.pop()


def _lower_queue(cx: LowerCx, st: ast.For, axis: int, static: bool = False) -> None:
    """`for s in queue(axis) { body }` (`share_queue.py`; the checker made it a
    statement of the kernel's body without `break` or `return`):

        s = block_id(axis)     // the first tile, the block's own (W blocks)
        while s < n {          // n: the `&mut` partitions' tiles along `axis`
            t = pull()         // the next tile's round trip overlaps this one's work
            body, its `&mut` tiles at s along `axis`
            s = take(t)        // t + W
        }

    with the row's counter `group` (the block's position on the other axes,
    as `last_block`'s groups) and W = `num_blocks(axis)` pulling blocks. The
    row's pulls are exactly n (the n - W that name a tile, then one that
    names none for each block that ran one), so the block taking ticket
    n - 1 resets the counter.

    `static` (`for s in tiles(axis)`): no pull, `s = s + W` (block b takes
    b, b + W, ..), and the kernel says its walk's axis (`ir.Kernel.walk`)
    so that the runtime launches the same one wave of W blocks a row. A
    walk whose body has no `continue` is an `ir.For` from `block_id(axis)`
    to n by W (the queue's `while` otherwise)."""
    sp = st.span
    cx.grid_rank = max(cx.grid_rank, axis + 1)
    if static:
        cx.walk = axis
    own = [r for r in cx.tensors.values() if isinstance(r, TensorRef) and r.param.mutable and r.own is not None]
    group = cx.group_index(axis, sp) if not static else None
    wide = next((r.param for r in own if r.param.rank > axis), None)
    if wide is None:
        n = cx.b.const(1, I32, span=sp)
    else:
        assert wide.tile_shape is not None
        t = wide.tile_shape[axis]
        dim = cx.b.tensor_dim(wide.name, axis, span=sp)
        n = dim if t == 1 else cx.b.div(cx.b.add(dim, cx.b.const(t - 1, I32, span=sp), span=sp),
                                        cx.b.const(t, I32, span=sp), span=sp)
    workers = cx.b.num_blocks(axis, span=sp)
    first = cx.b.block_id(axis, span=sp)  # each block's first tile is its own: no pull to wait for
    jumps = bool(jump_flags([st.body]) & {CONT})

    def tile_body(s: ir.Value) -> None:
        """The body for tile `s`: the `&mut` tiles at `s` along `axis`."""
        tiles: dict[str, Any] = {CONT: CVal(False, BOOL)} if jumps else {}
        saved = dict(cx.tensors)
        for r in own:
            assert r.own is not None and r.param.tile_shape is not None
            offs = list(r.own)
            if r.param.rank > axis:
                t = r.param.tile_shape[axis]
                offs[axis] = s if t == 1 else cx.b.mul(s, cx.b.const(t, I32, span=sp), span=sp)
            tiles[r.param.name] = cx.tensors[r.param.name] = TensorRef(r.param, tuple(offs), r.group)
        cx.f.scopes.append(tiles)
        bind_pattern(cx, st.pattern, s)
        saved_order, cx.print_order = cx.print_order, (s, n, axis)
        saved_region, cx.order_region = cx.order_region, "walk" if static else "queue"
        lower_block(cx, st.body)
        cx.print_order, cx.order_region = saved_order, saved_region
        cx.f.scopes.pop()
        cx.tensors.clear()
        cx.tensors.update(saved)

    if static and not jumps:
        # `for s in block_id..n step W`: an `ir.For` with a known next index,
        # which the backend's loop passes may stream (`stages`: the next
        # tiles' loads in flight while this one is computed, `stream_loads`)
        _emit_for(cx, st, first, n, workers, "s", sp, tile_body)
        return
    cx.f.scopes.append({QTILE: first})

    def cond_fn() -> ir.Value:
        return cx.b.lt(cx.flag(QTILE), n, span=sp)

    def body_fn() -> None:
        scope = cx.f.lookup(QTILE)
        assert scope is not None
        s = scope[QTILE]
        ticket = cx.b.queue_pull(group, axis, span=sp) if group is not None else None
        tile_body(s)
        if ticket is None:  # the static walk: the next tile is known now, no round trip
            scope[QTILE] = cx.b.add(s, workers, span=sp)
        else:
            scope[QTILE] = cx.b.queue_take(ticket, group, n, workers, axis, span=sp)

    _while(cx, cond_fn, body_fn, [st.body], [QTILE], sp)
    cx.f.scopes.pop()


def lower_while(cx: LowerCx, st: ast.While) -> None:
    sp = st.span
    jumps = bool(jump_flags([st.body]) & {BRK, CONT, RET})
    if jumps:
        cx.f.scopes.append({BRK: CVal(False, BOOL)})

    def cond_fn() -> ir.Value:
        c = cx.mat(cx.expr(st.cond), BOOL, st.cond.span)
        if c.shape != ():
            raise Unsupported(st.cond.span, "a `while` condition must be a bool scalar")
        return _and_not_flags(cx, c, (BRK, RET), sp) if jumps else c

    def body_fn() -> None:
        if jumps:
            cx.f.scopes.append({CONT: CVal(False, BOOL)})
        lower_block(cx, st.body)
        if jumps:
            cx.f.scopes.pop()

    _while(cx, cond_fn, body_fn, [st.cond, st.body], [BRK] if jumps else [], sp)
    if jumps:
        cx.f.scopes.pop()


def _while(cx: LowerCx, cond_fn: Any, body_fn: Any, nodes: Sequence[Any], extra: Sequence[str],
           span: Span) -> None:
    carried = _carried(cx, nodes, extra)
    inits = _carry_inits(cx, carried, span)
    names = [_hint(slot.hint) for slot in carried]
    cargs = [cx.b.fresh(v.type, n) for v, n in zip(inits, names, strict=True)]
    cframe = cx.b.open_region(cargs)
    for slot, a in zip(carried, cargs, strict=True):
        slot.set(a)
    cx.b.yield_(cond_fn(), span=span)
    carried.hold(span)
    cregion = cx.b.close_region(cframe)
    bargs = [cx.b.fresh(v.type, n) for v, n in zip(inits, names, strict=True)]
    bframe = cx.b.open_region(bargs)
    for slot, a in zip(carried, bargs, strict=True):
        slot.set(a)
    body_fn()
    carried.hold(span)
    _yield_carried(cx, carried, [v.type for v in inits], span)
    bregion = cx.b.close_region(bframe)
    results = tuple(cx.b.fresh(v.type, n) for v, n in zip(inits, names, strict=True))
    cx.b.emit(ir.While(results, tuple(inits), cregion, bregion, span))
    for slot, r in zip(carried, results, strict=True):
        slot.set(r)


def lower_if_expr(cx: LowerCx, e: ast.If) -> Any:
    cond = cx.expr(e.cond)
    if isinstance(cond, CVal):
        if cond.value:
            return lower_block(cx, e.then)
        if e.else_ is None:
            return UNIT
        return lower_block(cx, e.else_) if isinstance(e.else_, ast.Block) else lower_if_expr(cx, e.else_)
    c = cx.mat(cond, BOOL, e.cond.span)
    if c.shape != ():
        raise Unsupported(e.cond.span, "an `if` condition must be a bool scalar",
                          "use `where(cond, a, b)` to select between tiles")
    combine = lastblock.axis_of(e.cond)

    def then_fn() -> Any:
        if combine is None:
            return lower_block(cx, e.then)
        # `if last_block(axis) { .. }`: which block of the group arrives last is the
        # device's choice; its lines go where the interpreter's last (the group's
        # last along the axis) prints them (`ir.Print.order`)
        n = cx.b.num_blocks(combine, span=e.cond.span)
        last = cx.b.sub(n, cx.b.const(1, I32, span=e.cond.span), span=e.cond.span)
        saved, cx.print_order = cx.print_order, (last, n, combine)
        saved_region, cx.order_region = cx.order_region, "last_block"
        try:
            return lower_block(cx, e.then)
        finally:
            cx.print_order, cx.order_region = saved, saved_region

    def else_fn() -> Any:
        if e.else_ is None:
            return UNIT
        return lower_block(cx, e.else_) if isinstance(e.else_, ast.Block) else lower_if_expr(cx, e.else_)

    return lower_if(cx, c, then_fn, else_fn, [e.then, e.else_], e.span)


def lower_if(cx: LowerCx, c: ir.Value, then_fn: Any, else_fn: Any, nodes: Sequence[Any],
             span: Span) -> Any:
    """An `If` op whose branches are lowered by `then_fn`/`else_fn`; its
    results are the branches' value (when both give one) and every
    variable they changed (found among the names `nodes` assign)."""
    carried = _carried(cx, [n for n in nodes if n is not None])
    before = [slot.get() for slot in carried]
    whole = {(id(slot.scope), slot.name): (slot.scope, slot.name, slot.scope[slot.name]) for slot in carried}

    def branch(fn: Any) -> tuple[Frame, Any, list[Any]]:
        frame = cx.b.open_region(())
        val = fn()
        cx.b.close_region(frame)
        carried.hold(span)
        after = [slot.get() for slot in carried]
        for scope, name, old in whole.values():  # each variable as it was (a tuple whole)
            scope[name] = old
        return frame, val, after

    tframe, tval, tafter = branch(then_fn)
    eframe, eval_, eafter = branch(else_fn)
    if _holds_view(tval) or _holds_view(eval_):
        # `let r = if s > 1.0 { x } else { y };`: no region can give a view or a tensor; it was
        # refused later, at `r`'s first use, as "expected a scalar or tile value here"
        raise Unsupported(span, "an `if` that gives a tensor view, a tensor reference or a string, with a "
                          "condition known only at run time", "load in each branch and let the `if` give the "
                          "tile: `let t = if c { y.load(..) } else { x.load(..) };`")
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
            dtype = default_dtype(t.value if isinstance(t, CVal) else f.value)
        shape = broadcast_shapes([x.shape if isinstance(x, ir.Value) else () for x in (t, f)],
                                 span)
        types.append(ir.Type(dtype, shape))
    for frame, idx in ((tframe, 0), (eframe, 1)):
        cx.b.reopen(frame)
        vals = []
        for pair, ty in zip(pairs, types, strict=True):
            v = cx.mat(pair[idx], ty.dtype, span)
            vals.append(cx.to_shape(v, ty.shape, span))
        cx.b.yield_(*vals, span=span)
        cx.b.close_region(frame)
    results = tuple(cx.b.fresh(t) for t in types)
    cx.b.emit(ir.If(results, c, tframe.region(), eframe.region(), span))
    k = len(tleaves) if has_value else 0  # type: ignore[arg-type]
    for i, r in zip(changed, results[k:], strict=True):
        carried[i].set(r)
    if not has_value:
        return UNIT
    return _rebuild(tval, list(results[:k]))


def _is_mut(pat: ast.Pattern) -> bool:
    return isinstance(pat, ast.NamePat) and pat.mutable


def _pat_name(pat: ast.Pattern) -> str | None:
    return pat.name.name if isinstance(pat, ast.NamePat) else None


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


def _holds_view(v: Any) -> bool:
    """A branch's value that holds a tensor, a view or a string (which no `if` can merge)."""
    if isinstance(v, TupleVal):
        return any(_holds_view(e) for e in v.elems)
    return isinstance(v, (TensorRef, ViewRef, StrVal))


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
