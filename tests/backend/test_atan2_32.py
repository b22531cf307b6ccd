"""The f32 `atan2` both engines compute (`tilelang/interp/atan32.py`, emitted by `f32exact.atan2`; hnum): made only
of correctly rounded IEEE operations, so the GPU gives the interpreter's bits, not merely its tolerance.

- llsim runs the generated code of an f32, f16 and bf16 `atan2` kernel on ~20k pairs (random bit patterns of every
  class, uniform values, pairs near the diagonal and the cut tan(1/2), subnormals, values near FLT_MAX, the specials
  against each other): bit for bit the interpreter's results (NaN as NaN).
- the PTX holds no approximate, f64 or flush-to-zero instruction and every add, sub, mul and div is `.rn`; where
  nvdisasm is installed, the SASS has no FP64 instruction and no MUFU but div.rn's own reciprocal seed.
- accuracy against NumPy's f64 `arctan2`: within 1.5 ulp on a sweep of every class (1.46 measured over ~75 million
  pairs: `benchmarks/hnum_atan2.py`, benchmarks/RESULTS.md, hnum); zeros, infinities and NaN as C99's atan2.
- `TILEC_ATAN2_F32=0` gives the f64 atan2 rounded once on both engines.
Under `heavy`: the emitted LLVM JIT-compiled for this CPU (llvmlite) against the interpreter on 4 million pairs.
`gpu`: the card on ~1 million pairs, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

from tilelang.backend import emit_ptx
from tilelang.dtypes import DType
from tilelang.interp import run_kernel
from tilelang.interp.numeric import atan2_f32, elementwise, round_bf16
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder

TILE = 1024
f32 = np.float32
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 3e-45, 1.1754942e-38,
                    1.1754944e-38, 0.5463025, 3.4028235e38, -3.4028235e38, 2.0, 1e-20], f32)


def _kernel(dt: DType) -> ir.Kernel:
    b = Builder(f"atan2_{dt.value}")
    for p in ("y", "x", "o"):
        b.tensor_param(p, dt, 1)
    off = b.mul(b.block_id(0), b.const(TILE, DType.I32))
    y, x = b.load("y", (off,), (TILE,)), b.load("x", (off,), (TILE,))
    b.store("o", (off,), b.elementwise(ir.ElemOp.ATAN2, y, x))
    return b.finish()


def _pairs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """~9n pairs of every class (see the module), padded to whole tiles."""
    r = np.random.default_rng(seed)

    def bits(k: int) -> np.ndarray:
        return r.integers(0, 1 << 32, k, dtype=np.uint64).astype(np.uint32).view(f32)

    u = r.uniform(-1, 1, (2, n)).astype(f32)
    d = r.uniform(-1, 1, n).astype(f32)
    cut = (f32(0.5463025) * (1 + r.uniform(-1e-5, 1e-5, n))).astype(f32)  # lo / hi at the cut
    sub = (r.integers(1, 1 << 23, (2, n)).astype(np.uint32).view(f32) * r.choice([-1, 1], (2, n))).astype(f32)
    big = (r.uniform(-1, 1, (2, n)) * 3.4e38).astype(f32)
    sx, sy = np.repeat(SPECIAL, SPECIAL.size), np.tile(SPECIAL, SPECIAL.size)
    y = np.concatenate([bits(2 * n), u[0], (d * r.uniform(0.7, 1.3, n)).astype(f32), cut, sub[0], big[0],
                        sub[1] * f32(2.0**40), sy])
    x = np.concatenate([bits(2 * n), u[1], d, np.ones(n, f32) * r.choice([-1, 1], n).astype(f32), sub[1], big[1],
                        bits(n), sx])
    pad = (-y.size) % TILE
    return np.concatenate([y, np.ones(pad, f32)]), np.concatenate([x, np.ones(pad, f32)])


def _same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    g, w = got.astype(f32), want.astype(f32)
    return (g.view(np.uint32) == w.view(np.uint32)) | (np.isnan(g) & np.isnan(w))


def _on_both(dt: DType, y: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = _kernel(dt)
    with np.errstate(over="ignore"):
        y, x = y.astype(dt.np_dtype), x.astype(dt.np_dtype)
    want, got = [y, x, np.zeros_like(x)], [y, x, np.zeros_like(x)]
    run_kernel(k, (x.size // TILE,), want)
    SimDevice().run(k, (x.size // TILE,), got)
    return got[2], want[2]


def test_llsim_gives_the_interpreters_bits_for_f32() -> None:
    y, x = _pairs(2000, 7)
    got, want = _on_both(DType.F32, y, x)
    ok = _same(got, want)
    assert ok.all(), (y[~ok][:4], x[~ok][:4], got[~ok][:4], want[~ok][:4])
    assert np.array_equal(want, atan2_f32(y, x), equal_nan=True)  # (the kernel's is the algorithm's)


@pytest.mark.parametrize("dt", [DType.F16, DType.BF16], ids=lambda d: d.value)
def test_llsim_gives_the_interpreters_bits_for_narrow_types(dt: DType) -> None:
    """f16/bf16 compute in f32 and round once, on both engines."""
    y, x = _pairs(600, 8)
    if dt is DType.BF16:  # a bf16 tensor holds bf16 values
        y, x = round_bf16(y), round_bf16(x)
    got, want = _on_both(dt, y, x)
    ok = _same(got, want)
    assert ok.all(), (y[~ok][:4], x[~ok][:4], got[~ok][:4], want[~ok][:4])


def _ulps(got: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|got - atan2(y, x)| in ulps of the f64 result rounded to f32 (0 where both are NaN or equal)."""
    with np.errstate(invalid="ignore"):
        want = np.arctan2(y.astype(np.float64), x.astype(np.float64))
        ulp = np.maximum(np.spacing(np.abs(want).astype(f32)), np.spacing(f32(2.0**-126))).astype(np.float64)
        e = np.abs(got.astype(np.float64) - want) / ulp
    return np.where((np.isnan(got) & np.isnan(want)) | (got == want), 0.0, e)


def test_within_1_5_ulp_of_atan2_and_the_specials_as_c99() -> None:
    y, x = _pairs(20_000, 9)
    u = _ulps(atan2_f32(y, x), y, x)
    assert u.max() < 1.5, (u.max(), y[np.argmax(u)], x[np.argmax(u)])
    sy, sx = np.repeat(SPECIAL, SPECIAL.size), np.tile(SPECIAL, SPECIAL.size)
    got, want = atan2_f32(sy, sx), np.arctan2(sy.astype(np.float64), sx.astype(np.float64)).astype(f32)
    cls = lambda v: (v == 0) | np.isinf(v) | np.isnan(v)  # noqa: E731
    exact = (cls(sy) | cls(sx)) & ~(np.isinf(sy) & np.isinf(sx))  # (inf, inf): the polynomial's pi/4 and 3 pi/4
    assert _same(got, want)[exact].all()
    assert (_ulps(got, sy, sx) < 1).all()
    assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)]))  # zeros' signs


def test_the_code_holds_only_correctly_rounded_operations() -> None:
    ptx = emit_ptx(_kernel(DType.F32), "sm_90a")
    body = ptx[ptx.index("{"):]
    for bad in (".approx", ".f64", ".ftz", "ex2", "lg2", "rcp", "div.full"):
        assert bad not in body, bad
    for op in ("add", "sub", "mul", "div"):
        plain = [ln for ln in body.splitlines() if ln.strip().startswith(f"{op}.f32")]
        assert not plain, plain
    assert body.count("div.rn.f32") == TILE // 128  # one division an element, 8 elements a thread


def test_the_machine_code_has_no_mufu_and_no_fp64() -> None:
    import re

    from ptxas_report import sass

    code = sass(emit_ptx(_kernel(DType.F32), "sm_90a"))
    ops = set(re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?P\w+\s+)?([A-Z][A-Z0-9]*)", code, re.M))
    assert "FFMA" in ops and not {"DFMA", "DADD", "DMUL", "F2F"} & ops, ops
    # the one MUFU is div.rn's: ptxas's IEEE division seeds with MUFU.RCP, refines it by FFMAs to the correctly
    # rounded quotient and checks (FCHK) for its slow path; no other approximation
    assert set(re.findall(r"MUFU\.(\w+)", code)) <= {"RCP", "RSQ"} and "FCHK" in ops
    # (its slow path, on scaled significands, says .FTZ in places: the PTX above has no `.ftz`)


def test_the_switch_selects_the_f64_atan2_on_both_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    y, x = _pairs(300, 10)
    monkeypatch.setenv("TILEC_ATAN2_F32", "0")
    with np.errstate(all="ignore"):  # (the specials' NaN and infinities)
        rounded = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(f32)
        assert np.array_equal(elementwise(ir.ElemOp.ATAN2, [y, x], DType.F32), rounded, equal_nan=True)
        assert ".f64" in emit_ptx(_kernel(DType.F32), "sm_90a")
        monkeypatch.setenv("TILEC_ATAN2_F32", "1")
        assert np.array_equal(elementwise(ir.ElemOp.ATAN2, [y, x], DType.F32), atan2_f32(y, x), equal_nan=True)
    assert not _same(atan2_f32(y, x), rounded).all()  # the two differ in last bits somewhere


@pytest.mark.heavy
def test_the_emitted_code_gives_the_interpreters_bits_on_millions() -> None:
    from test_f64math import HostEmitter, compile_loop, loop_module

    from tilelang.backend import f32exact

    em = HostEmitter()
    fn = compile_loop(loop_module(em, f32exact.atan2(em, "%x", "%y"), arity=2, in_ty="float", out_ty="float"),
                      arity=2)
    for seed in range(4):
        y, x = _pairs(110_000, 100 + seed)
        out = np.empty_like(y)
        fn(y.ctypes.data, x.ctypes.data, out.ctypes.data, y.size)
        ok = _same(out, atan2_f32(y, x))
        assert ok.all(), (y[~ok][:4], x[~ok][:4])


@pytest.mark.gpu
def test_the_card_gives_the_interpreters_bits(cuda_device: int) -> None:
    from tilelang.runtime import cuda

    y, x = _pairs(110_000, 11)
    for dt in (DType.F32, DType.F16, DType.BF16):
        yy, xx = (round_bf16(y), round_bf16(x)) if dt is DType.BF16 else (y, x)
        with np.errstate(over="ignore"):
            yy, xx = yy.astype(dt.np_dtype), xx.astype(dt.np_dtype)
        k = _kernel(dt)
        dev = cuda.device()
        bufs = [dev.upload(yy, dt), dev.upload(xx, dt), dev.upload(np.zeros_like(xx), dt)]
        dev.run(dev.prepare(k), (xx.size // TILE,), bufs)
        dev.sync()
        got = dev.download(bufs[2], dt, xx.shape)
        want = [yy, xx, np.zeros_like(xx)]
        run_kernel(k, (xx.size // TILE,), want)
        ok = _same(got, want[2])
        assert ok.all(), (dt, int((~ok).sum()), yy[~ok][:4], xx[~ok][:4])
