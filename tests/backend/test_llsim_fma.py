"""llsim's f32 fma (`llsim_ops._fma`) rounds once, as `fma.rn.f32` does: its
scalar round-to-odd add is the interpreter's vector one (`tilelang.interp.
numeric._add_round_odd`) value for value, and the result is the exactly
rounded a * b + c (checked against `fractions.Fraction`). The f64 fma
(`_fma_f64`, in Python integers) is `float(Fraction(a) * Fraction(b) +
Fraction(c))` bit for bit, the way it was computed before."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from llsim_ops import _add_round_odd_scalar, _fma, _fma_f64

from tilelang.interp.numeric import _add_round_odd


def _specials() -> list[float]:
    f32 = np.finfo(np.float32)
    return [0.0, -0.0, 1.0, -1.0, float(f32.tiny), float(f32.smallest_subnormal), float(f32.max),
            -float(f32.max), math.inf, -math.inf, math.nan, 1.0 + 2.0**-23, 2.0**-24, 3.0, 1e-30, 1e30]


def _inputs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    sp = np.array(_specials(), np.float32)
    grid = np.array(np.meshgrid(sp, sp, sp)).reshape(3, -1)
    # ties: a * b exactly halfway between two f32 neighbours, nudged by a tiny c
    a = rng.integers(1, 2**12, n).astype(np.float32)
    b = (rng.integers(1, 2**12, n) * 2.0 + 1).astype(np.float32) * np.float32(2.0**-11)
    c = (rng.standard_normal(n) * 2.0 ** rng.integers(-60, 4, n)).astype(np.float32)
    r = rng.standard_normal((3, n)).astype(np.float32) * np.float32(2.0) ** rng.integers(-20, 20, (3, n)).astype(np.float32)
    return (np.concatenate([grid[0], a, r[0]]), np.concatenate([grid[1], b, r[1]]),
            np.concatenate([grid[2], c, r[2]]))


pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf * 0 and f32 overflow on purpose


def test_the_scalar_round_to_odd_add_is_the_interpreters() -> None:
    a, b, c = _inputs(3000)
    p = a.astype(np.float64) * b.astype(np.float64)
    want = _add_round_odd(p, c.astype(np.float64))
    got = np.array([_add_round_odd_scalar(float(x), float(y)) for x, y in zip(p, c.astype(np.float64), strict=True)])
    same = (got.view(np.int64) == want.view(np.int64)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), np.flatnonzero(~same)[:5]


def test_the_f32_fma_rounds_once() -> None:
    a, b, c = _inputs(3000)
    checked = 0
    for x, y, z in zip(a, b, c, strict=True):
        got = _fma(x, y, z, ["float"], "llvm.fma.f32")
        assert isinstance(got, np.float32)
        if not all(math.isfinite(float(v)) for v in (x, y, z)):
            continue
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        if abs(exact) >= Fraction(float(np.finfo(np.float32).max)):
            assert math.isinf(got) or abs(float(got)) == float(np.finfo(np.float32).max), (x, y, z, got)
            continue
        want = _round_to_f32(exact)
        if exact == 0:
            continue  # the sign of an exact zero sum follows IEEE's rule, not Fraction's
        assert got == want, (x, y, z, got, want)
        checked += 1
    assert checked > 3000


def _round_to_f32(x: Fraction) -> np.float32:
    """x rounded once to the nearest f32, ties to the even mantissa (exact)."""
    mid = np.float32(float(x))
    cands = {mid, np.nextafter(mid, np.float32(math.inf)), np.nextafter(mid, np.float32(-math.inf))}
    cands = [c for c in cands if math.isfinite(float(c))]
    best = min(abs(Fraction(float(c)) - x) for c in cands)
    near = [c for c in cands if abs(Fraction(float(c)) - x) == best]
    return min(near, key=lambda c: int(c.view(np.int32)) & 1)


def test_the_f64_fma_is_the_exact_sum_rounded_once() -> None:
    rng = np.random.default_rng(11)
    f64 = np.finfo(np.float64)
    sp = [0.0, -0.0, 1.0, -1.0, float(f64.tiny), float(f64.smallest_subnormal), float(f64.max), -float(f64.max),
          1.0 + 2.0**-52, 2.0**-53, 3.0, 1e-300, 1e300, 2.0**-1074 * 3]
    cases = [(x, y, z) for x in sp for y in sp for z in sp]
    # ties: a * b halfway between two doubles, nudged by a tiny c; products into the subnormals; cancellation
    a = rng.integers(1, 2**26, 2000).astype(np.float64)
    b = (rng.integers(1, 2**26, 2000) * 2.0 + 1) * 2.0**-26
    c = rng.standard_normal(2000) * 2.0 ** rng.integers(-120, 4, 2000).astype(np.float64)
    r = rng.standard_normal((3, 2000)) * 2.0 ** rng.integers(-540, 540, (3, 2000)).astype(np.float64)
    cases += list(zip(a, b, c, strict=True)) + list(zip(*r, strict=True)) + [(x, y, -x * y) for x, y in zip(a, b, strict=True)]
    for x, y, z in cases:
        x, y, z = float(x), float(y), float(z)
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        try:
            want = float(exact)
        except OverflowError:
            want = math.inf if exact > 0 else -math.inf
        if exact == 0 and x * y == 0 and z == 0:
            want = x * y + z  # two zeros: IEEE's sign (-0 + -0 is -0), which `Fraction` has not got
        got = _fma_f64(x, y, z)
        assert np.float64(got).view(np.int64) == np.float64(want).view(np.int64), (x, y, z, got, want)
        assert _fma(np.float64(x), np.float64(y), np.float64(z), ["double"], "llvm.fma.f64") == np.float64(got)
    assert math.isnan(_fma_f64(math.inf, 0.0, 1.0)) and _fma_f64(math.inf, 1.0, 1.0) == math.inf


def test_the_f64_fma_of_zeros_keeps_ieees_sign() -> None:
    """hrev15: `fma(-0.0, x, -0.0)` is -0.0 (`fma.rn.f64`, the interpreter's `fma_f64`); llsim gave +0.0,
    so `floor(fma(y, abs(x), y / x))` of an `f64` y = -0.0 disagreed with the interpreter (kernel_diff
    --exact, seed 52). A cancellation to zero is +0 in round-to-nearest."""
    from tilelang.interp.numeric import fma_f64

    cases = [(-0.0, 219.5, -0.0), (0.0, -3.0, -0.0), (-0.0, -3.0, -0.0), (-0.0, 3.0, 0.0), (2.0, 3.0, -6.0),
             (-2.0, 3.0, 6.0), (0.0, 0.0, 0.0), (-0.0, 0.0, -0.0)]
    for x, y, z in cases:
        got = _fma_f64(x, y, z)
        want = float(fma_f64(np.array([x]), np.array([y]), np.array([z]))[0])
        assert math.copysign(1, got) == math.copysign(1, want) and got == want == 0, (x, y, z, got, want)
    assert math.copysign(1, _fma_f64(-0.0, 219.5, -0.0)) == -1 and math.copysign(1, _fma_f64(2.0, 3.0, -6.0)) == 1
