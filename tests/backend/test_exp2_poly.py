"""exp2 on the FMA pipe (`TILEC_EXP2_POLY=N`: one register in N of a tile's
f32 exp2s by `fastmath.EXP2_POLY`'s polynomial instead of `ex2.approx`):
within `MATH["exp2"]`'s promise everywhere, the same specials as the
interpreter (NaN, inf from 128, 0 far below), the generated code run on the
CPU by `llsim`; the share follows the switch and the default emits none."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

from tilelang.backend import emit_ptx, fastmath
from tilelang.dtypes import DType
from tilelang.interp import run_kernel
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder

TILE = 1024  # 8 registers a thread (4 warps): the share has registers to pick from
SPECIAL = np.array([0.0, -0.0, 0.5, -0.5, 1.5, 127.0, 127.5, 127.9, 127.99999, 128.0, 128.5, 150.0, 1e30, 3.4e38,
                    np.inf, -125.0, -125.4, -125.5, -126.0, -126.5, -127.0, -150.0, -1e30, -3.4e38, -np.inf, np.nan],
                   np.float32)


def _kernel(dt: DType) -> ir.Kernel:
    b = Builder(f"exp2_{dt.value}")
    b.tensor_param("x", dt, 1)
    b.tensor_param("o", dt, 1)
    off = b.mul(b.block_id(0), b.const(TILE, DType.I32))
    b.store("o", (off,), b.elementwise(ir.ElemOp.EXP2, b.load("x", (off,), (TILE,))))
    return b.finish()


def _emulated(x: np.ndarray) -> np.ndarray:
    """The polynomial path as `codegen/arith.fexp2_poly` emits it, in f32
    (fma exact in f64, rounded once)."""
    f32 = np.float32
    with np.errstate(all="ignore"):
        c = np.where(np.isnan(x), x, np.minimum(np.maximum(x, f32(-126)), f32(128))).astype(f32)
        t = (c + f32(12582912.0)).astype(f32)
        f = (c - (t - f32(12582912.0)).astype(f32)).astype(f32)
        p = np.full_like(f, f32(fastmath.EXP2_POLY[-1]))
        for coef in fastmath.EXP2_POLY[-2::-1]:
            p = (p.astype(np.float64) * f + np.float64(f32(coef))).astype(f32)
        scale = ((t.view(np.int32).astype(np.int64) << 23) + 0x3F000000) & 0xFFFFFFFF
        return (p * scale.astype(np.uint32).view(f32)).astype(f32)


def test_the_polynomial_keeps_exp2s_promise_on_a_dense_range() -> None:
    x = np.concatenate([np.linspace(-130, 130, 1_000_001, dtype=np.float32),
                        np.linspace(-1, 1, 200_001, dtype=np.float32), SPECIAL])
    got = _emulated(x).astype(np.float64)
    with np.errstate(over="ignore"):
        want = np.exp2(x.astype(np.float64)).astype(np.float32).astype(np.float64)  # inf past f32's range
    rtol, atol = fastmath.MATH["exp2"].rtol, fastmath.MATH["exp2"].atol
    fin = np.isfinite(want)
    assert np.all(np.abs(got[fin] - want[fin]) <= atol + rtol * np.abs(want[fin]))
    normal = fin & (want > 2.0**-125)
    assert np.max(np.abs(got[normal] / want[normal] - 1)) < 3e-7  # the stated 2.2e-7, f32 rounding included
    assert np.array_equal(got[~fin], want[~fin], equal_nan=True)  # inf and NaN as the interpreter


@pytest.mark.parametrize("dt", [DType.F32, DType.F16], ids=lambda d: d.value)
def test_every_exp2_by_the_polynomial_agrees_with_the_interpreter(dt: DType, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_EXP2_POLY", "1")  # every register: the whole tile takes the polynomial
    k = _kernel(dt)
    assert "ex2.approx" not in emit_ptx(k, "sm_90a")
    rng = np.random.default_rng(3)
    x = np.concatenate([SPECIAL, rng.uniform(-140, 140, TILE - SPECIAL.size)]).astype(np.float32)
    with np.errstate(over="ignore"):
        x = x.astype(dt.np_dtype)
    want, got = [x, np.zeros_like(x)], [x, np.zeros_like(x)]
    with np.errstate(all="ignore"):
        run_kernel(k, (1,), want)
    SimDevice().run(k, (1,), got)
    w, g = want[1].astype(np.float64), got[1].astype(np.float64)
    fin = np.isfinite(w)
    assert np.array_equal(g[~fin], w[~fin], equal_nan=True), x[~fin]
    rtol, atol = fastmath.tolerance("exp2", dt)
    np.testing.assert_allclose(g[fin], w[fin], rtol=rtol, atol=atol)


@pytest.mark.parametrize(("setting", "poly"), [(None, 0), ("0", 0), ("4", 2), ("8", 1), ("1", 8)])
def test_the_share_follows_the_switch(setting: str | None, poly: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """8 registers a thread: N = 4 takes 2 of them, 8 one, 1 all; unset or 0 none."""
    if setting is None:
        monkeypatch.delenv("TILEC_EXP2_POLY", raising=False)
    else:
        monkeypatch.setenv("TILEC_EXP2_POLY", setting)
    ptx = emit_ptx(_kernel(DType.F32), "sm_90a")
    assert ptx.count("ex2.approx") == 8 - poly
    assert ptx.count("1262485504") + ptx.count("0f4B400000") == poly  # the shifter 1.5 * 2^23, once a register
