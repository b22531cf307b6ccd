"""The f32 `erf` both engines compute (`tilelang/interp/erf32.py`, emitted by `f32exact.erf`; herf): made
only of correctly rounded IEEE operations, so the GPU gives the interpreter's bits, not merely its tolerance.

- llsim runs the generated NVPTX-shaped code of an f32, f16 and bf16 `erf` kernel on ~65k f32 inputs (every
  16411th f32 of [0, 4.5) with its negation, dense windows at the cut 1.0, the clamp 4.0 and where erf rounds
  to 1.0 (3.92), tiny and subnormal values, the specials; every f16 and bf16 of [0, 4.5)): bit for bit the
  interpreter's results (NaN as NaN).
- the PTX holds no approximate, f64 or flush-to-zero instruction and every add, sub and mul is `.rn` (ptxas
  neither contracts nor reorders those); where nvdisasm is installed, the SASS has no MUFU and no FP64
  instruction and exactly the PTX's FFMAs (none contracted).
- accuracy against `math.erf` (glibc's f64 erf, within an ulp of f64): within 2 ulp over the whole f32 range
  (1.04 measured: every f32 of [0.5, 4.5), benchmarks/RESULTS.md, herf), the specials exact.
- `TILEC_ERF_F32=0` gives the f64 series rounded once on both engines; another value is E0604.
- On a card (`gpu`): every 1021st f32 of [0, 4.5) and its negation, every f16 and bf16 there, bit for bit.
Under `heavy`: the emitted LLVM JIT-compiled for this CPU (llvmlite) against the interpreter on every 61st f32 of
[0, 4.5) and its negation, and llsim on 256k more inputs."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from llsim import SimDevice

from tilelang.backend import emit_ptx
from tilelang.backend.env_switch import SwitchError
from tilelang.diagnostics.model import TileError
from tilelang.dtypes import DType
from tilelang.interp import erf32, run_kernel
from tilelang.interp.numeric import elementwise, erf_f32, erf_f64, fma_f32, round_bf16
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder

TILE = 1024
f32 = np.float32
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e-45, 1e-40, 1.1754942e-38, 1e-38, -1e-38,
                    1e-20, 3.4e38, -3.4e38, 0.5, -0.5, 1.0, -1.0, 2.0, 3.92, 4.0, -4.0, 5.0, 1e10, -1e10], np.float32)


def _kernel(dt: DType) -> ir.Kernel:
    b = Builder(f"erf_{dt.value}")
    b.tensor_param("x", dt, 1)
    b.tensor_param("o", dt, 1)
    off = b.mul(b.block_id(0), b.const(TILE, DType.I32))
    b.store("o", (off,), b.elementwise(ir.ElemOp.ERF, b.load("x", (off,), (TILE,))))
    return b.finish()


def _every(step: int, lo: float, hi: float) -> np.ndarray:
    a, b = (int(f32(v).view(np.uint32)) for v in (lo, hi))
    return np.arange(a, b, step, dtype=np.uint32).view(f32)


def _window(at: float, n: int) -> np.ndarray:
    """The n f32 values each side of `at`."""
    c = int(f32(at).view(np.uint32))
    return np.arange(c - n, c + n, dtype=np.uint32).view(f32)


def _sample() -> np.ndarray:
    x = _every(40009, 0.0, 4.5)
    x = np.concatenate([SPECIAL, x, -x, _window(1.0, 3000), -_window(1.0, 500), _window(4.0, 500),
                        _window(3.92, 500), _every(331, 1e-4, 1.1e-4), _every(9973, 0.0, 1.2e-38)])
    return np.concatenate([x, np.zeros((-x.size) % TILE, f32)])


def _same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Where the two agree bit for bit (any NaN with any NaN: the GPU's is canonical)."""
    g, w = got.astype(f32), want.astype(f32)
    return (g.view(np.uint32) == w.view(np.uint32)) | (np.isnan(g) & np.isnan(w))


def _on_both(dt: DType, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = _kernel(dt)
    with np.errstate(over="ignore"):  # 3.4e38 is inf in f16
        x = x.astype(dt.np_dtype)
    want, got = [x, np.zeros_like(x)], [x, np.zeros_like(x)]
    run_kernel(k, (x.size // TILE,), want)
    SimDevice().run(k, (x.size // TILE,), got)
    return got[1], want[1]


def test_llsim_gives_the_interpreters_bits_for_f32() -> None:
    x = _sample()
    got, want = _on_both(DType.F32, x)
    ok = _same(got, want)
    assert ok.all(), (x[~ok][:5], got[~ok][:5], want[~ok][:5])
    assert x.size > 60_000


@pytest.mark.parametrize("dt", [DType.F16, DType.BF16], ids=lambda d: d.value)
def test_llsim_gives_the_interpreters_bits_for_every_narrow_value_below_4_5(dt: DType) -> None:
    """f16/bf16 run the f32 algorithm and round once, on both engines: every value of [0, 4.5) and the specials."""
    if dt is DType.F16:  # the bits of 4.5 are 0x4480 in f16; bf16 is f32's top half (0x40900000)
        x = np.arange(0, 0x4480, dtype=np.uint16).view(np.float16).astype(f32)
    else:
        x = (np.arange(0, 0x4090, dtype=np.uint32) << 16).view(f32)
    x = np.concatenate([SPECIAL, x])
    if dt is DType.BF16:  # a bf16 tensor holds bf16 values (the GPU reads the top half of the f32 bits)
        x = round_bf16(x)
    x = np.concatenate([x, np.zeros((-x.size) % TILE, f32)])
    got, want = _on_both(dt, x)
    ok = _same(got, want)
    assert ok.all(), (x[~ok][:5], got[~ok][:5], want[~ok][:5])


def _ulps(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|got - erf(x)| in ulps of erf(x) rounded to f32 (below the normals, the subnormals' step)."""
    ref = np.array([math.erf(v) for v in x.astype(np.float64).tolist()])
    ulp = np.maximum(np.spacing(np.abs(ref).astype(f32)), np.spacing(f32(2.0**-126))).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / ulp


def test_within_2_ulp_of_erf_and_the_specials_exact() -> None:
    """Every 10007th f32 of [0, 4.5) (beyond, erf rounds to 1.0: the clamp's form gives it exactly), both signs;
    1.04 ulp at most over every f32 of [0.5, 4.5) (measured once: RESULTS.md, herf)."""
    x = _every(10007, 0.0, 4.5)
    x = np.concatenate([x, -x[::5], _window(1.0, 300), SPECIAL[np.isfinite(SPECIAL)]])
    got = erf_f32(x)
    u = _ulps(got, x)
    assert u.max() < 1.05, (u.max(), x[np.argmax(u)])
    s = erf_f32(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 4.0, 1e10, -3.4e38], f32))
    assert s[0] == 0 and not np.signbit(s[0]) and s[1] == 0 and np.signbit(s[1])
    assert s[2] == 1 and s[3] == -1 and np.isnan(s[4]) and s[5] == 1 and s[6] == 1 and s[7] == -1
    tiny = _every(1, 0.0, 1e-43)  # subnormals: x (1 + Q0) rounded once to the subnormal step
    want = [_round_f32(Fraction(float(v)) * Fraction(1.1283791670955126)) for v in tiny.tolist()]
    assert np.array_equal(erf_f32(tiny), np.array(want, f32))


def _round_f32(v: Fraction) -> np.float32:
    """v rounded once to the nearest f32 (ties to even)."""
    mid = f32(float(v))
    near = sorted({mid, np.nextafter(mid, f32(math.inf)), np.nextafter(mid, f32(-math.inf))},
                  key=lambda c: (abs(Fraction(float(c)) - v), int(c.view(np.uint32)) & 1))
    return near[0]


def test_its_fma_rounds_once_on_the_algorithms_own_operands() -> None:
    """`numeric.fma_f32` (the interpreter's round-to-odd fma) against exact rationals, on the Horner steps of a sweep."""
    x = _every(1_000_003, 0.0, 4.5)
    t = np.fmin(np.abs(x), f32(4.0))
    p = np.full_like(t, f32(erf32.ERF_BIG[-1]))
    for c in erf32.ERF_BIG[-2::-1]:
        got = fma_f32(p, t, c)
        for a, b, r in zip(p.tolist(), t.tolist(), got.tolist(), strict=True):
            assert r == _round_f32(Fraction(a) * Fraction(b) + Fraction(float(f32(c))))
        p = got


def test_its_fma_rounds_once_at_f32_midpoints_and_subnormals() -> None:
    """`numeric.fma_f32` rounds the f64 sum directly but where it is an f32 midpoint or below 2^-126: there the
    round-to-odd sum. Products exactly halfway between two f32, alone and nudged by a tiny c either way, and
    subnormal results, against exact rationals."""
    r = np.random.default_rng(14)
    n = 600
    a = r.integers(1, 2**12, n).astype(f32)
    b = ((r.integers(1, 2**12, n) * 2 + 1) * 2.0**-11).astype(f32)  # a * b: 24 or 25 bits, often a midpoint
    tiny = (r.choice([-1.0, 1.0], n) * 2.0 ** r.integers(-60, -24, n)).astype(f32)
    sub_a = (r.uniform(1, 2, n) * 2.0**-70).astype(f32)
    sub_b = (r.uniform(1, 2, n) * 2.0**-70).astype(f32)
    cases = [(a, b, np.zeros(n, f32)), (a, b, tiny), (a, b, -tiny), (sub_a, sub_b, (tiny * 2.0**-100).astype(f32))]
    for x, y, z in cases:
        got = fma_f32(x, y, z)
        for u, v, w, g in zip(x.tolist(), y.tolist(), z.tolist(), got.tolist(), strict=True):
            assert g == _round_f32(Fraction(u) * Fraction(v) + Fraction(w)), (u, v, w, g)


def _ptx(dt: DType = DType.F32) -> str:
    return emit_ptx(_kernel(dt), "sm_90a")


def test_the_code_holds_only_correctly_rounded_operations() -> None:
    ptx = _ptx()
    body = ptx[ptx.index("{"):]
    for bad in (".approx", ".f64", ".ftz", "ex2", "lg2", "rcp", "cvt.rni"):
        assert bad not in body, bad
    for op in ("add", "sub", "mul"):
        plain = [ln for ln in body.splitlines() if ln.strip().startswith(f"{op}.f32")]
        assert not plain, plain  # without `.rn` ptxas may contract a mul and an add into an fma
    assert body.count("fma.rn.f32") == 20 * TILE // 128  # 20 an element, 8 elements a thread


def test_the_machine_code_has_no_mufu_and_contracts_nothing() -> None:
    import re

    from ptxas_report import sass

    code = sass(_ptx())
    ops = re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?P\w+\s+)?([A-Z][A-Z0-9]*)", code, re.M)
    assert ops.count("FFMA") == 20 * TILE // 128, ops.count("FFMA")
    assert not {"MUFU", "DFMA", "DADD", "DMUL", "F2F"} & set(ops)
    assert ".FTZ" not in code


def test_the_switch_selects_the_f64_series_on_both_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    x = _every(40_009, 0.0, 4.5)
    monkeypatch.setenv("TILEC_ERF_F32", "0")
    series = erf_f64(x.astype(np.float64)).astype(f32)
    assert np.array_equal(elementwise(ir.ElemOp.ERF, [x], DType.F32), series)
    assert ".f64" in _ptx()
    monkeypatch.setenv("TILEC_ERF_F32", "1")
    assert np.array_equal(elementwise(ir.ElemOp.ERF, [x], DType.F32), erf_f32(x))
    assert ".f64" not in _ptx()
    assert not np.array_equal(erf_f32(x), series)  # the two differ in last bits somewhere
    monkeypatch.setenv("TILEC_ERF_F32", "yes")
    with pytest.raises(TileError, match="TILEC_ERF_F32") as bad:  # E0604 from either engine
        elementwise(ir.ElemOp.ERF, [x], DType.F32)
    with pytest.raises(SwitchError) as refused:
        _ptx()
    assert bad.value.diagnostics[0] == refused.value.diag  # the same words, code and help


def _host_erf():  # type: ignore[no-untyped-def]
    """`f32exact.erf`'s LLVM JIT-compiled for this CPU (llvmlite), f32 in and out."""
    from test_f64math import HostEmitter, compile_loop, loop_module

    from tilelang.backend import f32exact

    em = HostEmitter()
    fn = compile_loop(loop_module(em, f32exact.erf(em, "%x"), in_ty="float", out_ty="float"))

    def run(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=f32)
        out = np.empty_like(x)
        fn(x.ctypes.data, out.ctypes.data, x.size)
        return out

    return run


@pytest.mark.heavy
def test_the_emitted_code_gives_the_interpreters_bits_on_a_dense_sweep() -> None:
    run = _host_erf()
    x = _every(61, 0.0, 4.5)
    for i in range(0, x.size, 1 << 21):
        for part in (x[i:i + (1 << 21)], -x[i:i + (1 << 21)]):
            ok = _same(run(part), erf_f32(part))
            assert ok.all(), part[~ok][:5]
    r = np.random.default_rng(32)
    more = np.concatenate([r.uniform(-4.5, 4.5, 1 << 17), r.uniform(0.9, 1.1, 1 << 17)]).astype(f32)
    got, want = _on_both(DType.F32, more)
    ok = _same(got, want)
    assert ok.all(), more[~ok][:5]


def on_card(dt: DType, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """erf of `x` (a whole number of tiles, `dt`'s storage) on the card and on the interpreter."""
    from tilelang.runtime import cuda

    k = _kernel(dt)
    dev = cuda.device()
    bufs = [dev.upload(x, dt), dev.upload(np.zeros_like(x), dt)]
    dev.run(dev.prepare(k), (x.size // TILE,), bufs)
    dev.sync()
    got = dev.download(bufs[1], dt, x.shape)
    want = [x, np.zeros_like(x)]
    run_kernel(k, (x.size // TILE,), want)
    return got, want[1]


@pytest.mark.gpu
def test_the_card_gives_the_interpreters_bits(cuda_device: int) -> None:
    """The real FFMA/FADD pipes: every 1021st f32 of [0, 4.5) and its negation, the sample above (f32), and every
    f16 and bf16 of [0, 4.5), bit for bit the interpreter's."""
    x = _every(1021, 0.0, 4.5)
    x = np.concatenate([_sample(), x, -x])
    x = np.concatenate([x, np.zeros((-x.size) % TILE, f32)])
    got, want = on_card(DType.F32, x)
    ok = _same(got, want)
    assert ok.all(), (int((~ok).sum()), x[~ok][:5], got[~ok][:5], want[~ok][:5])
    h = np.arange(0, 0x4480, dtype=np.uint16).view(np.float16)
    h = np.concatenate([h, -h, np.zeros((-2 * h.size) % TILE, np.float16)])
    got, want = on_card(DType.F16, h)
    assert _same(got, want).all()
    b = (np.arange(0, 0x4090, dtype=np.uint32) << 16).view(f32)
    b = np.concatenate([b, -b, np.zeros((-2 * b.size) % TILE, f32)])
    got, want = on_card(DType.BF16, b)
    assert _same(got, want).all()
