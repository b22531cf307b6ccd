"""Round 3's programs through the Python API (huser, 2026-12-05): the
kernels of `programs/r*.tile` called on NumPy arrays, as a Triton user
calls a `@triton.jit` function, each result checked against NumPy; and the
calls such a user gets wrong (a Python int for a `u32` seed out of range,
an f64 array for f32, a transposed view, a nested tile that does not divide)
each a `TileError` with its code."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang

P = Path(__file__).parent / "programs"


def _mod(name: str) -> tilelang.Module:
    return tilelang.load(str(P / f"{name}.tile"))


def test_seeded_dropout_from_python() -> None:
    m = _mod("r07_dropout_hash")
    x = np.random.default_rng(0).standard_normal(1009).astype(np.float32)
    y = np.zeros_like(x)
    m.dropout(tilelang.partition(y, [256]), x, 0.3, np.uint32(12345)).sync()
    h = (np.arange(1009, dtype=np.uint64) ^ 12345) * 0x9E3779B1 & 0xFFFFFFFF
    h ^= h >> 15
    h = h * 0x85EBCA77 & 0xFFFFFFFF
    h ^= h >> 13
    keep = (h >> 8).astype(np.float32) / np.float32(16777216.0) > np.float32(0.3)
    np.testing.assert_allclose(y, np.where(keep, x / np.float32(0.7), 0), rtol=1e-6, atol=0)
    y2 = np.zeros_like(x)
    m.dropout(tilelang.partition(y2, [256]), x, 0.3, 12345).sync()  # a Python int fits the u32
    np.testing.assert_array_equal(y2, y)
    with pytest.raises(tilelang.TileError) as e:
        m.dropout(tilelang.partition(y2, [256]), x, 0.3, -1).sync()
    assert e.value.code == "E0222"  # -1 for a `u32`: out of its range, as in Tile


def test_histogram_and_int8_gemm_from_python() -> None:
    m = _mod("r12_histogram_onehot")
    x = np.random.default_rng(1).integers(0, 256, 1300).astype(np.uint8)
    h = np.zeros(256, np.int32)
    mine = np.zeros((11, 256), np.int32)
    m.hist[128](tilelang.partition(mine, [1, 256]), x, h).sync()
    np.testing.assert_array_equal(h, np.bincount(x, minlength=256))
    np.testing.assert_array_equal(mine.sum(0), h)
    m = _mod("r17_int8_gemm")
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (45, 70)).astype(np.int8)
    b = rng.integers(-128, 128, (70, 30)).astype(np.int8)
    sa = rng.random(45).astype(np.float32)
    sb = rng.random(30).astype(np.float32)
    c = np.zeros((45, 30), np.float32)
    m.gemm_i8[16, 16, 32](tilelang.partition(c, [16, 16]), a, b, sa, sb).sync()
    want = (a.astype(np.int64) @ b.astype(np.int64)) * sa[:, None].astype(np.float64) * sb[None, :]
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)


def test_empty_and_one_element_vectors_from_python() -> None:
    m = _mod("r08_masked_tail")
    for n in (0, 1, 129):
        x = np.arange(n, dtype=np.int64) * 3_000_000_000
        y = np.arange(n, dtype=np.int64) - 7
        z = np.full(n, -1, np.int64)
        m.add(tilelang.partition(z, [128]), x, y).sync()
        np.testing.assert_array_equal(z, x + y)


def test_softmax_walk_and_carried_scan_from_python() -> None:
    m = _mod("r01_triton_softmax")
    x = np.random.default_rng(3).standard_normal((9, 700)).astype(np.float32)
    y = np.zeros_like(x)
    m.softmax_rows(tilelang.partition(y, [1, 1024]), x).sync()
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    with pytest.raises(tilelang.TileError) as err:
        m.softmax_rows(tilelang.partition(y, [1, 1024]), x.astype(np.float64)).sync()
    assert err.value.code == "E0502"
    with pytest.raises(tilelang.TileError) as err:
        m.softmax_rows(tilelang.partition(y, [1, 1024]), np.ascontiguousarray(x.T).T).sync()
    assert err.value.code == "E0802"
    m = _mod("r13_carry_scan")
    x = (np.arange(1000) * 13 % 7 - 2).astype(np.int32)
    z = np.zeros(1000, np.int32)
    m.scan_carry[1000, 40](tilelang.partition(z, [1000]), x).sync()
    np.testing.assert_array_equal(z, np.cumsum(x))
    with pytest.raises(tilelang.TileError) as err:
        m.scan_carry[1000, 64](tilelang.partition(z, [1000]), x).sync()  # 64 does not divide 1000
    assert err.value.code == "E0402"
