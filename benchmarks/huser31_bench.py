"""huser31 (round 30): six sparse / irregular kernels of tests/user/programs/v26-v39 timed on the GPU against
PyTorch on the same CUDA tensors (the Python API), each result compared with NumPy first. Run by
benchmarks/huser31_device.sh; `--cpu` runs every call once on small NumPy arrays on the interpreter (no PyTorch:
a check of the calls themselves, no timings).

Columns: the Tile kernel's (or pipeline's) median ms between CUDA events, PyTorch's, and torch / tile (above 1:
Tile faster)."""

from __future__ import annotations

from typing import Any

import numpy as np
from _user_bench import CPU, ROWS, P, arr, bench, close, host, print_rows, torch

import tilelang

part = tilelang.partition


def csr(rng: np.random.Generator, m: int, k: int, avg: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random CSR of m rows over k columns, 0 to 2 avg nonzeros a row (columns distinct and sorted in a row:
    a row's start at random, then steps of k // (2 avg + 1); vectorised, 64k rows in milliseconds)."""
    lens = rng.integers(0, 2 * avg + 1, m)
    rowptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    row = np.repeat(np.arange(m), lens)
    j = np.arange(len(row)) - rowptr[row]
    cols = (rng.integers(0, k, m)[row] + j * (k // (2 * avg + 1))) % k
    cols = cols[np.lexsort((cols, row))].astype(np.int32)
    return rowptr, cols, rng.standard_normal(len(cols)).astype(np.float32)


def dense(rowptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, k: int, rows: int) -> np.ndarray:
    """The first `rows` rows of the CSR as a dense f64 matrix (for the checks)."""
    a = np.zeros((rows, k))
    for r in range(rows):
        a[r, cols[rowptr[r]:rowptr[r + 1]]] += vals[rowptr[r]:rowptr[r + 1]]
    return a


def tcsr(rowptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, m: int, k: int) -> Any:
    return torch.sparse_csr_tensor(arr(rowptr.astype(np.int64)), arr(cols.astype(np.int64)), arr(vals),
                                   size=(m, k))


def main() -> None:
    rng = np.random.default_rng(31)

    # v26: CSR SpMV, the scalar kernel (one block a row, a nonzero at a time) vs torch.sparse (cuSPARSE)
    m26, k26, avg26 = (40, 64, 4) if CPU else (65536, 65536, 16)
    rp26, c26, v26 = csr(rng, m26, k26, avg26)
    x26 = rng.standard_normal(k26).astype(np.float32)
    RP26, C26, V26, X26 = arr(rp26), arr(c26), arr(v26), arr(x26)
    y26 = arr(np.zeros(m26, np.float32))
    mod26 = tilelang.load(P / "v26_csr_spmv_scalar_vector.tile")
    op26 = mod26.spmv_scalar(part(y26, [1]), RP26, C26, V26, X26)
    A26 = None if CPU else tcsr(rp26, c26, v26, m26, k26)
    bench("v26 CSR SpMV scalar 64k^2, 16/row", op26.launch, True,
          None if CPU else (lambda: A26 @ X26),
          lambda: close(host(y26)[:256], dense(rp26, c26, v26, k26, min(m26, 256)) @ x26, 1e-4))

    # v27: CSR SpMM with a dense right side vs torch.sparse.mm
    m27, k27, n27, avg27 = (24, 48, 40, 4) if CPU else (16384, 16384, 128, 16)
    bn27 = 16 if CPU else 64
    rp27, c27, v27 = csr(rng, m27, k27, avg27)
    b27 = rng.standard_normal((k27, n27)).astype(np.float32)
    RP27, C27, V27, B27 = arr(rp27), arr(c27), arr(v27), arr(b27)
    y27 = arr(np.zeros((m27, n27), np.float32))
    mod27 = tilelang.load(P / "v27_csr_spmm_dense_rhs.tile")
    op27 = mod27.spmm(part(y27, [1, bn27]), RP27, C27, V27, B27)
    A27 = None if CPU else tcsr(rp27, c27, v27, m27, k27)
    bench("v27 CSR SpMM 16k^2 x 128, 16/row", op27.launch, True,
          None if CPU else (lambda: torch.sparse.mm(A27, B27)),
          lambda: close(host(y27)[:128], dense(rp27, c27, v27, k27, min(m27, 128)) @ b27, 1e-4))

    # v28: COO scatter-add with atomics (64 nonzeros a block) vs index_add_
    nnz28, m28, n28 = (300, 37, 50) if CPU else (1 << 22, 1 << 16, 1 << 16)
    rows28 = rng.integers(0, m28, nnz28).astype(np.int32)
    cols28 = rng.integers(0, n28, nnz28).astype(np.int32)
    vals28, x28 = rng.standard_normal(nnz28).astype(np.float32), rng.standard_normal(n28).astype(np.float32)
    R28, C28, V28, X28 = arr(rows28), arr(cols28), arr(vals28), arr(x28)
    y28, seen28 = arr(np.zeros(m28, np.float32)), arr(np.zeros(nnz28, np.int32))
    mod28 = tilelang.load(P / "v28_coo_scatter_add_three_ways.tile")
    op28 = mod28.scatter_atomic[64](part(seen28, [64]), R28, C28, V28, X28, y28)
    want28 = np.zeros(m28)
    np.add.at(want28, rows28, vals28.astype(np.float64) * x28[cols28])

    def ref28() -> Any:
        return torch.zeros(m28, device="cuda").index_add_(0, R28, V28 * X28[C28])

    # (the op accumulates: the check reads the first call's result; the timed calls keep adding)
    bench("v28 COO scatter-add atomics 4M nnz", op28.launch, True, None if CPU else ref28,
          lambda: close(y28, want28, 1e-4))

    # v29: segment max / exp-sum (one block a segment) + segment softmax (a block a 256-element tile)
    s29, avg29 = (12, 20) if CPU else (65536, 64)
    b29 = 16 if CPU else 256
    lens29 = rng.integers(0, 2 * avg29 + 1, s29)
    off29 = np.concatenate([[0], np.cumsum(lens29)]).astype(np.int32)
    n29 = int(off29[-1])
    x29 = rng.standard_normal(n29).astype(np.float32)
    OFF29, X29 = arr(off29), arr(x29)
    sums29, maxs29, den29 = (arr(np.zeros(s29, np.float32)) for _ in range(3))
    y29 = arr(np.zeros(n29, np.float32))
    mod29 = tilelang.load(P / "v29_segment_sum_max_softmax.tile")

    def run29() -> None:
        mod29.seg_stats[b29](part(sums29, [1]), part(maxs29, [1]), part(den29, [1]), OFF29, X29).sync()
        mod29.seg_softmax[b29](part(y29, [b29]), OFF29, X29, maxs29, den29).sync()

    seg29 = np.repeat(np.arange(s29), lens29)
    mx = np.full(s29, -np.inf)
    np.maximum.at(mx, seg29, x29)
    e29 = np.exp(x29 - mx[seg29])
    d29 = np.zeros(s29)
    np.add.at(d29, seg29, e29)
    want29 = e29 / d29[seg29]
    SEG29 = None if CPU else torch.repeat_interleave(torch.arange(s29, device="cuda"), arr(lens29))

    def ref29() -> Any:   # PyG's softmax(src, index): scatter max, exp, scatter sum, divide
        m = torch.full((s29,), -float("inf"), device="cuda").scatter_reduce(0, SEG29, X29, "amax")
        e = (X29 - m[SEG29]).exp()
        return e / torch.zeros(s29, device="cuda").index_add_(0, SEG29, e)[SEG29]

    bench("v29 segment softmax 64k segs, 64 avg", run29, False, None if CPU else ref29,
          lambda: close(y29, want29, 1e-5))

    # v30: EmbeddingBag(mode="mean") vs F.embedding_bag
    nb30, v30, d30, avg30 = (6, 50, 48, 4) if CPU else (16384, 100000, 128, 32)
    bd30 = 32 if CPU else 128
    lens30 = rng.integers(0, 2 * avg30 + 1, nb30)
    off30 = np.concatenate([[0], np.cumsum(lens30)]).astype(np.int32)
    idx30 = rng.integers(0, v30, int(off30[-1])).astype(np.int32)
    tab30 = rng.standard_normal((v30, d30)).astype(np.float32)
    T30, I30, O30 = arr(tab30), arr(idx30), arr(off30)
    y30 = arr(np.zeros((nb30, d30), np.float32))
    mod30 = tilelang.load(P / "v30_embedding_bag_mean.tile")
    op30 = mod30.bag_mean(part(y30, [1, bd30]), T30, I30, O30)
    want30 = np.stack([tab30[idx30[off30[b]:off30[b + 1]]].mean(0) if lens30[b] else np.zeros(d30)
                       for b in range(min(nb30, 256))])
    I64, O64 = (None, None) if CPU else (I30.long(), O30[:-1].long())
    bench("v30 EmbeddingBag mean 16k bags x 128", op30.launch, True,
          None if CPU else (lambda: torch.nn.functional.embedding_bag(I64, T30, O64, mode="mean")),
          lambda: close(host(y30)[:256], want30, 1e-5))

    # v31: histogram, a block's one-hot tile added by one atomic vs torch.bincount
    n31, nb31 = (1000, 24) if CPU else (1 << 24, 64)
    b31 = 64 if CPU else 256
    x31 = rng.integers(0, nb31, n31).astype(np.int32)
    X31 = arr(x31)
    h31, seen31 = arr(np.zeros(nb31, np.int32)), arr(np.zeros(n31, np.int32))
    mod31 = tilelang.load(P / "v31_histogram_bincount.tile")
    op31 = mod31.hist_tile[b31, nb31](part(seen31, [b31]), X31, h31)
    bench("v31 histogram 16M into 64 bins", op31.launch, True,
          None if CPU else (lambda: torch.bincount(X31, minlength=nb31)),
          lambda: "same" if (host(h31) == np.bincount(x31, minlength=nb31)).all() else "DIFFERENT")

    print_rows(ROWS)


if __name__ == "__main__":
    main()
