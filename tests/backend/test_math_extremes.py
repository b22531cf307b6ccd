"""exp, tanh and sigmoid at the ends of the f32 range: the generated code
(run on the CPU by `llsim`) against the interpreter, NaN for NaN and the same
infinity for an overflow. `exp` is `ex2.approx` of x*log2(e) times (1 + the
product's rounding error); where the power overflows to +inf, inf times a
negative or zero correction plus inf was NaN: exp(100), tanh(50) and
sigmoid(-100) came out NaN on the GPU while the interpreter gives inf, 1 and 0
(found by an independent program in the final device call of 2026-12-03)."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

from tilelang.dtypes import DType
from tilelang.interp import run_kernel
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder

E = ir.ElemOp
OPS = [E.EXP, E.TANH, E.SIGMOID, E.EXP2]
X = np.array(
    [0.0, 1.0, -1.0, 20.0, 44.0, 44.5, 50.0, -50.0, 88.0, 88.7, 88.73, 89.0, 100.0, 150.0, 1e30,
     -87.0, -88.0, -100.0, -150.0, -1e30, np.inf, -np.inf, np.nan, 3.4e38, -3.4e38, 128.0, 130.0, -126.5],
    np.float32,
)
TILE = 32


def _kernel(dt: DType) -> ir.Kernel:
    b = Builder(f"extremes_{dt.value}")
    b.tensor_param("x", dt, 1)
    for op in OPS:
        b.tensor_param(f"o_{op.value}", dt, 1)
    off = b.mul(b.block_id(0), b.const(TILE, DType.I32))
    x = b.load("x", (off,), (TILE,))
    for op in OPS:
        b.store(f"o_{op.value}", (off,), b.elementwise(op, x))
    return b.finish()


@pytest.mark.parametrize("dt", [DType.F32, DType.F16, DType.BF16], ids=lambda d: d.value)
def test_overflow_and_nan_agree_with_the_interpreter(dt: DType) -> None:
    k = _kernel(dt)
    if dt is DType.BF16:
        from tilelang.interp import round_bf16

        x = round_bf16(X)  # bf16 values held in f32 arrays, as the interpreter takes them
    else:
        with np.errstate(over="ignore"):  # 1e30 and 3.4e38 are inf in f16
            x = X.astype(dt.np_dtype)
    args = [x, *(np.zeros(X.size, x.dtype) for _ in OPS)]
    grid = (-(-X.size // TILE),)
    want = [a.copy() for a in args]
    with np.errstate(all="ignore"):
        run_kernel(k, grid, want)
    got = [a.copy() for a in args]
    SimDevice().run(k, grid, got)
    for op, w, g in zip(OPS, want[1:], got[1:], strict=True):
        w64, g64 = np.asarray(w, np.float64), np.asarray(g, np.float64)
        special = ~np.isfinite(w64) | ~np.isfinite(g64)
        bad = [
            f"x={float(xv)!r}: interpreter {float(a)!r}, generated code {float(c)!r}"
            for xv, a, c, s in zip(X, w64, g64, special, strict=True)
            if s and not (a == c or (np.isnan(a) and np.isnan(c)))
        ]
        assert not bad, f"{op.value} ({dt.value}): " + "; ".join(bad)
        fin = ~special
        np.testing.assert_allclose(g64[fin], w64[fin], rtol=1e-2 if dt is not DType.F32 else 1e-5,
                                   atol=1e-30, err_msg=f"{op.value} ({dt.value})")
