"""hcliff15: K loops whose `mma` operand is dequantised from loaded tiles, with their loads through per-thread
cp.async rings (`passes/stream_mma.py`) and without (`TILEC_MMA_RING=0`: ldmatrix + mma.sync with no pipeline).

Rows: n06's W4A16 linear (tests/user/programs/n06, huser26_bench's shapes: M = 64, K = N = 4096, 32 x 32 tiles,
4 stages unhinted), the same with `#[hints(stages = 6 / 3 / 2)]`, with the scale / zero rows' layout conversions kept
(`TILEC_MMA_RING_RELAY=0`), and a W8A16 GEMM (i8 weights, an f16 scale a group
of 32 rows and column; 32 x 32 and 64 x 64 tiles). Each against torch's f16 dense GEMM of the dequantised weight
(cuBLAS, the weight already dequantised: the floor) and a dequantise-then-matmul torch baseline (the weight
dequantised each call, then the GEMM). Correctness first ("same": within 2e-2 of torch, relative to |ref| + 1).

    python3 benchmarks/hcliff15_bench.py          # on a GPU, torch installed
    python3 benchmarks/hcliff15_bench.py --cpu    # each kernel once on the interpreter at small shapes (no timings)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _user_bench import CPU, P, arr, close, time_ms, torch

import tilelang

W8 = """
kernel fn w8a16<const BM: i32, const BN: i32>(y: &mut Tensor<f32, [BM, BN]>, x: &Tensor<f16, [?, ?]>,
                                              w: &Tensor<i8, [?, ?]>, scales: &Tensor<f16, [?, ?]>) {
    let px = x.partition([BM, 32]);
    let pw = w.partition([32, BN]);
    let ps = scales.partition([1, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..px.num_tiles(1) {
        acc = mma(px.load([block_id(0), k]), (pw.load([k, block_id(1)]) as f16) * ps.load([k, block_id(1)]), acc);
    }
    y.store(acc);
}
"""


def row(name: str, op: Any, dense: Any, deq: Any, want: Any, y: Any, ring: str) -> None:
    """`ring`: "1" the rings, "0" none (`TILEC_MMA_RING=0`), "keep" the rings with the loads' own layouts and
    their conversions (`TILEC_MMA_RING_RELAY=0`)."""
    os.environ["TILEC_MMA_RING"] = "0" if ring == "0" else "1"
    os.environ["TILEC_MMA_RING_RELAY"] = "0" if ring == "keep" else "1"
    try:
        op.sync()
        verdict = "ran" if CPU else close(y, want, 2e-2)
        t = time_ms(op.launch, True)
        td = time_ms(dense, False) if not CPU else float("nan")
        tq = time_ms(deq, False) if not CPU else float("nan")
        print(f"| {name} | {t:.4f} | {td:.4f} | {td / t:.2f} | {tq:.4f} | {tq / t:.2f} | {verdict} |", flush=True)
    except Exception as e:  # report and go on
        print(f"| {name} | FAILED {type(e).__name__}: {str(e).strip().splitlines()[0][:160]} |", flush=True)


def main() -> None:
    rng = np.random.default_rng(15)
    mm, kk, nn = (32, 256, 64) if CPU else (64, 4096, 4096)
    print("| kernel | Tile ms | torch f16 dense ms | dense / Tile | torch dequant + mm ms | that / Tile | result |\n"
          "| --- | --- | --- | --- | --- | --- | --- |", flush=True)

    # n06: u4 weights two a byte, an f16 scale and zero a (group of 32, column)
    src = (P / "n06_int4_dequant_matmul.tile").read_text(encoding="utf-8")
    m06 = tilelang.compile(src)
    q = rng.integers(0, 16, (kk, nn)).astype(np.uint8)
    sc = (rng.random((kk // 32, nn)) * 0.02 + 0.005).astype(np.float16)
    zp = np.floor(rng.random((kk // 32, nn)) * 15).astype(np.float16)
    x = arr(rng.standard_normal((mm, kk)).astype(np.float16))
    bias = arr(rng.standard_normal(nn).astype(np.float16))
    packed = arr(np.zeros((kk // 2, nn), np.uint8))
    m06.pack4[32](tilelang.partition(packed, [16, 32]), arr(q)).sync()
    grp = np.arange(kk) // 32
    wd = arr(((q.astype(np.float16) - zp[grp]) * sc[grp]).astype(np.float16))
    qt, sct, zpt = arr(q), arr(sc), arr(zp)
    gidx = arr(grp.astype(np.int64))

    def dense06() -> Any:
        return (x @ wd).float() + bias.float()

    def deq06() -> Any:  # the weight dequantised each call (its u4 values unpacked: q here), then the GEMM
        return (x @ ((qt.half() - zpt[gidx]) * sct[gidx])).float() + bias.float()

    want06 = dense06() if not CPU else None
    for name, hints, ring in (("n06 W4A16, rings (4 stages)", "", "1"),
                              ("n06 W4A16, stages = 6", "#[hints(stages = 6)]\n", "1"),
                              ("n06 W4A16, stages = 3", "#[hints(stages = 3)]\n", "1"),
                              ("n06 W4A16, stages = 2", "#[hints(stages = 2)]\n", "1"),
                              ("n06 W4A16, rings, conversions kept", "", "keep"),
                              ("n06 W4A16, no ring (before)", "", "0")):
        mod = m06 if not hints else tilelang.compile(src.replace("kernel fn w4a16", hints + "kernel fn w4a16"))
        y = arr(np.zeros((mm, nn), np.float32))
        op = mod.w4a16[32, 32](tilelang.partition(y, [32, 32]), x, packed, sct, zpt, bias)
        row(name, op, dense06, deq06, want06, y, ring)

    # W8A16: i8 weights [K, N], an f16 scale a (group of 32 rows, column)
    m8 = tilelang.compile(W8)
    w8 = rng.integers(-127, 128, (kk, nn)).astype(np.int8)
    s8 = (rng.random((kk // 32, nn)) * 0.02 + 0.001).astype(np.float16)
    w8t, s8t = arr(w8), arr(s8)
    wd8 = arr((w8.astype(np.float16) * s8[grp]).astype(np.float16))

    def dense8() -> Any:
        return (x @ wd8).float()

    def deq8() -> Any:
        return (x @ (w8t.half() * s8t[gidx])).float()

    want8 = dense8() if not CPU else None
    for bm, bn, ring in ((32, 32, "1"), (64, 64, "1"), (32, 32, "0")):
        y = arr(np.zeros((mm, nn), np.float32))
        op = m8.w8a16[bm, bn](tilelang.partition(y, [bm, bn]), x, w8t, s8t)
        row(f"W8A16 {bm} x {bn}" + (", no ring (before)" if ring == "0" else ", rings (4 stages)"),
            op, dense8, deq8, want8, y, ring)
    os.environ.pop("TILEC_MMA_RING", None)
    os.environ.pop("TILEC_MMA_RING_RELAY", None)
    if not CPU:
        print(f"\n{torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
