"""Host tensors: bf16 rounding, float -> int casts, printing."""

from __future__ import annotations

import numpy as np
import pytest

from tilelang.dtypes import DType
from tilelang.interp import numeric as num
from tilelang.runtime.cpu import CpuDevice
from tilelang.runtime.tensor import (
    Partition,
    Tensor,
    float_to_int,
    format_scalar,
    format_tensor,
    normalise,
    round_bf16,
)

DEV = CpuDevice()


def t(values, dtype=DType.F32) -> Tensor:
    return Tensor.from_numpy(np.asarray(values), dtype, DEV)


def test_round_bf16_ties_to_even_and_specials():
    one = np.float32(1.0)
    ulp = np.float32(2.0**-7)  # bf16 spacing at 1.0
    x = np.array([1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, np.nan, np.inf, -np.inf, 3.4e38], np.float32)
    r = round_bf16(x)
    assert r[0] == one  # halfway, rounds to even (1.0)
    assert r[1] == one + 2 * ulp  # halfway, rounds to even (1 + 2^-6)
    assert np.isnan(r[2])
    assert r[3] == np.inf and r[4] == -np.inf
    assert r[5] == np.inf  # past the largest bf16: overflows to inf


def test_bf16_host_tensors_round_as_the_interpreter_does():
    """The host's bf16 rounding is the interpreter's (one definition): a NaN
    keeps its sign and a payload in the low 16 bits cannot turn it into inf."""
    pats = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0xFFFFFFFF, 0x3F808000,
            0x3F818000, 0x7F7FFFFF, 0x80000000, 0x00000001]
    x = np.array(pats, np.uint32).view(np.float32)
    host = normalise(x, DType.BF16)
    assert host.view(np.uint32).tolist() == num.round_bf16(x).view(np.uint32).tolist()
    assert [int(b) >> 31 for b in host.view(np.uint32)[:5]] == [0, 1, 0, 1, 1]
    assert np.isnan(host[:5]).all()
    stored = t(x, DType.BF16).numpy()
    assert np.signbit(stored[1]) and np.isnan(stored[1])


def test_float_to_int_saturates_and_truncates():
    r = float_to_int(np.array([1.9, -1.9, 1e10, -1e10, np.nan]), DType.I32)
    assert r.tolist() == [1, -1, 2**31 - 1, -(2**31), 0]
    assert float_to_int(np.array([-5.0, 300.0]), DType.U8).tolist() == [0, 255]


@pytest.mark.parametrize(("value", "dtype", "text"), [
    (np.float32(1.0), DType.F32, "1.0"),
    (np.float32(0.1), DType.F32, "0.1"),
    (np.float32(-2.5), DType.F32, "-2.5"),
    (np.float32(1e-7), DType.F32, "1e-7"),
    (np.float64(1e20), DType.F64, "1e20"),
    (np.float32(np.nan), DType.F32, "NaN"),
    (np.float32(-np.inf), DType.F32, "-inf"),
    (np.int32(-3), DType.I32, "-3"),
    (True, DType.BOOL, "true"),
    (np.float32(round_bf16(np.array([0.1], np.float32))[0]), DType.BF16, "0.1"),
])
def test_format_scalar(value, dtype, text):
    assert format_scalar(value, dtype) == text


def test_format_small_tensors():
    assert format_tensor(t([1.0, 2.5, -3.0])) == "Tensor<f32, [3]> [ 1.0,  2.5, -3.0]"
    assert format_tensor(t([[1, 2], [30, 4]], DType.I32)) == (
        "Tensor<i32, [2, 2]>\n[[ 1,  2],\n [30,  4]]")


def test_format_large_tensor_is_summarised():
    text = format_tensor(t(np.arange(5000).reshape(50, 100), DType.I32))
    lines = text.splitlines()
    assert lines[0] == "Tensor<i32, [50, 100]>"
    assert "..." in lines[1] and lines[1].startswith("[[   0,    1,    2, ..., ")
    assert len(lines) == 8  # header, 3 rows, `...`, 3 rows
    assert lines[4].strip() == "...,"


def test_partition_grid_is_ceil_divide():
    p = Partition(t(np.zeros((1000, 70))), (64, 32))
    assert p.grid == (16, 3)


def test_from_numpy_rounds_bf16_and_f16():
    b = t([1.0 + 2.0**-8], DType.BF16)
    assert b.numpy().dtype == np.float32 and b.numpy()[0] == 1.0
    h = t([1.0 + 2.0**-12], DType.F16)
    assert h.numpy().dtype == np.float16 and h.numpy()[0] == 1.0
