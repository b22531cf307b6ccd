"""The host evaluator's rules for values whose type only a call knows: the
instance of a generic function (`fn f<T>`) and an untyped `let` whose uses the
checker typed by their context. Each keeps the host to what a kernel's lowering
computes for the same source (`ir/lower`), and to the concrete form's checks:

- `literal`: an untyped literal that the instance's `T` cannot hold is E0201
  (`x * 0.5` with `T = i32` was 0, `x + 300` with `T = u8` wrapped to 44);
  inside a cast's operand the floats stay floats until the cast.
- `instance_shift`: a shift of constants past `T`'s width is E0227 (it was 0).
- `result_dtype`: an operator's result type, float arithmetic inside such a
  cast's operand excepted.
- `name_value`: an untyped `let` read where the checker typed it another
  number type (`(a - b) as f32`, `c << 16` of an `i16` `T`, an `f32` `let`
  added to an `f16`) is that type (a float never becomes an integer).

Functions of the evaluator (`HostEvaluator`, its `_types`, `cast_depth`,
`lets`), so that class stays one screenful shorter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tilelang.diagnostics.instances import int_bounds
from tilelang.diagnostics.model import TileError
from tilelang.dtypes import DType, LiteralFloat, literal_float, round_literal
from tilelang.runtime import host_domains as domains
from tilelang.runtime import host_ops as ops
from tilelang.sema import consts
from tilelang.sema.host_instances import destination, generic_overflow, generics_only
from tilelang.sema.types import ScalarT, TypeParam
from tilelang.syntax import ast


def instance_type(ev: Any, e: ast.Expr) -> DType | None:
    """The instance's element type where the checker typed `e` with a type
    parameter (`T`), else None."""
    ty = ev.program.type_of(e)
    d = ty.dtype if isinstance(ty, ScalarT) else None
    return ev._types.get(d.name) if isinstance(d, TypeParam) else None


def literal(ev: Any, lit: ast.IntLit | ast.FloatLit, negated: bool = False) -> Any:
    """A literal's value in the type the checker settled. In an instance of
    a generic function, an untyped literal that `T` cannot hold is E0201, as in
    a kernel's instance and the concrete form. Inside a cast's operand
    (`(0.5 * 2.0) as T`, `(-0.1) as T`) the checker types the literals `T`, but
    an integer `T` is no context for floats there (`(0.5 * 2.0) as i32`
    computes in floats, as the kernel's instance does: the host made 0): they
    stay floats, and only an integer literal's range is checked (`300 as T`
    with `T = u8` is refused, as `300 as u8` is). `negated`: under a unary
    minus (`-128` of an `i8`)."""
    if ev._types and not lit.suffix:
        dt = instance_type(ev, lit)
        if dt is not None and ev.cast_depth and not dt.is_float and (
                isinstance(lit, ast.FloatLit) or dt is DType.BOOL):
            return float(lit.value) if isinstance(lit, ast.FloatLit) else lit.value
        if dt is not None:
            domains.check_literal(lit.value, dt, lit.span, negated,
                                  lit.text if isinstance(lit, ast.FloatLit) else None)
    dt = ev.scalar_dtype(lit) or (DType.parse(lit.suffix) if lit.suffix else None)
    if isinstance(lit, ast.FloatLit):
        return ops.to_scalar(literal_float(lit.value, lit.text, dt), dt) if dt is not None else float(lit.value)
    return ops.to_scalar(lit.value, dt) if dt is not None else lit.value


def result_dtype(ev: Any, e: ast.Expr, *operands: Any) -> DType | None:
    """The type an operator's result takes: the checker's, except for float
    arithmetic inside a generic instance's cast operand typed with an integer
    `T` (`literal`, `check_operands`), which stays float until the cast."""
    dt: DType | None = ev.scalar_dtype(e)
    if ev.cast_depth and dt is not None and not dt.is_float and instance_type(ev, e) is not None \
            and any(_is_float(v) for v in operands):
        return None
    return dt


def check_operands(ev: Any, e: ast.Binary, a: Any, b: Any) -> None:
    """E0201 for a float operand of arithmetic that the instance's integer
    `T` types (`x + c` of `let c = 256 / 0.1;`), as the kernel's instance and
    the concrete form refuse it. Inside a cast's operand a float may meet
    constants (`(3 - 0.5) as T`, `(255 - c) as T` of a float `c`: float
    arithmetic until the cast, as `(3 - 0.5) as i32` is), not a value of `T`
    (`((-x) * 0.5) as T`, as `((-x) * 0.5) as i8` of an `i8` `x` is E0201)."""
    dt = instance_type(ev, e)
    if dt is None or dt.is_float:
        return
    for v, node, other, other_node in ((a, e.lhs, b, e.rhs), (b, e.rhs, a, e.lhs)):
        if _is_float(v) and not (ev.cast_depth and (_is_float(other) or _constant(ev, other_node))):
            domains.check_float_operand(v, dt, node)


def cast_operands(ev: Any, e: ast.Binary, a: Any, b: Any) -> tuple[Any, Any]:
    """The operands of float arithmetic in a generic cast's operand
    (`check_operands` let it through): an integer constant becomes a float,
    so the operation is a float one until the cast (`(-128 + 1e3) as T`: the
    `i16` -128 made the sum an `i16`)."""
    if not (ev.cast_depth and (_is_float(a) or _is_float(b))):
        return a, b
    dt = instance_type(ev, e)
    if dt is None or dt.is_float:
        return a, b

    def as_float(v: Any) -> Any:
        return float(v) if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) else v

    return as_float(a), as_float(b)


def _is_float(v: Any) -> bool:
    return isinstance(v, (float, np.floating))


def name_value(ev: Any, e: ast.Expr, v: Any) -> Any:
    """The value of a variable read at `e`: an untyped integer `let` used
    where the checker typed it otherwise (`(a - b) as f32`, a cast is a
    context; `c << 16` typed by an `i16` `T`) takes that type, as a literal
    there does and as kernels convert it (it kept the `let`'s: `a - b` of
    16777217 and 1 was 16777216, in a kernel 16777215). A float one (or a
    float constant) read as an instance's integer `T` outside a cast's operand
    is E0201 (`return c;` of `let c = 2.5;` was 2; the concrete form is E0203),
    as in a kernel's instance (`ir/lower/exprs._float_read`)."""
    if isinstance(v, (float, np.floating)) and not ev.cast_depth and isinstance(e, ast.Name):
        domains.check_float_read(v, instance_type(ev, e), e)
    if isinstance(v, LiteralFloat):
        # an untyped float `let`: the literal rounded once to the read's float type (f64's value where an f64
        # reads it), else to the `let`'s default, f32
        dt = ev.scalar_dtype(e)
        dt = dt if dt is not None and dt.is_float else DType.F32
        return ops.to_scalar(round_literal(v, dt), dt)
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        dt = ev.scalar_dtype(e)
        if dt is not None and dt is not DType.BOOL and (
                dt.is_float or not isinstance(v, np.integer) or v.dtype != dt.np_dtype):
            return ops.to_scalar(v, dt)
    elif isinstance(v, np.floating):
        # a float `let` read as another float (`x + c` of an `f16` `x`, `let c = 2.0 + 1e3;` an `f32`):
        # that float, as kernels convert it; never an integer (an instance's E0201, `check_operands`)
        dt = ev.scalar_dtype(e)
        if dt is not None and dt.is_float and v.dtype != dt.np_dtype:
            return ops.to_scalar(v, dt)
    return v


def instance_shift(ev: Any, e: ast.Binary, amount: Any) -> None:
    """A shift of constants past this instance's width is E0227, as in a
    kernel's instance, whose lowering folds it (`(1 << 9)` with `T = u8` was
    0). Constants: literals, module constants, casts and operators of them,
    and immutable `let`s of them (what the lowering folds)."""
    dt = instance_type(ev, e)
    if dt is not None and _constant(ev, e.lhs) and _constant(ev, e.rhs):
        domains.check_shift(dt, amount, e.span)


def constant_shift(ev: Any, e: ast.Binary, amount: Any) -> None:
    """A shift of constants past its concrete type's width that the checker
    could not fold (`((!7) | (255 as i32)) >> 33`: it does not follow an
    untyped `!`) is E0227 when it runs, as a kernel's lowering, which folds it,
    refuses it (the host gave 0, the run-time rule for a value)."""
    dt = ev.scalar_dtype(e)
    if dt is not None and dt.is_int and dt is not DType.BOOL and _constant(ev, e.lhs) and _constant(ev, e.rhs):
        domains.check_shift(dt, amount, e.span, instance=False)


def _constant(ev: Any, e: ast.Expr) -> bool:
    """What the check counts as a constant too (`consts.constant_operand`; no bound on a chain of `let`s)."""
    return consts.constant_operand(ev.program, let_values(ev), e, limit=None)


def let_values(ev: Any) -> dict[Any, ast.Expr]:
    """The value of each immutable `let name = value;` of the program's host
    functions, by its pattern (a local symbol's `decl`); kept in `ev.lets`."""
    if ev.lets is None:
        ev.lets = consts.let_values(
            item for module in ev.program.all_modules() for item in module.ast.items
            if isinstance(item, ast.FnDecl) and not item.is_kernel)
    return ev.lets  # type: ignore[no-any-return]


def generic_neg(ev: Any, e: ast.Unary, v: Any, scope: Any) -> None:
    """`-C` of a const generic expression that leaves its type (`C = -2147483648`): E0227, as
    `generic_arith` (a kernel instance's `-C` is checked since round 16)."""
    if e.op == "-" and domains._integral(v):
        _check_generic(ev, e, -int(v), scope)


def generic_arith(ev: Any, e: ast.Binary, a: Any, b: Any, scope: Any) -> None:
    """E0227 where `+ - *` of a host function's const generics and literals
    only (`C * 1431655766 * 3` in `go::<1>`) does not fit its integer type in
    this call, as a kernel's instance refuses it (`ir/lower/exprs.generic_read`,
    round 16) and as the checker refuses the same literals' arithmetic: it
    wrapped silently (the call above partitioned by 2). Run-time arithmetic of
    other values wraps, as Rust's release build does."""
    if e.op not in ("+", "-", "*", "<<", ">>") or not (domains._integral(a) and domains._integral(b)):
        return
    if e.op in ("<<", ">>"):  # the amount, which must be below the width (the bits shifted out are lost)
        _check_generic(ev, e, int(b), scope, shift=True)
        return
    _check_generic(ev, e, {"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[e.op], scope)


def _check_generic(ev: Any, e: ast.Binary | ast.Unary, exact: int, scope: Any, shift: bool = False) -> None:
    only = ev.generic_nodes.get(id(e))  # (by node: host loops run it again and again)
    if only is None:
        only = ev.generic_nodes[id(e)] = (e, generics_only(ev.program, e, let_values(ev)))
    if not only[1]:
        return
    dt = ev.scalar_dtype(e)
    if dt is None or not dt.is_int or dt is DType.BOOL:
        return
    lo, hi = (0, dt.bits - 1) if shift else int_bounds(dt)
    if lo <= exact <= hi:
        return
    names = sorted({n.ident.name for n in ast.walk(e) if isinstance(n, ast.Name)})
    fn = next((item for module in ev.program.all_modules() for item in module.ast.items
               if isinstance(item, ast.FnDecl) and not item.is_kernel and any(n is e for n in ast.walk(item.body))),
              None)
    raise TileError(generic_overflow(e, dt, exact, ", ".join(f"{n} = {_generic_value(scope, n)}" for n in names),
                                     destination(ev.program, fn, e)))


def _generic_value(scope: Any, name: str) -> Any:
    s = scope.lookup(name)
    return "?" if s is None else s.vars[name]
