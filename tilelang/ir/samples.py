"""Hand-built sample kernels in Tile IR, written the way the lowering writes them.

They exist so the interpreter and the backend can be tested without the front
end (`tests/unit/test_interp_*.py`, `tests/property/test_interp_*.py`, the
backend's PTX tests). Each function returns a verified `Kernel` and documents
its parameters, grid and the NumPy expression it must equal.
"""

from __future__ import annotations

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder
from tilelang.ir.verify import verify_kernel

I32 = DType.I32


def _own_offsets(b: Builder, tile: tuple[int, ...]) -> tuple[ir.Value, ...]:
    """Element offsets of this block's own tile: `block_id(d) * tile[d]`."""
    return tuple(
        b.mul(b.block_id(d), b.const(t, I32)) for d, t in enumerate(tile)
    )


def vector_add(block: int = 1024, dtype: DType = DType.F32) -> ir.Kernel:
    """`add<B>(z: &mut [B], x: &[?], y: &[?])`: z = x + y. Grid: (cdiv(n, B),)."""
    b = Builder("add")
    b.tensor_param("z", dtype, 1, mutable=True, tile_shape=(block,))
    b.tensor_param("x", dtype, 1)
    b.tensor_param("y", dtype, 1)
    offs = _own_offsets(b, (block,))
    tx = b.load("x", offs, (block,), hint="tx")
    ty = b.load("y", offs, (block,), hint="ty")
    b.store("z", offs, b.add(tx, ty))
    k = b.finish(instantiation=[("B", block)])
    verify_kernel(k)
    return k


def saxpy(block: int = 256, dtype: DType = DType.F32) -> ir.Kernel:
    """`saxpy<B>(z: &mut [B], a: scalar, x, y)`: z = a * x + y (a broadcast)."""
    b = Builder("saxpy")
    b.tensor_param("z", dtype, 1, mutable=True, tile_shape=(block,))
    a = b.scalar_param("a", dtype)
    b.tensor_param("x", dtype, 1)
    b.tensor_param("y", dtype, 1)
    offs = _own_offsets(b, (block,))
    tx = b.load("x", offs, (block,))
    ty = b.load("y", offs, (block,))
    b.store("z", offs, b.add(b.mul(b.broadcast(a, (block,)), tx), ty))
    k = b.finish(instantiation=[("B", block)])
    verify_kernel(k)
    return k


def row_softmax(rows: int, cols: int, dtype: DType = DType.F32) -> ir.Kernel:
    """`softmax<R, C>(z: &mut [R, C], x: &[?, ?])`: row-wise softmax of x, with
    the padding of a partial row tile at -inf so padded columns get weight 0
    (the last dim must fit in one tile: C >= n). Grid: (cdiv(m, R), 1)."""
    b = Builder("softmax")
    b.tensor_param("z", dtype, 2, mutable=True, tile_shape=(rows, cols))
    b.tensor_param("x", dtype, 2)
    offs = _own_offsets(b, (rows, cols))
    ninf = b.const(float("-inf"), dtype)
    t = b.load("x", offs, (rows, cols), padding=ninf, hint="t")
    m = b.reduce(ir.ReduceOp.MAX, t, 1)
    mb = b.broadcast(b.reshape(m, (rows, 1)), (rows, cols))
    e = b.elementwise(ir.ElemOp.EXP, b.sub(t, mb))
    s = b.reduce(ir.ReduceOp.SUM, e, 1)
    sb = b.broadcast(b.reshape(s, (rows, 1)), (rows, cols))
    b.store("z", offs, b.div(e, sb))
    k = b.finish(instantiation=[("C", cols), ("R", rows)])
    verify_kernel(k)
    return k


def row_sum(rows: int, cols: int, dtype: DType = DType.F32) -> ir.Kernel:
    """`row_sum<R, C>(z: &mut [R], x: &[?, ?])`: z[i] = sum_j x[i, j], looping
    over column tiles with a loop-carried accumulator. Grid: (cdiv(m, R),)."""
    b = Builder("row_sum")
    b.tensor_param("z", dtype, 1, mutable=True, tile_shape=(rows,))
    b.tensor_param("x", dtype, 2)
    (r0,) = _own_offsets(b, (rows,))
    n = b.tensor_dim("x", 1)
    c = b.const(cols, I32)
    ntiles = b.div(b.add(n, b.const(cols - 1, I32)), c)
    acc0 = b.const(0, dtype, (rows,), hint="acc")
    with b.for_(b.const(0, I32), ntiles, b.const(1, I32), inits=(acc0,), iv_hint="j") as loop:
        j, acc = loop.args
        t = b.load("x", (r0, b.mul(j, c)), (rows, cols))
        b.yield_(b.add(acc, b.reduce(ir.ReduceOp.SUM, t, 1)))
    b.store("z", (r0,), loop.results[0])
    k = b.finish(grid_rank=1, instantiation=[("C", cols), ("R", rows)])
    verify_kernel(k)
    return k


def gemm(bm: int, bn: int, bk: int, in_dtype: DType = DType.F16,
         acc_dtype: DType = DType.F32, out_dtype: DType | None = None) -> ir.Kernel:
    """`gemm<BM, BN, BK>(c: &mut [BM, BN], a: &[?, ?], b: &[?, ?])`: c = a @ b,
    a k-loop of `mma` with an accumulator of `acc_dtype`, cast to c's dtype.
    Grid: (cdiv(M, BM), cdiv(N, BN))."""
    out_dtype = out_dtype or acc_dtype
    b = Builder("gemm")
    b.tensor_param("c", out_dtype, 2, mutable=True, tile_shape=(bm, bn))
    b.tensor_param("a", in_dtype, 2)
    b.tensor_param("b", in_dtype, 2)
    om, on = _own_offsets(b, (bm, bn))
    kdim = b.tensor_dim("a", 1)
    ck = b.const(bk, I32)
    nk = b.div(b.add(kdim, b.const(bk - 1, I32)), ck)
    acc0 = b.const(0.0, acc_dtype, (bm, bn), hint="acc")
    with b.for_(b.const(0, I32), nk, b.const(1, I32), inits=(acc0,), iv_hint="k") as loop:
        kk, acc = loop.args
        ko = b.mul(kk, ck)
        ta = b.load("a", (om, ko), (bm, bk), hint="ta")
        tb = b.load("b", (ko, on), (bk, bn), hint="tb")
        b.yield_(b.mma(ta, tb, acc))
    res = loop.results[0]
    if out_dtype is not acc_dtype:
        res = b.cast(res, out_dtype)
    b.store("c", (om, on), res)
    k = b.finish(instantiation=[("BK", bk), ("BM", bm), ("BN", bn)])
    verify_kernel(k)
    return k


def transpose(bm: int, bn: int, dtype: DType = DType.F32) -> ir.Kernel:
    """`transpose<BM, BN>(z: &mut [BM, BN], x: &[?, ?])`: z = x.T, reading the
    (BN, BM) tile of x at the transposed position. Grid: (cdiv(N, BM), cdiv(M, BN))."""
    b = Builder("transpose")
    b.tensor_param("z", dtype, 2, mutable=True, tile_shape=(bm, bn))
    b.tensor_param("x", dtype, 2)
    o0, o1 = _own_offsets(b, (bm, bn))
    t = b.load("x", (o1, o0), (bn, bm))
    b.store("z", (o0, o1), b.transpose(t))
    k = b.finish(instantiation=[("BM", bm), ("BN", bn)])
    verify_kernel(k)
    return k


def cumsum_rows(rows: int, cols: int, dtype: DType = DType.F32) -> ir.Kernel:
    """`cumsum<R, C>(z: &mut [R, C], x)`: z = cumsum(x, axis=1) within each
    (R, C) tile (one tile spans the row when C >= n). Grid: (cdiv(m, R), cdiv(n, C))."""
    b = Builder("cumsum")
    b.tensor_param("z", dtype, 2, mutable=True, tile_shape=(rows, cols))
    b.tensor_param("x", dtype, 2)
    offs = _own_offsets(b, (rows, cols))
    t = b.load("x", offs, (rows, cols))
    b.store("z", offs, b.scan(ir.ScanOp.CUMSUM, t, 1))
    k = b.finish(instantiation=[("C", cols), ("R", rows)])
    verify_kernel(k)
    return k


def argmax_rows(rows: int, cols: int, dtype: DType = DType.F32) -> ir.Kernel:
    """`argmax<R, C>(z: &mut i32[R], x: &[?, ?])`: first index of each row's
    max (padding -inf; C >= n). Grid: (cdiv(m, R),)."""
    b = Builder("argmax")
    b.tensor_param("z", I32, 1, mutable=True, tile_shape=(rows,))
    b.tensor_param("x", dtype, 2)
    (o,) = _own_offsets(b, (rows,))
    t = b.load("x", (o, b.const(0, I32)), (rows, cols), padding=b.const(float("-inf"), dtype))
    b.store("z", (o,), b.reduce(ir.ReduceOp.ARGMAX, t, 1))
    k = b.finish(instantiation=[("C", cols), ("R", rows)])
    verify_kernel(k)
    return k


def histogram(block: int, bins: int) -> ir.Kernel:
    """`histogram<B>(z: &mut i32[B], x: &i32[?], hist: &i32[bins])` (unsafe):
    each block adds 1 to `hist[x[i]]` for its elements in range; `z` only
    gives the partition (its own tile is copied from x). Elements past the
    end of x are masked off; values outside [0, bins) are dropped by the
    atomic's bounds check. Grid: (cdiv(n, B),)."""
    b = Builder("histogram")
    b.tensor_param("z", I32, 1, mutable=True, tile_shape=(block,))
    b.tensor_param("x", I32, 1)
    b.tensor_param("hist", I32, 1, dims=(bins,))
    offs = _own_offsets(b, (block,))
    t = b.load("x", offs, (block,))
    idx = b.add(b.broadcast(offs[0], (block,)), b.arange(block))
    valid = b.lt(idx, b.broadcast(b.tensor_dim("x", 0), (block,)))
    b.atomic(ir.AtomicOp.ADD, "hist", (t,), b.const(1, I32, (block,)), mask=valid)
    b.store("z", offs, t)
    k = b.finish(instantiation=[("B", block)])
    verify_kernel(k)
    return k


ALL = {
    "vector_add": lambda: vector_add(256),
    "saxpy": lambda: saxpy(128),
    "row_softmax": lambda: row_softmax(4, 64),
    "row_sum": lambda: row_sum(8, 32),
    "gemm": lambda: gemm(32, 32, 16),
    "transpose": lambda: transpose(16, 32),
    "cumsum_rows": lambda: cumsum_rows(4, 64),
    "argmax_rows": lambda: argmax_rows(4, 64),
    "histogram": lambda: histogram(128, 16),
}
"""Default-sized instances, by name, for tests that want every sample."""
