"""The interpreter's fma rounds once (ir.ElemOp.FMA), checked against exact
rationals: f64 through the error-free emulation in interp.numeric.fma_f64,
f32/f16/bf16 through an f64 sum rounded to odd."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tilelang.dtypes import DType
from tilelang.interp.numeric import elementwise, fma_f64
from tilelang.ir.nodes import ElemOp


def _exact(a: float, b: float, c: float) -> float:
    if not (np.isfinite(a) and np.isfinite(b)):
        return a * b + c
    if not np.isfinite(c):
        return c  # a finite product, however large, leaves inf/NaN as it is
    e = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        return float(e)
    except OverflowError:
        return float("inf") if e > 0 else float("-inf")


def _check(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    got = fma_f64(a, b, c)
    want = np.array([_exact(x, y, z) for x, y, z in zip(a, b, c, strict=True)])
    np.testing.assert_array_equal(got, want)


def _near_halfway(r: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Products of two 27-bit odd mantissas need 54 bits: RN(a*b) is often an
    exact tie, and c a few ulps (or far below an ulp) off decides it."""
    m1 = r.integers(2**26, 2**27, n) | 1
    m2 = r.integers(2**26, 2**27, n) | 1
    scale = np.ldexp(1.0, r.integers(-40, 40, n))
    a = np.ldexp(m1.astype(np.float64), -26) * scale
    b = np.ldexp(m2.astype(np.float64), -27) * r.choice([-1.0, 1.0], n)
    p = a * b
    kind = r.integers(0, 4, n)
    tiny = np.ldexp(r.choice([-1.0, 1.0], n), np.floor(np.log2(np.abs(p))).astype(int) - r.integers(54, 120, n))
    c = np.select(
        [kind == 0, kind == 1, kind == 2],
        [tiny, -p, -p + np.spacing(p) * r.integers(-3, 4, n)],
        default=r.standard_normal(n) * np.abs(p),
    )
    return a, b, c


def test_f64_fma_matches_exact_on_random_inputs() -> None:
    r = np.random.default_rng(11)
    a, b, c = (r.standard_normal(3000) * np.ldexp(1.0, r.integers(-30, 30, 3000)) for _ in range(3))
    _check(a, b, c)


def test_f64_fma_matches_exact_near_halfway() -> None:
    a, b, c = _near_halfway(np.random.default_rng(12), 4000)
    got = fma_f64(a, b, c)
    want = np.array([_exact(x, y, z) for x, y, z in zip(a, b, c, strict=True)])
    np.testing.assert_array_equal(got, want)
    # the inputs do exercise double rounding: plain a*b + c differs somewhere
    assert (a * b + c != want).sum() > 100


def test_f64_fma_known_tie() -> None:
    # (1 + 2^-27)(1 - 2^-27) = 1 - 2^-54, a tie between 1 - 2^-53 and 1
    a, b = np.array([1 + 2.0**-27] * 3), np.array([1 - 2.0**-27] * 3)
    c = np.array([-(2.0**-80), 2.0**-80, 0.0])
    assert fma_f64(a, b, c).tolist() == [1 - 2.0**-53, 1.0, 1.0]
    assert (a * b + c).tolist()[0] == 1.0  # the two-rounding answer differs


def test_f64_fma_extreme_and_special_values() -> None:
    big, sub = np.finfo(np.float64).max, 5e-324
    vals = [0.0, -0.0, 1.0, -1.5, big, -big, sub, -sub, 2.0**-1000, 2.0**1000, 3.0**300, np.inf, -np.inf, np.nan]
    g = np.array(np.meshgrid(vals, vals, vals)).reshape(3, -1)
    with np.errstate(all="ignore"):  # the caller silences IEEE warnings
        got = fma_f64(g[0], g[1], g[2])
        want = np.array([_exact(x, y, z) for x, y, z in g.T])
    np.testing.assert_array_equal(got, want)  # NaNs compare equal here
    # an overflowing product against an infinite addend is the addend, not NaN
    with np.errstate(all="ignore"):
        assert fma_f64(np.array([big]), np.array([2.0]), np.array([-np.inf]))[0] == -np.inf
    # signed zeros: -0 * 1 + -0 is -0; 1 * 1 + -1 is +0
    z = fma_f64(np.array([-0.0, 1.0]), np.array([1.0, 1.0]), np.array([-0.0, -1.0]))
    assert np.signbit(z).tolist() == [True, False]


def test_f64_fma_through_elementwise_broadcasts_scalars() -> None:
    got = elementwise(ElemOp.FMA, [np.float64(1 + 2.0**-27), np.array([1 - 2.0**-27] * 2), np.float64(-(2.0**-80))], DType.F64)
    assert got.tolist() == [1 - 2.0**-53] * 2


@pytest.mark.parametrize(
    ("dt", "a", "b", "want"),
    [
        # a*b = 1 + 2^-11 + 2^-24: an exact f32 tie once the f64 sum drops c
        (DType.F32, 1 + 2.0**-12, 1 + 2.0**-12, 1 + 2.0**-11 + 2.0**-23),
        # 1 + 2^-5 + 2^-6 + 2^-11: an f16 tie (10 stored bits)
        (DType.F16, 1 + 2.0**-5, 1 + 2.0**-6, 1 + 2.0**-5 + 2.0**-6 + 2.0**-10),
        # 1 + 2^-3 + 2^-8: a bf16 tie (7 stored bits)
        (DType.BF16, 1 + 2.0**-4, 1 + 2.0**-4, 1 + 2.0**-3 + 2.0**-7),
    ],
)
def test_narrow_fma_no_double_rounding(dt: DType, a: float, b: float, want: float) -> None:
    # c = 2^-80 is far below f64's ulp at 1, so a plain f64 sum lands exactly
    # on the narrow type's tie and ties-to-even rounds down; the exact value
    # is above the tie, so the fma rounds up.
    x, y = np.array([a], dtype=np.float32), np.array([b], dtype=np.float32)
    c = np.array([2.0**-80], dtype=np.float32)
    got = elementwise(ElemOp.FMA, [x, y, c], dt)
    assert float(got[0]) == want
    # and with -2^-80 it rounds down, to the even neighbour below the tie
    down = elementwise(ElemOp.FMA, [x, y, -c], dt)
    assert float(down[0]) < want
