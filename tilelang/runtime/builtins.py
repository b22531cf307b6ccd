"""The host builtins of BRIEF §5 and host arithmetic.

Functions: `zeros ones full arange rand randn load_npy print assert
assert_close` (and scalar `abs sqrt exp log min max`); methods on tensors:
`partition shape clone reshape save_npy sum max min` (and `as` casts, element
-wise `+ - * /` through `binary`).

Semantics the rest of the toolchain may rely on:
- `rand::<T>(shape, seed)` and `randn::<T>(shape, seed)` draw float64 values
  from NumPy's `Generator(PCG64(seed))` (`.random` uniform in [0, 1),
  `.standard_normal`) in row-major order and round them to `T`, so the same
  seed gives the same values on every machine, and `f32`/`f64` tensors of one
  seed agree to rounding. For an integer `T`, `rand` draws uniform integers
  in [0, 100) (`.integers(0, 100)`); for `bool`, fair coin flips. `randn`
  needs a float `T`. The seed is any integer, taken modulo 2^64 (a negative
  seed is its two's complement: `-1` is `u64::MAX`).
- Host arithmetic reads its operands and never moves them. Scalars broadcast;
  two tensors combine element-wise (NumPy broadcasting where a dimension is 1).
  f16 results are rounded to f16 and bf16 results to bf16 after every
  operation; integer `/` truncates toward zero and `%` takes the dividend's
  sign (a zero divisor is a run-time error on the host, E0715). Shifts follow
  the kernels' (PTX) rule: the amount is read as unsigned, so a negative
  amount is a huge one; an amount of at least the bit width gives 0 (`<<`,
  unsigned `>>`) or the sign fill (signed `>>`).
- `t.sum()` accumulates floats in f64 and integers in i64, then converts the
  total to `T` (integers wrap); `t.max()`/`t.min()` propagate NaN.
- `assert_close(&a, &b, rtol = r, atol = t)` passes when every element has
  `|a - b| <= atol + rtol * |b|` (NaN is never close). Defaults by dtype
  (PyTorch's): f16 rtol 1e-3, atol 1e-5; bf16 rtol 1.6e-2, atol 1e-5; f32
  rtol 1.3e-6, atol 1e-5; f64 rtol 1e-7, atol 1e-7; integers and bool exact.
- `load_npy(path)` / `t.save_npy(path)` resolve a relative path against the
  current directory and use exactly that path (NumPy's `np.save` would add
  `.npy` to a name without it). A bf16 tensor is saved as float32.
- Floating-point specials (overflow to inf, NaN, division by zero) are the
  defined results: NumPy's RuntimeWarnings are never shown (the evaluator's
  entry points run under `np.errstate(all="ignore")`).
- `print` prints its arguments separated by spaces; when the first is a
  string with a brace, it is a format string (`tilelang/printfmt.py`): each
  `{}` takes the next argument, `{{`/`}}` write a brace, and placeholders and
  arguments must agree (a string held in a variable: E0723 here).
"""

from __future__ import annotations

import math
import os
import threading
from typing import IO, Any, Protocol

import numpy as np

from tilelang import printfmt
from tilelang.diagnostics.bounds import OutOfBounds, index_out_of_bounds, item_not_one, slice_out_of_bounds
from tilelang.diagnostics.codes import launch as lcodes
from tilelang.diagnostics.codes import runtime as rcodes
from tilelang.diagnostics.model import ICE, Diagnostic, TileError
from tilelang.dtypes import ARITH, COMPARE, DType, arange_problem, float_rem, round_float, trunc_div, trunc_rem
from tilelang.interp import numeric as num
from tilelang.interp.printing import format_scalar
from tilelang.intrinsics.constants import ASSERT_CLOSE_DEFAULTS
from tilelang.ir.nodes import ElemOp, ScanOp
from tilelang.limits import MAX_RANK
from tilelang.runtime import host_domains as domains
from tilelang.runtime.declared import npy_type_mismatch
from tilelang.runtime.tensor import (TUNER_PICKS, Partition, Tensor, dtype_of_array, float_to_int, format_tensor,
                                     normalise, npy_dtype_help)
from tilelang.sema.program import Program
from tilelang.source import SourceMap, Span
from tilelang.syntax import ast


class Evaluator(Protocol):
    """What the builtins need of the host evaluator (`host.HostEvaluator`).
    A scope is the evaluator's own (`host._Scope`): builtins only pass it back."""

    @property
    def runtime(self) -> Any: ...

    @property
    def out(self) -> IO[str]: ...

    @property
    def sources(self) -> SourceMap: ...

    @property
    def program(self) -> Program: ...

    def eval(self, e: ast.Expr, scope: Any) -> Any: ...

    def truth(self, v: Any) -> bool: ...

UNARY_MATH = ("exp", "exp2", "log", "log2", "sqrt", "atan", "rsqrt", "abs", "sin", "cos", "asin", "tanh", "sigmoid",
              "floor", "acos", "ceil", "erf")  # (their values: `num.math_values`, as kernels compute them)
REDUCTIONS = ("sum", "max", "min", "prod", "argmax", "argmin")
SCANS = ("cumsum", "cumprod", "cummax", "cummin")

HOST_FUNCTIONS = frozenset({
    "zeros", "ones", "full", "arange", "rand", "randn", "load_npy", "print",
    "assert", "assert_close", "maximum", "minimum", "where", "pow", "atan2", *SCANS, "fma", *UNARY_MATH,
    *REDUCTIONS,
})

RAND_INT_HIGH = 100

_DEFAULT_TOL = ASSERT_CLOSE_DEFAULTS  # one table: the signature's display reads it too


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


def _num(v: Any) -> Any:
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
    x, y = _num(a), _num(b)
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
            raise _unsupported(Diagnostic.error("ICE", f"operator `{op}` is not supported here")
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
        shapes = " and ".join(_shape(t.shape) for t in tensors)
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
    x = ta.numpy() if ta is not None else np.asarray(_num(a)).astype(work)
    y = tb.numpy() if tb is not None else np.asarray(_num(b)).astype(work)
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
                f"shapes {_shape(ta.shape)} and {_shape(tb.shape)} do not fit element-wise")
                .primary(op_span, f"`{op}` of {_shape(ta.shape)} and {_shape(tb.shape)}")
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
                raise _unsupported(Diagnostic.error("ICE", f"operator `{op}` is not supported on host tensors")
                    .primary(op_span, "here")
                    .with_help("host tensors support `+ - * /`; do the rest in a kernel"))
    return Tensor.from_numpy(np.asarray(r), out_dt, t.device)


def _npy_header_shape(path: str) -> tuple[int, ...] | None:
    """The shape a `.npy` file's header gives, read without its data; None
    where it cannot be read (`np.load` then says why)."""
    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            read = {(1, 0): np.lib.format.read_array_header_1_0,
                    (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read is None:
                return None
            shape = read(f)[0]
    except (OSError, ValueError, EOFError):
        return None
    return tuple(int(d) for d in shape) if isinstance(shape, tuple) else None


def _too_long_npy(path: str, shape: tuple[int, ...], big: int, call: Any) -> TileError:
    """E0713: a `.npy` array with a dimension past `i32`, which a tensor's dimensions are."""
    return TileError(Diagnostic.error(
        rcodes.NPY_FORMAT, f"`{path}` holds an array of shape {list(shape)}: a dimension of {big} elements "
                           f"is more than the {(1 << 31) - 1} a Tile tensor's dimension holds")
        .primary(call.span, "loaded here")
        .with_help("save it reshaped so that no dimension has more than 2147483647 elements"))


def _out_of_bounds(bad: OutOfBounds, node: Any) -> TileError:
    return TileError(Diagnostic.error(rcodes.HOST_INDEX, bad.message).primary(node.span, bad.label)
                     .with_help(bad.help))


def index_tensor(t: Tensor, i: int, node: Any, device: Any) -> Any:
    """`t[i]`: row `i` (a new tensor) or, of a 1-D tensor, element `i` (a scalar)."""
    bad = index_out_of_bounds(t.shape[0], i)
    if bad is not None:
        raise _out_of_bounds(bad, node)
    row = t.numpy()[i]
    if t.rank == 1:
        return to_scalar(_num(np.asarray(row)[()]), t.dtype)
    return Tensor.from_numpy(np.array(row, copy=True), t.dtype, device)


def slice_tensor(t: Tensor, lo: int, hi: int, node: Any, device: Any) -> Tensor:
    """`t[lo..hi]`: rows lo..hi-1 as a new tensor."""
    bad = slice_out_of_bounds(t.shape[0], lo, hi)
    if bad is not None:
        raise _out_of_bounds(bad, node)
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
    x = _num(v)
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
    return to_scalar(_num(v), dt)


def _shape(dims: Any) -> str:
    return "[" + ", ".join(str(int(d)) for d in dims) + "]"


# ---------------------------------------------------------------- formatting
def format_value(v: Any) -> str:
    from tilelang.runtime.launch import Graph, Handle, Operation

    if isinstance(v, Tensor):
        return format_tensor(v)
    if isinstance(v, str):
        return v
    if isinstance(v, Partition):
        return f"{v.type_name()} of {v.tensor.type_name()}, grid {_shape(v.grid)}"
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


# ---------------------------------------------------------------- builtins
class Builtins:
    def __init__(self, ev: Evaluator) -> None:
        self.ev = ev

    @property
    def device(self) -> Any:
        return self.ev.runtime.device

    # -- argument helpers ---------------------------------------------------------
    def _args(self, call: ast.Call | ast.MethodCall, scope: Any) -> tuple[list[Any], dict[str, Any]]:
        pos: list[Any] = []
        kw: dict[str, Any] = {}
        for a in call.args:
            v = self.ev.eval(a.value, scope)
            if a.name is not None:
                kw[a.name.name] = v
            else:
                pos.append(v)
        return pos, kw

    def _dtype(self, call: ast.Call, default: DType = DType.F32) -> DType:
        if call.generics and isinstance(call.generics[0], ast.NamedType):
            dt = self.ev.dtype_named(call.generics[0].name.name)
            if dt is not None:
                return dt
        ty = self.ev.program.type_of(call)
        d = self.ev.elem_dtype(getattr(ty, "dtype", None))
        return d if d is not None else default

    def _shape_arg(self, v: Any, span: Span) -> tuple[int, ...]:
        dims = [v] if isinstance(v, (int, np.integer)) else list(v)
        out = []
        for d in dims:
            d = int(d)
            if d < 0:
                raise TileError(Diagnostic.error(
                    rcodes.HOST_SHAPE, f"a shape dimension is negative: {_shape(dims)}")
                    .primary(span, "this shape").with_help("every dimension must be 0 or more"))
            out.append(d)
        return tuple(out)

    def _arg_span(self, call: ast.Call | ast.MethodCall, i: int) -> Span:
        return call.args[i].span if i < len(call.args) else call.span

    def _new(self, array: np.ndarray, dt: DType) -> Tensor:
        return Tensor.from_numpy(array, dt, self.device)

    # -- free functions -------------------------------------------------------------
    def call(self, name: str, call: ast.Call, scope: Any) -> Any:
        if name == "assert":
            return self._assert(call, scope)
        pos, kw = self._args(call, scope)
        match name:
            case "zeros" | "ones":
                dt = self._dtype(call)
                shape = self._shape_arg(pos[0], self._arg_span(call, 0))
                # in the storage dtype at once (np.full(shape, 0) would first
                # build an int64 array twice the size of an f32 one)
                return self._new((np.zeros if name == "zeros" else np.ones)(shape, dt.np_dtype), dt)
            case "full":
                dt = self._dtype(call)
                shape = self._shape_arg(pos[0], self._arg_span(call, 0))
                return self._new(np.full(shape, _num(pos[1])), dt)
            case "arange":
                dt = self._dtype(call, DType.I32)
                domains.check_builtin("arange", dt, call.span)  # `arange::<T>` of an instance `T = bool`
                lo, hi = (0, pos[0]) if len(pos) == 1 else (pos[0], pos[1])
                why = arange_problem(dt, int(hi))  # a constant length: the checker's E0231
                if why is not None:
                    raise TileError(Diagnostic.error(
                        rcodes.HOST_ARANGE_RANGE, f"`arange::<{dt}>` of length {int(hi)} makes values that "
                                                  f"`{dt}` cannot hold")
                        .primary(self._arg_span(call, len(pos) - 1), why)
                        .with_help(f"use an element type that holds every value the length can make, or cast "
                                   f"a wider range with `as {dt}` where wrapping is what you want"))
                return self._new(np.arange(int(lo), int(hi)), dt)
            case "rand" | "randn":
                return self._random(name, call, pos, kw)
            case "load_npy":
                return self._load_npy(str(pos[0]), call)
            case "print":
                self.ev.out.write(self._print_text(pos, call) + "\n")
                return ()
            case "assert_close":
                return self._assert_close(call, pos, kw)
            case _ if name in UNARY_MATH:
                return self.math(name, pos[0], call)
            case _ if name in REDUCTIONS:
                return self.reduce(name, pos[0], pos[1] if len(pos) > 1 else None, call)
            case "maximum" | "minimum" | "where":
                return self._select(name, pos, call)
            case _ if name in SCANS and isinstance(pos[0], Tensor):
                return self._scan(name, pos[0], pos[1] if len(pos) > 1 else None, call)
            case "pow" | "atan2":
                return self.pow(pos[0], pos[1], call, name)
            case "fma":
                return self._fma(pos, call)
        raise _unsupported(Diagnostic.error("ICE", f"`{name}` cannot be called in host code")
                        .primary(call.span, "here"))

    def _print_text(self, pos: list[Any], call: ast.Call) -> str:
        if pos and isinstance(pos[0], str) and printfmt.is_format(pos[0]):
            # a literal was checked (E0232); a string held in a variable is checked here
            p = printfmt.problem_of(pos[0], len(pos) - 1)
            if p is not None:
                raise TileError(Diagnostic.error(rcodes.HOST_FORMAT_STRING, p.message)
                                .primary(self._arg_span(call, 0), p.label)
                                .note(f'the format string is "{pos[0]}"')
                                .with_help(p.help))
            pieces = printfmt.pieces(pos[0])
            assert isinstance(pieces, list)
            out = pieces[0]
            for i, (v, piece) in enumerate(zip(pos[1:], pieces[1:], strict=True)):
                out += self._format_arg(v, call, i + 1) + piece
            return out
        return " ".join(self._format_arg(v, call, i) for i, v in enumerate(pos))

    def _format_arg(self, v: Any, call: ast.Call, i: int) -> str:
        """One printed value; a `bf16` scalar (held as a float32) in bf16's
        shortest digits, as a bf16 tensor's elements are (`1.01`, not the
        float32 `1.0078125` of the same bits)."""
        if isinstance(v, (float, np.floating)) and i < len(call.args) \
                and self.ev.scalar_dtype(call.args[i].value) is DType.BF16:
            return format_scalar(v, DType.BF16)
        return format_value(v)

    def _random(self, name: str, call: ast.Call, pos: list[Any], kw: dict[str, Any]) -> Tensor:
        dt = self._dtype(call)
        shape = self._shape_arg(pos[0], self._arg_span(call, 0))
        seed = int(pos[1]) if len(pos) > 1 else int(kw.get("seed", 0))
        rng = np.random.Generator(np.random.PCG64(seed % (1 << 64)))
        if name == "randn":
            if not dt.is_float:
                raise _unsupported(Diagnostic.error("ICE", f"`randn` needs a float element type, not `{dt.value}`")
                    .primary(call.span, "here").with_help("use `rand` for integers"))
            values: np.ndarray = rng.standard_normal(shape)
        elif dt is DType.BOOL:
            values = rng.random(shape) < 0.5
        elif dt.is_int:
            values = rng.integers(0, RAND_INT_HIGH, size=shape)
        else:
            values = rng.random(shape)
        return self._new(values, dt)

    def _load_npy(self, path: str, call: ast.Call) -> Tensor:
        big = next((d for d in _npy_header_shape(path) or () if d >= 1 << 31), None)
        if big is not None:  # read before the data: gigabytes that could never be a tensor
            raise _too_long_npy(path, _npy_header_shape(path) or (), big, call)
        try:
            arr = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            raise TileError(Diagnostic.error(rcodes.NPY_IO, f"cannot read `{path}`: no such file")
                            .primary(call.span, "loaded here")
                            .with_help("paths are relative to the directory `tilec run` was started in")) from None
        except OSError as e:
            raise TileError(Diagnostic.error(rcodes.NPY_IO, f"cannot read `{path}`: {_reason(e)}")
                            .primary(call.span, "loaded here")
                            .with_help("check the path and its permissions (relative paths start in the directory `tilec run` was started in)")) from None
        except (ValueError, EOFError):
            raise TileError(Diagnostic.error(rcodes.NPY_FORMAT, f"`{path}` is not a `.npy` file")
                            .primary(call.span, "loaded here")
                            .with_help("write it with NumPy's `np.save` or Tile's `t.save_npy(path)`")) from None
        if not isinstance(arr, np.ndarray):
            raise TileError(Diagnostic.error(rcodes.NPY_FORMAT, f"`{path}` does not hold one array")
                            .primary(call.span, "loaded here")
                            .with_help("save one array with NumPy's `np.save` (not `np.savez`)"))
        if arr.ndim > MAX_RANK:  # NumPy's own operations stop at 32 or 64 (an internal error later)
            raise TileError(Diagnostic.error(
                rcodes.NPY_FORMAT, f"`{path}` holds an array of {arr.ndim} dimensions; Tile's tensors have at "
                                   f"most {MAX_RANK}")
                .primary(call.span, "loaded here")
                .with_help("save it reshaped to fewer dimensions (size-1 ones add nothing)"))
        big = next((d for d in arr.shape if d >= 1 << 31), None)
        if big is not None:  # a tensor's dimensions are `i32` (kernels index with them)
            raise _too_long_npy(path, arr.shape, big, call)
        native = arr.dtype.newbyteorder("=") if arr.dtype.byteorder not in ("=", "|") else arr.dtype
        dt = dtype_of_array(np.empty(0, dtype=native))
        if dt is None:
            raise TileError(Diagnostic.error(
                rcodes.NPY_FORMAT, f"`{path}` holds `{arr.dtype}` values, which Tile has no type for")
                .primary(call.span, "loaded here").with_help(npy_dtype_help(arr.dtype)))
        if (bad := npy_type_mismatch(call, path, dt, self.ev.dtype_named)) is not None:
            raise TileError(bad)  # `load_npy::<f16>` of an `f32` file (hrev29)
        return self._new(arr.astype(native), dt)  # a 0-D array loads 0-D (`Tensor.from_numpy`)

    def _assert(self, call: ast.Call, scope: Any) -> Any:
        if not call.args:
            return ()
        cond = self.ev.eval(call.args[0].value, scope)
        if self.ev.truth(cond):
            return ()
        text = self.ev.sources.snippet(call.args[0].value.span)
        if len(call.args) > 1:
            msg = format_value(self.ev.eval(call.args[1].value, scope))
            diag = Diagnostic.error(rcodes.HOST_ASSERT, f"assertion failed: {msg}")
        else:
            diag = Diagnostic.error(rcodes.HOST_ASSERT, f"assertion failed: `{text}`")
        diag = diag.primary(call.args[0].value.span, "this is false").with_help(
            "the program's own `assert` found its condition false: check the values it tests, or the condition")
        if isinstance(cond, Tensor):
            bad = int(np.size(cond.numpy()) - np.count_nonzero(cond.numpy()))
            diag = diag.note(f"{bad} of {cond.size} elements are false")
        raise TileError(diag)

    def _assert_close(self, call: ast.Call, pos: list[Any], kw: dict[str, Any]) -> Any:
        a, b = pos[0], pos[1]
        la, lb = (self.ev.sources.snippet(_deref(call.args[i].value).span) for i in (0, 1))
        dt = a.dtype if isinstance(a, Tensor) else (b.dtype if isinstance(b, Tensor) else scalar_dtype_of(a))
        x = np.asarray(a.numpy() if isinstance(a, Tensor) else _num(a))
        y = np.asarray(b.numpy() if isinstance(b, Tensor) else _num(b))
        default_rtol, default_atol = _DEFAULT_TOL.get(dt, (0.0, 0.0)) if dt else (1.3e-6, 1e-5)
        rtol = float(kw.get("rtol", pos[2] if len(pos) > 2 else default_rtol))
        atol = float(kw.get("atol", pos[3] if len(pos) > 3 else default_atol))
        for name, tol in (("rtol", rtol), ("atol", atol)):
            if math.isnan(tol) or tol < 0:  # a constant was refused by the checker (E0233)
                arg = next((a for a in call.args if a.name is not None and a.name.name == name), None)
                raise TileError(Diagnostic.error(
                    rcodes.HOST_BAD_TOLERANCE, f"`{name}` of `assert_close` is "
                                               f"{'NaN' if math.isnan(tol) else f'negative ({format_scalar(tol)})'}")
                    .primary(arg.value.span if arg is not None else call.span,
                             "a tolerance is a distance: zero or more")
                    .note("`|a - b| <= atol + rtol * |b|` with a negative or NaN tolerance fails for every "
                          "element, or passes where it should not")
                    .with_help(f"compute a tolerance of zero or more (`maximum({name}, 0.0)`), or `{name} = 0.0` "
                               "for an exact comparison"))
        if x.shape != y.shape:
            raise TileError(Diagnostic.error(
                rcodes.HOST_SHAPE, f"`assert_close` got shapes {_shape(x.shape)} and {_shape(y.shape)}")
                .primary(call.span, "the two sides differ in shape")
                .secondary(call.args[0].value.span, f"shape {_shape(x.shape)}")
                .secondary(call.args[1].value.span, f"shape {_shape(y.shape)}")
                .with_help("compare tensors of one shape (`.reshape([..])` one side if only the layout differs)"))
        xf = x.astype(np.float64)
        yf = y.astype(np.float64)
        with np.errstate(all="ignore"):
            diff = np.abs(xf - yf)
            allowed = atol + rtol * np.abs(yf)
        bad = num.not_close(xf, yf, rtol, atol, equal_nan=False)
        n_bad = int(np.count_nonzero(bad))
        if n_bad == 0:
            return ()
        excess = np.where(bad, np.nan_to_num(diff - allowed, nan=np.inf, posinf=np.inf), -1.0)
        flat = np.argsort(-excess.reshape(-1), kind="stable")[: min(5, n_bad)]
        diag = (Diagnostic.error(
            rcodes.NOT_CLOSE,
            f"tensors are not close: {n_bad} of {x.size} elements differ "
            f"(rtol = {_g(rtol)}, atol = {_g(atol)})")
            .primary(call.span, f"{n_bad} elements differ")
            .secondary(call.args[0].value.span, "left")
            .secondary(call.args[1].value.span, "right"))
        for i in flat:
            idx = np.unravel_index(int(i), x.shape) if x.ndim else ()
            where = "[" + ", ".join(str(int(k)) for k in idx) + "]"
            xa, ya = x[idx] if x.ndim else x[()], y[idx] if y.ndim else y[()]
            d = diff[idx] if x.ndim else diff[()]
            diag = diag.note(
                f"at {where}: left `{la}` = {format_scalar(xa, dt)}, right `{lb}` = "
                f"{format_scalar(ya, dt)}, difference {_g(float(d))}")
        if n_bad > len(flat):
            diag = diag.note(f"... and {n_bad - len(flat)} more")
        if x.size:
            worst = float(np.nanmax(np.where(np.isfinite(diff), diff, np.nan))) if np.isfinite(diff).any() else float("inf")
            i0 = np.unravel_index(int(flat[0]), x.shape) if x.ndim else ()
            size = max(abs(float(xf[i0])), abs(float(yf[i0])))  # round 12: 4.2 apart at values of 2 said "loosen"
            diag = diag.with_help(f"the largest difference is {_g(worst)}; loosen `rtol`/`atol` if that is within "
                                  "what you expect" if not size or float(diff[i0]) < size / 2 else
                                  f"the largest difference is {_g(worst)}, as large as the values compared: more "
                                  "likely a wrong result than rounding, which a tolerance would hide")
        raise TileError(diag)

    def math(self, name: str, x: Any, node: Any = None) -> Any:
        """A unary math function of a scalar or, element-wise, of a tensor: a float one as a kernel computes it
        (`num.math_values`: f32 in f32, f16/bf16 in f32 rounded once, f64 in f64; a scalar by the call's checked
        type, the reference's "One math function, one value"), integers in f64."""
        if isinstance(x, Tensor):
            dt = x.dtype
            v = x.numpy()
            domains.check_math(name, dt, None, node, bool(self.ev._types))
            with np.errstate(all="ignore"):
                if dt.is_float:
                    return self._new(num.math_values(name, v, dt), dt)
                if name == "abs":
                    return self._new(np.abs(v), dt)
                return self._new(num.math_values(name, v.astype(np.float64), DType.F64), DType.F32)
        sdt = scalar_dtype_of(x)
        typed = self.ev.scalar_dtype(node) if node is not None else None
        domains.check_math(name, sdt, typed, node, True)
        if name == "abs" and sdt is not None and not sdt.is_float:
            return to_scalar(abs(int(_num(x))), sdt)
        fdt = typed if typed is not None and typed.is_float else sdt if sdt is not None and sdt.is_float else None
        with np.errstate(all="ignore"):  # (an untyped number or an integer: in f64)
            r = num.math_values(name, normalise(np.asarray(_num(x)), fdt or DType.F64), fdt or DType.F64)
        return to_scalar(float(r), fdt) if fdt is not None else float(r)

    def pow(self, x: Any, y: Any, node: Any, name: str = "pow") -> Any:
        """`pow(x, y)` / `x.pow(y)` (`atan2` alike): IEEE pow, element-wise with broadcasting,
        computed as the interpreter computes it (f16/bf16 in f32, rounded once)."""
        tensors = [v for v in (x, y) if isinstance(v, Tensor)]
        if tensors:
            dt = tensors[0].dtype
            check_fit(name, [x, y], node.span)
            if not dt.is_float:
                raise TileError(Diagnostic.error(rcodes.HOST_SHAPE, f"`{name}` is defined on floats, not `{dt.value}`")
                                .primary(node.span, f"a `{dt.value}` tensor")
                                .with_help("cast it first: `t as f32`"))
            xs = [v.numpy() if isinstance(v, Tensor) else np.asarray(_num(v)) for v in (x, y)]
            shape = np.broadcast_shapes(*(a.shape for a in xs))
            xs = [np.broadcast_to(num.to_compute(np.asarray(a, dtype=num.compute_dtype(dt)), dt), shape)
                  for a in xs]
            with np.errstate(all="ignore"):
                r = num.elementwise(ElemOp(name), xs, dt)
            return self._new(np.ascontiguousarray(r), dt)
        dt = self.ev.scalar_dtype(node) or DType.F64
        domains.check_builtin(name, dt, node.span)  # an instance `T = i32` (the checker refuses a concrete one)
        with np.errstate(all="ignore"):
            r = num.elementwise(ElemOp(name), [np.asarray(float(_num(x))), np.asarray(float(_num(y)))],
                                dt if dt.is_float else DType.F64)
        return to_scalar(_num(r[()]), dt)

    def _fma(self, pos: list[Any], node: Any) -> Any:
        """`fma(a, b, c)`: a * b + c rounded once, element-wise with
        broadcasting (the interpreter's exact fma)."""
        tensors = [v for v in pos if isinstance(v, Tensor)]
        check_fit("fma", pos, node.span)
        dt = tensors[0].dtype if tensors else (self.ev.scalar_dtype(node) or DType.F64)
        domains.check_builtin("fma", dt, node.span, bool(self.ev._types) or not tensors)  # (an internal error)
        cd = num.compute_dtype(dt)
        xs = [np.asarray(v.numpy() if isinstance(v, Tensor) else _num(v), dtype=cd) for v in pos]
        shape = np.broadcast_shapes(*(a.shape for a in xs))
        xs = [np.array(np.broadcast_to(a, shape)) for a in xs]  # (ascontiguousarray makes 0-D 1-D)
        with np.errstate(all="ignore"):
            r = num.elementwise(ElemOp.FMA, xs, dt)
        if tensors:
            return self._new(np.array(r), dt)
        return to_scalar(_num(np.asarray(r)[()]), dt)

    def _scan(self, name: str, t: Tensor, axis: Any, node: Any) -> Tensor:
        """Inclusive prefix sum (`cumsum`), product (`cumprod`), maximum or
        minimum (`cummax`, `cummin`) along an axis, in the tensor's type:
        integers wrap, floats accumulate in order (f16/bf16 in f32, rounded
        once), as the interpreter's scan does."""
        ax = 0 if axis is None else int(axis)
        if not -t.rank <= ax < t.rank:
            raise TileError(Diagnostic.error(
                rcodes.HOST_SHAPE, f"axis {ax} is out of range for a tensor of {t.rank} dimensions")
                .primary(node.span, "this scan").with_help(f"axes count from 0 to {t.rank - 1}"))
        domains.check_builtin(name, t.dtype, node.span)  # an instance `T = bool` (refused for a concrete one)
        with np.errstate(all="ignore"):
            r = num.scan(ScanOp(name), t.numpy(), t.dtype, ax % t.rank)
        return self._new(np.ascontiguousarray(r), t.dtype)

    def _select(self, name: str, pos: list[Any], call: ast.Call) -> Any:
        if name == "where":
            c, a, b = pos
        else:
            a, b = pos
            c = None
            domains.check_builtin(name, a.dtype if isinstance(a, Tensor) else b.dtype if isinstance(b, Tensor)
                                  else scalar_dtype_of(a) or scalar_dtype_of(b), call.span)  # instance `T = bool`
        tensors = [v for v in (a, b) if isinstance(v, Tensor)]
        if not tensors and not isinstance(c, Tensor):
            if name == "where":
                return a if c else b
            x, y = _num(a), _num(b)
            r = (max if name == "maximum" else min)(x, y)
            if (isinstance(x, float) and math.isnan(x)) or (isinstance(y, float) and math.isnan(y)):
                r = float("nan")
            elif isinstance(r, float) and r == 0 and x == y:
                # -0.0 < +0.0, as in kernels and on tensors (`num.ieee_maximum`): Python's `max`/`min`
                # return the first of two equal values, so `minimum(0.0, -0.0)` was 0.0
                r = x + y if name == "maximum" else -((-x) + (-y))
            dt = scalar_dtype_of(a) or scalar_dtype_of(b)
            return to_scalar(r, dt) if dt is not None else r
        if tensors:
            dt = tensors[0].dtype
        else:  # `where(c, 1, 0)`: the scalars' type; untyped integer literals are i32 (the checker's rule)
            dt = scalar_dtype_of(a) or scalar_dtype_of(b) or (
                DType.F32 if isinstance(a, float) or isinstance(b, float) else DType.I32)
        check_fit(name, [a, b], call.span)
        check_fit(name, [c, *tensors], call.span, same_dtype=False)
        if isinstance(c, Tensor) and c.dtype is not DType.BOOL:
            raise TileError(Diagnostic.error(rcodes.HOST_SHAPE, f"`where` needs a `bool` condition, found "
                                             f"`{c.dtype.value}`")
                            .primary(self._arg_span(call, 0), f"a `{c.dtype.value}` tensor")
                            .with_help("compare it first: `where(c != 0, a, b)`"))
        device = (tensors[0] if tensors else c).device
        # a scalar side in the tensors' type first, as `_tensor_binary` and kernels convert it: NumPy made
        # `maximum` of a `u64` tensor and `1` (an `int64` array) a `float64` one (1027939206142677147 came
        # back as ..120)
        work = np.float32 if dt is DType.BF16 else dt.np_dtype
        x = a.numpy() if isinstance(a, Tensor) else np.asarray(_num(a)).astype(work)
        y = b.numpy() if isinstance(b, Tensor) else np.asarray(_num(b)).astype(work)
        if name == "where":
            cv = c.numpy() if isinstance(c, Tensor) else bool(c)
            r = np.where(cv, x, y)
        else:
            r = num.ieee_maximum(np.asarray(x), np.asarray(y), name == "maximum")  # -0 < +0, as in kernels
        return Tensor.from_numpy(np.asarray(r), dt, device)

    def reduce(self, name: str, t: Any, axis: Any, node: Any) -> Any:
        """`sum max min prod argmax argmin` over the whole tensor (a scalar) or
        one axis (a tensor without that axis)."""
        if not isinstance(t, Tensor):
            return t
        x = t.numpy()
        ax = None if axis is None else int(axis)
        if ax is not None and not -t.rank <= ax < t.rank:
            raise TileError(Diagnostic.error(
                rcodes.HOST_SHAPE, f"axis {ax} is out of range for a tensor of {t.rank} dimensions")
                .primary(node.span, "this reduction").with_help(f"axes count from 0 to {t.rank - 1}"))
        if name in ("max", "min", "argmax", "argmin") and ax is not None and x.size == 0 and x.shape[ax] != 0:
            # no rows to reduce along a non-empty axis: an empty result, as NumPy's (a [0, 4] tensor's
            # `max(1)` is a [0] tensor), not an error
            dt = DType.I32 if name in ("argmax", "argmin") else t.dtype
            return self._new(np.zeros(x.shape[:ax] + x.shape[ax + 1:], dt.np_dtype), dt)
        if name in ("max", "min", "argmax", "argmin") and (x.size == 0 or (ax is not None and x.shape[ax] == 0)):
            what = f"`{name}` of an empty tensor" if ax is None else \
                f"`{name}` along axis {ax}, which has length 0 (shape {_shape(x.shape)})"
            raise TileError(Diagnostic.error(rcodes.HOST_SHAPE, what)
                            .primary(node.span, "there is nothing to reduce")
                            .note(f"`{name}` has no value for an empty set (`sum` is 0, `prod` is 1)")
                            .with_help("check that the tensor is not empty before reducing it"))
        dt = t.dtype
        if name in ("sum", "prod"):
            domains.check_builtin(name, dt, node.span)  # an instance `T = bool` (refused for a concrete one)
            acc: Any
            if dt.is_float:
                acc = np.float64
            else:  # (`bool` elements were refused above)
                acc = np.int64 if dt.is_signed else np.uint64
            fn = np.sum if name == "sum" else np.prod
            r = fn(x, axis=ax, dtype=acc)
            if name == "sum" and dt.is_float:
                r = num.sum_signed(np.asarray(r), x, ax)  # all -0.0 sums to -0.0, as in kernels
        elif name in ("max", "min"):
            r = np.max(x, axis=ax) if name == "max" else np.min(x, axis=ax)
            r = num.zero_signed(np.asarray(r), x, ax, name == "max")  # -0 < +0, as in kernels
        else:
            r = np.argmax(x, axis=ax) if name == "argmax" else np.argmin(x, axis=ax)
            dt = DType.I32
        if ax is None or np.ndim(r) == 0:  # the only axis reduced: a scalar, as for tiles
            return to_scalar(_num(np.asarray(r)[()]), dt)
        return self._new(_wrap(np.asarray(r), dt), dt)

    # -- methods --------------------------------------------------------------------
    def method(self, name: str, recv: Any, mc: ast.MethodCall, scope: Any) -> Any:
        pos, _ = self._args(mc, scope)
        if isinstance(recv, Tensor):
            match name:
                case "partition":
                    return self._partition(recv, pos[0], mc)
                case "shape":
                    return list(recv.shape)
                case "clone":
                    return recv.clone()
                case "reshape":
                    shape = list(self._shape_arg(pos[0], self._arg_span(mc, 0)))
                    if math.prod(shape) != recv.size:
                        raise TileError(Diagnostic.error(
                            rcodes.HOST_SHAPE,
                            f"cannot reshape {_shape(recv.shape)} ({recv.size} elements) "
                            f"into {_shape(shape)} ({math.prod(shape)} elements)")
                            .primary(mc.span, "the element counts differ")
                            .with_help("the new shape must hold the same number of elements"))
                    # A copy, not a view: the result is a new tensor, and an
                    # in-place write to it (`r += 1.0`) must not reach `recv`.
                    return Tensor(recv.dtype, tuple(shape),
                                  self.device.upload(recv.numpy().reshape(shape).copy(), recv.dtype), recv.device)
                case "save_npy":
                    path = str(pos[0])
                    try:
                        # exactly `path`: `np.save(name)` would write `name.npy`; written
                        # beside it and renamed, so a reader never sees a part-written file
                        # (two programs saving and loading one path at once)
                        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.part"
                        try:
                            with open(tmp, "wb") as f:
                                np.save(f, recv.numpy())
                            os.replace(tmp, path)
                        finally:
                            if os.path.exists(tmp):
                                os.unlink(tmp)
                    except OSError as e:
                        raise TileError(Diagnostic.error(rcodes.NPY_IO, f"cannot write `{path}`: {_reason(e)}")
                                        .primary(mc.span, "saved here")
                                        .with_help("check that the directory exists and can be written")) from None
                    return ()
                case _ if name in REDUCTIONS:
                    return self.reduce(name, recv, pos[0] if pos else None, mc)
                case _ if name in UNARY_MATH:
                    return self.math(name, recv, mc)
                case "pow" | "atan2":
                    return self.pow(recv, pos[0], mc, name)
                case "transpose" | "permute":
                    if name == "transpose" and recv.rank != 2:
                        raise TileError(Diagnostic.error(
                            rcodes.HOST_SHAPE, f"`transpose` needs a 2-D tensor, found {recv.rank}-D")
                            .primary(mc.span, f"this tensor is {_shape(recv.shape)}")
                            .with_help("use `.permute([..])` for other ranks"))
                    axes = (1, 0) if name == "transpose" else tuple(int(a) for a in pos[0])
                    if sorted(axes) != list(range(recv.rank)):
                        raise TileError(Diagnostic.error(
                            rcodes.HOST_SHAPE, f"`permute` needs a permutation of 0..{recv.rank}, "
                            f"found {_shape(axes)}").primary(mc.span, "not a permutation of the axes")
                            .with_help(f"list each axis 0..{recv.rank} exactly once"))
                    return self._new(recv.numpy().transpose(axes).copy(), recv.dtype)  # (a view aliased: hrev22)
                case "broadcast":
                    to = self._shape_arg(pos[0], self._arg_span(mc, 0))
                    try:
                        out = np.broadcast_to(recv.numpy(), to)
                    except ValueError:
                        raise TileError(Diagnostic.error(
                            rcodes.HOST_SHAPE, f"cannot broadcast {_shape(recv.shape)} to {_shape(to)}")
                            .primary(mc.span, "incompatible shapes")
                            .with_help("only dimensions of size 1 stretch (NumPy rules)")) from None
                    return self._new(np.array(out, copy=True), recv.dtype)
                case "item":
                    bad = item_not_one(_shape(recv.shape), recv.size)
                    if bad is not None:
                        raise _out_of_bounds(bad, mc)
                    return to_scalar(_num(recv.numpy().reshape(())[()]), recv.dtype)
                case _ if name in SCANS:
                    return self._scan(name, recv, pos[0] if pos else None, mc)
        if isinstance(recv, (list, tuple)) and name == "len":
            return len(recv)
        if name in UNARY_MATH and isinstance(recv, (int, float, np.generic)):
            return self.math(name, recv, mc)
        if name in ("pow", "atan2") and isinstance(recv, (int, float, np.generic)):
            return self.pow(recv, pos[0], mc, name)
        if isinstance(recv, (int, float, bool, np.generic)):
            raise TileError(Diagnostic.error(rcodes.HOST_SHAPE, f"no method `{name}` on a scalar")
                            .primary(mc.method.span, f"`{mc.method.name}` needs a tensor")
                            .with_help("a reduction over every axis gives a scalar: reduce fewer axes, or "
                                       "use the value itself"))
        raise _unsupported(Diagnostic.error("ICE", f"no method `{name}` on this host value")
                        .primary(mc.method.span, "unknown method"))

    def _partition(self, t: Tensor, shape: Any, mc: ast.MethodCall) -> Partition:
        if shape is TUNER_PICKS:  # `z.partition(_)`: every dimension left to the tuner
            return Partition(t, (TUNER_PICKS,) * t.rank)
        tile = tuple(d if d is TUNER_PICKS else int(d)
                     for d in (shape if isinstance(shape, (list, tuple)) else [shape]))
        if len(tile) != t.rank:
            raise TileError(Diagnostic.error(
                lcodes.BAD_PARTITION,
                f"a tile shape of {len(tile)} dimensions cannot partition a tensor of {t.rank}")
                .primary(mc.span, f"{_shape(tile)} for a tensor of shape {_shape(t.shape)}")
                .with_help(f"give one tile dimension per tensor dimension ({t.rank})"))
        if any(d is not TUNER_PICKS and d <= 0 for d in tile):
            raise TileError(Diagnostic.error(
                lcodes.BAD_PARTITION, f"tile shape {_shape(tile)} has a dimension that is not positive")
                .primary(mc.span, "every tile dimension must be at least 1")
                            .with_help("compute the tile shape from positive values, e.g. `maximum(n, 1)`"))
        return Partition(t, tile)


def _wrap(a: np.ndarray, dt: DType) -> np.ndarray:
    """Integer totals wrap into `dt`; floats are converted (and rounded)."""
    if dt.is_int and a.dtype.kind in "iu":
        return a.astype(dt.np_dtype)
    return normalise(a, dt)


def _deref(e: ast.Expr) -> ast.Expr:
    return e.expr if isinstance(e, ast.Ref) else e


def _reason(e: BaseException) -> str:
    text = getattr(e, "strerror", None) or str(e)
    return text[:1].lower() + text[1:] if text else type(e).__name__


def _g(x: float) -> str:
    return f"{x:.3g}"


def _unsupported(diag: Diagnostic) -> ICE:
    """Host code the checker accepted but the evaluator cannot run: a bug in
    tilec (the checker and the evaluator disagree), reported as one."""
    return ICE(f"the host evaluator cannot run this: {diag.message}")
