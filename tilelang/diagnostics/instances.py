"""The words of the errors only an instance of a generic function or kernel
has, written once for the two places that find them: a kernel's instance in
its lowering (`ir/lower/kernel.py`, what `tilec check` runs) and a host
function's instance in the host evaluator (`runtime/host_domains.py`).

`literal_problem` is the rule for an untyped literal that the instance's `T`
must hold (a float literal for an integer `T`, an integer one out of `T`'s
range, a number for `bool`), and `shift_problem` the rule for a constant shift
past `T`'s width; each gives (message, label, help) or None. The concrete
forms are refused by the checker (E0222, E0201, E0227); an instance gets E0201
and E0227 with these words on every engine.
"""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType
from tilelang.sema.typeops import FLOAT_LIMITS, float_literal_overflows

# the note of every error an instance of a generic function meets (its check, its run, its lowering)
GENERIC_NOTE = ("a generic function is checked once, for any element type `T`; its body must also hold "
                "for each `T` it is called with")


def int_bounds(dt: DType) -> tuple[int, int]:
    return ((-(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1) if dt.is_signed
            else (0, (1 << dt.bits) - 1))


def literal_misfits(value: Any, dt: DType, text: str | None = None) -> bool:
    """Whether an untyped literal `value` cannot be a value of `dt` (`text`:
    a float literal's digits, which decide at the boundary of infinity)."""
    if isinstance(value, bool):
        return False
    if dt.is_float and isinstance(value, (int, float)):
        return _rounds_to_infinity(value, dt, text)  # `x * 65536` with `T = f16`, as the concrete form's E0222
    if isinstance(value, float):
        return True
    if dt is DType.BOOL:
        return True
    if isinstance(value, int) and dt.is_int:
        lo, hi = int_bounds(dt)
        return not lo <= value <= hi
    return False


def _rounds_to_infinity(value: int | float, dt: DType, text: str | None = None) -> bool:
    try:
        return float_literal_overflows(float(value), dt, text)
    except OverflowError:  # an integer literal past every float (`10 ** 400` written out)
        return True


def literal_problem(value: Any, dt: DType, where: str = "kernel") -> tuple[str, str, str] | None:
    """(message, label, help) of E0201 where the literal `value` cannot be
    the instance's `dt` (`where`: "kernel" or "function"), else None."""
    if not literal_misfits(value, dt):
        return None
    kind = "float" if isinstance(value, float) else "integer"
    label = f"`{dt.value}` in this instance"
    if dt.is_float:
        top = FLOAT_LIMITS[dt][0]
        label = f"rounds to infinity in `{dt.value}`, this instance's type"
        wider = {DType.F16: "f32", DType.BF16: "f32", DType.F32: "f64"}.get(dt, "f64")
        help = (f"write a literal that every type the {where} is called with holds (`{dt.value}` holds "
                f"magnitudes up to {top}), or call it with a wider type (`{wider}`)")
    elif kind == "float":
        help = f"write a literal of every type the {where} is called with, or cast: `({value} as f32) as T`"
    elif dt is DType.BOOL:
        help = "a `bool` takes `true` or `false`"
    else:
        lo, hi = int_bounds(dt)
        help = (f"write a literal that every type the {where} is called with holds (`{dt.value}` holds "
                f"{lo}..={hi}), or compute in a wider type")
    return (f"mismatched dtypes: the {kind} literal `{value}` cannot be `{dt.value}`",
            label, help)


def shift_problem(dt: DType, amount: Any, where: str | None = "kernel") -> tuple[str, str, str] | None:
    """(message, label, help) of E0227 where a constant shift of a `dt` by
    `amount` overflows (as the checker says of `1 << 40` on `i32`), else None.
    `where`: "kernel" or "function" for an instance of a generic one; None for
    a concrete body, whose constant the checker could not fold (`(!7 | c) >> 33`)."""
    if not dt.is_int or dt is DType.BOOL or isinstance(amount, bool) or not isinstance(amount, int):
        return None
    if 0 <= amount < dt.bits:
        return None
    if where is None:
        return (f"this shift overflows `{dt.value}`",
                f"shifting a {dt.bits}-bit `{dt.value}` constant by {amount} bits",
                f"shift by 0..{dt.bits - 1}, or compute in a wider type (`(c as i64) << n`)")
    return (f"this shift overflows `{dt.value}`",
            f"shifting a {dt.bits}-bit `{dt.value}` by {amount} bits in this instance",
            f"shift by 0..{dt.bits - 1} for every type the {where} is called with, or compute in a "
            "wider type (`(c as i64) << n`)")


def float_value_problem(dt: DType, where: str = "kernel", name: str | None = None) -> tuple[str, str, str]:
    """(message, label, help) of E0201 where a float value (not a literal: an
    untyped `let c = 256 / 0.1;`) meets arithmetic that the instance's integer
    or `bool` `T` types, outside a cast (the concrete form is E0201 too).
    `name`: a float `let` or constant read where the instance's `T` is wanted
    (`return c;`, `let d: T = c;`), which the engines converted silently (the
    concrete form is E0203)."""
    if name is not None:
        return (f"mismatched dtypes: the float value `{name}` cannot be `{dt.value}`",
                f"a float here, where this instance's `T` is `{dt.value}`",
                f"convert it where that is meant: `{name} as T` (toward zero for an integer `T`), or call "
                f"the {where} with a float type")
    return (f"mismatched dtypes: a float value in arithmetic of `{dt.value}`",
            f"a float here, where this instance's `T` is `{dt.value}`",
            f"convert it where every type the {where} is called with can take it: `(..) as T`")


def operator_need(op: str, dt: DType | None) -> str | None:
    """What operator `op` needs where `dt` is outside its domain (None: fine)."""
    if dt is None:
        return None
    if op in ("&", "|", "^", "!") and dt.is_float:
        return "integer or `bool` values"
    if op in ("<<", ">>") and (dt.is_float or dt is DType.BOOL):
        return "integer values"
    if op in ("+", "-", "*", "/", "%", "<", ">", "<=", ">=") and dt is DType.BOOL:
        return "numbers"
    return None


def operator_problem(op: str, dt: DType, need: str, tensors: bool = False) -> tuple[str, str, str]:
    """(message, label, help) of E0204 for operator `op` of an instance's `dt`
    outside its domain (`need`: what `operator_need` says it needs)."""
    what = f"`{dt.value}` tensors" if tensors else f"`{dt.value}`"
    return (f"`{op}` is not defined on {what}", f"applied to `{dt.value}` in this call",
            f"`{op}` needs {need}: call it with such a type, or convert inside it (e.g. `x as i32`)")


def negation_problem(dt: DType, tensors: bool = False) -> tuple[str, str, str]:
    """(message, label, help) of E0204 for unary `-` of an instance's unsigned `dt`."""
    what = f"`{dt.value}` tensors" if tensors else f"`{dt.value}`"
    return (f"cannot negate {what}", f"unsigned: `{dt.value}` in this call",
            "unary `-` needs signed numbers (an unsigned value has no negative): call it with a signed type, "
            "or convert inside it (e.g. `x as i32`)")


# the built-ins that take floats only (a kernel's instance: `ir.ElemOp.float_only`), and those that take
# numbers, not `bool` (the concrete forms are refused by the checker: E0204)
FLOAT_BUILTINS = frozenset({"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
                            "floor", "ceil", "erf", "asin", "acos", "atan", "atan2", "pow", "fma"})
NUMBER_BUILTINS = frozenset({"arange", "sum", "prod", "cumsum", "cumprod", "cummax", "cummin", "maximum",
                             "minimum", "abs"}) | FLOAT_BUILTINS


def builtin_problem(name: str, dt: DType, subject: str = "m") -> tuple[str, str, str] | None:
    """(message, label, help) of E0204 where built-in `name` does not take an
    instance's element type `dt`, else None: one rule for a generic host
    function's check (`sema/host_instances`) and its run (`runtime/host_domains`)."""
    if name in FLOAT_BUILTINS and not dt.is_float:
        args = {"pow": "a as f32, b as f32", "atan2": "a as f32, b as f32",
                "fma": "a as f32, b as f32, c as f32"}.get(name, "x as f32")
        return (f"`{name}` is not defined on `{dt.value}`", f"applied to `{dt.value}` in this call",
                f"call it with a floating-point type, or compute in one and convert back: `{name}({args}) as T`")
    if dt is not DType.BOOL or name not in NUMBER_BUILTINS:
        return None
    if name == "arange":
        return ("`arange` makes numbers, not `bool` values", "with `bool` elements in this call",
                "call it with a numeric type, or build the tensor from numbers (`arange::<i32>(n) % 2 == 1`)")
    if name in ("sum", "prod"):
        return (f"`{name}` of `bool` elements", "of a `bool` tensor in this call",
                (f"count with `({subject} as i32).sum()`" if name == "sum" else
                 f"`({subject} as i32).prod()` is 1 where every element is `true`")
                + ", or call it with a numeric type")
    if name == "cumsum":
        return ("cannot `cumsum` a `bool` tensor", "of a `bool` tensor in this call",
                f"count with `cumsum({subject} as i32, axis)`, or call it with a numeric type")
    if name == "cumprod":
        return ("cannot `cumprod` a `bool` tensor", "of a `bool` tensor in this call",
                f"`cumprod({subject} as i32, axis)` is 1 while every element so far is `true`, or call it with a "
                "numeric type")
    if name in ("maximum", "minimum"):
        op, which = ("|", "maximum") if name == "maximum" else ("&", "minimum")
        return (f"`{name}` of `bool` values", "of `bool` values in this call",
                f"`a {op} b` is the `bool` {which}")
    return (f"`{name}` is not defined on `bool`", "applied to `bool` in this call",
            "call it with a numeric type, or convert inside it (`v as i32`)")


# the note of an error a const generic's value meets in one instance (`ir/lower/exprs.generic_read`)
CONST_GENERIC_NOTE = ("a kernel's const generic is untyped where it is read, as a literal is: it takes the type "
                      "of what it meets, and its value must fit that type in each instance")


def const_generic_problem(name: str | None, value: int, dt: DType, kind: str = "generic") -> tuple[str, str, str, str]:
    """(code, message, label, help) where a const generic `name` of `value`
    (None: constant arithmetic of const generics, `value` its exact result)
    does not fit `dt`, the type its read settled to: E0222 for a read, as
    for a literal; E0227 for arithmetic, as for literals' arithmetic."""
    from tilelang.diagnostics.codes.types import CONSTANT_OVERFLOW, DIVISION_BY_ZERO, LITERAL_OUT_OF_RANGE

    if kind == "div0":  # `name`: the operator
        word = "division" if name == "/" else "remainder"
        return (DIVISION_BY_ZERO, f"integer {word} by zero", "this is zero in this instance",
                "call the kernel with const generics that keep the divisor nonzero, or test it first "
                "(`if d != 0 { x / d } else { .. }`)")

    t, g = dt.value, (name or "N").lstrip("-")  # (`-C`: a generic under a minus)
    if dt.is_float:
        held = f"magnitudes up to {FLOAT_LIMITS[dt][0]}"
        wider = {DType.F16: "f32", DType.BF16: "f32", DType.F32: "f64"}.get(dt, "f64")
        fix = f"compute in a wider type (`((x as {wider}) * {g}) as {t}`)"
    else:
        lo, hi = int_bounds(dt)
        held = f"{lo}..={hi}"
        fix = (f"compute in a wider type (`((x as i64) * {g}) as {t}`), or cast the generic where wrapping "
               f"is meant (`{g} as {t}`)")
    if name is not None and kind == "let":  # an untyped `let` of a const generic, as `coerce._name_fits` says it
        return (LITERAL_OUT_OF_RANGE, f"`{name}` is {value}, out of range for `{t}`",
                f"used as `{t}` here, where it {'rounds to infinity' if dt.is_float else 'does not fit'} "
                f"(`{t}` holds {held})", f"give `{name}` a type that holds it (`let {name}: i64 = ..`) and convert "
                f"it with `as {t}`, or call the kernel with const generics that keep it in `{t}`")
    if name is not None:
        return (LITERAL_OUT_OF_RANGE, f"`{name}` is {value}, out of range for `{t}`",
                f"read as `{t}` here, where it {'rounds to infinity' if dt.is_float else 'does not fit'} "
                f"(`{t}` holds {held})", f"call the kernel with a `{g}` that `{t}` holds, or {fix}")
    return (CONSTANT_OVERFLOW, f"this arithmetic operation overflows `{t}`",
            f"the value {value} does not fit in `{t}` ({held}) in this instance",
            f"call the kernel with smaller const generics, or {fix}")

