"""The host builtins of BRIEF §5: the evaluator's `Builtins`, which runs a
call of a built-in function or a method on a host value.

Functions: `zeros ones full arange rand randn load_npy print assert
assert_close` (and scalar `abs sqrt exp log min max`); methods on tensors:
`partition shape clone reshape save_npy sum max min` (and `as` casts, element
-wise `+ - * /` through `host_ops.binary`). Split by concern: host arithmetic
in `runtime/host_ops.py`, the computing builtins (math, `pow`, `fma`,
`maximum`/`where`, scans, reductions) in `runtime/host_math.py` (`HostMath`,
this class's base), `.npy` files in `runtime/host_npy.py`.

Semantics the rest of the toolchain may rely on:
- `rand::<T>(shape, seed)` and `randn::<T>(shape, seed)` draw float64 values
  from NumPy's `Generator(PCG64(seed))` (`.random` uniform in [0, 1),
  `.standard_normal`) in row-major order and round them to `T`, so the same
  seed gives the same values on every machine, and `f32`/`f64` tensors of one
  seed agree to rounding. For an integer `T`, `rand` draws uniform integers
  in [0, 100) (`.integers(0, 100)`); for `bool`, fair coin flips. `randn`
  needs a float `T`. The seed is any integer, taken modulo 2^64 (a negative
  seed is its two's complement: `-1` is `u64::MAX`).
- Host arithmetic, `t.sum()` and `load_npy`/`save_npy`: the docstrings of
  `host_ops`, `host_math` and `host_npy`.
- `assert_close(&a, &b, rtol = r, atol = t)` passes when every element has
  `|a - b| <= atol + rtol * |b|` (NaN is never close). Defaults by dtype
  (PyTorch's): f16 rtol 1e-3, atol 1e-5; bf16 rtol 1.6e-2, atol 1e-5; f32
  rtol 1.3e-6, atol 1e-5; f64 rtol 1e-7, atol 1e-7; integers and bool exact.
- `print` prints its arguments separated by spaces; when the first is a
  string with a brace, it is a format string (`tilelang/printfmt.py`): each
  `{}` takes the next argument, `{{`/`}}` write a brace, and placeholders and
  arguments must agree (a string held in a variable: E0723 here).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tilelang import printfmt
from tilelang.diagnostics.bounds import item_not_one
from tilelang.diagnostics.codes import launch as lcodes
from tilelang.diagnostics.codes import runtime as rcodes
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.dtypes import DType, arange_problem
from tilelang.interp import numeric as num
from tilelang.interp.printing import format_scalar
from tilelang.intrinsics.constants import ASSERT_CLOSE_DEFAULTS
from tilelang.runtime import host_domains as domains
from tilelang.runtime.host_math import Evaluator, HostMath
from tilelang.runtime.host_npy import load_npy, save_npy
from tilelang.runtime.host_ops import (
    format_value,
    out_of_bounds,
    py_value,
    scalar_dtype_of,
    shape_text,
    to_scalar,
    unsupported,
)
from tilelang.runtime.tensor import TUNER_PICKS, Partition, Tensor
from tilelang.source import Span
from tilelang.syntax import ast

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


# ---------------------------------------------------------------- builtins
class Builtins(HostMath):
    def __init__(self, ev: Evaluator) -> None:
        super().__init__(ev)

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
                    rcodes.HOST_SHAPE, f"a shape dimension is negative: {shape_text(dims)}")
                    .primary(span, "this shape").with_help("every dimension must be 0 or more"))
            out.append(d)
        return tuple(out)

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
                return self._new(np.full(shape, py_value(pos[1])), dt)
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
                return load_npy(str(pos[0]), call, self.ev.dtype_named, self.device)
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
        raise unsupported(Diagnostic.error("ICE", f"`{name}` cannot be called in host code")
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
                raise unsupported(Diagnostic.error("ICE", f"`randn` needs a float element type, not `{dt.value}`")
                    .primary(call.span, "here").with_help("use `rand` for integers"))
            values: np.ndarray = rng.standard_normal(shape)
        elif dt is DType.BOOL:
            values = rng.random(shape) < 0.5
        elif dt.is_int:
            values = rng.integers(0, RAND_INT_HIGH, size=shape)
        else:
            values = rng.random(shape)
        return self._new(values, dt)

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
        x = np.asarray(a.numpy() if isinstance(a, Tensor) else py_value(a))
        y = np.asarray(b.numpy() if isinstance(b, Tensor) else py_value(b))
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
                rcodes.HOST_SHAPE, f"`assert_close` got shapes {shape_text(x.shape)} and {shape_text(y.shape)}")
                .primary(call.span, "the two sides differ in shape")
                .secondary(call.args[0].value.span, f"shape {shape_text(x.shape)}")
                .secondary(call.args[1].value.span, f"shape {shape_text(y.shape)}")
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
        nan_x, nan_y = np.isnan(xf), np.isnan(yf)
        if (bad & (nan_x | nan_y)).any():
            # (huser29: NaN in both at the same places said "the largest difference is 0, as large as the values
            # compared: more likely a wrong result")
            one = int(np.count_nonzero(bad & (nan_x != nan_y)))
            diag = diag.with_help(
                f"NaN on one side only at {one} element(s): a NaN where the other side has a number is a wrong "
                f"result; `{la} != {la}` finds a tensor's NaNs" if one else
                f"NaN is close to nothing, not even a NaN (`{la} != {la}` is the NaN test): where NaN is meant, "
                f"check that both sides have it in the same places, `assert((({la} != {la}) == ({lb} != {lb})).min())`"
                f", and compare the other elements, `assert_close(&where({la} != {la}, 0.0, {la}), "
                f"&where({lb} != {lb}, 0.0, {lb}))`")
            raise TileError(diag)
        if x.size:
            worst = float(np.nanmax(np.where(np.isfinite(diff), diff, np.nan))) if np.isfinite(diff).any() else float("inf")
            i0 = np.unravel_index(int(flat[0]), x.shape) if x.ndim else ()
            size = max(abs(float(xf[i0])), abs(float(yf[i0])))  # round 12: 4.2 apart at values of 2 said "loosen"
            diag = diag.with_help(f"the largest difference is {_g(worst)}; loosen `rtol`/`atol` if that is within "
                                  "what you expect" if not size or float(diff[i0]) < size / 2 else
                                  f"the largest difference is {_g(worst)}, as large as the values compared: more "
                                  "likely a wrong result than rounding, which a tolerance would hide")
        raise TileError(diag)
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
                            f"cannot reshape {shape_text(recv.shape)} ({recv.size} elements) "
                            f"into {shape_text(shape)} ({math.prod(shape)} elements)")
                            .primary(mc.span, "the element counts differ")
                            .with_help("the new shape must hold the same number of elements"))
                    # A copy, not a view: the result is a new tensor, and an
                    # in-place write to it (`r += 1.0`) must not reach `recv`.
                    return Tensor(recv.dtype, tuple(shape),
                                  self.device.upload(recv.numpy().reshape(shape).copy(), recv.dtype), recv.device)
                case "save_npy":
                    save_npy(recv, str(pos[0]), mc.span)
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
                            .primary(mc.span, f"this tensor is {shape_text(recv.shape)}")
                            .with_help("use `.permute([..])` for other ranks"))
                    axes = (1, 0) if name == "transpose" else tuple(int(a) for a in pos[0])
                    if sorted(axes) != list(range(recv.rank)):
                        raise TileError(Diagnostic.error(
                            rcodes.HOST_SHAPE, f"`permute` needs a permutation of 0..{recv.rank}, "
                            f"found {shape_text(axes)}").primary(mc.span, "not a permutation of the axes")
                            .with_help(f"list each axis 0..{recv.rank} exactly once"))
                    return self._new(recv.numpy().transpose(axes).copy(), recv.dtype)  # (a view aliased: hrev22)
                case "broadcast":
                    to = self._shape_arg(pos[0], self._arg_span(mc, 0))
                    try:
                        out = np.broadcast_to(recv.numpy(), to)
                    except ValueError:
                        raise TileError(Diagnostic.error(
                            rcodes.HOST_SHAPE, f"cannot broadcast {shape_text(recv.shape)} to {shape_text(to)}")
                            .primary(mc.span, "incompatible shapes")
                            .with_help("only dimensions of size 1 stretch (NumPy rules)")) from None
                    return self._new(np.array(out, copy=True), recv.dtype)
                case "item":
                    bad = item_not_one(shape_text(recv.shape), recv.size)
                    if bad is not None:
                        raise out_of_bounds(bad, mc)
                    return to_scalar(py_value(recv.numpy().reshape(())[()]), recv.dtype)
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
        raise unsupported(Diagnostic.error("ICE", f"no method `{name}` on this host value")
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
                .primary(mc.span, f"{shape_text(tile)} for a tensor of shape {shape_text(t.shape)}")
                .with_help(f"give one tile dimension per tensor dimension ({t.rank})"))
        if any(d is not TUNER_PICKS and d <= 0 for d in tile):
            raise TileError(Diagnostic.error(
                lcodes.BAD_PARTITION, f"tile shape {shape_text(tile)} has a dimension that is not positive")
                .primary(mc.span, "every tile dimension must be at least 1")
                            .with_help("compute the tile shape from positive values, e.g. `maximum(n, 1)`"))
        return Partition(t, tile)


def _deref(e: ast.Expr) -> ast.Expr:
    return e.expr if isinstance(e, ast.Ref) else e



def _g(x: float) -> str:
    return f"{x:.3g}"

