"""Host arithmetic: the scalar and tensor operators of host code (`+ - * / %`,
comparisons, bitwise operators and shifts, unary `-`/`!`, `as` casts), row
indexing and slicing, and the text a printed host value has. The builtins
(`runtime/builtins.py`) and the host evaluator (`runtime/host.py`) compute
through these functions.

Semantics the rest of the toolchain may rely on:
- Host arithmetic reads its operands and never moves them. Scalars broadcast;
  two tensors combine element-wise (NumPy broadcasting where a dimension is 1).
  f16 results are rounded to f16 and bf16 results to bf16 after every
  operation; integer `/` truncates toward zero and `%` takes the dividend's
  sign (a zero divisor is a run-time error on the host, E0715). Shifts follow
  the kernels' (PTX) rule: the amount is read as unsigned, so a negative
  amount is a huge one; an amount of at least the bit width gives 0 (`<<`,
  unsigned `>>`) or the sign fill (signed `>>`).
- Floating-point specials (overflow to inf, NaN, division by zero) are the
  defined results: NumPy's RuntimeWarnings are never shown (the evaluator's
  entry points run under `np.errstate(all="ignore")`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tilelang.diagnostics.bounds import OutOfBounds, index_out_of_bounds, slice_out_of_bounds
from tilelang.diagnostics.codes import runtime as rcodes
from tilelang.diagnostics.model import ICE, Diagnostic, TileError
from tilelang.dtypes import ARITH, COMPARE, DType, float_rem, round_float, trunc_div, trunc_rem
from tilelang.interp import numeric as num
from tilelang.interp.printing import format_scalar
from tilelang.ir.nodes import ElemOp
from tilelang.runtime import host_domains as domains
from tilelang.runtime.tensor import (
    Partition,
    Tensor,
    dtype_of_array,
    float_to_int,
    format_tensor,
    normalise,
)
from tilelang.source import Span


# ---------------------------------------------------------------- scalars
def scalar_dtype_of(v: Any) -> DType | None:
    if isinstance(v, (bool, np.bool_)):
        return DType.BOOL
    if isinstance(v, np.generic):
        return dtype_of_array(np.asarray(v))
    return None


def to_scalar(v: Any, dt: DType | None) -> Any:
    """`v` as a scalar of `dt` (wrapping integers, saturating float -> int),
    or `v` unchanged when it is not a number or `dt` is None."""
    if dt is None or isinstance(v, (Tensor, Partition, str, list, tuple)):
        return v
    if not isinstance(v, (int, float, bool, np.generic)):
        return v
    if dt is DType.BOOL:
        return bool(v)
    if dt.is_int:
        if isinstance(v, (float, np.floating)):
            return float_to_int(np.asarray(v), dt)[()]
        return dt.np_dtype.type(dt.wrap(int(v)))
    v = round_float(int(v), dt) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else v  # once
    return normalise(np.asarray(float(v), dtype=np.float64), dt)[()]


def py_value(v: Any) -> Any:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    return v


_COMPARE = {"==", "!=", "<", ">", "<=", ">="}


def _div_zero(span: Span, op: str) -> TileError:
    what = "division" if op == "/" else "remainder"
    return TileError(Diagnostic.error(rcodes.HOST_DIV_ZERO, f"integer {what} by zero")
                     .primary(span, "the divisor is zero here")
                     .with_help("check the divisor before dividing"))


def binary(op: str, a: Any, b: Any, op_span: Span, span: Span, result_dtype: DType | None) -> Any:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return _tensor_binary(op, a, b, op_span, span)
    if isinstance(a, (str, list, tuple)) or isinstance(b, (str, list, tuple)):
        if op == "==":
            return a == b
        if op == "!=":
            return a != b
        if op == "+" and isinstance(a, list) and isinstance(b, list):
            return a + b
    if op not in _COMPARE:  # a generic function's instance (`v << 1` with `T = f32`)
        domains.check_operator(op, result_dtype or scalar_dtype_of(a) or scalar_dtype_of(b), op_span)
    elif op not in ("==", "!="):  # an order of `bool`s (`T = bool`), as in kernels
        domains.check_operator(op, scalar_dtype_of(a) or scalar_dtype_of(b), op_span)
    dt = result_dtype
    if dt is None and op not in _COMPARE:
        dt = scalar_dtype_of(a) or scalar_dtype_of(b)
        if dt is DType.BOOL and op not in ("&", "|", "^"):
            dt = None
    x, y = py_value(a), py_value(b)
    is_float = isinstance(x, float) or isinstance(y, float) or (dt is not None and dt.is_float)
    if op in COMPARE:
        return COMPARE[op](x, y)
    match op:
        case "+" | "-" | "*" | "&" | "|" | "^":
            r = ARITH[op](x, y)
        case "/":
            if is_float:
                with np.errstate(all="ignore"):
                    r = float(np.float64(x) / np.float64(y))
            else:
                if y == 0:
                    raise _div_zero(op_span.to(span), op)
                r = trunc_div(int(x), int(y))
        case "%":
            if is_float:
                r = float_rem(x, y)  # fmod, as kernels compute it: inf % y and x % 0 are NaN
            else:
                if y == 0:
                    raise _div_zero(op_span.to(span), op)
                r = trunc_rem(int(x), int(y))
        case "<<" | ">>":
            return _shift(int(x), int(y), dt or DType.I64, op == "<<")
        case _:
            raise unsupported(Diagnostic.error("ICE", f"operator `{op}` is not supported here")
                            .primary(op_span, "here"))
    if dt is not None:
        return to_scalar(r, dt)
    return r


def _shift(x: int, amount: int, dt: DType, left: bool) -> Any:
    """A scalar shift by the kernels' rule (`interp.numeric`'s `_shift`)."""
    bits = dt.bits
    amount &= (1 << bits) - 1  # read as unsigned: a negative amount is huge
    if amount >= bits:
        r = 0 if left or not dt.is_signed or x >= 0 else -1
    else:
        r = x << amount if left else x >> amount
    return to_scalar(r, dt)


def check_fit(what: str, values: list[Any], span: Span, *, same_dtype: bool = True) -> None:
    """The run-time half of the type checker's rules for element-wise builtins
    (`maximum`, `where`, `pow`, `fma`, ..) on tensors whose element type and
    shape it could not know (`load_npy`): one element type, shapes that
    broadcast. A located E0714, never a NumPy exception (an internal error)."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    if same_dtype and len({t.dtype for t in tensors}) > 1:
        names = " and ".join(f"`{t.dtype.value}`" for t in tensors)
        raise TileError(Diagnostic.error(rcodes.HOST_SHAPE, f"mismatched element types in `{what}`: {names}")
                        .primary(span, "the operands hold different types")
                        .with_help(f"cast them to one type first (`t as {tensors[0].dtype.value}`)"))
    try:
        np.broadcast_shapes(*(t.shape for t in tensors))
    except ValueError:
        shapes = " and ".join(shape_text(t.shape) for t in tensors)
        raise TileError(Diagnostic.error(rcodes.HOST_SHAPE, f"shapes {shapes} do not fit element-wise in `{what}`")
                        .primary(span, "incompatible shapes")
                        .with_help("the shapes must be equal, or 1 where they differ")) from None


def _tensor_binary(op: str, a: Any, b: Any, op_span: Span, span: Span) -> Any:
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    t = ta or tb
    assert t is not None
    dt = t.dtype
    shift_amount = op in ("<<", ">>") and ta is not None and tb is not None and ta.dtype.is_int \
        and tb.dtype.is_int and DType.BOOL not in (ta.dtype, tb.dtype)
    if ta is not None and tb is not None and ta.dtype is not tb.dtype and not shift_amount:
        raise TileError(Diagnostic.error(
            rcodes.HOST_SHAPE, f"mismatched element types: `{ta.dtype.value}` {op} `{tb.dtype.value}`")
            .primary(op_span, "the operands hold different types")
            .with_help(f"cast one side with `as {ta.dtype.value}`"))
    if op in ("&", "|", "^") and dt.is_float:  # (a tensor whose type is known only at run time)
        raise TileError(Diagnostic.error(rcodes.HOST_SHAPE, f"`{op}` is not defined on `{dt.value}` tensors")
                        .primary(op_span, "a bitwise operator on floats")
                        .with_help("bitwise operators take integers or `bool`: cast first (`t as i32`)"))
    domains.check_operator(op, dt, op_span, tensors=True)  # a shift of floats, `bool`s added (an instance)
    work = np.float32 if dt is DType.BF16 else dt.np_dtype
    x = ta.numpy() if ta is not None else np.asarray(py_value(a)).astype(work)
    y = tb.numpy() if tb is not None else np.asarray(py_value(b)).astype(work)
    if shift_amount and tb is not None and ta is not None and tb.dtype is not ta.dtype:
        # an amount of another integer type (as in kernels and Rust): a negative or over-wide
        # one is the width itself (0, or the sign fill of `>>`), never narrowed into range
        y = np.where((y < 0) | (y > dt.bits), dt.bits, y).astype(dt.np_dtype)
    if ta is not None and tb is not None:
        try:
            np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise TileError(Diagnostic.error(
                rcodes.HOST_SHAPE,
                f"shapes {shape_text(ta.shape)} and {shape_text(tb.shape)} do not fit element-wise")
                .primary(op_span, f"`{op}` of {shape_text(ta.shape)} and {shape_text(tb.shape)}")
                .with_help("the shapes must be equal, or 1 where they differ")) from None
    out_dt = dt
    with np.errstate(all="ignore"):
        match op:
            case "+" | "-" | "*" | "&" | "|" | "^":
                r = ARITH[op](x, y)  # NumPy's operators: wrapping, element-wise
            case "/" | "%" if dt.is_int:
                if np.any(y == 0):
                    raise _div_zero(op_span.to(span), op)
                # the interpreter's integer division (truncating, wrapping)
                r = num.elementwise(ElemOp.DIV if op == "/" else ElemOp.REM, [x, y], dt)
            case "<<" | ">>" if dt.is_int:  # the kernels' rule: amounts read unsigned, >= bits give 0 or the sign
                bx, by = np.broadcast_arrays(x, y)
                r = num.elementwise(ElemOp.SHL if op == "<<" else ElemOp.SHR,
                                    [np.ascontiguousarray(bx), np.ascontiguousarray(by)], dt)
            case "/":
                r = np.divide(x, y)
            case "%":
                r = np.fmod(x, y)
            case "==" | "!=" | "<" | ">" | "<=" | ">=":
                r = COMPARE[op](x, y)
                out_dt = DType.BOOL
            case _:
                raise unsupported(Diagnostic.error("ICE", f"operator `{op}` is not supported on host tensors")
                    .primary(op_span, "here")
                    .with_help("host tensors support `+ - * /`; do the rest in a kernel"))
    return Tensor.from_numpy(np.asarray(r), out_dt, t.device)


def out_of_bounds(bad: OutOfBounds, node: Any) -> TileError:
    return TileError(Diagnostic.error(rcodes.HOST_INDEX, bad.message).primary(node.span, bad.label)
                     .with_help(bad.help))


def index_tensor(t: Tensor, i: int, node: Any, device: Any) -> Any:
    """`t[i]`: row `i` (a new tensor) or, of a 1-D tensor, element `i` (a scalar)."""
    bad = index_out_of_bounds(t.shape[0], i)
    if bad is not None:
        raise out_of_bounds(bad, node)
    row = t.numpy()[i]
    if t.rank == 1:
        return to_scalar(py_value(np.asarray(row)[()]), t.dtype)
    return Tensor.from_numpy(np.array(row, copy=True), t.dtype, device)


def slice_tensor(t: Tensor, lo: int, hi: int, node: Any, device: Any) -> Tensor:
    """`t[lo..hi]`: rows lo..hi-1 as a new tensor."""
    bad = slice_out_of_bounds(t.shape[0], lo, hi)
    if bad is not None:
        raise out_of_bounds(bad, node)
    return Tensor.from_numpy(np.array(t.numpy()[lo:hi], copy=True), t.dtype, device)


def unary(op: str, v: Any, span: Span, result_dtype: DType | None) -> Any:
    if isinstance(v, Tensor):
        if (op == "-" and v.dtype is DType.BOOL) or (op != "-" and v.dtype.is_float):
            raise TileError(Diagnostic.error(
                rcodes.HOST_SHAPE, f"`{op}` is not defined on `{v.dtype.value}` tensors")
                .primary(span, f"a `{v.dtype.value}` tensor")
                .with_help("`-` negates numbers, `!` inverts `bool` and integers (bitwise)"))
        if op == "-":
            domains.check_negation(v.dtype, span, tensors=True)  # a generic instance's `u32` (as kernels)
        x = v.numpy()
        with np.errstate(all="ignore"):
            r = np.negative(x) if op == "-" else (np.logical_not(x) if v.dtype is DType.BOOL else np.invert(x))
        return Tensor.from_numpy(r, v.dtype, v.device)
    dt = result_dtype or scalar_dtype_of(v)
    domains.check_operator(op, dt, span)  # `-v` with `T = bool`, `!v` with `T = f32`: as for tensors
    if op == "-":
        domains.check_negation(dt, span)  # `-v` with `T = u32`, as a kernel's instance
    x = py_value(v)
    if op == "-":
        r = -x
    elif isinstance(x, bool):
        return not x
    else:
        r = ~int(x)
    return to_scalar(r, dt) if dt is not None else r


def cast(v: Any, dt: DType) -> Any:
    if isinstance(v, Tensor):
        # `normalise` returns its input when the type does not change: copy, so
        # that `let y = x as f32;` is a new tensor, not an alias of `x`.
        return Tensor.from_numpy(np.array(normalise(v.numpy(), dt), copy=True), dt, v.device)
    return to_scalar(py_value(v), dt)


def shape_text(dims: Any) -> str:
    return "[" + ", ".join(str(int(d)) for d in dims) + "]"


# ---------------------------------------------------------------- formatting
def format_value(v: Any) -> str:
    from tilelang.runtime.launch import Graph, Handle, Operation

    if isinstance(v, Tensor):
        return format_tensor(v)
    if isinstance(v, str):
        return v
    if isinstance(v, Partition):
        return f"{v.type_name()} of {v.tensor.type_name()}, grid {shape_text(v.grid)}"
    if isinstance(v, list):
        return "[" + ", ".join(format_value(x) for x in v) + "]"
    if isinstance(v, tuple):
        if len(v) == 1:
            return f"({format_value(v[0])},)"
        return "(" + ", ".join(format_value(x) for x in v) + ")"
    if isinstance(v, Operation):
        return f"Op<{v.name}>"
    if isinstance(v, Handle):
        return f"Handle<{v.op.name}>"
    if isinstance(v, Graph):
        return f"Graph({len(v.ops)} operations)"
    return format_scalar(v, scalar_dtype_of(v))


def unsupported(diag: Diagnostic) -> ICE:
    """Host code the checker accepted but the evaluator cannot run: a bug in
    tilec (the checker and the evaluator disagree), reported as one."""
    return ICE(f"the host evaluator cannot run this: {diag.message}")
