"""Round 14 of the independent user's programs (huser14, 2026-12-06): domains
rounds 1-13 did not take, written from README.md, docs/reference.md and
examples/ alone.

- k01: u32 and u64 values past the signed range: `<`, `maximum`, `/`, `%`,
  `>>`, casts to and from floats (saturating at 0 and u32::MAX), max, min,
  sum, prod, argmax and argmin of u32 tiles, and the i32 reading of the same
  bits ordering them otherwise; u64 near 2^64 by 2^63 + k; u8 sums wrapping.
- k02: f16 and bf16 at their edges, bit for bit: signed zeros through
  `maximum`/`minimum` (IEEE 754-2019's: -0 < +0 in either order; NumPy's
  `np.maximum` gives its first argument of two equal values, or its second,
  by type), `where`, `abs`, negation and sums; NaN through `maximum` and
  `max`/`min`/`argmax`/`argmin`; subnormals halved to ties; f32 -> bf16 ties
  to even, f32::MAX -> bf16 infinity, bf16 -> f16.
- k03: segmented reductions over each row's first `lens[r]` elements, the
  lengths read from a tensor in the kernel (0, 1, a partial chunk, a whole
  row): sum, min, max, prod, all and any, the first argmin carried across
  chunks and an i32 minimum; an empty row gives each one's identity.
- k04: softmax over a dimension that is not the last (the rows of a [5, 37]
  matrix, the middle axis of a [3, 6, 20] tensor) and a one-pass Welford
  mean and variance of rows around 1e4, chunks merged by Chan's rule (the
  f32 E[x^2] - E[x]^2 of the same rows is off by more than 1).
- k05: GEMMs whose K is not a multiple of the K tile: f16 [50, 37] x [37, 40]
  in 32 x 16 x 16 tiles, the same from A stored transposed, i8 with K = 21,
  f32 with K = 5 in one K tile of 16.
- k06: a 3-D 7-point Jacobi stencil with zero boundaries: z and y neighbours
  as rows at any position (rows -1 and past the end read zeros), x
  neighbours by a 0/1 shift matrix; steps swapping two tensors by moves.

Each program runs on the interpreter and its tensors are checked against
answers computed here with NumPy from the program's inputs; each runs in the
NVPTX simulator at sm_90a and sm_80, and its PTX assembles on both;
`test_user_gpu.py` runs them on a GPU.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]


def _bits(got: np.ndarray, want: np.ndarray) -> None:
    """The same floats bit for bit (the sign of a zero too), NaN where NaN."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    u = {2: np.uint16, 4: np.uint32}[want.dtype.itemsize]
    np.testing.assert_array_equal(got.view(u)[~nan], want.view(u)[~nan])


def _k01(t: Tensors, out: str) -> None:
    x, y, fl = t["x"], t["y"], t["fl"]
    assert x.dtype == np.uint32 and x.max() > 2**31 and y.max() > 2**31
    np.testing.assert_array_equal(t["lt"], x < y)
    np.testing.assert_array_equal(t["mx"], np.maximum(x, y))
    np.testing.assert_array_equal(t["q"], x // y)
    np.testing.assert_array_equal(t["r"], x % y)
    np.testing.assert_array_equal(t["sh"], x >> 3)
    np.testing.assert_array_equal(t["f"], x.astype(np.float32))
    np.testing.assert_array_equal(t["back"], np.clip(np.trunc(fl.astype(np.float64)), 0, 2**32 - 1).astype(np.uint32))
    assert t["back"][0] == 0 and t["back"][-1] == 2**32 - 1  # both saturations
    np.testing.assert_array_equal(t["signed"], x.view(np.int32) < y.view(np.int32))
    assert (t["signed"] != t["lt"]).any()
    np.testing.assert_array_equal(t["big"], [x.max(), x.min(), x.sum(dtype=np.uint32), np.prod(x, dtype=np.uint32)])
    np.testing.assert_array_equal(t["idx"], [x.argmax(), x.argmin()])
    x64, y64 = t["x64"], t["y64"]
    assert x64.dtype == np.uint64 and y64.max() > 2**63
    np.testing.assert_array_equal(t["lt64"], x64 < y64)
    np.testing.assert_array_equal(t["q64"], x64 // y64)
    np.testing.assert_array_equal(t["f64s"], x64.astype(np.float64))
    x8 = t["x8"]
    np.testing.assert_array_equal(t["o8"], x8 + np.uint8(100))  # wraps past 255
    np.testing.assert_array_equal(t["c8"], x8 > 200)
    assert out == ("4000000000 1001 0 4000000000 0 2635249153387078802 Tensor<bool, [8]> "
                   "[true, true, true, true, true, true, true, true]\n")


def _bf16(f: np.ndarray) -> np.ndarray:
    """f32 -> bf16 (kept in f32), to nearest even; NaN stays NaN."""
    u = np.asarray(f, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    return np.where(np.isnan(f), np.float32(np.nan), r.view(np.float32))


def _k02(t: Tensors, out: str) -> None:
    x, y = t["x"], t["y"]
    assert x.dtype == np.float16
    both0 = (x == 0) & (y == 0)
    zero = lambda neg: np.where(neg, np.float16(-0.0), np.float16(0.0))  # noqa: E731
    _bits(t["mx"], np.where(both0, zero(np.signbit(x) & np.signbit(y)), np.maximum(x, y)))
    _bits(t["mn"], np.where(both0, zero(np.signbit(x) | np.signbit(y)), np.minimum(x, y)))
    assert np.signbit(t["mn"][:2]).all() and not np.signbit(t["mx"][:2]).any()  # in either order
    with np.errstate(all="ignore"):
        _bits(t["wh"], np.where(x < y, x, y))
        _bits(t["ng"], -x)
        _bits(t["ab"], np.abs(x))
        _bits(t["ad"], x + y)
        _bits(t["hf"], x * np.float16(0.5))
    assert t["hf"][5] == 0 and t["hf"][7] == np.float16(2.0**-23)  # 2^-25 and 1.5 * 2^-24: ties to even
    f = t["f"]
    bx = _bf16(f)
    _bits(t["bx"], bx)
    assert bx[0] == 1.0 and bx[1] == 1.015625 and np.isinf(bx[2])
    negzero = (bx == 0) & np.signbit(bx)
    _bits(t["bm"], np.where(negzero, np.float32(0.0), np.maximum(bx, -bx)))
    with np.errstate(all="ignore"):
        _bits(t["bh"], bx.astype(np.float16))
        _bits(t["bs"], _bf16(_bf16(bx * np.float32(0.5)) * np.float32(2)))
    assert t["bs"][4] == 0 and t["bx"][4] > 0  # 2^-133 halved: a tie to 0
    r = np.where(np.arange(16) < 8, x, y).reshape(2, 8)
    assert np.isnan(t["rmax"]).all() and np.isnan(t["rmin"]).all()
    np.testing.assert_array_equal(t["ridx"], [2, 2, 2, 2])  # the first NaN
    assert np.isnan(r[:, 2]).all() and not np.isnan(r[:, :2]).any()
    _bits(t["zsum"], np.full(2, -0.0, np.float16))
    assert out == ("0.0 0.0 -0.0 -0.0 -0.0 0.0 -0.0 0.0 1e-7\n1.0 1.016 inf inf true false\n"
                   "Tensor<f16, [2]> [NaN, NaN] Tensor<i32, [4]> [2, 2, 2, 2] Tensor<f16, [2]> [-0.0, -0.0] "
                   "Tensor<f16, [2]> [NaN, NaN]\n")


def _k03(t: Tensors, out: str) -> None:
    x, xi, lens = t["x"], t["xi"], t["lens"]
    assert lens.tolist() == [0, 1, 17, 40, 33, 5]
    for r, n in enumerate(lens):
        v, vi = x[r, :n].astype(np.float64), xi[r, :n]
        np.testing.assert_allclose(t["s"][r], v.sum(), rtol=1e-6, atol=1e-6)
        assert t["mn"][r] == (v.min() if n else np.inf) and t["mx"][r] == (v.max() if n else -np.inf)
        np.testing.assert_allclose(t["pr"][r], np.prod(1 + v * 0.0625), rtol=1e-5)
        assert t["all"][r] == (v > 0).all() and t["any"][r] == (v > 0).any()
        assert t["am"][r] == (v.argmin() if n else -1)
        assert t["imn"][r] == (vi.min() if n else 2**31 - 1)
    assert out == "0.0 inf -inf 1.0 true false -1 2147483647\nTensor<i32, [6]> [-1,  0, 13, 13, 13,  4] 0 0 1\n"


def _k04(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    e = np.exp(x - x.max(0))
    np.testing.assert_allclose(t["y"], e / e.sum(0), rtol=1e-5, atol=1e-7)
    z = t["z"].astype(np.float64)
    e = np.exp(z - z.max(1, keepdims=True))
    np.testing.assert_allclose(t["w"], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    v = t["v"].astype(np.float64)
    np.testing.assert_allclose(t["mean"], v.mean(1), rtol=1e-7)
    np.testing.assert_allclose(t["var"], v.var(1), rtol=2e-3)
    v32 = t["v"]
    naive = (v32 * v32).mean(1, dtype=np.float32) - v32.mean(1, dtype=np.float32) ** 2
    assert (np.abs(naive - v.var(1)) > 1).any()  # what one pass of sums would have given
    assert out == "[37] true true\n"


def _k05(t: Tensors, out: str) -> None:
    a, b = t["a"].astype(np.float64), t["b"].astype(np.float64)
    np.testing.assert_allclose(t["c"], a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(t["ct"], t["c"])
    np.testing.assert_array_equal(t["at"], t["a"].T)
    a8, b8 = t["a8"].astype(np.int64), t["b8"].astype(np.int64)
    assert t["a8"].dtype == np.int8 and a8.min() == -127
    np.testing.assert_array_equal(t["c8"], a8 @ b8)
    np.testing.assert_allclose(t["cf"], t["af"].astype(np.float64) @ t["bf"], rtol=1e-5, atol=1e-6)
    assert out == "[50, 40] 0.0 [19, 10] [9, 7]\n"


def _k06(t: Tensors, out: str) -> None:
    u = t["u0"].astype(np.float64)
    for _ in range(2):
        p = np.pad(u, 1)
        around = (p[:-2, 1:-1, 1:-1] + p[2:, 1:-1, 1:-1] + p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1]
                  + p[1:-1, 1:-1, :-2] + p[1:-1, 1:-1, 2:])
        u = u + 0.125 * (around - 6 * u)
    np.testing.assert_allclose(t["a"], u, rtol=1e-5, atol=1e-6)
    assert not np.allclose(t["a"], t["u0"])
    assert out == "[3, 4, 20] true true true\n"


def _k07(t: Tensors, out: str) -> None:
    a, b = t["a"], t["b"]
    np.testing.assert_array_equal(a, a.transpose(0, 2, 1))
    cond = np.linalg.cond(a)
    assert cond[4] > 1e4 and cond[5] == 1 and cond[:4].max() < 1e3
    np.testing.assert_allclose(t["l"], np.linalg.cholesky(a), rtol=1e-9, atol=1e-9)
    x = np.linalg.solve(a, b[..., None])[..., 0]
    well = [0, 1, 2, 3, 5]
    np.testing.assert_allclose(t["x"][well], x[well], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(t["x"][4], x[4], rtol=1e-9)  # condition ~1e5: digits lost, not all
    np.testing.assert_allclose(a[4] @ t["x"][4], b[4], atol=1e-5)
    np.testing.assert_allclose(t["logdet"], np.linalg.slogdet(a)[1], rtol=1e-9, atol=1e-9)
    assert out == "[6, 5, 5] 0.0\n"


def _k08(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    np.testing.assert_allclose(t["sums"], [x.sum(), 2.5], rtol=1e-5)
    lo, hi = t["bracket"].astype(np.float64)
    root = 2.0945514815423265  # x^3 - 2x - 5
    assert lo <= root <= hi + 1e-6 and 0 < hi - lo < 1e-6
    np.testing.assert_array_equal(t["a"], np.arange(128) * 0.5)   # tiles of 64
    np.testing.assert_array_equal(t["b"], np.arange(5) * 2.0)     # one tile of 8, past the end
    np.testing.assert_array_equal(t["c"], -np.arange(70.0))       # tiles of 32, the last partial
    assert out == "3 6 true true 0 2.5 true\n4064.0 20.0 -2415.0\n"  # 1000 -> 63 -> 4 -> 1; 4 / 16^6 < 1e-6


def _k09(t: Tensors, out: str) -> None:
    p, s = t["p"], t["s"]
    f32 = lambda v, op: op(v.astype(np.float32)).astype(np.float16)  # noqa: E731 (accumulate in f32, round once)
    np.testing.assert_array_equal(t["hp"], [f32(p, np.prod)])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(t["hq"], f32(p, np.cumprod))
    assert np.isinf(t["hq"][1]) and t["hq"][2] == 300   # the prefix after the overflow is finite again
    np.testing.assert_array_equal(t["hc"], f32(s, np.cumsum))
    assert t["hc"][3] == 2052                            # stepwise in f16 it would stay 2048
    np.testing.assert_array_equal(t["bc"], [256, 256, 258, 260, 260, 260, 262, 264])  # bf16 ties to even
    i8s = t["i8s"]
    np.testing.assert_array_equal(t["ic"], np.cumsum(i8s.astype(np.int64)).astype(np.int8))
    np.testing.assert_array_equal(t["up"], [np.prod(t["u8s"].astype(np.int64)) % 256])
    np.testing.assert_array_equal(t["um"], np.maximum.accumulate(t["u32s"]))
    np.testing.assert_array_equal(t["im"], np.minimum.accumulate(i8s))
    assert out.endswith(" 4000000000 -106 true\n")


def _k10(t: Tensors, out: str) -> None:
    n, x, s = 40, t["x"].astype(np.float64), np.repeat(t["s"].astype(np.float64), 32, axis=1)
    w = t["w"].view(np.uint32).astype(np.int64)
    nib = ((w[:, :, None] >> (4 * np.arange(8))) & 15).reshape(n, 64)
    q4 = np.where(nib > 7, nib - 16, nib)
    assert q4.min() == -8 and q4.max() == 7
    np.testing.assert_allclose(t["y4"], (q4 * s * x).sum(1), rtol=1e-5, atol=1e-5)
    wb = t["wb"].view(np.uint32).astype(np.int64)
    by = ((wb[:, :, None] >> (8 * np.arange(4))) & 255).reshape(n, 64)
    q8 = np.where(by > 127, by - 256, by)
    assert q8.min() < -120 and q8.max() > 120
    np.testing.assert_allclose(t["y8"], (q8 * s * x).sum(1), rtol=1e-5, atol=1e-4)
    wq = t["wq"].astype(np.int64)
    assert wq.max() > 2**31
    qu = ((wq[:, :, None] >> (4 * np.arange(8))) & 15).reshape(n, 64)
    zp = np.repeat(t["zp"].astype(np.int64), 32, axis=1)
    np.testing.assert_allclose(t["yu"], ((qu - zp) * s * x).sum(1), rtol=1e-5, atol=1e-5)
    assert out == "[40] true true true\n"


def _round_once(v: int | float, bits: int, emin: int, top: float) -> float:
    """The exact value `v` (an int, or a float taken exactly) rounded once to a
    float of `bits` significand bits: nearest, ties to even, past `top` to inf."""
    from fractions import Fraction

    a = abs(Fraction(v))
    if a == 0:
        return float(v)
    e = max(a.numerator.bit_length() - a.denominator.bit_length() - 1, emin - 1)
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    q = Fraction(2) ** (max(e, emin) - (bits - 1))
    n = round(a / q)  # Fraction's round: ties to even
    out = float(n * q)
    return float(np.copysign(np.inf if out > top else out, float(v)))


def _k11(t: Tensors, out: str) -> None:
    f16 = lambda v: _round_once(v, 11, -14, 65504.0)  # noqa: E731
    bf16 = lambda v: _round_once(v, 8, -126, 3.3895313892515355e38)  # noqa: E731
    f32 = lambda v: _round_once(v, 24, -126, 3.4028234663852886e38)  # noqa: E731
    x = t["x"]
    np.testing.assert_array_equal(t["h"].astype(np.float64), [f16(float(v)) for v in x])
    np.testing.assert_array_equal(t["h"], x.astype(np.float16))       # NumPy's f64 -> f16 rounds once too
    assert (t["h"] != x.astype(np.float32).astype(np.float16)).any()  # through f32 it would not
    np.testing.assert_array_equal(t["bh"].astype(np.float64), [bf16(float(v)) for v in x])
    np.testing.assert_array_equal(t["ih"].astype(np.float64), [bf16(int(v)) for v in t["n"]])
    np.testing.assert_array_equal(t["jh"].astype(np.float64), [f16(int(v)) for v in t["m"]])
    np.testing.assert_array_equal(t["lf"].astype(np.float64), [f32(int(v)) for v in t["l"]])
    np.testing.assert_array_equal(t["lf"], t["l"].astype(np.float32))   # NumPy's i64 -> f32 too
    assert (t["lf"] != t["l"].astype(np.float64).astype(np.float32)).any()  # through f64 it would not
    np.testing.assert_array_equal(t["uf"].astype(np.float64), [f32(int(v)) for v in t["u"]])
    np.testing.assert_array_equal(t["lb"].astype(np.float64), [bf16(int(v)) for v in t["l"]])
    np.testing.assert_array_equal(t["ub"].astype(np.float64), [bf16(int(v)) for v in t["u"]])
    assert t["lb"][2] == -(2.0**60 + 2.0**53)  # 2^60 + 2^52 + 1: up, not the tie to 2^60
    assert out.endswith("true true true true true true true true\n")  # the host's casts are the kernel's


CHECKS = {
    "k01_unsigned_past_signed": _k01,
    "k02_half_bf16_edges": _k02,
    "k03_segmented_identities": _k03,
    "k04_softmax_axis0_welford": _k04,
    "k05_gemm_k_tail": _k05,
    "k06_stencil3d_7point": _k06,
    "k07_batched_cholesky_f64": _k07,
    "k08_host_shrinking_launches": _k08,
    "k09_narrow_scans_products": _k09,
    "k10_packed_shift_gemv": _k10,
    "k11_conversions_round_once": _k11,
}

@pytest.mark.gpu
@pytest.mark.parametrize("name", ["k01_unsigned_past_signed", "k02_half_bf16_edges", "k11_conversions_round_once"])
def test_the_gpu_passes_the_exact_checks(name: str) -> None:
    """The checks of the programs about bits, on the GPU (test_user_gpu compares within a tolerance)."""
    import io

    import tilelang.run as run
    from userprog import DIR, program_tensors

    out = io.StringIO()
    ex = run.execute(str(DIR / f"{name}.tile"), "gpu", out=out)
    assert ex.device.kind == "gpu"
    CHECKS[name](program_tensors(ex), out.getvalue())


(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "k*.tile", CHECKS, [(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")],
    ptx=[(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")])
