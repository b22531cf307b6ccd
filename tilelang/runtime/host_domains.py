"""The element types the host's operators and built-ins take, for the
instances of generic functions (E0204).

The type checker checks a generic function once, for every `T`, and refuses
an operation outside its domain only for a concrete type (`true + true`,
`arange::<bool>(3)`). A kernel's instance is refused by its lowering
(`ir.verify.domain_problem`); a host function's instance is evaluated
directly, so the evaluator (`runtime/host_ops.py`, `host_math.py`) asks here before it runs
one: `v << (1 as T)` with `T = f32` went through Python's `int()` (3.5 gave
6.0), `a + b` of `bool`s came out `true`, a sum of `bool`s `true` (along an
axis an `i64` tensor typed `bool`), and `&` of two floats was an internal
error. An untyped literal the instance's `T` cannot hold (`x * 0.5` with
`T = i32`, `x + 300` with `T = u8`) and a shift of constants past `T`'s width
(`(1 << 9)` with `T = u8`) are refused here as the kernel's instance refuses
them (`diagnostics.instances`): they were truncated, wrapped, and 0.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes.types import CONSTANT_OVERFLOW, INVALID_OPERAND, MISMATCHED_DTYPES
from tilelang.diagnostics.instances import (
    FLOAT_BUILTINS,
    GENERIC_NOTE,
    builtin_problem,
    float_value_problem,
    literal_misfits,
    literal_problem,
    negation_problem,
    operator_need,
    operator_problem,
    shift_problem,
)
from tilelang.diagnostics.codes.runtime import HOST_SHAPE
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.dtypes import DType
from tilelang.source import Span


def check_negation(dt: DType | None, span: Span, tensors: bool = False) -> None:
    """E0204 for unary `-` of an instance's unsigned `dt` (the checker
    refuses `-x` of a concrete `u32`; a kernel's instance is refused by its
    lowering alike)."""
    if dt is None or not dt.is_int or dt.is_signed:
        return
    message, label, help = negation_problem(dt, tensors)
    raise TileError(Diagnostic.error(INVALID_OPERAND, message).primary(span, label).note(GENERIC_NOTE)
                    .with_help(help))


def check_operator(op: str, dt: DType | None, span: Span, tensors: bool = False) -> None:
    """E0204 for operator `op` (binary, or unary `-`/`!`) of an instance's `dt`."""
    need = operator_need(op, dt)
    if need is None or dt is None:
        return
    message, label, help = operator_problem(op, dt, need, tensors)
    raise TileError(Diagnostic.error(INVALID_OPERAND, message).primary(span, label).note(GENERIC_NOTE)
                    .with_help(help))


def check_builtin(name: str, dt: DType | None, span: Span | None, instance: bool = True) -> None:
    """E0204 for built-in `name` of an instance's element type `dt`
    (`instance` False: of a tensor whose type only the run knows, a
    `load_npy`'s: E0714, without the generic note)."""
    problem = builtin_problem(name, dt) if dt is not None else None
    if problem is None:
        return
    message, label, help = problem
    if not instance:  # (a `load_npy`'s type: there is no call to change)
        label = label.replace("in this call", "here")
        help = f"cast the tensor first: `t as {'f32' if name in FLOAT_BUILTINS else 'i32'}`"
    d = Diagnostic.error(INVALID_OPERAND if instance else HOST_SHAPE, message)
    d = d.primary(span, label) if span is not None else d
    raise TileError((d.note(GENERIC_NOTE) if instance else d).with_help(help))


def check_math(name: str, value: DType | None, typed: DType | None, node: Any, instance: bool) -> None:
    """E0204 (E0714 for a `load_npy` tensor's type) for a unary math built-in:
    `abs` of `bool` judged by the value's type `value` (of a tensor it gave
    `bool`s), a float one by the call's checked type `typed` (`exp(v)` of an
    instance's integer `T` computed a float and gave it back as `T`; the value
    of a `load_npy` sum may be an integer where the checker typed a float)."""
    span = getattr(node, "span", None)
    if name == "abs":
        check_builtin(name, value, span, instance)
    elif typed is not None:
        check_builtin(name, typed, span, instance)


def check_literal(value: Any, dt: DType | None, span: Span, negated: bool = False, text: str | None = None) -> None:
    """E0201 for an untyped literal that the instance's `dt` cannot hold
    (`negated`: the literal is under a unary minus, and `-128` is an `i8`;
    `text`: a float literal's digits)."""
    if dt is None or not literal_misfits(value, dt, text):
        return
    if negated and not literal_misfits(-value, dt, text):
        return
    problem = literal_problem(-value if negated else value, dt, "function")
    if problem is None:
        return
    message, label, help = problem
    raise TileError(Diagnostic.error(MISMATCHED_DTYPES, message).primary(span, label).note(GENERIC_NOTE)
                    .with_help(help))


def check_shift(dt: DType | None, amount: Any, span: Span, instance: bool = True) -> None:
    """E0227 for a shift of constants by at least the width of `dt` (the
    instance's `T`; `instance` False: a concrete type whose constant the
    checker could not fold, as a kernel's lowering refuses it)."""
    problem = shift_problem(dt, int(amount) if _integral(amount) else amount, "function" if instance else None) \
        if dt is not None else None
    if problem is None:
        return
    message, label, help = problem
    d = Diagnostic.error(CONSTANT_OVERFLOW, message).primary(span, label)
    raise TileError((d.note(GENERIC_NOTE) if instance else d).with_help(help))


def check_float_read(value: Any, dt: DType | None, node: Any) -> None:
    """E0201 for a float variable or constant `node` read where the checker
    typed it an instance's integer or `bool` `dt` (`return c;` of `let c =
    2.5;`), outside a cast's operand: it was converted silently."""
    if dt is None or dt.is_float:
        return
    message, label, help = float_value_problem(dt, "function", node.ident.name)
    raise TileError(Diagnostic.error(MISMATCHED_DTYPES, message).primary(node.span, label).note(GENERIC_NOTE)
                    .with_help(help))


def _integral(v: Any) -> bool:
    import numpy as np

    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def check_float_operand(value: Any, dt: DType | None, node: Any) -> None:
    """E0201 for a float value in arithmetic that the instance's integer or
    `bool` `dt` types: `x + c` of `let c = 256 / 0.1;` with `T = i16` was
    2563, the kernel's instance an internal error (`node`: the operand; a
    float literal gets the literal's words)."""
    import numpy as np

    if dt is None or dt.is_float or not isinstance(value, (float, np.floating)):
        return
    span = node.span
    if type(node).__name__ == "FloatLit":
        check_literal(node.value, dt, span, text=node.text)
    message, label, help = float_value_problem(dt, "function")
    raise TileError(Diagnostic.error(MISMATCHED_DTYPES, message).primary(span, label).note(GENERIC_NOTE)
                    .with_help(help))
