# mypy: disable-error-code="no-any-return"
# (NumPy's stubs type most ufunc results as Any.)
"""Numeric kernels of the reference interpreter: rounding, casts, the
element-wise/reduction implementations and atomic updates, each keyed by its
IR opcode name (the same names as `tilelang/intrinsics/signatures.py` and the
backend's tables).

Invariants (the semantics of `tilelang/ir/nodes.py`, made executable):
- Every function takes and returns NumPy arrays (0-d for scalars) in the
  interpreter's storage dtype (`DType.np_dtype`: bf16 is float32 holding values
  already rounded to bf16) and returns results already rounded to the result
  dtype. f16/bf16 are computed in f32 and rounded once per op.
- No Python loop per element (except a bf16 atomic add, which must round
  after each update); NumPy warnings (overflow, invalid, divide) are
  silenced by the caller (`np.errstate(all="ignore")`), since wrapping integers
  and IEEE specials are the defined behaviour.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import assert_never

import numpy as np

from tilelang.dtypes import DType
from tilelang.interp import atan32, erf32
from tilelang.ir.nodes import AtomicOp, ElemOp, ReduceOp, ScanOp

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)


# ------------------------------------------------------------------ bf16
def round_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bf16 (ties to even), kept in float32.

    NaN stays NaN (quietened, sign kept), +-inf stays inf, finite values past
    bf16's largest round to inf exactly as RNE says."""
    a = np.asarray(x, dtype=F32)
    bits = a.view(np.uint32)
    is_nan = (bits & 0x7FFFFFFF) > 0x7F800000
    lsb = (bits >> 16) & 1
    rounded = (bits + 0x7FFF + lsb) & 0xFFFF0000
    # A NaN whose payload lives only in the low 16 bits would truncate to inf.
    quiet_nan = (bits | 0x00400000) & 0xFFFF0000
    out = np.where(is_nan, quiet_nan, rounded).astype(np.uint32)
    return out.view(F32).reshape(a.shape)


def f64_to_f32_odd(x: np.ndarray) -> np.ndarray:
    """f64 -> f32 with round-to-odd: truncate toward zero and set the last
    mantissa bit when inexact. Rounding that result to bf16 (8 bits) is then
    correctly rounded from the f64 value (no double-rounding error)."""
    x = np.asarray(x, dtype=F64)
    f = x.astype(F32)
    back = f.astype(F64)
    finite = np.isfinite(x) & np.isfinite(f)
    # Rounded away from zero: step one ulp toward zero.
    away = finite & (np.abs(back) > np.abs(x))
    f = np.where(away, np.nextafter(f, np.float32(0), dtype=F32), f)
    inexact = finite & (f.astype(F64) != x)
    bits = f.view(np.uint32) | np.where(inexact, np.uint32(1), np.uint32(0))
    # Values beyond f32's range (cast gave inf) keep inf: bf16 overflows too.
    return bits.astype(np.uint32).view(F32).reshape(x.shape)


def int_to_f64_odd(x: np.ndarray) -> np.ndarray:
    """64-bit integers -> f64 rounded to odd (truncated toward zero, the last
    bit set when inexact): rounding that to f32, f16 or bf16 to nearest is
    the one rounding of the integer, where NumPy's int -> f64 to nearest
    first can land on a midpoint of the narrower type (`2**53 + 2**29 + 1`
    as f32 tied to `2**53`). Exact halves: `hi` (the high 32 bits, shifted
    back) and `lo` are f64 values, and TwoSum gives their sum's error."""
    x = np.asarray(x)
    if x.dtype.itemsize < 8:
        return x.astype(F64)
    lo = (x & np.array(0xFFFFFFFF, x.dtype)).astype(F64)
    hi = ((x >> np.array(32, x.dtype)) << np.array(32, x.dtype)).astype(F64)
    s = hi + lo
    bb = s - hi
    err = (hi - (s - bb)) + (lo - bb)  # exact: the sum's rounding error
    away = (err != 0) & ((err < 0) == (s > 0))  # |s| past the exact value: one step back toward zero
    s = np.where(away, np.nextafter(s, 0.0), s)
    bits = s.view(np.uint64) | np.where(err != 0, np.uint64(1), np.uint64(0))
    return bits.astype(np.uint64).view(F64).reshape(x.shape)


def int_to_float(x: np.ndarray, dst: DType) -> np.ndarray:
    """An integer array converted to the float type `dst` by one rounding
    (`as`, on the interpreter and the host): through f64, exact below 2**53,
    rounded to odd beyond it (`int_to_f64_odd`) unless `dst` is f64."""
    x = np.asarray(x)
    return finish(x.astype(F64) if dst is DType.F64 else int_to_f64_odd(x), dst)


# ------------------------------------------------------------------ fma
# ir.ElemOp.FMA rounds once. f64 has no wider NumPy type to compute in, so the
# f64 fma is emulated with error-free transformations (Boldo & Melquiond,
# "Emulation of FMA and correctly rounded sums: proved algorithms using
# rounding to odd", IEEE TC 2008): a*b = uh + ul exactly (Veltkamp/Dekker),
# c + uh = th + tl exactly (TwoSum), v = tl + ul rounded to odd, then th + v
# rounded to nearest is the correctly rounded a*b + c. The proof needs no
# overflow in the split and no underflow in the error terms; elements outside
# that range (rare) take an exact `fractions.Fraction` path instead.
_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's splitter for 53-bit mantissas
_SAFE_HI = 2.0**900
_SAFE_LO = 2.0**-800


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s + e == a + b exactly, with s = RN(a + b) (Knuth; no branches)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p + e == a * b exactly, with p = RN(a * b) (Dekker, Veltkamp split)."""
    ca, cb = _SPLIT * a, _SPLIT * b
    ah = ca - (ca - a)
    bh = cb - (cb - b)
    al, bl = a - ah, b - bh
    p = a * b
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _add_round_odd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b in f64 rounded to odd: when inexact, the neighbour of the exact sum
    whose last mantissa bit is 1. Exact sums and non-finite results are as RN."""
    s, e = _two_sum(a, b)
    even = (s.view(np.int64) & 1) == 0
    nudge = np.isfinite(s) & np.isfinite(e) & (e != 0) & even
    if not nudge.any():
        return s
    return np.where(nudge, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)


def fma_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c for f64 arrays (broadcast), rounded once to nearest even."""
    a, b, c = np.broadcast_arrays(*(np.asarray(x, dtype=F64) for x in (a, b, c)))
    uh, ul = _two_prod(a, b)
    th, tl = _two_sum(c, uh)
    z = th + _add_round_odd(tl, ul)
    plain = a * b + c
    # A zero product is exact, so plain a*b + c is the fma (signed zeros too).
    zero = (a == 0) | (b == 0)
    fast = (
        np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        & (np.abs(a) < _SAFE_HI) & (np.abs(b) < _SAFE_HI) & (np.abs(c) < _SAFE_HI)
        & (np.abs(uh) > _SAFE_LO) & (np.abs(z) > _SAFE_LO)
    )
    out = np.where(zero, plain, np.where(fast, z, plain))
    slow = np.flatnonzero(~zero & ~fast & np.isfinite(a) & np.isfinite(b))
    if slow.size:
        flat = out.reshape(-1).copy()
        fa, fb, fc = a.reshape(-1), b.reshape(-1), c.reshape(-1)
        for i in slow.tolist():
            flat[i] = _fma_exact(float(fa[i]), float(fb[i]), float(fc[i]))
        out = flat.reshape(out.shape)
    # Non-finite a or b: the product is inf/NaN exactly as plain computes it.
    return out


def _fma_exact(a: float, b: float, c: float) -> float:
    """One finite-a, finite-b fma through exact rationals (CPython's int
    division is correctly rounded)."""
    from fractions import Fraction

    if not np.isfinite(c):
        return c  # a finite product cannot change an infinite or NaN addend
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        # RN gives +0 unless both the product and c are -0 (a nonzero product
        # whose exact sum is 0 gives +0 too).
        return -0.0 if (np.signbit(a * b) and np.signbit(c) and a * b == 0) else 0.0
    try:
        return float(exact)
    except OverflowError:
        return float("inf") if exact > 0 else float("-inf")


# ------------------------------------------------------------------ rounding
def compute_dtype(dt: DType) -> np.dtype:
    """The NumPy dtype arithmetic of `dt` is carried out in."""
    if dt in (DType.F16, DType.BF16):
        return F32
    return dt.np_dtype


def to_compute(x: np.ndarray, dt: DType) -> np.ndarray:
    return np.asarray(x).astype(compute_dtype(dt), copy=False)


def finish(x: np.ndarray, dt: DType) -> np.ndarray:
    """Round a result computed in `compute_dtype(dt)` (or exactly) to `dt`."""
    x = np.asarray(x)
    if dt is DType.BF16:
        if x.dtype == F64:
            x = f64_to_f32_odd(x)
        return round_bf16(x.astype(F32, copy=False))
    return x.astype(dt.np_dtype, copy=False)


def const_array(value: bool | int | float, dt: DType, shape: tuple[int, ...]) -> np.ndarray:
    """A constant converted like a cast from f64 (floats) or a wrapping int."""
    if dt is DType.BOOL:
        scalar = np.asarray(bool(value))
    elif dt.is_int:
        scalar = np.asarray(dt.wrap(int(value)), dtype=dt.np_dtype)
    else:
        scalar = finish(np.asarray(float(value), dtype=F64), dt)
    return np.broadcast_to(scalar, shape).copy() if shape else scalar.reshape(())


# ------------------------------------------------------------------ casts
def cast(x: np.ndarray, src: DType, dst: DType) -> np.ndarray:
    x = np.asarray(x)
    if src is dst:
        return x
    if dst is DType.BOOL:
        return x != 0
    if src is DType.BOOL:
        return finish(x.astype(np.int8), dst) if dst.is_float else x.astype(dst.np_dtype)
    if dst.is_float:
        if src.is_int:
            return int_to_float(x, dst)
        if dst is DType.BF16:
            return finish(x.astype(F64), dst)
        return x.astype(dst.np_dtype)
    if src.is_float:
        return float_to_int(x.astype(F64), dst)
    return x.astype(dst.np_dtype)  # int -> int wraps


def bitcast(x: np.ndarray, src: DType, dst: DType) -> np.ndarray:
    """The bits of `x` (storage form of `src`) read as `dst`, a float type and the unsigned integer of its
    width either way (`t.to_bits()`, `from_bits::<T>(u)`). bf16 lives in f32 storage with the low 16 bits
    zero (its values are rounded to bf16), so its bits are the high half.

    A NaN's bits are one pattern, `CANONICAL_NAN` (hrev21): which NaN an operation makes is the engine's (x86's
    0 / 0 is 0xFFC00000, an NVIDIA GPU's 0x7FFFFFFF; its conversions through f16 drop a payload NumPy keeps),
    so `to_bits` of any NaN is the GPU's own canonical NaN on both engines."""
    x = np.asarray(x)
    if src.is_float:
        nan = np.isnan(x)
        if nan.any():
            return np.where(nan, dst.np_dtype.type(CANONICAL_NAN[src]), bitcast(np.where(nan, 0, x), src, dst))
    # (`ascontiguousarray` makes a scalar's 0-d array 1-d: reshaped back, a scalar's bits stay a scalar, as a nested
    # tile index or a partition load's reads it; hrev22)
    if src is DType.BF16:
        bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) >> np.uint32(16)
        return bits.astype(dst.np_dtype).reshape(x.shape)
    if dst is DType.BF16:
        return (x.astype(np.uint32) << np.uint32(16)).view(np.float32).reshape(x.shape)
    return np.ascontiguousarray(x, dtype=src.np_dtype).view(dst.np_dtype).reshape(x.shape)


# `to_bits` of a NaN (`bitcast`): positive, every mantissa bit set, the NaN an NVIDIA GPU's arithmetic gives
CANONICAL_NAN = {DType.F32: 0x7FFFFFFF, DType.F64: 0x7FFFFFFFFFFFFFFF, DType.F16: 0x7FFF, DType.BF16: 0x7FFF}


def float_to_int(x: np.ndarray, dst: DType) -> np.ndarray:
    """Rust's `as` from f64 values to an integer type: truncate toward zero,
    saturate, NaN -> 0 (LLVM fptosi.sat / PTX cvt.rzi.sat). The host runtime
    uses it too."""
    info = np.iinfo(dst.np_dtype)
    hi_excl = float(2 ** (dst.bits - 1) if dst.is_signed else 2**dst.bits)  # exact in f64
    lo = float(info.min)
    nan = np.isnan(x)
    big = x >= hi_excl
    small = x < lo
    safe = np.where(nan | big | small, 0.0, np.trunc(x))
    out = safe.astype(dst.np_dtype)
    out = np.where(big, info.max, out)
    out = np.where(small, info.min, out)
    return out.astype(dst.np_dtype)


# ------------------------------------------------------------------ element-wise
def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    zero = b == 0
    bs = np.where(zero, np.ones_like(b), b)
    r = np.fmod(a, bs)
    q = (a - r) // bs  # exact: a - r is a multiple of b (wraps only for MIN / -1)
    return np.where(zero, np.zeros_like(a), q).astype(a.dtype)


def _int_rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    zero = b == 0
    bs = np.where(zero, np.ones_like(b), b)
    return np.where(zero, a, np.fmod(a, bs)).astype(a.dtype)


def _shift(a: np.ndarray, b: np.ndarray, dt: DType, left: bool) -> np.ndarray:
    bits = dt.bits
    unsigned = np.dtype(f"uint{bits}")
    amount = b.astype(unsigned)  # a negative amount reads as a huge unsigned one
    big = amount >= bits
    amt = np.where(big, 0, amount).astype(a.dtype)
    if left:
        return np.where(big, np.zeros_like(a), np.left_shift(a, amt)).astype(a.dtype)
    if dt.is_signed:
        # arithmetic shift by >= bits is the sign fill, the same as by bits - 1
        amt = np.where(big, bits - 1, amount).astype(a.dtype)
        return np.right_shift(a, amt).astype(a.dtype)
    return np.where(big, np.zeros_like(a), np.right_shift(a, amt)).astype(a.dtype)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    one = np.ones((), dtype=x.dtype)
    return one / (one + np.exp(-x))


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return np.ones((), dtype=x.dtype) / np.sqrt(x)


# erf: the same algorithm as the GPU's (`backend/f64math.erf`), in f64: the
# Taylor series of erf below 1.5, the continued fraction of erfc above,
# within 5e-16 relative of the true value. f32/f16/bf16 round the f64 result under `TILEC_ERF_F32=0`; by
# default they run `erf32`'s f32 algorithm instead.
ERF_CUT = 1.5
ERF_TAYLOR = [(-1.0) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(35)]
ERF_CF_TERMS = 80
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


def erf_f64(x: np.ndarray) -> np.ndarray:
    """erf of f64 values, element-wise, without Python loops over elements."""
    x = np.asarray(x, dtype=F64)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        z = a * a
        acc = np.full_like(a, ERF_TAYLOR[-1])
        for coef in reversed(ERF_TAYLOR[:-1]):
            acc = acc * z + coef
        small = TWO_OVER_SQRT_PI * (a * acc)
        f = a.copy()
        for k in range(ERF_CF_TERMS, 0, -1):
            f = a + (k * 0.5) / f
        large = 1.0 - np.exp(-z) * INV_SQRT_PI / f
        return np.copysign(np.where(a < ERF_CUT, small, large), x)


def erf_values(x: np.ndarray) -> np.ndarray:
    """erf in the compute dtype: f32 (f16/bf16 too) by `erf32`'s f32 algorithm, which the GPU computes bit for
    bit (`TILEC_ERF_F32=0`: the f64 series rounded once, on both engines); f64 by the series."""
    if x.dtype == F32 and erf32.enabled():
        return erf_f32(x)
    return erf_f64(x).astype(x.dtype)


def fma_f32(a: np.ndarray, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """fma.rn.f32 of f32 values: a * b + c rounded once."""
    return _fma64(np.asarray(a, F32).astype(F64), np.asarray(b, F32).astype(F64),
                  np.asarray(c, F32).astype(F64)).astype(F32)


def _fma64(a: np.ndarray, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """fma.rn.f32 of f32 values held in f64 (the result too). The product is exact in f64 and s = p + c is
    rounded once to f64. Every f32 midpoint (25 bits, down to 2^-150) is an f64, and rounding to the nearest f64
    never crosses one, so rounding s to f32 is rounding p + c, except where s lands on a midpoint that p + c
    is not: s's 29 bits below f32's last are 1000..0 (an f32-normal s), or s is below 2^-126 (the subnormal
    steps: not tested bit by bit). Those few take the round-to-odd sum (Boldo and Melquiond: rounded to odd in
    f64, then to f32, is rounded once: 53 >= 24 + 2), the interpreter's `fma`."""
    p = a * b
    s = np.asarray(p + c)
    with np.errstate(invalid="ignore"):
        hard = ((s.view(np.int64) & 0x1FFFFFFF) == 0x10000000) | (np.abs(s) < 2.0**-126)
    r = np.asarray(s.astype(F32), F64)
    if hard.any():
        i = np.flatnonzero(hard)
        pc = np.broadcast_to(p, s.shape).reshape(-1)[i], np.broadcast_to(c, s.shape).reshape(-1)[i]
        r.reshape(-1)[i] = _add_round_odd(*pc).astype(F32)
    return r


def _pow_f32(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """f32 pow as the GPU computes it (`f64math.pow_f32`, `f32exact.pow_const`): NumPy's f64 pow rounded once to
    f32, x * x * x in f64 where y == 3 (x^2 exact, one rounding to f64: GELU's `x.pow(3.0)`, which the GPU
    computes so, in two f64 multiplies). NumPy's own f32 pow is ~1 ulp: 21 % of random f32 pows printed a last
    digit other than the GPU's (herf). An f64 pow within 2^-36 of an f32 midpoint is taken as the midpoint
    (`_snap_ties`: the GPU's f64 pow is not exact at a tie)."""
    xw, yw = x.astype(F64), y.astype(F64)
    return np.where(yw == 3.0, xw * xw * xw, _snap_ties(np.power(xw, yw), yw)).astype(F32)


#: `_snap_ties`: an f64 pow this many f64 ulps (2^-36 relative) from an f32 midpoint is taken as the midpoint; the
#: GPU's f64 pow is within ~1e-13 (2^-43) of x^y, so both engines see an exact tie as one (`f64math.snap_ties`)
SNAP_ULPS = 1 << 16


def _snap_ties(r: np.ndarray, y: np.ndarray) -> np.ndarray:
    """f64 pow results `r` (of exponents `y`) with those within `SNAP_ULPS` of an f32 midpoint (an f32-normal value)
    put on it, so that the rounding to f32 that follows takes the even neighbour, as `f64math.snap_ties` does on the
    GPU: an exact tie x^y (x^5 of 1.8125, 66049^1.5 = 257^3) was rounded to even here (NumPy's pow is correctly
    rounded) but away on the GPU, whose f64 pow lands beside it (20 of 46 such ties; hrev28). Not for y of 2, 0.5,
    -1 and 1 (3 is `_pow_f32`'s cube), which the GPU computes exactly by a constant (`f32exact.pow_const`)."""
    r = np.array(r, F64, copy=True)
    bits = r.view(np.int64)
    low = bits & 0x1FFFFFFF
    e = (bits >> 52) & 0x7FF
    near = (np.abs(low - 0x10000000) <= SNAP_ULPS) & (e >= 1023 - 126) & (e <= 1023 + 127)
    near &= (y != 2.0) & (y != 0.5) & (y != -1.0) & (y != 1.0)
    if near.any():
        bits[near] = (bits[near] & ~0x1FFFFFFF) | 0x10000000
    return r


def _horner32(coefs: tuple[float, ...], v: np.ndarray) -> np.ndarray:
    """Horner by fma.rn.f32 of f32 values held in f64 (`v` too); the coefficients are f32 values."""
    p = np.full(np.shape(v), coefs[-1], F64)
    for c in coefs[-2::-1]:
        p = _fma64(p, v, c)
    return p


def erf_f32(x: np.ndarray) -> np.ndarray:
    """erf of f32 values by `erf32`'s algorithm, step for step as `backend/f32exact.erf` emits it (f32 values held
    in f64 between the steps: every step rounds to f32)."""
    x = np.asarray(x, F32)
    with np.errstate(all="ignore"):  # x*x of the largest values and NaN: the other form's, not taken
        xw = x.astype(F64)
        a = np.abs(xw)
        small = _fma64(xw, _horner32(erf32.ERF_SMALL, (x * x).astype(F64)), xw)
        t = np.fmin(a, erf32.ERF_CLAMP)  # minnum: NaN gives 4 (NaN takes the first form)
        s = _fma64(_horner32(erf32.ERF_BIG, t), t, -t).astype(F32)
        j = s + F32.type(erf32.ERF_SHIFT)  # n = rint(s) in j's low bits; j - C = n, s - n: both exact
        p = _horner32(erf32.ERF_EXP2, (s - (j - F32.type(erf32.ERF_SHIFT))).astype(F64)).astype(F32)
        y = (p.view(np.uint32) + (j.view(np.uint32) << np.uint32(23))).view(F32)  # 2^f 2^n
        big = np.copysign(F32.type(1.0) - y, x)
        return np.asarray(np.where(a >= erf32.ERF_CUT, big, small.astype(F32)), F32)


def atan2_f32(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """atan2 of f32 values by `atan32`'s algorithm, step for step as `backend/f32exact.atan2` computes it on the
    GPU (f32 NumPy operations, each correctly rounded; the fma exact by `_fma64`)."""
    y, x = np.asarray(y, F32), np.asarray(x, F32)
    one = F32.type(1.0)
    with np.errstate(all="ignore"):
        ax, ay = np.abs(x), np.abs(y)
        hi, lo = np.fmax(ax, ay), np.fmin(ax, ay)
        both_inf = lo == np.inf
        h = np.where(hi > F32.type(atan32.BIG_SCALE[0]), F32.type(atan32.BIG_SCALE[1]),
                     np.where(hi < F32.type(atan32.SMALL_SCALE[0]), F32.type(atan32.SMALL_SCALE[1]), one))
        L, H = lo * h, hi * h
        big = (L > F32.type(atan32.ATAN_CUT) * H) | both_inf
        z = np.where(big, L - H, L) / np.where(big, L + H, H)
        z = np.where((hi == 0) | both_inf, F32.type(0.0), z)
        zw = z.astype(F64)
        t = _fma64(zw, _horner32(atan32.ATAN_POLY, (z * z).astype(F64)), zw).astype(F32)
        r = np.where(big, (F32.type(atan32.PIO4[1]) + t) + F32.type(atan32.PIO4[0]), t)
        steep, xneg = ay > ax, np.signbit(x)
        qhi = np.where(steep, F32.type(atan32.PIO2[0]), np.where(xneg, F32.type(atan32.PI[0]), F32.type(0.0)))
        qlo = np.where(steep, F32.type(atan32.PIO2[1]), np.where(xneg, F32.type(atan32.PI[1]), F32.type(0.0)))
        r = qhi + (qlo + np.where(steep ^ xneg, -r, r))
        return np.asarray(np.where(np.isnan(x) | np.isnan(y), F32.type(np.nan), np.copysign(r, y)), F32)


_FLOAT_UNARY: dict[ElemOp, Callable[[np.ndarray], np.ndarray]] = {
    ElemOp.EXP: np.exp,
    ElemOp.EXP2: np.exp2,
    ElemOp.LOG: np.log,
    ElemOp.LOG2: np.log2,
    ElemOp.SQRT: np.sqrt,
    ElemOp.RSQRT: _rsqrt,
    ElemOp.SIN: np.sin,
    ElemOp.COS: np.cos,
    ElemOp.TANH: np.tanh,
    ElemOp.SIGMOID: _sigmoid,
    ElemOp.FLOOR: np.floor,
    ElemOp.CEIL: np.ceil,
    ElemOp.ERF: erf_values,
}
_COMPARE: dict[ElemOp, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ElemOp.EQ: np.equal,
    ElemOp.NE: np.not_equal,
    ElemOp.LT: np.less,
    ElemOp.LE: np.less_equal,
    ElemOp.GT: np.greater,
    ElemOp.GE: np.greater_equal,
}


def elementwise(op: ElemOp, xs: list[np.ndarray], dt: DType) -> np.ndarray:
    """`op` over operands of dtype `dt` (for `where`, `dt` is the data dtype);
    returns the result in storage form."""
    if op is ElemOp.WHERE:
        return np.where(xs[0], xs[1], xs[2]).astype(xs[1].dtype, copy=False)
    if op.is_comparison:
        a, b = (to_compute(x, dt) for x in xs)
        return np.asarray(_COMPARE[op](a, b))
    if dt.is_float:
        args = [to_compute(x, dt) for x in xs]
        return finish(_float_op(op, args, dt), dt)
    return np.asarray(_int_op(op, xs, dt)).astype(dt.np_dtype, copy=False)


# The ops that NumPy computes the same way for floats and integers (wrapping
# integer arithmetic; NaN-propagating maximum/minimum).
_SAME_FOR_ALL: dict[ElemOp, Callable[[list[np.ndarray]], np.ndarray]] = {
    ElemOp.NEG: lambda a: np.negative(a[0]),
    ElemOp.ABS: lambda a: np.abs(a[0]),
    ElemOp.ADD: lambda a: a[0] + a[1],
    ElemOp.SUB: lambda a: a[0] - a[1],
    ElemOp.MUL: lambda a: a[0] * a[1],
    ElemOp.MAXIMUM: lambda a: ieee_maximum(a[0], a[1], True),
    ElemOp.MINIMUM: lambda a: ieee_maximum(a[0], a[1], False),
}


def ieee_maximum(a: np.ndarray, b: np.ndarray, larger: bool) -> np.ndarray:
    """IEEE 754-2019 maximum/minimum (LLVM's `llvm.maximum`, PTX `max.NaN`):
    NaN-propagating, and -0.0 < +0.0. NumPy's `maximum` returns its second
    operand for equal values, so the sign of a zero result depended on the
    operands' order (`maximum(0.0, -0.0)` was -0.0)."""
    r = np.maximum(a, b) if larger else np.minimum(a, b)
    if r.dtype.kind != "f":
        return r
    zeros = (a == 0) & (b == 0)
    if not np.any(zeros):
        return r
    # the sum of two zeros is -0.0 only when both are: the larger zero; the smaller is the mirror
    z = a + b if larger else -((-a) + (-b))
    return np.where(zeros, z, r)


def zero_signed(r: np.ndarray, c: np.ndarray, axis: int | None, larger: bool) -> np.ndarray:
    """A max (min) reduction whose result is a zero: +0.0 (-0.0) if any
    element reduced is one, as a tree of `ieee_maximum` gives in any order."""
    if r.dtype.kind != "f":
        return r
    zero = r == 0
    if not np.any(zero):
        return r
    other = np.any((c == 0) & (np.signbit(c) != larger), axis=axis)  # a +0 (max) / a -0 (min)
    keep = np.asarray(0.0 if larger else -0.0, r.dtype)
    flip = np.asarray(-0.0 if larger else 0.0, r.dtype)
    return np.where(zero, np.where(other, keep, flip), r)


def not_close(x: np.ndarray, y: np.ndarray, rtol: float, atol: float, *, equal_nan: bool) -> np.ndarray:
    """Where `x` is not close to `y` (both float64): |x - y| > atol + rtol * |y|
    for finite values; an infinity is close only to the same infinity (the
    formula alone allows anything against an infinite `y` and refuses inf
    against inf); NaN is close only to NaN, and only with `equal_nan`. The one
    rule of `assert_close` in Tile programs and of `tilelang.testing`."""
    with np.errstate(all="ignore"):
        finite = np.isfinite(x) & np.isfinite(y)
        close = np.where(finite, np.abs(x - y) <= atol + rtol * np.abs(y), x == y)
        if equal_nan:
            close |= np.isnan(x) & np.isnan(y)
    return ~close


def sum_signed(r: np.ndarray, c: np.ndarray, axis: int | None) -> np.ndarray:
    """A float sum whose result is a zero: -0.0 when every element summed is
    -0.0, as IEEE addition gives in any order (x + -x is +0.0, -0.0 + -0.0 is
    -0.0); NumPy's sum starts from +0.0 and loses that sign."""
    if r.dtype.kind != "f" or c.size == 0:
        return r
    zero = r == 0
    if not np.any(zero):
        return r
    all_neg = np.all((c == 0) & np.signbit(c), axis=axis)
    return np.where(zero & all_neg, np.asarray(-0.0, r.dtype), r)


#: The float built-ins a `let` of untyped numbers may call (`let q = sqrt(2.0);`): `literal_math`.
LITERAL_MATH = frozenset((
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "sin", "cos", "tanh", "sigmoid", "floor", "ceil", "erf",
    "asin", "acos", "atan", "pow", "atan2", "fma", "maximum", "minimum"))


def literal_math(name: str | None, args: list[int | float]) -> float | None:
    """The f64 value of built-in `name` called on untyped numbers (`sqrt(2.0)`, `exp(1)`, `pow(2.0, 0.5)`), as an
    f64 instance of the call computes it (`asin`/`acos`/`atan` by the kernels' atan2 formula,
    `lower.intrinsics.inverse_trig`), for the value of an untyped `let` of it, which each read rounds once to
    its type (`dtypes.let_literal`); None where it is no such call (another name, an integer `abs`, `maximum` or
    `minimum`, a wrong count) or the value is not finite (the `let` then keeps its default type, f32)."""
    if name not in LITERAL_MATH or (name in ("abs", "maximum", "minimum") and
                                    not any(isinstance(a, float) for a in args)):
        return None
    arity = 3 if name == "fma" else 2 if name in ("pow", "atan2", "maximum", "minimum") else 1
    if len(args) != arity:
        return None
    xs = [np.asarray(float(a), F64) for a in args]
    with np.errstate(all="ignore"):
        r = math_values(name, xs[0], DType.F64) if arity == 1 else elementwise(ElemOp(name), xs, DType.F64)
    v = float(r)
    return v if math.isfinite(v) else None


#: the math built-ins that are no element-wise op: a kernel computes them by atan2 (`math_values`)
INVERSE_TRIG = ("asin", "acos", "atan")


def math_values(name: str, x: np.ndarray, dt: DType) -> np.ndarray:
    """Built-in math function `name` of one operand (a float `ElemOp`'s name: `exp`, `tanh`, `erf`, ..; or `asin`,
    `acos`, `atan`) of values `x` of float type `dt` in storage form, as a kernel on the interpreter computes it:
    the element-wise op (f16/bf16 in f32, rounded once; f32 in f32, f64 in f64), or for the inverse trig functions
    the kernels' atan2 formula op by op (`lower.intrinsics.inverse_trig`: asin(x) = atan2(x, sqrt((1 - x)(1 + x))),
    acos(x) = atan2(sqrt((1 - x)(1 + x)), x), atan(x) = atan2(x, 1), f16/bf16 in f32). The one definition of a
    math built-in's value: host scalars and tensors (`runtime/host_math`), a constant's help (`sema/consts`)
    and untyped `let`s (`literal_math`) compute through it (the reference, Numbers). Warnings: the caller's."""
    x = np.asarray(x)
    if name not in INVERSE_TRIG:
        return elementwise(ElemOp(name), [x], dt)
    w_dt = DType.F32 if dt in (DType.F16, DType.BF16) else dt
    w = cast(x, dt, w_dt)
    one = const_array(1.0, w_dt, w.shape)
    if name == "atan":
        r = elementwise(ElemOp.ATAN2, [w, one], w_dt)
    else:
        c = elementwise(ElemOp.SQRT, [elementwise(ElemOp.MUL, [elementwise(ElemOp.SUB, [one, w], w_dt),
                                                                elementwise(ElemOp.ADD, [one, w], w_dt)], w_dt)], w_dt)
        r = elementwise(ElemOp.ATAN2, [w, c] if name == "asin" else [c, w], w_dt)
    return cast(r, w_dt, dt)


def _float_op(op: ElemOp, a: list[np.ndarray], dt: DType) -> np.ndarray:
    f = _FLOAT_UNARY.get(op)
    if f is not None:
        return f(a[0])
    if op in _SAME_FOR_ALL:
        return _SAME_FOR_ALL[op](a)
    match op:
        case ElemOp.DIV:
            return a[0] / a[1]
        case ElemOp.REM:
            return np.fmod(a[0], a[1])
        case ElemOp.POW if a[0].dtype == F32:  # IEEE pow (C99 Annex F specials) in f64, rounded once
            return _pow_f32(a[0], a[1])
        case ElemOp.POW:
            return np.power(a[0], a[1])
        case ElemOp.ATAN2 if a[0].dtype == F32 and atan32.enabled():  # `atan32`'s f32 algorithm, the GPU's too
            return atan2_f32(a[0], a[1])
        case ElemOp.ATAN2:  # in f64, rounded once (the GPU's f64math.atan2; f32 under `TILEC_ATAN2_F32=0`)
            return np.arctan2(a[0].astype(F64), a[1].astype(F64)).astype(a[0].dtype)
        case ElemOp.FMA:
            if a[0].dtype == F32:
                # The f32 product is exact in f64; the f64 add is rounded to
                # odd, so the one rounding to the narrow type that follows is
                # the correctly rounded fma (53 >= 24 + 2 bits).
                r = _add_round_odd(a[0].astype(F64) * a[1].astype(F64), a[2].astype(F64))
                # f16/bf16: straight from f64 to the narrow type (one rounding;
                # f32 in between could double-round an fma)
                return r if dt in (DType.BF16, DType.F16) else r.astype(F32)
            return fma_f64(a[0], a[1], a[2])
    raise ValueError(f"`{op.value}` is not defined on {dt.value}")


def _int_op(op: ElemOp, a: list[np.ndarray], dt: DType) -> np.ndarray:
    if op in _SAME_FOR_ALL:
        return _SAME_FOR_ALL[op](a)
    match op:
        case ElemOp.NOT:
            return np.logical_not(a[0]) if dt is DType.BOOL else np.invert(a[0])
        case ElemOp.DIV:
            return _int_div(a[0], a[1])
        case ElemOp.REM:
            return _int_rem(a[0], a[1])
        case ElemOp.AND:
            return np.bitwise_and(a[0], a[1])
        case ElemOp.OR:
            return np.bitwise_or(a[0], a[1])
        case ElemOp.XOR:
            return np.bitwise_xor(a[0], a[1])
        case ElemOp.SHL:
            return _shift(a[0], a[1], dt, left=True)
        case ElemOp.SHR:
            return _shift(a[0], a[1], dt, left=False)
    raise ValueError(f"`{op.value}` is not defined on {dt.value}")


# ------------------------------------------------------------------ atomics
def atomic_in_bounds(op: AtomicOp, arr: np.ndarray, idx: list[np.ndarray], vals: np.ndarray,
                     keep: np.ndarray | None, dt: DType) -> None:
    """`atomic_update` at the flat positions `idx` (one index array per
    dimension) with `vals`, except the lanes `keep` drops and those outside
    `arr` (an atomic outside its tensor does nothing). Both interpreter modes
    call this."""
    ok = np.ones(vals.shape, dtype=bool) if keep is None else keep.astype(bool)
    for i, dim in zip(idx, arr.shape, strict=False):
        ok &= (i >= 0) & (i < dim)
    atomic_update(op, arr, tuple(i[ok] for i in idx), vals[ok], dt)


def atomic_update(
    op: AtomicOp, arr: np.ndarray, where: tuple[np.ndarray, ...], vals: np.ndarray, dt: DType
) -> None:
    """Apply `arr[where[.][k]] op= vals[k]` for every k, in order: colliding
    updates all land (np.*.at), and a bf16 add rounds once per update. Both
    interpreter modes call this with the lanes already filtered."""
    match op:
        case AtomicOp.ADD:
            if dt is DType.BF16:
                for k in range(len(vals)):
                    pos = tuple(int(i[k]) for i in where)
                    arr[pos] = round_bf16(np.asarray(arr[pos] + vals[k], np.float32))
            else:
                np.add.at(arr, where, vals)
        case AtomicOp.MAX | AtomicOp.MIN:
            small = op is AtomicOp.MIN
            pref = None
            if dt.is_float:
                # -0.0 < +0.0, as `maximum`/`minimum` order them (IEEE 754-2019) and the GPU's
                # compare-and-swap loop does: NumPy keeps either zero of a tie, by arrival
                pref = (arr == 0) & (np.signbit(arr) == small)
                np.logical_or.at(pref, where, (vals == 0) & (np.signbit(vals) == small))
            (np.minimum if small else np.maximum).at(arr, where, vals)
            if pref is not None:
                arr[pref & (arr == 0)] = -0.0 if small else 0.0
        case _:
            assert_never(op)


# ------------------------------------------------------------------ reductions, scans
# Reductions and scans in the compute type (sums and products accumulate in
# it: f32 for f16/bf16; NaN-propagating max/min), rounded back by `finish`.
_REDUCE: dict[ReduceOp, Callable[[np.ndarray, int], np.ndarray]] = {
    ReduceOp.SUM: lambda c, axis: sum_signed(np.sum(c, axis=axis, dtype=c.dtype), c, axis),
    ReduceOp.PROD: lambda c, axis: np.prod(c, axis=axis, dtype=c.dtype),
    ReduceOp.MAX: lambda c, axis: zero_signed(np.max(c, axis=axis), c, axis, True),
    ReduceOp.MIN: lambda c, axis: zero_signed(np.min(c, axis=axis), c, axis, False),
}
_SCAN: dict[ScanOp, Callable[[np.ndarray, int], np.ndarray]] = {
    ScanOp.CUMSUM: lambda c, axis: np.cumsum(c, axis=axis, dtype=c.dtype),
    ScanOp.CUMPROD: lambda c, axis: np.cumprod(c, axis=axis, dtype=c.dtype),
    ScanOp.CUMMAX: lambda c, axis: running_extreme(c, axis, True),
    ScanOp.CUMMIN: lambda c, axis: running_extreme(c, axis, False),
}


def running_extreme(c: np.ndarray, axis: int, larger: bool) -> np.ndarray:
    """`cummax`/`cummin`: the running `ieee_maximum`/minimum along `axis` (NaN from the first NaN on; a zero
    result is +0.0 (-0.0) once a +0.0 (-0.0) has been seen, as a chain of `maximum`s gives)."""
    r = (np.maximum if larger else np.minimum).accumulate(c, axis=axis)
    if r.dtype.kind != "f":
        return r
    zero = r == 0
    if not np.any(zero):
        return r
    seen = np.logical_or.accumulate((c == 0) & (np.signbit(c) != larger), axis=axis)  # a +0 (max) / -0 (min)
    return np.where(zero, np.where(seen, np.asarray(0.0 if larger else -0.0, r.dtype),
                                   np.asarray(-0.0 if larger else 0.0, r.dtype)), r)


def reduce(op: ReduceOp, x: np.ndarray, dt: DType, axis: int) -> np.ndarray:
    if op in (ReduceOp.ARGMAX, ReduceOp.ARGMIN):
        f = np.argmax if op is ReduceOp.ARGMAX else np.argmin
        return np.asarray(f(x, axis=axis)).astype(np.int32)
    return finish(np.asarray(_REDUCE[op](to_compute(x, dt), axis)), dt)


def scan(op: ScanOp, x: np.ndarray, dt: DType, axis: int) -> np.ndarray:
    return finish(_SCAN[op](to_compute(x, dt), axis), dt)


def mma(a: np.ndarray, b: np.ndarray, acc: np.ndarray, in_dt: DType, acc_dt: DType) -> np.ndarray:
    if acc_dt.is_float:
        # f16/bf16 products are exact in f32; accumulate in the acc's compute type
        work = F64 if F64 in (compute_dtype(in_dt), compute_dtype(acc_dt)) else F32
        r = np.matmul(a.astype(work), b.astype(work)) + acc.astype(work)
        if acc_dt is not DType.F64 and work == F64:
            r = r.astype(F32) if acc_dt is not DType.BF16 else r
        return finish(r, acc_dt)
    r = np.matmul(a.astype(np.int64), b.astype(np.int64)) + acc.astype(np.int64)
    return r.astype(acc_dt.np_dtype)


#: The opcode names this module implements, for the intrinsic-coverage test.
IMPLEMENTED: frozenset[str] = frozenset(
    [op.value for op in ElemOp] + [op.value for op in ReduceOp] + [op.value for op in ScanOp]
)
