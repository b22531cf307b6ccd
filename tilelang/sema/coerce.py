"""Coercion: where a value of one type may stand for another, and literal typing.

`coerce(found, want)` decides whether a value may be used where another type
is expected (untyped literals take any numeric type, `&mut` lends as `&`,
`?` tensor dimensions accept any size). `settle` gives untyped literals under
an expression the element type its context demands, and checks that an
integer literal fits it (E0222); `adopt` fixes the type of a `let mut`
bound to a literal at its first typed use. `mismatch` reports E0203 with a
cast or borrow suggestion.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import types as T
from tilelang.dtypes import DType
from tilelang.sema.consts import check_overflow
from tilelang.sema.context import CheckCx
from tilelang.sema.program import Symbol, SymbolKind
from tilelang.sema.typeops import (
    FLOAT_LIMITS,
    elem_is_float,
    float_literal_overflows,
    int_range,
    is_poison,
)
from tilelang.sema.types import (
    RefT,
    ScalarT,
    ShapeT,
    TensorT,
    TileT,
    TupleT,
    Type,
    TypeParam,
    UnitT,
    UntypedFloat,
    UntypedInt,
    elem_of,
)
from tilelang.sema.widen import widened_sum_help
from tilelang.syntax import ast


def coerce(tcx: CheckCx, found: Type, want: Type, node: Any) -> bool:
    """Whether a value of type `found` may be used where `want` is expected."""
    if is_poison(found, want) or found == want:
        return True
    match want, found:
        case ScalarT(dtype=d), UntypedInt():
            return isinstance(d, TypeParam) or (isinstance(d, DType) and d is not DType.BOOL)
        case ScalarT(dtype=d), UntypedFloat():
            return isinstance(d, TypeParam) or elem_is_float(d)
        case TensorT(), TensorT():
            return _tensor_fits(found, want)
        case RefT(mutable=wm, inner=wi), RefT(mutable=fm, inner=fi):
            return (fm or not wm) and coerce(tcx, fi, wi, None)
        case TupleT(elems=we), TupleT(elems=fe):
            return len(we) == len(fe) and all(coerce(tcx, f, w, None) for f, w in zip(fe, we, strict=False))
        case ShapeT(rank=wr), ShapeT(rank=fr):
            return wr is None or fr is None or wr == fr
        case TileT(dtype=wd, shape=ws), TileT(dtype=fd, shape=fs):
            return wd == fd and ws == fs
        case _:
            return False


def _tensor_fits(found: TensorT, want: TensorT) -> bool:
    if want.dtype is not None and found.dtype is not None and want.dtype != found.dtype:
        return False
    if want.shape is None or found.shape is None:
        return True
    if len(want.shape) != len(found.shape):
        return False
    return all(w is None or f is None or w == f for w, f in zip(want.shape, found.shape, strict=False))


# built-ins called for their effect, which give `()`
NO_VALUE = frozenset({"atomic_add", "atomic_max", "atomic_min", "store_unchecked"})


def mismatch(tcx: CheckCx, want: Type, found: Type, node: Any, why: Any, help_: str | None = None) -> None:
    d = tcx.err(T.MISMATCHED_TYPES, "mismatched types", node.span,
                f"expected `{want}`, found `{found}`")
    if why is not None:
        d = d.secondary(why.span, "expected because of this")
    fe, we = elem_of(found), elem_of(want)
    if help_ is not None:
        d = d.with_help(help_)
    elif isinstance(fe, DType) and isinstance(we, DType) and fe != we and isinstance(found, TileT) \
            and (lits := _where_literals(tcx, node, we)) is not None:
        # (round 24: `where(c, 1.0, 0.0)` returned as a `Tile<f64, ..>` was told to cast; the reference's way is
        # the branches' type, exact where a cast of the f32 tile would round)
        d = d.with_help(f"write the branches in `{we.value}`: `{lits}` (`where` of untyped literals makes "
                        f"`{fe.value}` values where it is written)")
    elif isinstance(fe, DType) and isinstance(we, DType) and fe != we and \
            isinstance(found, (ScalarT, TileT, TensorT)):
        # (round 27: `let s: u32 = t.sum(0);` of a `u8` tile was told `t.sum(0) as u32`, which sums in `u8`
        # and wraps: 256 bytes of 200 gave 0)
        d = d.with_help(widened_sum_help(tcx, node, fe, we) or f"cast with `as`: `{tcx.cast_snippet(node)} as {we.value}`")
    elif isinstance(found, TensorT) and isinstance(want, RefT):
        d = d.with_help(f"borrow it: `{tcx.borrow_snippet(node)}`")
    elif isinstance(node, ast.Call) and isinstance(node.callee, ast.Name) and isinstance(found, UnitT) \
            and node.callee.ident.name in NO_VALUE:
        # `let old = atomic_add(..)`: an index or bound from an atomic's old value (hrev11)
        d = d.with_help(f"`{node.callee.ident.name}` gives no value back (not the old one: another block may "
                        "update the element at once); call it as a statement, and read the tensor in a "
                        "later launch")
    elif isinstance(found, TileT) and isinstance(want, ScalarT) and fe == we \
            and all(str(x) == "1" for x in found.shape):
        # a one-element tile where a number goes (`full::<f32>([1], acc)`, `acc` a `[1]` tile; round 14)
        d = d.with_help(f"`{tcx.snippet(node)}` is a tile of one element: its value is "
                        f"`{tcx.receiver_snippet(node)}.item()`")
    elif type(found) is type(want) and isinstance(found, (TileT, TensorT)):
        d = d.with_help(f"give it the expected shape: make it a `{want}` (`.reshape([..])` keeps the elements, "
                        "or change the size where it is made)")
    else:
        d = d.with_help(f"give a value of type `{want}` here, or change what it must be")
    tcx.emit(d)


def adopt(tcx: CheckCx, sym: Symbol, target: ScalarT) -> None:
    """Fix the type of a `let mut` bound to a literal, and of its uses so far."""
    init, uses = tcx.mut_literals[sym]
    sym.ty = target
    tcx.program.types[sym.decl] = target
    if init is not None:
        _settle_scalar(tcx, init, target)
    for u in uses:
        _settle_scalar(tcx, u, target)


def default_type(ty: Type, init: Any) -> ScalarT:
    """The type an untyped `let mut` takes where nothing else gives it one: `f32` for a float literal, `i32`
    for an integer one (`i64` for an integer literal past `i32`)."""
    if isinstance(ty, UntypedFloat):
        return ScalarT(DType.F32)
    big = isinstance(init, ast.IntLit) and not -(1 << 31) <= init.value < (1 << 31)
    return ScalarT(DType.I64 if big else DType.I32)


def defaulted(ty: Type) -> Type:
    """`ty` with each untyped element at its default: `i32`, `f32` for a float (a `let mut` tuple's at the end)."""
    if isinstance(ty, UntypedInt):
        return ScalarT(DType.I32)
    if isinstance(ty, UntypedFloat):
        return ScalarT(DType.F32)
    if isinstance(ty, TupleT):
        return TupleT(tuple(defaulted(t) for t in ty.elems))
    return ty


def has_untyped(ty: Type) -> bool:
    """A tuple type with an untyped literal element (at any depth): `(Tile<..>, {integer})`."""
    return isinstance(ty, (UntypedInt, UntypedFloat)) or \
        (isinstance(ty, TupleT) and any(has_untyped(t) for t in ty.elems))


def _merged(untyped: Type, typed: Type) -> Type:
    """`untyped` with each untyped element taken from `typed` (which coerces into it)."""
    if isinstance(untyped, (UntypedInt, UntypedFloat)) and isinstance(typed, ScalarT):
        return typed
    if isinstance(untyped, TupleT) and isinstance(typed, TupleT) and len(untyped.elems) == len(typed.elems):
        return TupleT(tuple(_merged(u, t) for u, t in zip(untyped.elems, typed.elems, strict=True)))
    return untyped


def _settle_tuple(tcx: CheckCx, e: Any, ty: Type) -> None:
    if isinstance(e, ast.TupleExpr) and isinstance(ty, TupleT) and len(e.elems) == len(ty.elems):
        for x, t in zip(e.elems, ty.elems, strict=True):
            _settle_tuple(tcx, x, t)
        tcx.program.types[e] = ty
    elif isinstance(ty, ScalarT):
        _settle_scalar(tcx, e, ty)


def adopt_tuple(tcx: CheckCx, sym: Symbol, typed: Type) -> Type:
    """`let mut q = (x, 0); q = (y, i);`: the variable's untyped elements take the types
    the assignment gives them (`i`'s), as a `let mut n = 0;` takes its first typed
    use's; so do its init and its uses so far. Returns the variable's type."""
    init, uses = tcx.mut_tuples[sym]
    new = _merged(sym.ty, typed)
    if new == sym.ty:
        return new
    sym.ty = new
    tcx.program.types[sym.decl] = new
    if init is not None:
        _settle_tuple(tcx, init, new)
    for u in uses:
        if isinstance(u, ast.Field):  # `q.1`: the element's type
            i = int(u.field.name)
            if isinstance(new, TupleT) and i < len(new.elems):
                _settle_tuple(tcx, u, new.elems[i])
        elif isinstance(u, ast.TupleExpr):  # a value assigned to it (round 17)
            _settle_tuple(tcx, u, new)
        else:
            tcx.program.types[u] = new
    if not has_untyped(new):
        del tcx.mut_tuples[sym]
    return new


def settle(tcx: CheckCx, e: Any, ty: Type, *, cast: bool = False) -> None:
    """Give untyped literals under `e` the element type of `ty` (context).
    `cast`: `e` is the operand of `as`, which converts (wraps) the value of
    an untyped name (`let w = 300; w as u8` is 44), not a literal's."""
    target: ScalarT | None = None
    if isinstance(ty, ScalarT):
        target = ty
    elif isinstance(ty, TileT):
        target = ScalarT(ty.dtype)
    elif isinstance(ty, (TensorT, RefT)):
        el = elem_of(ty)
        target = ScalarT(el) if el is not None else None
    if target is None:
        return
    _settle_scalar(tcx, e, target, cast=cast)


def _name_fits(tcx: CheckCx, e: ast.Name, sym: Symbol, target: ScalarT) -> None:
    """An immutable `let n = 100000;` (or an untyped `const N = 100000;`)
    takes each use's type, as the literal itself would: its value must fit
    that type (`let k: i16 = n;` is E0222 as `let k: i16 = 100000;` is, not
    a silent wrap to -31072). The same for a float type it does not fit:
    `(c % 7) as f16` with `let c = 65536;` computes in `f16`, where `c` is
    infinity (NaN, where the literal form `(65536 % 7) as f16` is E0222)."""
    if not isinstance(target.dtype, DType) or not (target.dtype.is_int or target.dtype.is_float):
        return
    d = tcx.program.dims.get(e)
    value = d.const_value if d is not None else None
    if not isinstance(value, int) or isinstance(value, bool) or e in tcx.overflowed:
        return
    kw = "const" if isinstance(sym.decl, ast.ConstDecl) else "let"
    if target.dtype.is_float:
        if not float_literal_overflows(float(value), target.dtype):
            return
        top = FLOAT_LIMITS[target.dtype][0]
        label = f"used as `{target}` here, where it rounds to infinity (`{target}` holds magnitudes up to {top})"
        help_ = (f"give `{e.ident.name}` an integer type (`{kw} {e.ident.name}: i32 = ..`) so that the arithmetic "
                 f"is integer arithmetic, and convert its result with `as {target}`")
    else:
        lo, hi = int_range(target.dtype)
        if lo <= value <= hi:
            return
        label = f"used as `{target}` here, which holds {lo}..={hi}"
        help_ = (f"give `{e.ident.name}` a type that holds it (`{kw} {e.ident.name}: i64 = ..`) and "
                 f"convert it with `as {target}`, or use a value in {lo}..={hi}")
    tcx.overflowed.add(e)
    d_ = tcx.err(T.LITERAL_OUT_OF_RANGE, f"`{e.ident.name}` is {value}, out of range for `{target}`", e.span, label)
    if isinstance(sym.decl, (ast.NamePat, ast.ConstDecl)):
        d_ = d_.secondary(sym.decl.span, f"`{e.ident.name}` is {value} here, with no type of its own")
    tcx.emit(d_.with_help(help_))


def _int_only(e: Any) -> bool:
    """An expression whose outermost operation exists only on integers."""
    match e:
        case ast.Binary(op=op):
            return op in ("<<", ">>", "&", "|", "^")
        case ast.Unary(op="!"):
            return True
        case ast.Block(tail=tail) if tail is not None:
            return _int_only(tail)
    return False


# built-ins whose result has their (value) arguments' element type (`where`: its branches')
_SAME_TYPE_BUILTINS = frozenset((
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "sin", "cos", "tanh", "sigmoid", "floor", "ceil", "erf",
    "asin", "acos", "atan", "atan2", "maximum", "minimum", "pow", "fma", "where"))


def _settle_scalar(tcx: CheckCx, e: Any, target: ScalarT, *, cast: bool = False) -> None:
    cur = tcx.program.types.get(e)
    if not isinstance(cur, (UntypedInt, UntypedFloat)):
        return
    if isinstance(cur, UntypedFloat) and not (elem_is_float(target.dtype) or
                                              isinstance(target.dtype, TypeParam)):
        return
    if target.dtype is DType.BOOL:
        return
    if isinstance(cur, UntypedInt) and elem_is_float(target.dtype) and _int_only(e) and cast:
        # `(1 << 24) as f32`: the operand of the cast is the integer the help below proposes
        # (it proposed this very cast, which failed the same way); computed in `i32`, then converted
        target = ScalarT(DType.I32)
    elif isinstance(cur, UntypedInt) and elem_is_float(target.dtype) and _int_only(e):
        # `t * (1 << 3)` on a float tile: a shift (or `& | ^ !`) is integer
        # arithmetic; it cannot become float arithmetic by context
        text = tcx.snippet(e)
        tcx.emit(tcx.err(T.MISMATCHED_DTYPES, f"this integer expression cannot be `{target}`", e.span,
                         "`<<`, `>>`, `&`, `|`, `^` and `!` work on integers")
                 .with_help(f"convert it: `({text}) as {target}`" if text and len(text) <= 40
                            else f"convert it with `as {target}`"))
        return
    if isinstance(e, ast.Unary) and e.op == "-" and (not isinstance(e.operand, ast.IntLit) or e.operand.value == 0) \
            and isinstance(target.dtype, DType) and target.dtype.is_int and not target.dtype.is_signed:
        # `-(!255)` settled as a `u32`: refused as `-x` of a `u32` is (both engines refused it when it ran);
        # `-0` too (`-1` is the literal's own E0222)
        tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot negate a value of type `{target}`", e.span,
                         f"unsigned: this is a `{target}` here")
                 .with_help("write `0`: an unsigned type has no negative numbers" if isinstance(e.operand, ast.IntLit)
                            else f"negate in a signed type: `(-({tcx.snippet(e.operand) or '..'}) as i64) as {target}` "
                            "wraps it, or compute without the minus"))
        return
    if cast and not isinstance(e, ast.Name) and _mut_literal_inside(tcx, e):
        # `(2 * h) as u64` of a `let mut h = 1` (round 18: `h` became a `u64`, and so did `for j in 0..h`): the
        # cast converts the arithmetic's value, as of `h as u64` below; `h` keeps its own type (a later typed
        # use's or the default) and the arithmetic is settled with it when it is (`adopt`)
        return
    if cast and isinstance(e, ast.Name):
        sym = tcx.program.symbols.get(e)
        if sym is not None and sym in tcx.mut_literals and isinstance(sym.ty, (UntypedInt, UntypedFloat)):
            # `let mut t = 0; t += 1; t as f32`: a cast converts the variable's value, it is no use that types
            # the variable (round 17: `t` became an `f32`, printed `1.0`, and `t += 1` stopped counting at
            # 2^24): the operand keeps the variable's type, which a later typed use gives (`t = n` of an `i64`
            # after the cast, as in Rust) or the default at the end (`_default_untyped`), re-settling it
            return
    tcx.program.types[e] = target
    if isinstance(e, ast.Name):
        sym = tcx.program.symbols.get(e)
        if sym is not None and sym in tcx.mut_literals and isinstance(sym.ty, (UntypedInt, UntypedFloat)):
            adopt(tcx, sym, target)
        elif sym is not None and isinstance(cur, UntypedInt) and not cast:
            _name_fits(tcx, e, sym, target)
    if isinstance(e, ast.IntLit) and isinstance(target.dtype, DType) and target.dtype.is_int:
        lo, hi = int_range(target.dtype)
        # the literal's value with its minus: `-1` is out of range for `u8`
        # (as `300` is for `i8`), `-128` is in range for `i8`
        if not lo <= (-e.value if e in tcx.negated else e.value) <= hi:
            tcx.emit(tcx.err(T.LITERAL_OUT_OF_RANGE, f"literal out of range for `{target}`", e.span,
                             f"`{target}` holds {lo}..={hi}")
                     .with_help(literal_range_help(tcx, e, target.dtype)))
    if isinstance(e, (ast.FloatLit, ast.IntLit)) and isinstance(target.dtype, DType) and target.dtype.is_float \
            and float_literal_overflows(float(e.value), target.dtype, e.text if isinstance(e, ast.FloatLit) else None):
        float_out_of_range(tcx, e, target.dtype)
    _settle_parts(tcx, e, target)
    if isinstance(e, ast.Binary) or (isinstance(e, ast.Unary) and not isinstance(e.operand, ast.IntLit)):
        # (`-1` as `u8`, `-300` as `i8`: the literal's own E0222; after the operands, whose own overflow is the
        # one reported: `check_overflow`)
        check_overflow(tcx, e, target)


def _mut_literal_inside(tcx: CheckCx, e: Any) -> bool:
    """Whether an untyped `let mut` variable is among the parts of `e` that would take its type
    (`_settle_parts`' arithmetic operands, `if` arms and block tails)."""
    match e:
        case ast.Name():
            sym = tcx.program.symbols.get(e)
            return sym is not None and sym in tcx.mut_literals and isinstance(sym.ty, (UntypedInt, UntypedFloat))
        case ast.Unary(operand=x):
            return _mut_literal_inside(tcx, x)
        case ast.Binary(op=op, lhs=l, rhs=r) if op not in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
            return _mut_literal_inside(tcx, l) or (op not in ("<<", ">>") and _mut_literal_inside(tcx, r))
        case ast.If(then=t, else_=el):
            return _mut_literal_inside(tcx, t) or (el is not None and _mut_literal_inside(tcx, el))
        case ast.Block(tail=tail) if tail is not None:
            return _mut_literal_inside(tcx, tail)
    return False


def _settle_parts(tcx: CheckCx, e: ast.Expr, target: ScalarT) -> None:
    """`_settle_scalar` of the parts of `e` that take its type."""
    match e:
        case ast.Unary(operand=x):
            _settle_scalar(tcx, x, target)
        case ast.Binary(op=op, lhs=l, rhs=r):
            if op in ("<<", ">>"):
                _settle_scalar(tcx, l, target)
            elif op not in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
                _settle_scalar(tcx, l, target)
                _settle_scalar(tcx, r, target)
        case ast.If(then=t, else_=el):
            _settle_scalar(tcx, t, target)
            if el is not None:
                _settle_scalar(tcx, el, target)
        case ast.Block(tail=tail) | ast.UnsafeBlock(body=ast.Block(tail=tail)):
            if tail is not None:
                _settle_scalar(tcx, tail, target)
            if isinstance(e, ast.UnsafeBlock):
                tcx.program.types[e.body] = target
        case ast.Call(args=args):
            # an element-wise built-in of untyped values (`exp(1.0)`, `abs(100)`, `maximum(2, 3)`) has
            # its arguments' type: they take the one its context settled (`x * exp(1.0)` of an `f16` `x`
            # computed `exp` in `f32`, and a kernel met `f16 * f32`: an ill-formed-IR ICE)
            sym = tcx.program.symbols.get(e)
            name = sym.name if sym is not None and sym.kind is SymbolKind.BUILTIN else None
            if name in _SAME_TYPE_BUILTINS:
                values = [a.value for a in args if a.name is None]
                for v in values[1:3] if name == "where" else values:
                    _settle_scalar(tcx, v, target)
        case ast.MethodCall(receiver=recv, args=args):
            # the method form (`(3.5).sqrt()`, `(0.5).abs()`, `(2.0).pow(3)`): its receiver and argument
            # likewise (`x * (3.5).sqrt()` of an `f16` `x` was the same ICE: hrev15, kernel_diff --exact)
            sym = tcx.program.symbols.get(e)
            if sym is not None and sym.kind is SymbolKind.METHOD and sym.name in _SAME_TYPE_BUILTINS:
                _settle_scalar(tcx, recv, target)
                for a in args:
                    if a.name is None:
                        _settle_scalar(tcx, a.value, target)
        case _:
            pass


def float_out_of_range(tcx: CheckCx, e: Any, dt: DType) -> None:
    """E0222 for a float literal (or an integer literal made a float) that
    rounds to infinity in `dt`: `let x: f32 = 1e39;`, `70000.0` as `f16`,
    `1e999999` anywhere. The program meant a number, not infinity."""
    top, t = FLOAT_LIMITS[dt][0], dt.value
    wider = {DType.F16: "f32", DType.BF16: "f32", DType.F32: "f64"}.get(dt)
    help_ = (f"`{t}` holds magnitudes up to {top} (`{t}::MAX`): use a smaller value"
             + (f" or a wider type (`{wider}`" + (f": `{e.text}{wider}`" if isinstance(e, ast.FloatLit)
                                                  and e.suffix is None else "") + ")" if wider else "")
             + f", or write `{t}::INFINITY` if infinity is meant")
    tcx.emit(tcx.err(T.LITERAL_OUT_OF_RANGE, f"literal out of range for `{dt.value}`", e.span,
                     f"rounds to infinity in `{dt.value}`").with_help(help_))


def literal_range_help(tcx: CheckCx, e: ast.IntLit, dt: DType) -> str:
    """E0222's help for an integer literal out of `dt`'s range: the bit pattern's cast (`_bit_pattern_help`), else
    the range, and a wider type where there is one (round 27, huser28: `0x9E3779B97F4A7C15i64`, a hash constant
    written with a suffix, was "use a value in .., or a wider type", and no integer type is wider than `i64`)."""
    lo, hi = int_range(dt)
    wider = {8: "16", 16: "32", 32: "64"}.get(dt.bits)
    return _bit_pattern_help(tcx, e, dt) or (f"use a value in {lo}..={hi}" + (
        f", or a wider type (`{dt.value[0]}{wider}`)" if wider else f" (no integer type is wider than `{dt}`)"))


def _bit_pattern_help(tcx: CheckCx, e: ast.IntLit, dt: DType) -> str | None:
    """A hex, octal or binary literal that fits the unsigned type of a signed `dt`'s width (a hash's
    `t * 0x85EBCA6B` of an `i32` tile; round 22: "use a value in -2147483648..=2147483647, or a wider type"):
    the bits, as Rust's lint says, by the unsigned literal cast. A suffixed literal (`0x9E3779B97F4A7C15i64`,
    round 27) is given without its suffix."""
    text = tcx.snippet(e)
    if e.suffix is not None and text.endswith(e.suffix):
        text = text[:-len(e.suffix)]
    if not dt.is_signed or text[:2].lower() not in ("0x", "0o", "0b") or e in tcx.negated \
            or not 0 <= e.value < 1 << dt.bits:
        return None
    unsigned = f"u{dt.bits}"
    wrapped = e.value - (1 << dt.bits)
    return (f"`{text}` is a bit pattern: `{text}{unsigned} as {dt}` keeps its bits ({wrapped}), or compute in "
            f"`{unsigned}`")


def _where_literals(tcx: CheckCx, node: Any, want: DType) -> str | None:
    """`where(c, 1.0, 0.0)` with both branches untyped literals (or their negations), written with `want`'s
    suffix on each; None for anything else (a short condition only)."""
    if not (isinstance(node, ast.Call) and isinstance(node.callee, ast.Name) and node.callee.ident.name == "where"
            and len(node.args) == 3):
        return None
    out = []
    for a in node.args[1:]:
        v, neg = a.value, ""
        if isinstance(v, ast.Unary) and v.op == "-":
            if not want.is_signed:
                return None  # (unary `-` takes signed values only)
            v, neg = v.operand, "-"
        if not isinstance(v, (ast.FloatLit, ast.IntLit)) or v.suffix is not None:
            return None
        text = v.text if isinstance(v, ast.FloatLit) else str(v.value)
        if want.is_float and isinstance(v, ast.IntLit):
            text += ".0"
        elif not want.is_float and isinstance(v, ast.FloatLit):
            return None
        out.append(f"{neg}{text}{want.value}")
    cond = tcx.snippet(node.args[0].value) or "c"
    return f"where({cond if len(cond) < 60 else 'c'}, {out[0]}, {out[1]})"
