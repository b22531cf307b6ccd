"""The host builtins that compute on values: unary math (`exp sqrt abs ..`),
`pow`/`atan2`, `fma`, `maximum`/`minimum`/`where`, the scans (`cumsum ..`)
and the reductions (`sum max min prod argmax argmin`), of scalars and,
element-wise, of tensors, as kernels compute them (`interp.numeric`).
`HostMath` is the base of `runtime/builtins.Builtins`, which dispatches the
calls and methods to it; `Evaluator` is what both need of the host evaluator.

Semantics the rest of the toolchain may rely on:
- `t.sum()` accumulates floats in f64 and integers in i64, then converts the
  total to `T` (integers wrap); `t.max()`/`t.min()` propagate NaN.
"""

from __future__ import annotations

import math
from typing import IO, Any, Protocol

import numpy as np

from tilelang.diagnostics.codes import runtime as rcodes
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.dtypes import DType
from tilelang.interp import numeric as num
from tilelang.ir.nodes import ElemOp, ScanOp
from tilelang.runtime import host_domains as domains
from tilelang.runtime.host_ops import check_fit, py_value, scalar_dtype_of, shape_text, to_scalar
from tilelang.runtime.tensor import Tensor, normalise
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

    def scalar_dtype(self, node: Any) -> DType | None: ...

    def elem_dtype(self, d: Any) -> DType | None: ...

    def dtype_named(self, name: str) -> DType | None: ...

    @property
    def _types(self) -> dict[str, DType]: ...  # the running generic call's type parameters


class HostMath:
    """The computing builtins, as methods of the evaluator's `Builtins`."""

    def __init__(self, ev: Evaluator) -> None:
        self.ev = ev

    @property
    def device(self) -> Any:
        return self.ev.runtime.device

    def _arg_span(self, call: ast.Call | ast.MethodCall, i: int) -> Span:
        return call.args[i].span if i < len(call.args) else call.span

    def _new(self, array: np.ndarray, dt: DType) -> Tensor:
        return Tensor.from_numpy(array, dt, self.device)

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
            return to_scalar(abs(int(py_value(x))), sdt)
        fdt = typed if typed is not None and typed.is_float else sdt if sdt is not None and sdt.is_float else None
        with np.errstate(all="ignore"):  # (an untyped number or an integer: in f64)
            r = num.math_values(name, normalise(np.asarray(py_value(x)), fdt or DType.F64), fdt or DType.F64)
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
            xs = [v.numpy() if isinstance(v, Tensor) else np.asarray(py_value(v)) for v in (x, y)]
            shape = np.broadcast_shapes(*(a.shape for a in xs))
            xs = [np.broadcast_to(num.to_compute(np.asarray(a, dtype=num.compute_dtype(dt)), dt), shape)
                  for a in xs]
            with np.errstate(all="ignore"):
                r = num.elementwise(ElemOp(name), xs, dt)
            return self._new(np.ascontiguousarray(r), dt)
        dt = self.ev.scalar_dtype(node) or DType.F64
        domains.check_builtin(name, dt, node.span)  # an instance `T = i32` (the checker refuses a concrete one)
        with np.errstate(all="ignore"):
            r = num.elementwise(ElemOp(name), [np.asarray(float(py_value(x))), np.asarray(float(py_value(y)))],
                                dt if dt.is_float else DType.F64)
        return to_scalar(py_value(r[()]), dt)

    def _fma(self, pos: list[Any], node: Any) -> Any:
        """`fma(a, b, c)`: a * b + c rounded once, element-wise with
        broadcasting (the interpreter's exact fma)."""
        tensors = [v for v in pos if isinstance(v, Tensor)]
        check_fit("fma", pos, node.span)
        dt = tensors[0].dtype if tensors else (self.ev.scalar_dtype(node) or DType.F64)
        domains.check_builtin("fma", dt, node.span, bool(self.ev._types) or not tensors)  # (an internal error)
        cd = num.compute_dtype(dt)
        xs = [np.asarray(v.numpy() if isinstance(v, Tensor) else py_value(v), dtype=cd) for v in pos]
        shape = np.broadcast_shapes(*(a.shape for a in xs))
        xs = [np.array(np.broadcast_to(a, shape)) for a in xs]  # (ascontiguousarray makes 0-D 1-D)
        with np.errstate(all="ignore"):
            r = num.elementwise(ElemOp.FMA, xs, dt)
        if tensors:
            return self._new(np.array(r), dt)
        return to_scalar(py_value(np.asarray(r)[()]), dt)

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
            x, y = py_value(a), py_value(b)
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
        x = a.numpy() if isinstance(a, Tensor) else np.asarray(py_value(a)).astype(work)
        y = b.numpy() if isinstance(b, Tensor) else np.asarray(py_value(b)).astype(work)
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
                f"`{name}` along axis {ax}, which has length 0 (shape {shape_text(x.shape)})"
            raise TileError(Diagnostic.error(rcodes.HOST_SHAPE, what)
                            .primary(node.span, "there is nothing to reduce")
                            .note(f"`{name}` has no value for an empty set (`sum` is 0, `prod` is 1)")
                            .with_help("check that the tensor is not empty before reducing it"))
        dt = t.dtype
        if name in ("sum", "prod"):
            domains.check_builtin(name, dt, node.span)  # an instance `T = bool` (refused for a concrete one)
            # (`bool` elements were refused above)
            acc: Any = np.float64 if dt.is_float else np.int64 if dt.is_signed else np.uint64
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
            return to_scalar(py_value(np.asarray(r)[()]), dt)
        return self._new(_wrap(np.asarray(r), dt), dt)


def _wrap(a: np.ndarray, dt: DType) -> np.ndarray:
    """Integer totals wrap into `dt`; floats are converted (and rounded)."""
    if dt.is_int and a.dtype.kind in "iu":
        return a.astype(dt.np_dtype)
    return normalise(a, dt)

