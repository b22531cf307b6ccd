"""`tilec check` of the literals in the instances of generic host functions.

A kernel's instance is lowered at `tilec check` (`driver.check_instances`), so
`x * 0.5` in `kernel fn k<T>` launched with `T = i32` is refused there (E0201).
A host function's instance is evaluated only when its call runs
(`runtime/host_instances.py`, the same rule), so the same body in `fn f<T>`
called as `f(3)` passed `tilec check` and failed at `tilec run`. This pass
reports, for each call of a generic host function from host code whose type
parameters the checker bound to element types, the untyped literals of the
callee's body that the instance's `T` cannot hold (`diagnostics.instances`),
with the call as a second label. A cast's operand is judged as the evaluator
judges it: its float literals are floats until the cast, an integer literal
must fit. Besides literals: a float `let` or constant read as an integer `T`
outside a cast (E0201) and a shift of constants past `T`'s width (E0227),
whose amount the checked program's constants give (`consts.const_value`).
What else depends on values is left to the run.

Entry point: `check_host_instances(program, sink)`. Never raises.
"""

from __future__ import annotations

import operator
from typing import Any

from tilelang.diagnostics.codes.types import CONSTANT_OVERFLOW, INVALID_OPERAND, MISMATCHED_DTYPES
from tilelang.diagnostics.instances import (
    GENERIC_NOTE,
    NUMBER_BUILTINS,
    builtin_problem,
    float_value_problem,
    literal_misfits,
    literal_problem,
    negation_problem,
    operator_need,
    operator_problem,
    shift_problem,
)
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.dtypes import DType, convert_scalar, trunc_div, trunc_rem
from tilelang.source import Span
from tilelang.sema.consts import After, constant_amount, constant_operand, let_values
from tilelang.sema.program import SymbolKind
from tilelang.sema.types import Dim, RefT, ScalarT, TensorT, TypeParam, UntypedFloat, eval_dim
from tilelang.syntax import ast


Outer = tuple[tuple[ast.Call, str], ...]  # the calls that fixed an instance's types, innermost first, labelled
# (the callee's `FnInfo`, its element types, its const generics' values, the first call that makes it, `Outer`)
Instance = tuple[Any, dict[str, DType], dict[str, int], ast.Call, Outer]


def check_host_instances(program: Any, sink: DiagnosticSink) -> None:
    judged: set[tuple[int, tuple[tuple[str, DType], ...]]] = set()
    for callee, types, consts, call, outer in instances(program):
        key = (id(callee.decl), tuple(sorted(types.items())))
        if types and key not in judged:  # (once for its types, whatever its constants: the body's words are theirs)
            judged.add(key)
            _check_body(program, callee.decl, types, call, sink, outer)
        if consts and all(-(1 << 31) <= v < (1 << 31) for v in consts.values()):
            # (a value past `i32` is the caller's arithmetic that overflowed: refused at that call, its own
            # site, not again in each body it reaches)
            _check_generic_arith(program, callee, types, consts, call, sink, outer)


def generics_only(program: Any, e: Any, lets: dict[Any, ast.Expr] | None = None, *, bare: bool = False) -> bool:
    """`e` is integer literals and const generics under `_GENERIC_OPS`, unary `-` and `!` and casts to integer types,
    with at least one generic:
    what a host function's instance computes from its const generics alone (checked in `i32`, as a kernel
    instance's constant arithmetic of its generics is; `runtime/host_instances.generic_arith` at run time).
    With `lets` (`consts.let_values`' map) an immutable `let` of such an expression, or of a literal, counts as
    what it holds (`let d = C * 2; d * 1431655766`), as the kernel's lowering folds it (hrev18: the host's
    wrapped silently). `bare`: a name alone counts too (a divisor `x / d`), not only an operator."""
    if not bare and not isinstance(e, (ast.Binary, ast.Unary)):
        return False
    only, reads = _generic_form(program, e, lets, 0)
    return only and reads


def _generic_form(program: Any, x: Any, lets: dict[Any, ast.Expr] | None, depth: int) -> tuple[bool, bool]:
    """(`x` is generics, literals and `lets` of them under `+ - *` and unary minus; it reads a generic)."""
    if isinstance(x, ast.Binary):
        (a, ga), (b, gb) = _generic_form(program, x.lhs, lets, depth), _generic_form(program, x.rhs, lets, depth)
        return x.op in _GENERIC_OPS and a and b, ga or gb
    if isinstance(x, ast.Unary):
        a, ga = _generic_form(program, x.operand, lets, depth)
        return x.op in ("-", "!") and a, ga
    if isinstance(x, ast.Cast):  # to an integer type: it wraps, as `as` does (`(C as i8) * 100` is `i8` arithmetic)
        if _float_literal(x.expr) is not None:  # (`(-2.0 as T) >> C`: a float literal truncated, saturated)
            return _int_dtype(program, x) is not None, False
        a, ga = _generic_form(program, x.expr, lets, depth)
        return a and _int_dtype(program, x) is not None, ga
    if isinstance(x, ast.IntLit):
        return True, False
    sym = program.symbol_of(x) if isinstance(x, ast.Name) else None
    if sym is not None and sym.kind is SymbolKind.GENERIC:
        return True, True
    ok = lets is not None and sym is not None and sym.kind is SymbolKind.LOCAL and not sym.mutable
    init = lets.get(sym.decl) if ok and lets is not None else None
    if init is None or depth >= _LET_CHAIN:
        return False, False
    return _generic_form(program, init, lets, depth + 1)


_LET_CHAIN = 64  # `let`s followed from one expression at most (a chain of lets of lets)
_COMPARE_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
                ">=": operator.ge}
# (`& | ^ / %` and casts since hrev18: `32767 * ((65535 & -1) | (65536 << C))` and `(256 as i32) << C` wrapped
# silently where the literals' form is E0227; found by `generic_diff.py --const --host`, seed 1801)
_GENERIC_OPS = ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^")


def _widened(e: Any, top: bool = True) -> str:
    """`e` (generics-only arithmetic) as `i64` arithmetic: each name read as `(N as i64)` and each cast to an
    integer type made one to `i64` (`(C as i8) * 100` -> `(C as i64) * 100`: widening only the names left
    the `i8` cast, and with it `i8` arithmetic; hrev18)."""
    from tilelang.syntax.printer import unparse

    if isinstance(e, ast.Name):
        return f"({e.ident.name} as i64)"
    if isinstance(e, ast.Cast):
        inner = e.expr
        return f"({inner.ident.name} as i64)" if isinstance(inner, ast.Name) else f"({_widened(inner, False)} as i64)"
    if isinstance(e, ast.Unary):
        return f"{e.op}{_widened(e.operand, False)}"
    if isinstance(e, ast.Binary):
        text = f"{_widened(e.lhs, False)} {e.op} {_widened(e.rhs, False)}"
        return text if top else f"({text})"
    return unparse(e)


def _float_literal(e: Any) -> float | None:
    """The value of a float literal, or of a minus before one; else None."""
    if isinstance(e, ast.Unary) and e.op == "-" and isinstance(e.operand, ast.FloatLit):
        return -float(e.operand.value)
    return float(e.value) if isinstance(e, ast.FloatLit) else None


def _int_dtype(program: Any, e: Any) -> DType | None:
    """`e`'s integer type (not `bool`), or None."""
    ty = program.type_of(e)
    dt = ty.dtype if isinstance(ty, ScalarT) and isinstance(ty.dtype, DType) else None
    return dt if dt is not None and dt.is_int and dt is not DType.BOOL else None


def destination(program: Any, fn: Any, e: Any) -> str | None:
    """Where `e`'s value goes with the type it has, as a help's words with `{big}` for the wider type: "which
    `size` returns: declare it `-> {big}`" where `fn` returns it (its body's tail or a `return`'s value), "which
    `d` holds: declare it `let d: {big}`" where a `let` with a type holds it; reached through blocks, `if`
    branches, `unsafe` blocks, arithmetic (a shift's shifted value) and immutable `let`s without a type. Else
    None (hrev19: E0227's widened form there made the function return, or the `let` hold, a wider type than
    declared, and E0203's help then cast it back, wrapping as before)."""
    if fn is None:
        return None
    lets = {n.pattern: n.value for n in ast.walk(fn.body) if isinstance(n, ast.Let) and n.ty is None
            and isinstance(n.pattern, ast.NamePat) and not n.pattern.mutable and n.value is not None}
    starts: list[tuple[Any, str]] = []
    if fn.ret is not None:
        said = f"which `{fn.name.name}` returns: declare it `-> {{big}}`"
        starts += [(fn.body, said), *((n.value, said) for n in ast.walk(fn.body) if isinstance(n, ast.Return))]
    starts += [(n.value, f"which `{n.pattern.name.name}` holds: declare it `let {'mut ' * n.pattern.mutable}"
                f"{n.pattern.name.name}: {{big}}`") for n in ast.walk(fn.body) if isinstance(n, ast.Let)
               and n.ty is not None and isinstance(n.pattern, ast.NamePat) and n.value is not None]
    for start, said in starts:
        stack: list[Any] = [start]
        seen: set[int] = set()
        while stack:
            x = stack.pop()
            if x is e:
                return said
            if x is None or id(x) in seen:
                continue
            seen.add(id(x))
            if isinstance(x, ast.Block):
                stack.append(x.tail)
            elif isinstance(x, ast.If):
                stack += [x.then, x.else_]
            elif isinstance(x, ast.UnsafeBlock):
                stack.append(x.body)
            elif isinstance(x, ast.Binary) and x.op in _GENERIC_OPS:
                stack += [x.lhs] if x.op in ("<<", ">>") else [x.lhs, x.rhs]
            elif isinstance(x, ast.Unary) and x.op in ("-", "!"):
                stack.append(x.operand)
            elif isinstance(x, ast.Name):
                sym = program.symbol_of(x)
                stack.append(lets.get(sym.decl) if sym is not None and sym.kind is SymbolKind.LOCAL else None)
    return None


def generic_overflow(e: Any, dt: DType, exact: int, values: str, goes: str | None = None) -> Diagnostic:
    """E0227 for `e`, generics-only arithmetic whose exact value does not fit `dt` (a shift: whose amount
    `exact` is not below `dt`'s width, as the literals' is refused); `values`: the generics' values in this
    call ("C = 1"). The help widens every generic of the expression; `goes`: where its value goes with a declared
    type (`destination`), which the help then widens too."""
    from tilelang.diagnostics.instances import int_bounds
    from tilelang.syntax.printer import unparse

    wide = _widened(e)

    def widen(text: str, big: str) -> str:
        return f"`{text}` is an `{big}`" + ("" if goes is None else ", " + goes.format(big=big))
    note = ("a host function's const generics are `i32` values: their arithmetic with literals is checked in "
            "each call, as a kernel instance's is")
    if isinstance(e, ast.Binary) and e.op in ("<<", ">>"):
        # a shift computes in its shifted value's type: that one is widened (hrev18: the amount's widening,
        # `(256 as i32) << (C as i64)`, is E0203), and no type is 64 bits wide or more
        big = "u64" if dt.value.startswith("u") else "i64"
        shifted = e.lhs.expr if isinstance(e.lhs, ast.Cast) else e.lhs
        widened = f"({unparse(shifted)} as {big}) {e.op} {unparse(e.rhs)}"
        more = f", or compute in a wider type: {widen(widened, big)}" if 0 <= exact < 64 else ""
        return (Diagnostic.error(CONSTANT_OVERFLOW, f"this shift overflows `{dt.value}`")
                .primary(e.span, f"shifting a {dt.bits}-bit `{dt.value}` by {exact} bits in this call"
                         + (f" ({values})" if values else ""))
                .note(note).with_help(f"call it with a shift of 0..{dt.bits - 1}{more}"))
    lo, hi = int_bounds(dt)
    return (Diagnostic.error(CONSTANT_OVERFLOW, f"this arithmetic operation overflows `{dt.value}`")
            .primary(e.span, f"the value {exact} does not fit in `{dt.value}` ({lo}..={hi}) in this call"
                     + (f" ({values})" if values else ""))
            .note(note)
            .with_help(f"call it with smaller const generics, or compute in a wider type: {widen(wide, 'i64')}"))


def _check_generic_arith(program: Any, callee: Any, types: dict[str, DType], consts: dict[str, int],
                         call: ast.Call, sink: DiagnosticSink, outer: Outer) -> None:
    """E0227 at `tilec check` for each generics-only `+ - *` (`generics_only`) of this instance that leaves
    its type, with the call that makes the instance labelled: the run refuses it there (it wrapped)."""
    from tilelang.diagnostics.instances import int_bounds

    lets = let_values([callee.decl])

    def value(x: Any, depth: int = 0) -> int | None:  # exact; raises _Overflow at the first node that leaves its type
        if isinstance(x, ast.IntLit):
            return int(x.value)
        if isinstance(x, ast.Name):
            sym = program.symbol_of(x)
            if sym is not None and sym.kind is SymbolKind.GENERIC:
                return consts.get(x.ident.name)
            init = lets.get(sym.decl) if sym is not None and sym.kind is SymbolKind.LOCAL \
                and not sym.mutable else None
            if init is None or depth >= _LET_CHAIN or not _generic_form(program, init, lets, depth)[0]:
                return None
            try:  # (an overflow inside the `let`'s value is reported there, once)
                v = value(init, depth + 1)
            except (_Overflow, _ZeroDivisor):
                return None
            ty = program.type_of(x)
            dt = ty.dtype if isinstance(ty, ScalarT) and isinstance(ty.dtype, DType) else None
            return v if v is None or dt is None or not dt.is_int else dt.wrap(v)
        dt = _int_dtype(program, x)
        if dt is None:
            return None
        if isinstance(x, ast.Cast):  # wraps into its type, as `as` does (a float truncates and saturates)
            f = _float_literal(x.expr)
            if f is not None:
                return int(convert_scalar(f, dt))
            v = value(x.expr, depth)
            return None if v is None else dt.wrap(v)
        if isinstance(x, ast.Unary):
            v = value(x.operand, depth)
            if v is None or x.op == "!":
                return None if v is None else dt.wrap(~v)
            r = -v
        else:
            a, b = value(x.lhs, depth), value(x.rhs, depth)
            if a is None or b is None:
                return None
            if x.op in ("<<", ">>"):  # a shift's bits past the width are lost; an amount past it is refused
                if not 0 <= b < dt.bits:
                    raise _Overflow(x, dt, b)
                return dt.wrap(a << b) if x.op == "<<" else a >> b
            if x.op in ("/", "%"):  # (`MIN / -1` wraps, as a kernel instance's does)
                if b == 0:
                    raise _ZeroDivisor(x)
                return dt.wrap(trunc_div(a, b) if x.op == "/" else trunc_rem(a, b))
            if x.op in ("&", "|", "^"):
                return dt.wrap(a & b if x.op == "&" else a | b if x.op == "|" else a ^ b)
            r = a + b if x.op == "+" else a - b if x.op == "-" else a * b
        lo, hi = int_bounds(dt)
        if r is not None and not lo <= r <= hi:
            raise _Overflow(x, dt, r)
        return r

    def truth(x: Any) -> bool | None:  # a condition of generics and literals only: its value in this call
        if isinstance(x, ast.BoolLit):
            return bool(x.value)
        if isinstance(x, ast.Unary) and x.op == "!":
            t = truth(x.operand)
            return None if t is None else not t
        if isinstance(x, ast.Binary) and x.op in ("&&", "||"):
            a, b = truth(x.lhs), truth(x.rhs)
            if x.op == "&&":
                return False if a is False or b is False else None if a is None or b is None else True
            return True if a is True or b is True else None if a is None or b is None else False
        if isinstance(x, ast.Binary) and x.op in _COMPARE_OPS and _generic_form(program, x.lhs, lets, 0)[0] \
                and _generic_form(program, x.rhs, lets, 0)[0]:
            try:
                a, b = value(x.lhs), value(x.rhs)
            except (_Overflow, _ZeroDivisor):
                return None
            return None if a is None or b is None else bool(_COMPARE_OPS[x.op](a, b))
        return None

    stack: list[Any] = [callee.decl.body]
    out: list[Diagnostic] = []
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(node)
            continue
        if not hasattr(node, "__slots__") or isinstance(node, ast.FnDecl):
            continue
        if isinstance(node, ast.If) and (taken := truth(node.cond)) is not None:
            # the branch this call takes, only: a kernel instance folds the condition and lowers no other
            # (`if C < 100 { C * 30000000 } else { 0 }` with C = 100 was E0227 here, and ran in a kernel)
            stack.append(node.then if taken else node.else_)
            continue
        found: Diagnostic | None = None
        shown = ", ".join(f"{k} = {v}" for k, v in consts.items())
        if generics_only(program, node, lets):
            try:
                value(node)
            except _Overflow as o:
                found = generic_overflow(o.node, o.dtype, o.value, shown, destination(program, callee.decl, o.node))
            except _ZeroDivisor as z:
                found = _division_by_zero(z.node, shown)
        elif isinstance(node, ast.Binary) and node.op in ("/", "%") \
                and generics_only(program, node.rhs, lets, bare=True):
            # an integer divisor of generics that is zero in this instance: E0226, as the literals' (`x / (4 - 4)`)
            # and a kernel instance's are (the run stopped at it with E0715, after what came before)
            ty = program.type_of(node)
            try:
                zero = value(node.rhs) == 0
            except (_Overflow, _ZeroDivisor):
                zero = False
            if zero and isinstance(ty, ScalarT) and isinstance(ty.dtype, DType) and ty.dtype.is_int:
                found = _division_by_zero(node, shown)
        if found is not None:
            d = found.secondary(call.span, instance_label(callee, types, consts))
            for site, label in outer:
                d = d.secondary(site.span, label)
            out.append(d)
            continue
        if generics_only(program, node, lets):
            continue
        stack.extend(getattr(node, slot, None) for slot in type(node).__slots__)
    for d in sorted(out, key=lambda d: d.primary_span.start if d.primary_span is not None else 0):
        sink.emit(d)  # in the order of the source


def _division_by_zero(node: ast.Binary, values: str) -> Diagnostic:
    from tilelang.diagnostics.codes.types import DIVISION_BY_ZERO

    word = "division" if node.op == "/" else "remainder"
    return (Diagnostic.error(DIVISION_BY_ZERO, f"integer {word} by zero")
            .primary(node.rhs.span, f"this is zero in this call ({values})")
            .note("integer division by zero has no value, so a divisor known to be zero is an error")
            .with_help("call it with const generics that keep the divisor nonzero, or test it first "
                       "(`if d != 0 { x / d } else { .. }`)"))


class _ZeroDivisor(Exception):
    def __init__(self, node: Any) -> None:
        super().__init__()
        self.node = node


class _Overflow(Exception):
    def __init__(self, node: Any, dtype: DType, value: int) -> None:
        super().__init__()
        self.node, self.dtype, self.value = node, dtype, value


def instances(program: Any) -> list[Instance]:
    """Each instance of a generic host function that the program's calls fix
    at check time, once: (the callee's `FnInfo`, its types, its const
    generics' values, the first call that makes it, the outer calls that
    fixed that call's generics). A call inside a generic body whose generics
    are the caller's (`inner(x)` in `fn outer<U>`, `k::<4, C>` in `fn
    go<const C: i32>`) makes an instance for each of the caller's (hrev15:
    `outer(&b)` of a `bool` tensor ran `inner`'s `x + x` unjudged until the
    run; `driver.check_instances` lowers the kernels launched in them)."""
    seen: set[Any] = set()
    out: list[Instance] = []
    work: list[Instance] = []
    for qual in sorted(program.host_fns):
        info = program.functions.get(qual)
        if info is None or info.is_kernel:
            continue
        work.extend(_generic_calls(program, info.decl, {}, {}, ()))
    while work:
        callee, types, consts, call, outer = work.pop(0)
        key = (id(callee.decl), tuple(sorted(types.items())), tuple(sorted(consts.items())))
        if key in seen:
            continue
        seen.add(key)
        out.append((callee, types, consts, call, outer))
        if len(outer) < 8:  # (a chain of generic calls deeper than this is judged when it runs)
            label = instance_label(callee, types, consts)
            work.extend(_generic_calls(program, callee.decl, types, consts, ((call, label), *outer)))
    return out


def instance_label(callee: Any, types: dict[str, DType], consts: dict[str, int] | None = None) -> str:
    shown = ", ".join([*(f"{k} = {v.value}" for k, v in types.items()),
                       *(f"{k} = {v}" for k, v in (consts or {}).items())])
    return f"the call that makes this instance of `{callee.decl.name.name}`, with {shown}"


def const_arg(e: Any, consts: dict[str, int]) -> int | None:
    """The value of a generic argument `e` written in a generic body (`C`,
    `4`, `{ D * 2 }`) in the instance whose const generics are `consts`,
    or None where it is more than integer arithmetic of those."""
    match e:
        case ast.IntLit(value=v) if not isinstance(v, bool):
            return int(v)
        case ast.Name(ident=ident) | ast.NamedType(name=ident, args=()):
            return consts.get(ident.name)
        case ast.Block(stmts=(), tail=tail) if tail is not None:
            return const_arg(tail, consts)
        case ast.Binary(op=op, lhs=lhs, rhs=rhs) if op in ("+", "-", "*", "/", "%"):
            a, b = const_arg(lhs, consts), const_arg(rhs, consts)
            if a is None or b is None or (op in ("/", "%") and b == 0):
                return None
            return trunc_div(a, b) if op == "/" else trunc_rem(a, b) if op == "%" else \
                a + b if op == "+" else a - b if op == "-" else a * b
    return None


def _generic_calls(program: Any, decl: ast.FnDecl, types: dict[str, DType], consts: dict[str, int],
                   outer: Outer) -> list[Instance]:
    """The calls of generic host functions in `decl`'s body whose generics
    this instance of `decl` (`types`, `consts`) binds to element types and
    numbers."""
    found: list[Instance] = []
    for call in ast.walk(decl.body):
        if not isinstance(call, ast.Call):
            continue
        callee = program.callee_of(call)
        if callee is None or callee.is_kernel or not (callee.type_params or callee.const_generics) \
                or callee.qualname not in program.host_fns:
            continue
        inst = program.instantiation_of(call)
        bound: dict[str, Any] = {}
        for name in callee.type_params:
            t = inst.get(name)
            bound[name] = types.get(t.name) if isinstance(t, TypeParam) else t
        values: dict[str, Any] = {}
        for name in callee.const_generics:
            d = inst.get(name)
            try:
                values[name] = eval_dim(d, consts) if isinstance(d, Dim) else d
            except (KeyError, ValueError, TypeError, ZeroDivisionError, ArithmeticError):
                values[name] = None
        if all(isinstance(t, DType) for t in bound.values()) \
                and all(isinstance(v, int) and not isinstance(v, bool) for v in values.values()):
            found.append((callee, bound, values, call, outer))
    return found


def _check_body(program: Any, decl: ast.FnDecl, types: dict[str, DType], call: ast.Call,
                sink: DiagnosticSink, outer: Outer = ()) -> None:
    shown = ", ".join(f"{k} = {v.value}" for k, v in types.items())
    after = After(program, let_values([decl]), dict(types))
    stack: list[tuple[Any, bool, bool]] = [(decl.body, False, False)]
    found_all: list[Diagnostic] = []
    while stack:
        node, in_cast, negated = stack.pop()
        if isinstance(node, tuple):
            stack.extend((child, in_cast, negated) for child in node)
            continue
        if not hasattr(node, "__slots__"):
            continue
        if isinstance(node, (ast.IntLit, ast.FloatLit)):
            problem = _literal_problem(program, node, types, in_cast, negated)
            if problem is not None:
                message, label, help = problem
                found_all.append(Diagnostic.error(MISMATCHED_DTYPES, message).primary(node.span, label)
                                 .secondary(call.span, f"the call that makes this instance of "
                                                       f"`{decl.name.name}`, with {shown}")
                                 .note(GENERIC_NOTE).with_help(help))
            continue
        if isinstance(node, ast.FnDecl):
            continue  # (no nested items; a defensive stop)
        found = _value_problem(program, node, types, in_cast, after)
        if found is not None:
            code, span, (message, label, help) = found
            found_all.append(Diagnostic.error(code, message).primary(span, label)
                             .secondary(call.span, f"the call that makes this instance of `{decl.name.name}`, "
                                                   f"with {shown}")
                             .note(GENERIC_NOTE).with_help(help))
            continue  # one error for a subtree: what the run meets first is inside it
        child_cast = in_cast or isinstance(node, ast.Cast)
        for slot in type(node).__slots__:
            child = getattr(node, slot, None)
            if isinstance(child, tuple) or hasattr(child, "__slots__"):
                neg = isinstance(node, ast.Unary) and node.op == "-" and isinstance(child, ast.IntLit)
                stack.append((child, child_cast, neg))
    for d in sorted(found_all, key=lambda d: d.primary_span.start if d.primary_span is not None else 0):
        for site, label in outer:  # through generic callers: the calls that fixed their types
            d = d.secondary(site.span, label)
        sink.emit(d)  # in the order of the source


Problem = tuple[str, Span, tuple[str, str, str]]


def _value_problem(program: Any, node: Any, types: dict[str, DType], in_cast: bool,
                   after: After) -> Problem | None:
    """(code, span, (message, label, help)) of what the run refuses in this
    instance besides literals, as `runtime/host_instances` and a kernel's
    instance say it: a float `let` or constant read as an integer `T` outside
    a cast's operand (E0201), a float meeting a value of an integer `T` inside
    one (E0201), a shift of constants past `T`'s width (E0227), an operator
    outside `T`'s domain (E0204). Where the run's rule depends on more than
    this sees (a float inside a cast's operand), nothing is said: the run
    still judges it."""
    tensor = _tensor_problem(program, node, types)
    if tensor is not None:
        return tensor
    match node:
        case ast.Name(ident=ident) if not in_cast:
            dt = _bound(program, node, types)
            if dt is not None and not dt.is_float and _is_float_symbol(program.symbol_of(node)):
                return MISMATCHED_DTYPES, node.span, float_value_problem(dt, "function", ident.name)
        case ast.Binary(op=op, lhs=lhs, rhs=rhs) if op not in ("&&", "||"):
            dt = _bound(program, node, types)
            if op in ("<", ">", "<=", ">=", "==", "!="):
                dt = _bound(program, lhs, types) or _bound(program, rhs, types)
            if dt is None:
                return None
            if in_cast and not dt.is_float and (_floaty(program, lhs) or _floaty(program, rhs)):
                # float arithmetic until the cast, which a value of `T` may not meet
                if op in ("+", "-", "*", "/", "%", "&", "|", "^"):
                    for side, other in ((lhs, rhs), (rhs, lhs)):
                        if _floaty(program, side) and not _floaty(program, other) \
                                and not constant_operand(program, after.lets, other):
                            words = literal_problem(side.value, dt, "function") \
                                if isinstance(side, ast.FloatLit) else None  # the literal's words, as the run's
                            return MISMATCHED_DTYPES, side.span, words or float_value_problem(dt, "function")
                return None
            if op in ("<<", ">>"):
                amount = constant_amount(after, node)
                problem = shift_problem(dt, amount, "function") if amount is not None else None
                if problem is not None:
                    return CONSTANT_OVERFLOW, node.span, problem
            need = operator_need(op, dt)
            if need is not None:
                return INVALID_OPERAND, node.op_span, operator_problem(op, dt, need)
        case ast.Unary(op=op, operand=x):
            dt = _bound(program, node, types)
            if dt is None or (in_cast and not dt.is_float and _floaty(program, x)):
                return None
            if isinstance(x, ast.IntLit) and op == "-" and literal_misfits(x.value, dt) \
                    and literal_misfits(-x.value, dt):
                return None  # the literal's own E0201 (`_literal_problem`)
            need = operator_need(op, dt)
            if need is not None:
                return INVALID_OPERAND, node.span, operator_problem(op, dt, need)
            if op == "-" and dt.is_int and not dt.is_signed:
                return INVALID_OPERAND, node.span, negation_problem(dt)
    return None


def _tensor_problem(program: Any, node: Any, types: dict[str, DType]) -> Problem | None:
    """What the run refuses of a tensor operator or a built-in in this
    instance, as `runtime/host_ops` and `host_math` judge it (`host_domains`, one rule:
    `diagnostics.instances`): an operator of tensors of `T` outside `T`'s
    domain (`x << x` of `f32`, `x + x` of `bool`, `-x` of `u8` or `bool`,
    `!x` of `f32`), and a built-in whose result is typed with `T` that does
    not take `T` (`pow`/`exp`/`fma` of an integer, `sum`/`cumsum`/`maximum`/
    `abs`/`arange` of `bool`)."""
    match node:
        case ast.Binary(op=op, lhs=lhs, rhs=rhs) if op not in ("&&", "||"):
            dt = _tensor_elem(program, lhs, types) or _tensor_elem(program, rhs, types)
            need = operator_need(op, dt)
            if dt is not None and need is not None:
                return INVALID_OPERAND, node.op_span, operator_problem(op, dt, need, tensors=True)
        case ast.Unary(op=op, operand=x):
            dt = _tensor_elem(program, x, types)
            if dt is None:
                return None
            need = operator_need(op, dt)
            if need is not None:
                return INVALID_OPERAND, node.span, operator_problem(op, dt, need, tensors=True)
            if op == "-" and dt.is_int and not dt.is_signed:
                return INVALID_OPERAND, node.span, negation_problem(dt, tensors=True)
        case ast.Call() | ast.MethodCall():
            sym = program.symbols.get(node)
            if sym is None or sym.kind not in (SymbolKind.BUILTIN, SymbolKind.METHOD) \
                    or sym.name not in NUMBER_BUILTINS:
                return None
            ty = program.types.get(node)
            elem = ty.dtype if isinstance(ty, (ScalarT, TensorT)) else None
            dt = types.get(elem.name) if isinstance(elem, TypeParam) else None
            subject = node.receiver if isinstance(node, ast.MethodCall) else \
                next((a.value for a in node.args if a.name is None), None)
            # (the help's tensor: the program's own where it is a name)
            problem = builtin_problem(sym.name, dt, subject.ident.name if isinstance(subject, ast.Name) else "m") \
                if dt is not None else None
            if problem is not None:
                return INVALID_OPERAND, node.span, problem
    return None


def _tensor_elem(program: Any, node: Any, types: dict[str, DType]) -> DType | None:
    """The instance's element type of a host tensor (or a reference to one)
    typed `Tensor<T, ..>`."""
    ty = program.types.get(node)
    if isinstance(ty, RefT):
        ty = ty.inner
    elem = ty.dtype if isinstance(ty, TensorT) else None
    return types.get(elem.name) if isinstance(elem, TypeParam) else None


def _bound(program: Any, node: Any, types: dict[str, DType]) -> DType | None:
    """The instance's type where the checker typed `node` a type parameter."""
    ty = program.types.get(node)
    tp = ty.dtype if isinstance(ty, ScalarT) else None
    return types.get(tp.name) if isinstance(tp, TypeParam) else None


def _is_float_symbol(sym: Any) -> bool:
    """A name whose value is a float: an untyped float `let` or constant, `inf`."""
    if sym is None:
        return False
    if sym.kind is SymbolKind.CONST:
        return isinstance(sym.value, float)
    if sym.kind is SymbolKind.LOCAL and not sym.mutable:
        ty = sym.ty
        return isinstance(ty, UntypedFloat) or (isinstance(ty, ScalarT) and isinstance(ty.dtype, DType)
                                                 and ty.dtype.is_float)
    return False


def _floaty(program: Any, e: Any) -> bool:
    """A float inside a cast's operand of an integer `T`, as the run keeps it:
    a float literal, a float `let` or constant, arithmetic of one."""
    match e:
        case ast.FloatLit(suffix=None):
            return True
        case ast.Name():
            return _is_float_symbol(program.symbol_of(e))
        case ast.Unary(operand=x):
            return _floaty(program, x)
        case ast.Binary(op=op, lhs=lhs, rhs=rhs) if op in ("+", "-", "*", "/", "%"):
            return _floaty(program, lhs) or _floaty(program, rhs)
    return False


def _literal_problem(program: Any, lit: ast.IntLit | ast.FloatLit, types: dict[str, DType], in_cast: bool,
                     negated: bool) -> tuple[str, str, str] | None:
    if lit.suffix:
        return None
    ty = program.type_of(lit)
    tp = ty.dtype if isinstance(ty, ScalarT) else None
    dt = types.get(tp.name) if isinstance(tp, TypeParam) else None
    if dt is None:
        return None
    if in_cast and not dt.is_float and (isinstance(lit, ast.FloatLit) or dt is DType.BOOL):
        return None  # a float until the cast (`host_instances.literal`)
    value = lit.value
    text = lit.text if isinstance(lit, ast.FloatLit) else None
    if not literal_misfits(value, dt, text) or (negated and not literal_misfits(-value, dt, text)):
        return None
    return literal_problem(-value if negated else value, dt, "function")
