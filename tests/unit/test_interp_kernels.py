"""The interpreter on the hand-built sample kernels, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from tilelang.diagnostics.model import TileError
from tilelang.dtypes import DType
from tilelang.interp import round_bf16, run_kernel
from tilelang.ir import nodes as ir
from tilelang.ir import samples
from tilelang.ir.builder import Builder
from tilelang.ir.verify import check_kernel, verify_kernel
from tilelang.source import Span


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@pytest.mark.parametrize("n", [1, 255, 256, 1000])
def test_vector_add_partial_tiles(n: int) -> None:
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal((2, n)).astype(np.float32)
    z = np.zeros(n, np.float32)
    run_kernel(samples.vector_add(256), (cdiv(n, 256),), [z, x, y])
    np.testing.assert_array_equal(z, x + y)  # f32 add is exact to the bit


def test_vector_add_f16_rounds_each_op() -> None:
    x = np.array([1.0, 2048.0, 65504.0], np.float16)
    y = np.array([2.0**-11, 1.0, 65504.0], np.float16)
    z = np.zeros(3, np.float16)
    run_kernel(samples.vector_add(4, DType.F16), (1,), {"z": z, "x": x, "y": y})
    assert z[0] == 1.0  # 1 + 2^-11 ties to even
    assert z[1] == 2048.0  # 2049 is not an f16
    assert np.isinf(z[2])


def test_bf16_add_is_rounded() -> None:
    x = round_bf16(np.array([1.0, 3.0], np.float32))
    y = round_bf16(np.array([2.0**-8, 2.0**-7], np.float32))
    z = np.zeros(2, np.float32)
    run_kernel(samples.vector_add(2, DType.BF16), (1,), [z, x, y])
    assert z[0] == 1.0  # 1 + 2^-8 is a tie, to even
    assert z[1] == 3.0  # 3 + 2^-7 is a tie, 3 is even (mantissa ...1000000)


def test_saxpy_scalar_param() -> None:
    x = np.arange(300, dtype=np.float32)
    y = np.ones(300, np.float32)
    z = np.zeros(300, np.float32)
    run_kernel(samples.saxpy(128), (3,), [z, 2.5, x, y])
    np.testing.assert_array_equal(z, 2.5 * x + 1)


@pytest.mark.parametrize(("m", "n"), [(8, 64), (10, 50), (1, 1)])
def test_row_softmax(m: int, n: int) -> None:
    x = np.random.default_rng(0).standard_normal((m, n)).astype(np.float32)
    z = np.zeros_like(x)
    run_kernel(samples.row_softmax(4, 64), (cdiv(m, 4), 1), [z, x])
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(z, e / e.sum(1, keepdims=True), rtol=1e-6)


def test_row_sum_loop_carried() -> None:
    x = np.random.default_rng(1).standard_normal((37, 100)).astype(np.float32)
    z = np.zeros(37, np.float32)
    run_kernel(samples.row_sum(8, 32), (cdiv(37, 8),), [z, x])
    np.testing.assert_allclose(z, x.sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("m", "n", "k"), [(64, 64, 32), (50, 70, 45), (1, 1, 1)])
def test_gemm_f16_f32_acc(m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    run_kernel(samples.gemm(32, 32, 16), (cdiv(m, 32), cdiv(n, 32)), [c, a, b])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)


def test_gemm_f32() -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 24)).astype(np.float32)
    b = rng.standard_normal((24, 33)).astype(np.float32)
    c = np.zeros((40, 33), np.float32)
    k = samples.gemm(16, 16, 8, DType.F32, DType.F32)
    run_kernel(k, (3, 3), [c, a, b])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_transpose_and_cumsum_and_argmax() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((45, 70)).astype(np.float32)
    zt = np.zeros((70, 45), np.float32)
    run_kernel(samples.transpose(16, 32), (cdiv(70, 16), cdiv(45, 32)), [zt, x])
    np.testing.assert_array_equal(zt, x.T)

    zc = np.zeros_like(x)
    run_kernel(samples.cumsum_rows(4, 128), (cdiv(45, 4), 1), [zc, x])
    np.testing.assert_allclose(zc, np.cumsum(x, 1), rtol=1e-5, atol=1e-5)

    x[3, 5] = x[3, 9] = 100.0  # ties: the first index wins
    za = np.zeros(45, np.int32)
    run_kernel(samples.argmax_rows(4, 128), (cdiv(45, 4),), [za, x])
    np.testing.assert_array_equal(za, x.argmax(1))
    assert za[3] == 5


def test_histogram_atomics_accumulate_duplicates() -> None:
    x = np.random.default_rng(5).integers(-2, 18, size=1000).astype(np.int32)
    hist = np.zeros(16, np.int32)
    z = np.zeros_like(x)
    run_kernel(samples.histogram(128, 16), (cdiv(1000, 128),), [z, x, hist])
    valid = x[(x >= 0) & (x < 16)]
    np.testing.assert_array_equal(hist, np.bincount(valid, minlength=16))


def test_every_sample_verifies() -> None:
    for name, make in samples.ALL.items():
        assert check_kernel(make()) == [], name


def _assert_kernel(span: Span) -> ir.Kernel:
    b = Builder("check")
    b.tensor_param("x", DType.F32, 1)
    pid = b.block_id(0)
    t = b.load("x", (b.mul(pid, b.const(4, DType.I32)),), (4,))
    ok = b.elementwise(ir.ElemOp.GE, t, b.const(0.0, DType.F32, (4,)))
    b.print_("block ", pid, " max ", b.reduce(ir.ReduceOp.MAX, t, 0))
    b.assert_(ok, "inputs must be positive", span=span)
    k = b.finish(grid_rank=1)
    verify_kernel(k)
    return k


def test_device_assert_raises_located_tile_error() -> None:
    span = Span(0, 10, 20)
    x = np.array([1, 2, 3, 4, 5, 6, -7, 8], np.float32)
    lines: list[str] = []
    with pytest.raises(TileError) as info:
        run_kernel(_assert_kernel(span), (2,), [x], out=lines.append)
    (d,) = info.value.diagnostics
    assert d.code == "E0700"
    assert "inputs must be positive" in d.message
    assert d.primary_span == span
    assert any("block (1)" in n for n in d.notes)
    assert any("1 of 4 elements" in n and "[2]" in n for n in d.notes)
    assert lines == ["block 0 max 4.0", "block 1 max 8.0"]  # block 1 printed, then failed


def test_device_assert_passes() -> None:
    lines: list[str] = []
    run_kernel(_assert_kernel(Span(0, 0, 1)), (1,), [np.ones(4, np.float32)], out=lines.append)
    assert lines == ["block 0 max 1.0"]


def test_if_and_while() -> None:
    # z[0] = the number of doublings from 1 until >= x (while); z[1] = x > 10 ? 1 : 2 (if)
    b = Builder("ctl")
    b.tensor_param("z", DType.I32, 1, mutable=True, tile_shape=(2,))
    x = b.scalar_param("x", DType.I32)
    one = b.const(1, DType.I32)
    zero = b.const(0, DType.I32)
    with b.while_((one, zero)) as w:
        with w.cond() as (v, _n):
            b.yield_(b.lt(v, x))
        with w.body() as (v, n):
            b.yield_(b.add(v, v), b.add(n, one))
    count = w.results[1]
    cond = b.elementwise(ir.ElemOp.GT, x, b.const(10, DType.I32))
    with b.if_(cond, [ir.Type(DType.I32)]) as br:
        with br.then_():
            b.yield_(one)
        with br.else_():
            b.yield_(b.const(2, DType.I32))
    pair = b.reshape(count, (1,))
    both = b.add(b.mul(b.arange(2), b.broadcast(br.results[0], (2,))),
                 b.mul(b.sub(b.const(1, DType.I32, (2,)), b.arange(2)), b.broadcast(pair, (2,))))
    b.store("z", (zero,), both)
    k = b.finish()
    verify_kernel(k)
    for xv, want in [(1, [0, 2]), (5, [3, 2]), (100, [7, 1])]:
        z = np.zeros(2, np.int32)
        run_kernel(k, (1,), [z, xv])
        assert z.tolist() == want, xv


def test_bad_arguments_are_value_errors() -> None:
    k = samples.vector_add(4)
    with pytest.raises(ValueError, match="rank-1"):
        run_kernel(k, (1,), [np.zeros(4, np.float64), np.zeros(4, np.float32),
                             np.zeros(4, np.float32)])
    with pytest.raises(ValueError, match="takes 3 arguments"):
        run_kernel(k, (1,), [np.zeros(4, np.float32)])
    with pytest.raises(ValueError, match="grid"):
        run_kernel(k, (1, 2), [np.zeros(4, np.float32)] * 3)
