"""Differential tests: the interpreter against NumPy for random shapes, whether
or not they divide the tile, on hand-built IR and on the lowered examples."""

from __future__ import annotations

import functools
import struct
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.dtypes import DType
from tilelang.interp import numeric as num
from tilelang.interp import run_kernel
from tilelang.ir import nodes as ir
from tilelang.ir import samples
from tilelang.ir.builder import Builder
from tilelang.ir.lower import lower_kernel
from tilelang.sema import check_program
from tilelang.source import SourceMap
from tilelang.syntax.parser import parse

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def rng_for(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ------------------------------------------------------------------ element-wise
_OPS = [ir.ElemOp.ADD, ir.ElemOp.SUB, ir.ElemOp.MUL, ir.ElemOp.DIV, ir.ElemOp.MAXIMUM,
        ir.ElemOp.MINIMUM]
_NP = {ir.ElemOp.ADD: np.add, ir.ElemOp.SUB: np.subtract, ir.ElemOp.MUL: np.multiply,
       ir.ElemOp.DIV: np.divide, ir.ElemOp.MAXIMUM: np.maximum, ir.ElemOp.MINIMUM: np.minimum}


@functools.cache
def binary_kernel(op: ir.ElemOp, block: int, dtype: DType) -> ir.Kernel:
    b = Builder(f"ew_{op.value}")
    b.tensor_param("z", dtype, 1, mutable=True, tile_shape=(block,))
    b.tensor_param("x", dtype, 1)
    b.tensor_param("y", dtype, 1)
    off = b.mul(b.block_id(0), b.const(block, DType.I32))
    r = b.elementwise(op, b.load("x", (off,), (block,)), b.load("y", (off,), (block,)))
    b.store("z", (off,), r)
    return b.finish()


@SETTINGS
@given(n=st.integers(1, 3000), block=st.sampled_from([16, 128, 256]),
       op=st.sampled_from(_OPS), dtype=st.sampled_from([DType.F32, DType.F16]),
       seed=st.integers(0, 2**16))
def test_elementwise_matches_numpy(n: int, block: int, op: ir.ElemOp, dtype: DType,
                                   seed: int) -> None:
    r = rng_for(seed)
    x = r.standard_normal(n).astype(dtype.np_dtype)
    y = r.standard_normal(n).astype(dtype.np_dtype)
    z = np.zeros(n, dtype.np_dtype)
    run_kernel(binary_kernel(op, block, dtype), (cdiv(n, block),), [z, x, y])
    with np.errstate(all="ignore"):
        # NumPy's f16 ops also compute in f32 and round once: bit-identical
        np.testing.assert_array_equal(z, _NP[op](x, y))


@SETTINGS
@given(a=st.lists(st.integers(-2**31, 2**31 - 1), min_size=1, max_size=64),
       b=st.lists(st.integers(-2**31, 2**31 - 1), min_size=1, max_size=64))
def test_int_division_is_c_semantics(a: list[int], b: list[int]) -> None:
    k = min(len(a), len(b))
    x, y = np.array(a[:k], np.int32), np.array(b[:k], np.int32)
    with np.errstate(all="ignore"):
        q = num.elementwise(ir.ElemOp.DIV, [x, y], DType.I32)
        rem = num.elementwise(ir.ElemOp.REM, [x, y], DType.I32)
    for xi, yi, qi, ri in zip(a, b, q.tolist(), rem.tolist(), strict=False):
        if yi == 0:
            assert (qi, ri) == (0, xi)
            continue
        tq = abs(xi) // abs(yi) * (1 if (xi >= 0) == (yi >= 0) else -1)
        tq = (tq + 2**31) % 2**32 - 2**31  # MIN / -1 wraps
        assert qi == tq
        assert ri == xi - yi * (abs(xi) // abs(yi) * (1 if (xi >= 0) == (yi >= 0) else -1))


def _bf16_reference(x: float) -> float:
    """Round an f32 to bf16 with exact arithmetic in f64 (ties to even)."""
    (bits,) = struct.unpack("<I", struct.pack("<f", x))
    lo = bits & 0xFFFF0000
    hi = lo + 0x10000
    f = lambda b: struct.unpack("<f", struct.pack("<I", b & 0xFFFFFFFF))[0]  # noqa: E731
    flo = f(lo)
    if bits & 0xFFFF == 0:
        return flo
    fhi = f(hi)  # the next bf16 up in magnitude (inf past the largest finite one)
    dlo, dhi = abs(x - flo), abs(fhi - x)
    if dlo < dhi:
        return flo
    if dhi < dlo:
        return fhi
    return flo if (lo >> 16) & 1 == 0 else fhi


@SETTINGS
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=50))
def test_round_bf16_matches_exact_reference(bit_patterns: list[int]) -> None:
    x = np.array(bit_patterns, np.uint32).view(np.float32)
    out = num.round_bf16(x)
    for xi, oi in zip(x.tolist(), out.tolist(), strict=True):
        if np.isnan(xi):
            assert np.isnan(oi)
        elif np.isinf(xi):
            assert oi == xi
        else:
            # past bf16's largest finite value the exact distance to inf is
            # not representable; RNE rounds the halfway point up to inf
            assert oi == _bf16_reference(xi) or (np.isinf(oi) and abs(xi) > 3.389e38)


# ------------------------------------------------------------------ tiles
@SETTINGS
@given(m=st.integers(1, 40), n=st.integers(1, 100), seed=st.integers(0, 2**16))
def test_row_sum_and_softmax(m: int, n: int, seed: int) -> None:
    x = rng_for(seed).standard_normal((m, n)).astype(np.float32)
    z = np.zeros(m, np.float32)
    run_kernel(samples.row_sum(8, 32), (cdiv(m, 8),), [z, x])
    np.testing.assert_allclose(z, x.sum(1), rtol=1e-5, atol=1e-4)
    s = np.zeros_like(x)
    run_kernel(samples.row_softmax(4, 128), (cdiv(m, 4), 1), [s, x])
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(s, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


@SETTINGS
@given(m=st.integers(1, 70), n=st.integers(1, 70), k=st.integers(1, 70),
       dtype=st.sampled_from([DType.F16, DType.BF16, DType.F32]), seed=st.integers(0, 2**16))
def test_matmul(m: int, n: int, k: int, dtype: DType, seed: int) -> None:
    r = rng_for(seed)
    a = r.standard_normal((m, k)).astype(np.float32)
    b = r.standard_normal((k, n)).astype(np.float32)
    if dtype is DType.BF16:
        a, b = num.round_bf16(a), num.round_bf16(b)
    else:
        a, b = a.astype(dtype.np_dtype), b.astype(dtype.np_dtype)
    c = np.zeros((m, n), np.float32)
    run_kernel(samples.gemm(32, 16, 16, dtype, DType.F32), (cdiv(m, 32), cdiv(n, 16)), [c, a, b])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4 * np.sqrt(k))


# ------------------------------------------------------------------ lowered examples
@functools.cache
def example_program(name: str):  # type: ignore[no-untyped-def]
    path = ROOT / "examples" / name
    sm = SourceMap()
    f = sm.add(str(path), path.read_text())
    sink = DiagnosticSink()
    prog = check_program(parse(f, sink), sm, sink)
    assert not sink.has_errors
    return prog


@functools.cache
def example_kernel(name: str, kernel: str, inst: tuple[tuple[str, int], ...]) -> ir.Kernel:
    return lower_kernel(example_program(name), kernel, dict(inst))


@SETTINGS
@given(n=st.integers(1, 5000), block=st.sampled_from([64, 1024]), seed=st.integers(0, 2**16))
def test_example_add_and_saxpy(n: int, block: int, seed: int) -> None:
    r = rng_for(seed)
    x, y = r.standard_normal((2, n)).astype(np.float32)
    z = np.zeros(n, np.float32)
    run_kernel(example_kernel("add.tile", "add", (("B", block),)), (cdiv(n, block),), [z, x, y])
    np.testing.assert_array_equal(z, x + y)
    yy = y.copy()
    run_kernel(example_kernel("saxpy.tile", "saxpy", (("B", block),)), (cdiv(n, block),),
               [yy, x, 1.5])
    np.testing.assert_allclose(yy, np.float32(1.5) * x + y, rtol=1e-6)


@SETTINGS
@given(m=st.integers(1, 90), n=st.integers(1, 90), seed=st.integers(0, 2**16))
def test_example_transpose_and_row_sum(m: int, n: int, seed: int) -> None:
    x = rng_for(seed).standard_normal((m, n)).astype(np.float32)
    y = np.zeros((n, m), np.float32)
    k = example_kernel("transpose.tile", "transpose", (("BM", 16), ("BN", 32)))
    # y: &mut [BN, BM] tiles; the grid follows y's partition
    run_kernel(k, (cdiv(n, 32), cdiv(m, 16)), [y, x])
    np.testing.assert_array_equal(y, x.T)
    s = np.zeros(m, np.float32)
    k = example_kernel("row_sum.tile", "row_sum", (("BM", 16), ("BN", 32)))
    run_kernel(k, (cdiv(m, 16),), [s, x])
    np.testing.assert_allclose(s, x.sum(1), rtol=1e-5, atol=1e-4)


@SETTINGS
@given(m=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_example_layernorm_and_cumsum(m: int, seed: int) -> None:
    n = 64
    r = rng_for(seed)
    x = r.standard_normal((m, n)).astype(np.float32)
    w, b = r.standard_normal((2, n)).astype(np.float32)
    y = np.zeros_like(x)
    k = example_kernel("layernorm.tile", "layernorm", (("BM", 8), ("N", n)))
    run_kernel(k, (cdiv(m, 8), 1), [y, x, w, b, 1e-5])
    mu = x.mean(1, keepdims=True)
    var = ((x - mu) ** 2).mean(1, keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-5) * w + b, rtol=1e-4, atol=1e-4)
    c = np.zeros_like(x)
    k = example_kernel("cumsum.tile", "row_cumsum", (("BM", 8), ("N", n)))
    run_kernel(k, (cdiv(m, 8), 1), [c, x])
    np.testing.assert_allclose(c, np.cumsum(x, 1), rtol=1e-5, atol=1e-4)


@SETTINGS
@given(m=st.integers(1, 80), n=st.integers(1, 80), k=st.integers(1, 80),
       seed=st.integers(0, 2**16))
def test_example_gemm(m: int, n: int, k: int, seed: int) -> None:
    r = rng_for(seed)
    a = r.standard_normal((m, k)).astype(np.float16)
    b = r.standard_normal((k, n)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    for name in ("gemm", "gemm_reference"):
        c = np.zeros((m, n), np.float32)
        kern = example_kernel("gemm.tile", name, (("BK", 16), ("BM", 32), ("BN", 32)))
        run_kernel(kern, (cdiv(m, 32), cdiv(n, 32)), [c, a, b])
        np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4 * np.sqrt(k), err_msg=name)


@SETTINGS
@given(m=st.integers(1, 50), seed=st.integers(0, 2**16), scale=st.sampled_from([1.0, 30.0]))
def test_example_softmax(m: int, seed: int, scale: float) -> None:
    x = (rng_for(seed).standard_normal((m, 64)) * scale).astype(np.float32)
    y = np.zeros_like(x)
    run_kernel(example_kernel("softmax.tile", "softmax_rows", (("BM", 8), ("N", 64))),
               (cdiv(m, 8), 1), [y, x])
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(y.sum(1), 1.0, rtol=1e-5)
