"""Backend test cases: IR kernels (F1's hand-built samples) with inputs and grids.

Each case builds a kernel, NumPy arguments (tensors in their storage dtype,
`&mut` tensors included), and the grid; the GPU tests run it on both engines
and compare, the PTX tests only compile it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir import samples

F16, BF16, F32, I32 = DType.F16, DType.BF16, DType.F32, DType.I32


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _rand(rng: np.random.Generator, shape, dt: DType) -> np.ndarray:
    if dt.is_int:
        return rng.integers(-50, 50, size=shape).astype(dt.np_dtype)
    a = rng.standard_normal(shape).astype(np.float32)
    if dt is BF16:
        from tilelang.interp import round_bf16

        return round_bf16(a)
    return a.astype(dt.np_dtype)


@dataclass
class Case:
    name: str
    kernel: Callable[[], ir.Kernel]
    args: Callable[[np.random.Generator], list[Any]]
    grid: tuple[int, ...]
    rtol: float = 1e-5
    atol: float = 1e-5


def _vec(n: int, block: int, dt: DType = F32) -> Case:
    return Case(
        f"vector_add_{dt.value}_{n}_{block}", lambda: samples.vector_add(block, dt),
        lambda r: [np.zeros(n, dt.np_dtype), _rand(r, n, dt), _rand(r, n, dt)], (cdiv(n, block),),
    )


def _softmax(m: int, n: int, rows: int, cols: int, dt: DType = F32) -> Case:
    tol = 2e-3 if dt is F16 else 1e-2 if dt is BF16 else 1e-5
    return Case(
        f"softmax_{dt.value}_{m}x{n}", lambda: samples.row_softmax(rows, cols, dt),
        lambda r: [np.zeros((m, n), dt.np_dtype), _rand(r, (m, n), dt)], (cdiv(m, rows), 1), tol, tol,
    )


def _gemm(M: int, N: int, K: int, bm: int, bn: int, bk: int, ind: DType, acc: DType, out: DType | None = None) -> Case:
    o = out or acc
    tol = 1e-4 if o is F32 else 2e-2
    return Case(
        f"gemm_{ind.value}_{acc.value}_{M}x{N}x{K}", lambda: samples.gemm(bm, bn, bk, ind, acc, out),
        lambda r: [np.zeros((M, N), o.np_dtype), _rand(r, (M, K), ind), _rand(r, (K, N), ind)],
        (cdiv(M, bm), cdiv(N, bn)), tol, tol,
    )


CASES: list[Case] = [
    _vec(1 << 16, 1024),
    _vec(1000, 256),  # partial last tile, misaligned tail
    _vec(4099, 512, F16),
    _vec(777, 128, BF16),
    Case("saxpy_1000", lambda: samples.saxpy(128),
         lambda r: [np.zeros(1000, np.float32), np.float32(2.5), _rand(r, 1000, F32), _rand(r, 1000, F32)], (8,)),
    _softmax(37, 64, 4, 64),
    _softmax(16, 100, 2, 128),
    _softmax(8, 128, 2, 128, F16),
    Case("row_sum_50x70", lambda: samples.row_sum(8, 32),
         lambda r: [np.zeros(50, np.float32), _rand(r, (50, 70), F32)], (7,), 1e-4, 1e-4),
    _gemm(64, 64, 32, 32, 32, 16, F16, F32),
    _gemm(70, 50, 40, 32, 32, 16, F32, F32),
    _gemm(64, 96, 64, 64, 32, 32, BF16, F32, BF16),
    _gemm(130, 70, 48, 64, 32, 16, F16, F32),  # tensor cores with partial tiles on every edge
    _gemm(128, 128, 64, 128, 128, 32, BF16, F32),
    Case("transpose_50x70", lambda: samples.transpose(16, 32),
         lambda r: [np.zeros((70, 50), np.float32), _rand(r, (50, 70), F32)], (cdiv(70, 16), cdiv(50, 32))),
    Case("cumsum_10x64", lambda: samples.cumsum_rows(4, 64),
         lambda r: [np.zeros((10, 64), np.float32), _rand(r, (10, 64), F32)], (3, 1), 1e-4, 1e-4),
    Case("argmax_9x50", lambda: samples.argmax_rows(4, 64),
         lambda r: [np.zeros(9, np.int32), _rand(r, (9, 50), F32)], (3,), 0, 0),
    Case("histogram_1000", lambda: samples.histogram(128, 16),
         lambda r: [np.zeros(1000, np.int32), r.integers(-2, 18, size=1000).astype(np.int32),
                    np.zeros(16, np.int32)], (8,), 0, 0),
]


def all_sample_kernels() -> dict[str, Callable[[], ir.Kernel]]:
    """Every kernel the PTX tests compile: F1's default samples plus the cases above."""
    out = {f"sample_{k}": v for k, v in samples.ALL.items()}
    for c in CASES:
        out[c.name] = c.kernel
    return out
