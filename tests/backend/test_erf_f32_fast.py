"""The GPU's f32 `erf` in f32 (`codegen/arith.ferf`, `fastmath.ERF_SMALL`/`ERF_BIG`; hcliff10): x + x Q(x^2)
below |x| = 1, sign(x) (1 - exp(-t^2 + P(t - 2.5))) with t = min(|x|, 4) from there. Within 2 ulp of erf over
the whole f32 range: checked here in a NumPy model of the emitted order (fma rounded once) with the exp exact
and off by its bound both ways, and the generated code run by `llsim` (its ex2.approx off by the MUFU's
bound) against the interpreter within `MATH["erf"]` and against `math.erf` within 2 ulp, with the specials
(+-0 with their sign, +-inf to +-1, NaN, subnormals) exact. `TILEC_ERF_F32=0` keeps the f64 series."""

from __future__ import annotations

import math

import numpy as np
import pytest
from llsim import SimDevice

from tilelang.backend import emit_ptx, fastmath
from tilelang.dtypes import DType
from tilelang.interp import run_kernel
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder

TILE = 1024
f32 = np.float32
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, -1e-38, 1e-20, 3.4e38, -3.4e38,
                    0.5, 0.9999999, 1.0, 1.0000001, -1.0, 2.5, 3.9, 3.92, 3.93, 4.0, 4.0000005, 5.0, 10.0, -10.0,
                    1e10, -1e10], np.float32)


@pytest.fixture(autouse=True)
def _f32_erf(monkeypatch):  # type: ignore[no-untyped-def]
    """The f32 algorithm is opt-in (`TILEC_ERF_F32=1`): the default keeps the interpreter's series, bit for bit."""
    monkeypatch.setenv("TILEC_ERF_F32", "1")


def _erf_ref(x: np.ndarray) -> np.ndarray:
    return np.array([math.erf(v) if not math.isnan(v) else math.nan for v in x.astype(np.float64).tolist()])


def _ulps(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|got - erf(x)| in ulps of erf(x) rounded to f32 (the spacing of the smallest f32 normal below)."""
    ref = _erf_ref(x)
    ulp = np.maximum(np.spacing(np.abs(ref).astype(np.float32)), np.spacing(f32(2.0**-126))).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / ulp


def _fma(a: np.ndarray, b: np.ndarray | np.float32, c: np.ndarray | np.float32) -> np.ndarray:
    return (a.astype(np.float64) * b + c).astype(f32)


def _model(x: np.ndarray, exp_err: float) -> np.ndarray:
    """`ferf` as emitted, in f32; the exp exact times (1 + exp_err)."""
    x = x.astype(f32)
    t = np.abs(x)
    s = (x * x).astype(f32)
    q = np.full_like(x, f32(fastmath.ERF_SMALL[-1]))
    for c in fastmath.ERF_SMALL[-2::-1]:
        q = _fma(q, s, f32(c))
    small = _fma(x, q, x)
    tc = np.minimum(t, f32(4.0))
    u = (tc - f32(fastmath.ERF_MID)).astype(f32)
    p = np.full_like(x, f32(fastmath.ERF_BIG[-1]))
    for c in fastmath.ERF_BIG[-2::-1]:
        p = _fma(p, u, f32(c))
    r = _fma(-tc, tc, p)
    e = (np.exp(r.astype(np.float64)) * (1 + exp_err)).astype(f32)
    big = np.copysign((f32(1) - e).astype(f32), x)
    return np.where(t < f32(fastmath.ERF_CUT), small, big)


@pytest.mark.parametrize("exp_err", [0.0, 3.6e-7, -3.6e-7])
def test_the_f32_algorithm_is_within_2_ulp_of_erf(exp_err: float) -> None:
    """Every 1009th f32 of [0, 4.5) (every f32 above rounds erf to 1), both signs."""
    bits = np.arange(0, int(f32(4.5).view(np.uint32)), 1009, dtype=np.uint32)
    x = np.concatenate([bits.view(f32), -bits.view(f32)[::7], SPECIAL[np.isfinite(SPECIAL)]])
    with np.errstate(over="ignore"):  # x^2 of the largest values: the first form, not taken there
        u = _ulps(_model(x, exp_err), x)
    assert u.max() <= 2.0, (u.max(), x[np.argmax(u)])
    if exp_err == 0.0:
        assert u.max() < 1.1  # the polynomials' own error, the exp exact (1.04 at most in a denser sweep)


def _kernel(dt: DType) -> ir.Kernel:
    b = Builder(f"erf_{dt.value}")
    b.tensor_param("x", dt, 1)
    b.tensor_param("o", dt, 1)
    off = b.mul(b.block_id(0), b.const(TILE, DType.I32))
    b.store("o", (off,), b.elementwise(ir.ElemOp.ERF, b.load("x", (off,), (TILE,))))
    return b.finish()


def test_the_switch_emits_no_f64_and_the_default_keeps_the_series(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    k = _kernel(DType.F32)
    ptx = emit_ptx(k, "sm_90a")
    assert ".f64" not in ptx and "ex2.approx" in ptx
    monkeypatch.setenv("TILEC_ERF_F32", "0")
    assert ".f64" in emit_ptx(_kernel(DType.F32), "sm_90a")
    monkeypatch.delenv("TILEC_ERF_F32")  # the default: the interpreter's series, bit for bit
    assert ".f64" in emit_ptx(_kernel(DType.F32), "sm_90a")


@pytest.mark.parametrize("dt", [DType.F32, DType.F16], ids=lambda d: d.value)
def test_erf_on_llsim_agrees_with_the_interpreter_and_erf(dt: DType) -> None:
    k = _kernel(dt)
    rng = np.random.default_rng(10)
    n = TILE - SPECIAL.size
    with np.errstate(over="ignore"):  # 3.4e38 is inf in f16
        x = np.concatenate([SPECIAL, rng.uniform(-4.5, 4.5, n // 2), rng.uniform(-1.2, 1.2, n // 4),
                            np.exp(rng.uniform(-80, 3, n - n // 2 - n // 4)) * rng.choice([-1, 1], n - n // 2 - n // 4)
                            ]).astype(np.float32).astype(dt.np_dtype)
    want, got = [x, np.zeros_like(x)], [x, np.zeros_like(x)]
    run_kernel(k, (1,), want)
    SimDevice().run(k, (1,), got)
    w, g = want[1].astype(np.float64), got[1].astype(np.float64)
    fin = np.isfinite(x.astype(np.float64))
    assert np.array_equal(g[~fin], w[~fin], equal_nan=True), x[~fin]
    assert np.array_equal(np.signbit(g), np.signbit(w))  # -0.0 stays -0.0
    rtol, atol = fastmath.tolerance("erf", dt)
    np.testing.assert_allclose(g[fin], w[fin], rtol=rtol, atol=atol)
    if dt is DType.F32:
        u = _ulps(got[1][fin], x[fin])
        assert u.max() <= 2.0, (u.max(), x[np.argmax(u)])


@pytest.mark.gpu
def test_erf_on_the_gpu_is_within_2_ulp_of_erf(cuda_device: int) -> None:
    """The real MUFU: every 1021st f32 of [0, 4.5) and its negation, plus the specials, on the card (f32), against
    `math.erf` within 2 ulp and the specials (signed zeros, +-inf to +-1, NaN) as the interpreter."""
    from tilelang.runtime import cuda

    bits = np.arange(0, int(f32(4.5).view(np.uint32)), 1021, dtype=np.uint32)
    x = np.concatenate([bits.view(f32), -bits.view(f32), SPECIAL])
    x = np.concatenate([x, np.zeros((-x.size) % TILE, f32)])
    k = _kernel(DType.F32)
    dev = cuda.device()
    bufs = [dev.upload(x, DType.F32), dev.upload(np.zeros_like(x), DType.F32)]
    dev.run(dev.prepare(k), (x.size // TILE,), bufs)
    dev.sync()
    got = dev.download(bufs[1], DType.F32, x.shape)
    want = [x[-TILE:], np.zeros(TILE, f32)]
    run_kernel(k, (1,), want)  # the last tile holds the specials
    assert np.array_equal(got[-TILE:][~np.isfinite(x[-TILE:])], want[1][~np.isfinite(x[-TILE:])], equal_nan=True)
    assert np.array_equal(np.signbit(got[-TILE:]), np.signbit(want[1]))
    fin = np.isfinite(x)
    u = _ulps(got[fin], x[fin])
    assert u.max() <= 2.0, (u.max(), x[fin][np.argmax(u)])
