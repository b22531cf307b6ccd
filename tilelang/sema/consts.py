"""Constant folding and shape algebra.

Decides the compile-time value of an expression (`const_value`: literals,
`const` items, unary and binary operators, casts), the symbolic dimension a
type's shape expression denotes (`static_dim`: literals, consts and const
generics, combined by `dim_op`), and reports constant arithmetic that cannot
have a value: division by zero (`div_by_zero`, E0226) and constant integer
overflow (`check_overflow`, E0227), as rustc does rather than wrapping.

`fold` is the one definition of Tile's constant arithmetic on Python values
(integer `/` and `%` truncate toward zero).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from tilelang.diagnostics.codes import names as N
from tilelang.diagnostics.codes import types as T
from tilelang.dtypes import (ARITH, COMPARE, DType, convert_scalar, float_div, float_rem, literal_float, round_float,
                             trunc_div, trunc_rem)
from tilelang.memo import ByIdentity
from tilelang.sema.context import CheckCx, Fx, suggest
from tilelang.sema.program import SymbolKind
from tilelang.sema.typeops import int_range
from tilelang.sema.types import Dim, ScalarT, TypeParam, UntypedInt
from tilelang.syntax import ast


@dataclass(slots=True)
class After:
    """What `const_value` reads once checking is done (`constant_shifts`,
    `host_instances`): the checked program, the value of each immutable
    `let` (by its pattern) and, in a generic instance, its element types."""

    program: Any
    lets: dict[Any, ast.Expr]
    subst: dict[str, DType] = field(default_factory=dict)

    def eval_const(self, qual: str) -> Any:
        return self.program.consts.get(qual)


def let_values(decls: Any) -> dict[Any, ast.Expr]:
    """The value of each immutable `let name = value;` in the bodies of `decls`."""
    lets: dict[Any, ast.Expr] = {}
    for decl in decls:
        lets.update(_LETS.get(decl, partial(_lets_of, decl)))
    return lets


_LETS = ByIdentity()  # a declaration -> its `let`s' values (every compile reads std's declarations' again)


def _lets_of(decl: Any) -> dict[Any, ast.Expr]:
    return {node.pattern: node.value for node in ast.walk(decl.body)
            if isinstance(node, ast.Let) and isinstance(node.pattern, ast.NamePat) and node.value is not None}


def constant_operand(program: Any, lets: dict[Any, ast.Expr], e: Any, limit: int | None = 64,
                     depth: int = 0) -> bool:
    """Whether a generic instance's operand `e` counts as a constant: literals,
    `const`s and immutable `let`s of constants (by `lets`, `let_values`'s map),
    through unary operators, casts and arithmetic (not `&&` / `||`). The check
    (`sema/host_instances`, a chain of at most `limit` `let`s) and the run
    (`runtime/host_instances`, `limit` None) read it the same way."""
    match e:
        case ast.IntLit() | ast.FloatLit() | ast.BoolLit():
            return True
        case ast.Unary(operand=x) | ast.Cast(expr=x):
            return constant_operand(program, lets, x, limit, depth)
        case ast.Binary(op=op, lhs=lhs, rhs=rhs) if op not in ("&&", "||"):
            return constant_operand(program, lets, lhs, limit, depth) \
                and constant_operand(program, lets, rhs, limit, depth)
        case ast.Name() | ast.Path():
            sym = program.symbol_of(e)
            if sym is None:
                return False
            if sym.kind is SymbolKind.CONST:
                return True
            init = lets.get(sym.decl) if sym.kind is SymbolKind.LOCAL and not sym.mutable else None
            return init is not None and (limit is None or depth < limit) \
                and constant_operand(program, lets, init, limit, depth + 1)
    return False


def _type(tcx: CheckCx | After, e: ast.Expr) -> Any:
    ty = tcx.program.types.get(e)
    if isinstance(tcx, After) and isinstance(ty, ScalarT) and isinstance(ty.dtype, TypeParam) \
            and ty.dtype.name in tcx.subst:
        return ScalarT(tcx.subst[ty.dtype.name])
    return ty


def const_value(tcx: CheckCx | After, e: ast.Expr, fx: Fx | None, depth: int = 0) -> Any:
    """The compile-time value of a constant expression, or None. After
    checking (`tcx` an `After`, no `fx`), names are read from the checked
    program's symbols, an immutable `let` by its value."""
    match e:
        case ast.FloatLit(value=v):
            dt = _float_type(tcx, e)
            # `0.1f32` is f32's 0.1, rounded once from the digits (`literal_float`)
            return convert_scalar(literal_float(v, e.text, dt), dt) if dt is not None else v
        case ast.IntLit(value=v):
            dt = _float_type(tcx, e)
            # an integer literal a float context typed is that float: `const A: f32 = 1 / 3;` divides
            # floats (0.33333334), as `let a: f32 = 1 / 3;` does (it was integer division: 0)
            return convert_scalar(v, dt) if dt is not None else v
        case ast.BoolLit(value=v):
            return v
        case ast.Name(ident=i) if fx is not None:
            sym = fx.lookup(i.name)
            if sym is not None and sym.kind is SymbolKind.CONST:
                return tcx.eval_const(sym.qualname or i.name)
            return None
        case ast.Path() if fx is not None:
            # `const C: f32 = std::math::PI / 2.0;`, `f32::MAX`: the symbol the check of the path found
            sym = tcx.program.symbols.get(e)
            if sym is None or sym.kind is not SymbolKind.CONST:
                return None
            return sym.value if sym.decl is None else tcx.eval_const(sym.qualname or sym.name)
        case ast.Name() | ast.Path() if isinstance(tcx, After):
            sym = tcx.program.symbols.get(e)
            if sym is not None and sym.kind is SymbolKind.CONST:
                if sym.decl is None:  # a built-in (`u8::MAX`); a float one is no shift's operand
                    return sym.value if isinstance(sym.value, int) else None
                return tcx.eval_const(sym.qualname or sym.name)
            init = tcx.lets.get(sym.decl) if sym is not None and sym.kind is SymbolKind.LOCAL \
                and not sym.mutable else None
            if init is None or depth > 64:
                return None
            v = const_value(tcx, init, None, depth + 1)
            ty = _type(tcx, e)
            dt = ty.dtype if isinstance(ty, ScalarT) and isinstance(ty.dtype, DType) else None
            # the read's type, as both engines convert an untyped `let` where it is read (a float
            # read as an integer is its own error: no value)
            if v is None or dt is None or dt is DType.BOOL or isinstance(v, bool):
                return v
            return None if isinstance(v, float) and not dt.is_float else convert_scalar(v, dt)
        case ast.Unary(op=op, operand=x):
            v = const_value(tcx, x, fx, depth)
            if v is None:
                return None
            ty = _type(tcx, e)
            dt = ty.dtype if isinstance(ty, ScalarT) and isinstance(ty.dtype, DType) and ty.dtype.is_int else None
            if op == "-":
                return dt.wrap(-v) if dt is not None and isinstance(v, int) else -v
            if isinstance(v, bool):
                return not v
            # `!` within the operand's type: `!127u8` is 128, `(!16u16) >> 7` is 511 (Python's `~`
            # gave -128 and -17, whose shift kept the sign: 65535)
            return dt.wrap(~v) if dt is not None and isinstance(v, int) else ~v
        case ast.Binary(op=op, lhs=lhs, rhs=rhs):
            a, b = const_value(tcx, lhs, fx, depth), const_value(tcx, rhs, fx, depth)
            if a is None or b is None:
                return None
            try:
                v = _fold(op, a, b)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                return None
            ty = _type(tcx, e)
            if op in ("<<", ">>"):
                return shift_wrap(ty, v)
            if isinstance(v, int) and not isinstance(v, bool) and isinstance(ty, ScalarT) \
                    and isinstance(ty.dtype, DType) and ty.dtype.is_int and ty.dtype is not DType.BOOL:
                # wraps as at run time where the checker knew no operand's value to report E0227 with
                # (`127 + ((!0) & 5)` as `i8`: `!0` of an untyped literal): it held 132 in an `i8` const
                return ty.dtype.wrap(v)
            dt = _float_type(tcx, e) if isinstance(v, float) else None
            # f16, bf16 and f32 arithmetic is rounded to its type after every operation, as at
            # run time: `const F: f16 = 2048.0 + 1.0 + 1.0;` is 2048, not 2050
            return convert_scalar(v, dt) if dt is not None else v
        case ast.Cast(expr=x, ty=t):
            v = const_value(tcx, x, fx, depth)
            if v is None or not isinstance(t, ast.NamedType):
                return None
            dt = DType.parse(t.name.name)
            if dt is None and isinstance(tcx, After):
                dt = tcx.subst.get(t.name.name)  # `as T` in an instance
            if dt is None:
                return None
            src = _float_type(tcx, x)
            if src is not None and isinstance(v, float):
                v = convert_scalar(v, src)  # a value of its own type first: `(1e10f32 as f16)` is inf
            return convert_scalar(v, dt)  # as every engine converts: `3e10 as i32` saturates
        case _:
            return None


def _float_type(tcx: CheckCx | After, e: ast.Expr) -> DType | None:
    """The float type of expression `e` where the checker settled one (a
    suffix, a typed constant, a cast), else None."""
    if isinstance(e, ast.FloatLit) and e.suffix:
        return DType.parse(e.suffix)
    ty = _type(tcx, e)
    dt = getattr(ty, "dtype", None) if isinstance(ty, ScalarT) else None
    return dt if isinstance(dt, DType) and dt.is_float else None


def static_dim(tcx: CheckCx, e: ast.Expr, fx: Fx) -> Dim | None:
    """A dimension expression in a type: literals, consts, const generics."""
    match e:
        case ast.IntLit(value=v):
            return Dim.const(v)
        case ast.Name(ident=i):
            sym = fx.lookup(i.name)
            if sym is None and (i.name in fx.module.failed or "*" in fx.module.failed):
                return Dim.var(i.name)  # its `use` failed, and said so
            if sym is None:
                d = tcx.err(N.UNKNOWN_NAME, f"cannot find value `{i.name}` in this scope", i.span,
                            "not found in this scope")
                guess = suggest(i.name, fx.visible_names())
                tcx.emit(d.with_help(f"did you mean `{guess}`?") if guess else
                         d.with_help(f"declare it as a const generic: `<const {i.name}: i32>`"))
                return Dim.var(i.name)  # avoid a second error about constness
            tcx.program.symbols[e] = sym
            if sym.kind is SymbolKind.GENERIC:
                return Dim.var(i.name)
            if sym.kind is SymbolKind.CONST:
                qual = sym.qualname or i.name
                v = tcx.eval_const(qual)
                if isinstance(v, int) and not isinstance(v, bool):
                    return Dim.const(v)
                if v is None and tcx.const_state.get(qual) in ("cycle", "done"):
                    return Dim.var("?")  # its own error is reported (a cycle, not a constant): no second one
                if isinstance(v, (bool, float)):
                    ty = getattr(sym.ty, "dtype", None)
                    tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"`{i.name}` is a `{ty or type(v).__name__}` constant, "
                                     "not an integer", e.span, "a dimension counts elements")
                             .secondary(sym.span, f"`{i.name}` is declared here")
                             .with_help(f"give the dimension an integer constant (`const {i.name}: i32 = "
                                        f"{int(v) if isinstance(v, float) and v == v and abs(v) < 2**31 else 4};`)"))
                    return Dim.var("?")
                return None
            return None
        case ast.Path():
            # `Tensor<f32, [lib::N]>`, `[u8::MAX]`: a module constant by its path (round 21: "not a
            # compile-time constant", whose help was "use a literal, a `const`, ..")
            tcx.check_expr(e, fx, None)  # resolves it (an unknown one reported) and records its symbol
            psym = tcx.program.symbols.get(e)
            if psym is None:
                return Dim.var("?")  # reported
            pv = (tcx.eval_const(psym.qualname or psym.name) if psym.decl is not None else psym.value) \
                if psym.kind is SymbolKind.CONST else None
            return Dim.const(pv) if isinstance(pv, int) and not isinstance(pv, bool) else None
        case ast.Binary(op=op, lhs=lhs, rhs=rhs):
            a, b = static_dim(tcx, lhs, fx), static_dim(tcx, rhs, fx)
            if a is None or b is None:
                return None
            if op in ("/", "%") and b.const_value == 0:
                div_by_zero(tcx, op, rhs)
                return Dim.var("?")  # reported; no second error about constness
            return dim_op(op, a, b)
        case ast.Unary(op="-", operand=x):
            a = static_dim(tcx, x, fx)
            return None if a is None else -a
        case _:
            return None


def rank_limit(tcx: CheckCx, span: Any, rank: int) -> Any:
    """E0217: a shape or index of more dimensions than `limits.MAX_RANK`."""
    from tilelang.limits import MAX_RANK

    return tcx.emit(tcx.err(T.RANK_MISMATCH, f"a shape of {rank} dimensions: tensors and tiles have at most "
                            f"{MAX_RANK}", span, f"{rank} dimensions")
                    .with_help("merge dimensions with `reshape` (size-1 ones add nothing)"))


def shift_wrap(ty: Any, value: Any) -> Any:
    """A constant shift's value as the shift computes it in its type `ty`
    (an untyped one is an `i32`, its default): the bits shifted out are lost
    (`1 << 31` is `i32::MIN`, as in Rust and at run time), so a shape or a
    constant built from it is the one the program will see."""
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    dt = ty.dtype if isinstance(ty, ScalarT) else DType.I32 if isinstance(ty, UntypedInt) else None
    if not isinstance(dt, DType) or not dt.is_int or dt is DType.BOOL:
        return value
    return dt.wrap(value)


def check_overflow(tcx: CheckCx, e: ast.Binary | ast.Unary, ty: ScalarT, amount: Any = None) -> None:
    """Constant integer arithmetic whose value does not fit its type
    (`1 << 40` as `i32`): rustc rejects it too, rather than wrap to 0.
    `amount`: a shift's amount where its dimension is not known (`constant_shifts`)."""
    if not isinstance(ty.dtype, DType) or not ty.dtype.is_int or ty.dtype is DType.BOOL or e in tcx.overflowed \
            or _operand_overflows(tcx, e):
        return
    lo, hi = int_range(ty.dtype)
    bits = (hi - lo).bit_length()
    if e.op in ("<<", ">>"):
        # as in Rust, a shift overflows only by its amount; the bits shifted out wrap
        if amount is None:
            sd = tcx.program.dims.get(e.rhs)
            amount = sd.const_value if sd is not None else None
        if amount is None or 0 <= amount < bits:
            return
        tcx.overflowed.add(e)
        tcx.emit(tcx.err(T.CONSTANT_OVERFLOW, f"this shift overflows `{ty}`", e.span,
                         f"shifting a {bits}-bit `{ty}` by {amount} bits")
                 .with_help(_wider_help(ty.dtype, bits, None)))
        return
    d = tcx.program.dims.get(e)
    value = d.const_value if d is not None else None
    if value is None or lo <= value <= hi:
        return
    tcx.overflowed.add(e)
    tcx.emit(tcx.err(T.CONSTANT_OVERFLOW, f"this arithmetic operation overflows `{ty}`", e.span,
                     f"the value {value} does not fit in `{ty}` ({lo}..={hi})")
             .with_help(_wider_help(ty.dtype, bits, value)))


def _operand_overflows(tcx: CheckCx, e: ast.Binary | ast.Unary) -> bool:
    """An operand of `e` already reported as overflowing: that operand is the mistake, and `e` is marked so as
    not to report it again with a value it never has (`2 * 1431655766 * 3` was two errors, the second "the
    value 8589934596"; hrev18)."""
    for x in (e.operand,) if isinstance(e, ast.Unary) else (e.lhs, e.rhs):
        while isinstance(x, ast.Unary) and x not in tcx.overflowed:  # (`-(a * b)`: a minus is not always checked)
            x = x.operand
        if isinstance(x, ast.Binary | ast.Unary) and x in tcx.overflowed:
            tcx.overflowed.add(e)
            return True
    return False


def _wider_help(dt: DType, bits: int, value: int | None) -> str:
    signed = dt.value.startswith("i")
    if not signed and value is not None and value < 0:
        return f"`{dt.value}` holds no negative values: compute in a signed type such as `i64`"
    for w in (16, 32, 64):
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
        if w > bits and (value is None or lo <= value <= hi):
            name = f"{'i' if signed else 'u'}{w}"
            return (f"compute in a wider type: a suffixed operand like `1{name}`, or a typed binding "
                    f"(`let n: {name} = ..`)")
    return "the result cannot be represented; check the operands"


def div_by_zero(tcx: CheckCx, op: str, rhs: ast.Expr) -> None:
    word = "division" if op == "/" else "remainder"
    tcx.emit(tcx.err(T.DIVISION_BY_ZERO, f"integer {word} by zero", rhs.span, "this is always zero")
             .note("integer division by zero has no value, so a divisor known to be zero is an error")
             .with_help("divide by a value that is not zero"))


def dim_op(op: str, a: Dim, b: Dim) -> Dim | None:
    if op in ("+", "-", "*"):
        return ARITH[op](a, b)  # type: ignore[no-any-return]
    match op:
        case "/":
            return a.floordiv(b)
        case "%":
            return a.mod(b)
        case "<<" | ">>":
            av, bv = a.const_value, b.const_value
            if bv is None or bv < 0 or bv > 63:
                return None
            if av is None:
                return a * (1 << bv) if op == "<<" else None
            return Dim.const(av << bv if op == "<<" else av >> bv)
        case "&" | "|" | "^":
            # constants only: their bits in the operands' type (Python's ints are two's complement
            # with the sign extended), so what they feed is checked as a literal would be
            # (`(255u8 | 1u8) + 1u8` is E0227, where it was 256 in a `u8` const)
            av, bv = a.const_value, b.const_value
            if av is None or bv is None:
                return None
            return Dim.const(ARITH[op](av, bv))
        case _:
            return None


def _fold(op: str, a: Any, b: Any) -> Any:
    both_int = isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and not isinstance(b, bool)
    if op in ARITH:
        return ARITH[op](a, b)
    if op in COMPARE:
        return COMPARE[op](a, b)
    match op:
        case "/":
            if both_int:
                return trunc_div(a, b)
            return float_div(float(a), float(b))  # IEEE: `1.0 / 0.0` is inf, `0.0 / 0.0` NaN
        case "%":
            if both_int:
                return trunc_rem(a, b)
            return float_rem(a, b)  # the sign of `a`, as kernels and the host compute it
        case "<<" | ">>":
            if not 0 <= b < 128:  # never build a huge integer for `1 << 10**9`
                raise OverflowError("shift amount out of range")
            return a << b if op == "<<" else a >> b
        case "&&":
            return a and b
        case "||":
            return a or b
        case _:
            raise ValueError(op)


def constant_shifts(tcx: CheckCx) -> None:
    """E0227 for a shift of constants past its type's width whose amount the
    shapes algebra does not know (`((!7) | (255 as i32)) >> 33`: dimensions
    do not follow an untyped `!` or a cast, whose bits depend on the type
    settled later). Run once every type is settled; both engines refuse the
    same shift when it runs (`runtime/host_instances.constant_shift`, the
    kernel lowering's fold), so `tilec check` now says it first. Constants are
    what the engines fold: literals, `const` items, operators and casts of
    them, and immutable `let`s of them. (A generic body's shifts of `T` are
    not typed with a `DType`: each instance judges them.)

    Its errors come after the checker's, so each is moved before the first
    earlier one of its file located after it: the errors of a file stay in
    the order of its source (hrev15; they were printed last)."""
    decls = [item for module in tcx.program.all_modules() for item in module.ast.items if isinstance(item, ast.FnDecl)]
    after = After(tcx.program, let_values(decls))
    diags = tcx.sink.diagnostics
    before = len(diags)
    for decl in decls:
        for e in ast.walk(decl.body):
            if not isinstance(e, ast.Binary) or e.op not in ("<<", ">>") or e in tcx.overflowed:
                continue
            ty = tcx.program.types.get(e)
            if not isinstance(ty, ScalarT) or not isinstance(ty.dtype, DType) or not ty.dtype.is_int:
                continue
            amount = constant_amount(after, e)
            if amount is not None:
                check_overflow(tcx, e, ty, amount)
    new = diags[before:]
    del diags[before:]
    for d in new:
        diags.insert(_source_place(diags, d), d)


def _source_place(diags: list[Any], d: Any) -> int:
    """Where `d` goes among `diags`: before the first of its file located
    after it, else last."""
    span = d.primary_span
    if span is None:
        return len(diags)
    for i, other in enumerate(diags):
        o = other.primary_span
        if o is not None and o.file == span.file and o.start > span.start:
            return i
    return len(diags)


def constant_amount(after: After, e: ast.Binary) -> int | None:
    """The amount of shift `e` where both its sides are constants, else None."""
    try:
        if const_value(after, e.lhs, None) is None:
            return None
        amount = const_value(after, e.rhs, None)
    except (ArithmeticError, ValueError, TypeError):
        return None
    return amount if isinstance(amount, int) and not isinstance(amount, bool) else None


#: the math built-ins whose value a constant's help computes (round 21), as the kernels compute them (`_math_value`)
_MATH_VALUES = frozenset((
    "sqrt", "exp", "exp2", "log", "log2", "sin", "cos", "tanh", "abs", "floor", "ceil", "atan", "asin", "acos", "pow",
    "atan2", "maximum", "minimum", "erf"))


def _math_value(name: str, vals: list[float], ftype: Any) -> float | None:
    """Built-in `name` of `vals` in `ftype` (np.float32 or np.float64), as a kernel computes it: through the
    interpreter's element-wise op (f32 `pow` is f64 pow rounded once, `atan2` f64's rounded once, `erf` erf32's
    algorithm: NumPy's own f32 `power` and `arctan2` are an ulp off; hrev28), `asin`, `acos` and `atan` by the
    kernels' atan2 formula (`num.math_values`, which host code computes by too); None for a wrong count of
    arguments."""
    import numpy as np

    from tilelang.interp import numeric as num
    from tilelang.ir.nodes import ElemOp

    dt = DType.F64 if ftype is np.float64 else DType.F32
    arity = 2 if name in ("pow", "atan2", "maximum", "minimum") else 1
    if len(vals) != arity:
        return None
    xs = [np.asarray(v, ftype) for v in vals]
    with np.errstate(all="ignore"):
        r = num.math_values(name, xs[0], dt) if arity == 1 else num.elementwise(ElemOp(name), xs, dt)
    return float(r)


def math_const_help(tcx: CheckCx, e: ast.Expr, fx: Fx, dtype: DType) -> str | None:
    """The help of a module constant whose value calls a math built-in (`const C: f32 = sqrt(2.0 / PI);`, which
    Rust refuses too): the value it would have, written as a literal of the constant's type, or None where the
    expression is not one of constants and math calls (round 21: the help was "use literals, other constants
    and operators on them", which named no value)."""
    import numpy as np

    from tilelang.interp.printing import format_scalar

    ftype = np.float64 if dtype is DType.F64 else np.float32
    narrow = dtype in (DType.F16, DType.BF16)  # computed in f32 and rounded once an operation, as they run
    called: list[str] = []

    def rounded(v: float) -> float:
        return round_float(v, dtype) if narrow else v

    def value(x: ast.Expr) -> float | None:
        match x:
            case ast.Call(callee=ast.Name(ident=i), args=args) if i.name in _MATH_VALUES and not x.generics \
                    and all(a.name is None for a in args):
                vals = [value(a.value) for a in args]
                r = None if None in vals else _math_value(i.name, vals, ftype)  # type: ignore[arg-type]
                if r is None:
                    return None
                called.append(i.name)
                return rounded(r)
            case ast.MethodCall(receiver=r, method=m, args=args) if m.name in _MATH_VALUES and not x.generics:
                vals = [value(r), *(value(a.value) for a in args)]
                got = None if None in vals else _math_value(m.name, vals, ftype)  # type: ignore[arg-type]
                if got is None:
                    return None
                called.append(m.name)
                return rounded(got)
            case ast.Binary(op=op, lhs=a, rhs=b) if op in ("+", "-", "*", "/"):
                va, vb = value(a), value(b)
                if va is None or vb is None:
                    return None
                with np.errstate(all="ignore"):
                    return rounded(float(_fold(op, ftype(va), ftype(vb))))
            case ast.Unary(op="-", operand=a):
                va = value(a)
                return None if va is None else -va
        v = const_value(tcx, x, fx)
        return rounded(float(v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    v = value(e)
    if v is None or not called:
        return None
    # (f16 and bf16: their value's shortest digits, as `print` writes it; it was f32's, "in `f16`")
    text = repr(v) if dtype is DType.F64 else format_scalar(np.float16(v) if dtype is DType.F16 else v, dtype) \
        if narrow else str(np.float32(v))
    return (f"`{called[0]}` is not evaluated at compile time (as in Rust): write its value, `{text}` (what "
            f"`{tcx.snippet(e)}` is in `{dtype.value}`), or compute it with a `let` where it is used")
