"""The numeric rules of `tilelang/ir/nodes.py`, op by op."""

from __future__ import annotations

import numpy as np
import pytest

from tilelang.dtypes import DType, trunc_div, trunc_rem
from tilelang.interp import numeric as num
from tilelang.ir.lower.fold import fold_binary
from tilelang.ir.lower.values import CVal
from tilelang.ir.nodes import ElemOp, ReduceOp, ScanOp

I32 = DType.I32


@pytest.fixture(autouse=True)
def _quiet() -> object:
    # The interpreter runs under errstate(all="ignore"): wrapping and IEEE
    # specials are the defined behaviour, not warnings.
    with np.errstate(all="ignore"):
        yield


def bits(x: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(x, np.float32).view(np.uint32).reshape(-1)]


def f32_from_bits(*bs: int) -> np.ndarray:
    return np.array(bs, dtype=np.uint32).view(np.float32)


def test_round_bf16_ties_to_even_and_overflow() -> None:
    x = f32_from_bits(
        0x3F808000,  # 1 + 2^-8: a tie, rounds down to even 1.0
        0x3F818000,  # 1 + 3*2^-8: a tie, rounds up to even
        0x3F808001,  # just above a tie: up
        0x7F7FFFFF,  # f32 max: rounds to inf
        0x7F7F7FFF,  # below the halfway point to inf: stays finite
        0xBF808000,  # negative tie: to even
    )
    assert bits(num.round_bf16(x)) == [
        0x3F800000, 0x3F820000, 0x3F810000, 0x7F800000, 0x7F7F0000, 0xBF800000,
    ]


def test_round_bf16_nan_inf_zero() -> None:
    x = f32_from_bits(0x7F800000, 0xFF800000, 0x7F800001, 0xFFC00000, 0x80000000, 0x00000001)
    out = num.round_bf16(x)
    assert bits(out)[:2] == [0x7F800000, 0xFF800000]
    assert np.isnan(out[2]) and np.isnan(out[3])  # a low-payload NaN must not become inf
    assert bits(out)[3] >> 31 == 1  # sign kept
    assert bits(out)[4] == 0x80000000  # -0 stays -0
    assert bits(out)[5] == 0  # the smallest subnormal rounds to 0
    # every output is a bf16: low 16 bits clear
    assert all(b & 0xFFFF == 0 for b in bits(out))


def test_f64_to_bf16_has_no_double_rounding() -> None:
    # 1 + 2^-8 + 2^-30 is just above a bf16 tie; rounding via f32 would land on
    # the tie (1 + 2^-8) and then round down to 1.0. Correct: round up.
    v = np.array(1 + 2.0**-8 + 2.0**-30)
    assert num.cast(v, DType.F64, DType.BF16) == np.float32(1 + 2.0**-7)
    assert num.cast(np.array(1 + 2.0**-8), DType.F64, DType.BF16) == 1.0


def ints(*v: int, dt: str = "int32") -> np.ndarray:
    return np.array(v, dtype=dt)


def test_int_div_rem_truncate_toward_zero() -> None:
    a = ints(7, -7, 7, -7, 5, -2**31, -2**31)
    b = ints(2, 2, -2, -2, 0, -1, 0)
    q = num.elementwise(ElemOp.DIV, [a, b], I32)
    r = num.elementwise(ElemOp.REM, [a, b], I32)
    assert q.tolist() == [3, -3, -3, 3, 0, -2**31, 0]
    assert r.tolist() == [1, -1, 1, -1, 5, 0, -2**31]
    assert (q * np.where(b == 0, 0, b) + r == a).all()


def test_constant_division_is_the_interpreters() -> None:
    """`dtypes.trunc_div`/`trunc_rem`, which every stage folds constants with
    (types, constants, the lowering, the host, ownership facts), agree with
    the interpreter's integer `/` and `%` wherever the divisor is not 0."""
    vals = [-2**31 + 1, -1000, -7, -2, -1, 0, 1, 2, 7, 1000, 2**31 - 1]
    a = ints(*[x for x in vals for y in vals if y != 0])
    b = ints(*[y for x in vals for y in vals if y != 0])
    q = num.elementwise(ElemOp.DIV, [a, b], I32)
    r = num.elementwise(ElemOp.REM, [a, b], I32)
    assert [trunc_div(int(x), int(y)) for x, y in zip(a, b, strict=True)] == q.tolist()
    assert [trunc_rem(int(x), int(y)) for x, y in zip(a, b, strict=True)] == r.tolist()
    # the lowering folds `x / 0` and `x % 0` as the IR defines them
    zero = CVal(0, DType.I32)
    assert fold_binary("/", CVal(7, DType.I32), zero) == CVal(0, DType.I32)
    assert fold_binary("%", CVal(-7, DType.I32), zero) == CVal(-7, DType.I32)
    assert fold_binary("/", CVal(-7, DType.I32), CVal(2, DType.I32)) == CVal(-3, DType.I32)


def test_unsigned_div_and_wrapping() -> None:
    a = ints(250, 7, dt="uint8")
    b = ints(10, 0, dt="uint8")
    assert num.elementwise(ElemOp.DIV, [a, b], DType.U8).tolist() == [25, 0]
    assert num.elementwise(ElemOp.ADD, [a, a], DType.U8).tolist() == [244, 14]
    assert num.elementwise(ElemOp.NEG, [ints(1, dt="uint8")], DType.U8).tolist() == [255]
    assert num.elementwise(ElemOp.MUL, [ints(2**30), ints(4)], I32).tolist() == [0]


def test_shifts_clamp_like_ptx() -> None:
    a = ints(1, 1, -8, -8, -8, 5)
    s = ints(3, 32, 1, 40, -1, 0)
    assert num.elementwise(ElemOp.SHL, [a, s], I32).tolist() == [8, 0, -16, 0, 0, 5]
    assert num.elementwise(ElemOp.SHR, [a, s], I32).tolist() == [0, 0, -4, -1, -1, 5]
    u = ints(0x80000000, 0x80000000, dt="uint32")
    us = ints(31, 32, dt="uint32")
    assert num.elementwise(ElemOp.SHR, [u, us], DType.U32).tolist() == [1, 0]


def test_float_to_int_casts_saturate() -> None:
    x = np.array([1.9, -1.9, 1e10, -1e10, np.nan, np.inf, -np.inf, 2147483647.0], np.float64)
    assert num.cast(x, DType.F64, I32).tolist() == [
        1, -1, 2**31 - 1, -2**31, 0, 2**31 - 1, -2**31, 2**31 - 1,
    ]
    assert num.cast(np.array([-1.5, 300.0], np.float32), DType.F32, DType.U8).tolist() == [0, 255]
    big = np.array([2.0**63, -2.0**64], np.float64)
    assert num.cast(big, DType.F64, DType.I64).tolist() == [2**63 - 1, -2**63]


def test_other_casts() -> None:
    assert num.cast(ints(300, -1), I32, DType.U8).tolist() == [44, 255]
    assert num.cast(np.array([0.0, 2.0, np.nan]), DType.F64, DType.BOOL).tolist() == [
        False, True, True]
    assert num.cast(np.array([True, False]), DType.BOOL, DType.F16).tolist() == [1.0, 0.0]
    h = num.cast(np.array([65520.0], np.float32), DType.F32, DType.F16)
    assert h.dtype == np.float16 and np.isinf(h[0])  # 65520 rounds up to inf in f16
    assert num.cast(ints(2**24 + 1), I32, DType.F32).tolist() == [2**24]


def test_f16_math_in_f32_rounded_once() -> None:
    x = np.array([0.5, 1.0, 10.0], np.float16)
    e = num.elementwise(ElemOp.EXP, [x], DType.F16)
    assert e.dtype == np.float16
    np.testing.assert_array_equal(e, np.exp(x.astype(np.float32)).astype(np.float16))
    s = num.elementwise(ElemOp.SIGMOID, [np.array([-100.0, 0.0, 100.0], np.float32)], DType.F32)
    assert s.tolist() == [0.0, 0.5, 1.0]


def test_maximum_and_max_propagate_nan_argmax_first() -> None:
    a = np.array([1.0, np.nan, 3.0], np.float32)
    b = np.array([2.0, 0.0, np.nan], np.float32)
    m = num.elementwise(ElemOp.MAXIMUM, [a, b], DType.F32)
    assert m[0] == 2.0 and np.isnan(m[1]) and np.isnan(m[2])
    assert np.isnan(num.reduce(ReduceOp.MAX, a, DType.F32, 0))
    assert num.reduce(ReduceOp.ARGMAX, a, DType.F32, 0) == 1
    assert num.reduce(ReduceOp.ARGMIN, np.array([2, 1, 1], np.int32), I32, 0) == 1


def test_f16_sum_accumulates_in_f32() -> None:
    x = np.full(4096, 1.0, np.float16)  # an f16 running sum would stop at 2048
    s = num.reduce(ReduceOp.SUM, x, DType.F16, 0)
    assert s.dtype == np.float16 and s == 4096.0
    c = num.scan(ScanOp.CUMSUM, x, DType.F16, 0)
    assert c[-1] == 4096.0 and c.dtype == np.float16


def test_int_reductions_wrap_in_type() -> None:
    x = np.full(3, 100, np.int8)
    assert num.reduce(ReduceOp.SUM, x, DType.I8, 0) == 44
    assert num.reduce(ReduceOp.SUM, x, DType.I8, 0).dtype == np.int8


def test_fma_single_rounding_f32() -> None:
    a = np.float32(1 + 2.0**-12)
    r = num.elementwise(ElemOp.FMA, [np.array(a), np.array(a), np.array(np.float32(-1.0))],
                        DType.F32)
    # a*a = 1 + 2^-11 + 2^-24 exactly; a*a rounded first would lose 2^-24
    assert float(r) == 2.0**-11 + 2.0**-24


def test_const_array_wraps_and_rounds() -> None:
    assert num.const_array(2**31, I32, ()).item() == -2**31
    assert num.const_array(-1, DType.U16, (2,)).tolist() == [65535, 65535]
    assert num.const_array(0.1, DType.BF16, ()).item() == float(num.round_bf16(np.float32(0.1)))


@pytest.mark.parametrize("dt", [DType.F16, DType.BF16, DType.F32])
def test_mma_products_exact_in_f32(dt: DType) -> None:
    a = np.array([[1 + 2.0**-7, 1.0]], np.float32)
    a = num.round_bf16(a) if dt is DType.BF16 else a.astype(dt.np_dtype)
    b = np.array([[1 + 2.0**-7], [-1.0]], np.float32)
    b = num.round_bf16(b) if dt is DType.BF16 else b.astype(dt.np_dtype)
    acc = np.zeros((1, 1), np.float32)
    r = num.mma(a, b, acc, dt, DType.F32)
    assert r[0, 0] == np.float32(2.0**-6 + 2.0**-14)
