"""huser28 (round 27): the kernels of tests/user/programs/w04-w17 that PyTorch has an equivalent of, timed on the
GPU against PyTorch on the same CUDA tensors (the Python API, in place), each result compared with NumPy first.
Run by benchmarks/huser28_device.sh; `--cpu` runs every call once on small NumPy arrays on the interpreter (no
PyTorch: a check of the calls themselves against NumPy, no timings).

Columns: the Tile kernel's (or pipeline's) median ms between CUDA events, PyTorch's, and torch / tile (above 1:
Tile faster)."""

from __future__ import annotations

from typing import Any

import numpy as np
from _user_bench import CPU, ROWS, P, arr, bench, close, host, print_rows, torch

import tilelang

part = tilelang.partition


def same(ok: bool, what: str) -> str:
    return "same" if ok else f"DIFFERENT ({what})"


def main() -> None:
    rng = np.random.default_rng(28)

    # w10: top-8 of long rows, a block a row walking tiles of 128
    r10, n10 = (4, 517) if CPU else (4096, 4096)
    m10 = tilelang.load(P / "w10_topk_rows_streamed.tile")
    x10 = rng.standard_normal((r10, n10), dtype=np.float32)
    X10 = arr(x10)
    vals, idx = arr(np.zeros((r10, 8), np.float32)), arr(np.zeros((r10, 8), np.int64))
    op10 = m10.topk[8, 128](part(vals, [1, 8]), part(idx, [1, 8]), X10)
    want10 = np.sort(x10, axis=1)[:, ::-1][:, :8]
    bench("w10 top-8 of 4096-wide rows", op10.launch, True,
          None if CPU else (lambda: torch.topk(X10, 8, dim=1)), lambda: close(vals, want10, 0))

    # w12: EmbeddingBag(mode="sum") forward with per-sample weights
    rows, d, bags, per = (50, 32, 6, 5) if CPU else (100_000, 128, 16384, 20)
    m12 = tilelang.load(P / "w12_embedding_bag_fwd_bwd_i64.tile")
    table = rng.standard_normal((rows, d), dtype=np.float32)
    inp = rng.integers(0, rows, bags * per).astype(np.int64)
    offsets = (np.arange(bags) * per).astype(np.int64)
    psw = rng.random(bags * per, dtype=np.float32)
    T12, I12, O12, W12 = arr(table), arr(inp), arr(offsets), arr(psw)
    out12 = arr(np.zeros((bags, d), np.float32))
    op12 = m12.bag_sum(part(out12, [1, d]), T12, I12, O12, W12)
    want12 = (table[inp] * psw[:, None]).reshape(bags, per, d).sum(1)
    ref12 = None if CPU else (lambda: torch.nn.functional.embedding_bag(I12, T12, O12, mode="sum",
                                                                        per_sample_weights=W12))
    bench("w12 embedding bag sum fwd", op12.launch, True, ref12, lambda: close(out12, want12, 1e-5))

    # w08: CSR SpMV with i64 offsets, a block a row
    n8, per8 = (40, 6) if CPU else (65536, 32)
    m08 = tilelang.load(P / "w08_csr_spmv_i64_offsets.tile")
    indptr = (np.arange(n8 + 1) * per8).astype(np.int64)
    indices = rng.integers(0, n8, n8 * per8).astype(np.int64)
    data = rng.standard_normal(n8 * per8, dtype=np.float32)
    xv = rng.standard_normal(n8, dtype=np.float32)
    Ip, Ix, Dv, Xv = arr(indptr), arr(indices), arr(data), arr(xv)
    y8 = arr(np.zeros(n8, np.float32))
    op08 = m08.spmv[32](part(y8, [1]), Ip, Ix, Dv, Xv)
    want08 = (data * xv[indices]).reshape(n8, per8).sum(1)
    if not CPU:
        csr = torch.sparse_csr_tensor(Ip, Ix, Dv, size=(n8, n8))
    bench("w08 CSR SpMV i64 offsets", op08.launch, True, None if CPU else (lambda: csr @ Xv),
          lambda: close(y8, want08, 1e-4))

    # w09: W8A8 GEMM (i8 mma into i32) with both scales and a bias
    m9, n9, k9 = (32, 32, 70) if CPU else (4096, 4096, 4096)
    m09 = tilelang.load(P / "w09_int8_gemm_per_channel_scales.tile")
    qx = rng.integers(-127, 128, (m9, k9)).astype(np.int8)
    qw = rng.integers(-127, 128, (n9, k9)).astype(np.int8)
    sx, sw = rng.random((m9, 1), dtype=np.float32), rng.random((n9, 1), dtype=np.float32)
    bias = rng.standard_normal(n9, dtype=np.float32)
    QX, QW, SX, SW, BI = arr(qx), arr(qw), arr(sx), arr(sw), arr(bias)
    y9, acc9 = arr(np.zeros((m9, n9), np.float32)), arr(np.zeros((m9, n9), np.int32))
    op09 = m09.w8a8[64, 64, 64](part(y9, [64, 64]), part(acc9, [64, 64]), QX, QW, SX, SW, BI)

    def chk09() -> str:
        rows_ = slice(0, 64)
        a = host(QX)[rows_].astype(np.int64) @ host(QW).astype(np.int64).T
        return same(bool((host(acc9)[rows_] == a).all()), "i32 sums")

    def ref09() -> Any:
        return torch._int_mm(QX, QW.t()).float() * SX * SW.t() + BI

    bench("w09 W8A8 GEMM 4096^3", op09.launch, True, None if CPU else ref09, chk09)

    # w07: unique of a sorted i64 column (three launches and a host scan) vs unique_consecutive
    n7 = 300 if CPU else 1 << 22
    m07 = tilelang.load(P / "w07_unique_sorted_i64.tile")
    x7 = np.sort(rng.integers(-(2**40), 2**40, n7 // 4)).repeat(4).astype(np.int64)
    X7 = arr(x7)
    b7 = 128
    t7 = -(-n7 // b7)
    flag7, cnt7, inv7 = arr(np.zeros(n7, np.int32)), arr(np.zeros(t7, np.int32)), arr(np.zeros(n7, np.int64))
    done7 = arr(np.zeros(t7, np.int32))
    res7: dict[str, Any] = {}

    def run07() -> None:
        m07.starts[b7](part(flag7, [b7]), part(cnt7, [1]), X7).sync()
        offset = arr((np.cumsum(host(cnt7)) - host(cnt7)).astype(np.int32))
        m07.inverse[b7](part(inv7, [b7]), flag7, offset).sync()
        runs = int(host(cnt7).sum())
        res7["u"], res7["i"] = arr(np.zeros(runs, np.int64)), arr(np.zeros(runs, np.int64))
        m07.place[b7](part(done7, [1]), X7, flag7, inv7, res7["u"], res7["i"]).sync()

    def chk07() -> str:
        return same(bool((host(res7["u"]) == np.unique(x7)).all()), "values")

    bench("w07 unique of sorted i64 (pipeline)", run07, False,
          None if CPU else (lambda: torch.unique_consecutive(X7, return_inverse=True, return_counts=True)), chk07)

    # w05: byte histogram of a chunk (one block: a running total), vs bincount
    n5 = 4096 if CPU else 1 << 22
    m05 = tilelang.load(P / "w05_crc32_table_record_stream.tile")
    bytes5 = rng.integers(0, 256, n5).astype(np.uint8)
    B5 = arr(bytes5)
    hist5 = arr(np.zeros(256, np.int64))
    op05 = m05.byte_counts[128](part(hist5, [256]), B5)
    bench("w05 byte histogram, one block", op05.launch, True,
          None if CPU else (lambda: torch.bincount(B5, minlength=256)),
          lambda: same(bool((host(hist5) == np.bincount(bytes5, minlength=256)).all()), "counts"))

    print_rows(ROWS)


if __name__ == "__main__":
    main()
