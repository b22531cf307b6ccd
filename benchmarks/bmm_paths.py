"""huser15's batched GEMM on the GPU (round 15): the natural bmm, a [1, BM, BK] tile of each 3-D tensor reshaped
to a matrix in the loop, which ran ldmatrix + mma.sync with no pipeline on sm_90a and now takes sm_80's cp.async
ring (pipeline_sm80._batched; `TILEC_SM80_FALLBACK=0` gives the old path back), against the help's stacked form
(the batch as 2-D tensors, the batch in the tile index: the Hopper wgmma pipeline) and torch.bmm, in one process
(one step, ~30-60 s warm; one line a variant).

    python benchmarks/bmm_paths.py           # GPU
    python benchmarks/bmm_paths.py --dry     # CPU: each variant's path for sm_90a (no timing)

Expected (not measured; an H100, B = 16, 1024 x 1024 x 1024 f16, f32 sums):
- natural, old path (TILEC_SM80_FALLBACK=0): ~0.05-0.15x torch.bmm (no copy overlaps the products: the
  user GEMM's mma.sync-without-ring cliff);
- natural, sm_80's ring: ~0.3-0.5x (cp.async + mma.sync: sm_80's pipeline on a Hopper, as 128x512 tiles ran
  before hcliff2's parts);
- stacked 2-D, wgmma: ~0.7-0.9x (the Hopper GEMM pipeline at 128 x 128 x 64: the user GEMM's 0.84x).
Every err column at f16 input rounding (~1e-3 relative): the same products in another order.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

NATURAL = """
kernel fn bmm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [1, BM, BN]>, a: &Tensor<f16, [?, ?, ?]>,
                                                           b: &Tensor<f16, [?, ?, ?]>) {
    let pa = a.partition([1, BM, BK]);
    let pb = b.partition([1, BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(2) {
        let ta = pa.load([block_id(0), block_id(1), k]).reshape([BM, BK]);
        let tb = pb.load([block_id(0), k, block_id(2)]).reshape([BK, BN]);
        acc = mma(ta, tb, acc);
    }
    c.store(acc.reshape([1, BM, BN]));
}
"""
STACKED = """
kernel fn bmm2<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
                                                            b: &Tensor<f16, [?, ?]>, m: i32, k: i32) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let batch = block_id(0) / (m / BM);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..k / BK {
        acc = mma(pa.load([block_id(0), kk]), pb.load([batch * (k / BK) + kk, block_id(1)]), acc);
    }
    c.store(acc);
}
"""
B, M, N, K = 16, 1024, 1024, 1024
TILE = (128, 128, 64)
VARIANTS = [("natural, old path (TILEC_SM80_FALLBACK=0)", NATURAL, "0"), ("natural, sm_80's ring", NATURAL, "1"),
            ("stacked 2-D (the help's form)", STACKED, "1")]


def dry() -> None:
    from tilelang import driver
    from tilelang.backend import explain, lower_gpu
    from tilelang.backend.facts import TensorFacts

    mains = {NATURAL: "fn main() { let a = zeros::<f16>([2, 256, 128]); let mut c = zeros::<f32>([2, 256, 256]);"
                      " bmm::<128, 128, 64>(c.partition([1, 128, 128]), &a, &a.reshape([2, 128, 256])).sync(); }\n",
             STACKED: "fn main() { let a = zeros::<f16>([512, 128]); let mut c = zeros::<f32>([512, 256]);"
                      " bmm2::<128, 128, 64>(c.partition([128, 128]), &a, &zeros::<f16>([256, 256]), 256, 128).sync(); }\n"}
    for name, src, fb in VARIANTS:
        os.environ["TILEC_SM80_FALLBACK"] = fb
        k = driver.compile(src + mains[src], "ir").output[0]
        gk = lower_gpu(k, "sm_90a", {p.name: TensorFacts(True, (True,) * p.rank) for p in k.params if hasattr(p, "rank")})
        print(f"{name:44s} {explain.path_of(gk)} {gk.num_warps}w {gk.num_stages}s", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--dry", action="store_true")
    args = ap.parse_args(argv)
    if args.dry:
        dry()
        return 0
    import torch

    import tilelang
    from cliffs import time_ms, warm_up

    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    warm_up(2.0)
    g = torch.Generator(device="cuda").manual_seed(15)
    a = torch.randn(B, M, K, device="cuda", dtype=torch.float16, generator=g) * 0.25
    b = torch.randn(B, K, N, device="cuda", dtype=torch.float16, generator=g) * 0.25
    want = torch.bmm(a.float(), b.float())
    t_ref = time_ms(lambda: torch.bmm(a, b), args.reps)
    flops = 2 * B * M * N * K
    print(f"# torch.bmm {B}x{M}x{N}x{K}: {t_ref:.4f} ms = {flops / t_ref / 1e9:.1f} TFLOP/s", flush=True)
    bm, bn, bk = TILE
    for name, src, fb in VARIANTS:
        os.environ["TILEC_SM80_FALLBACK"] = fb   # read when the kernel is lowered, at its first launch
        mod = tilelang.compile(src)
        try:
            if src is NATURAL:
                c = torch.full((B, M, N), float("nan"), device="cuda", dtype=torch.float32)
                call = (mod.bmm[bm, bn, bk], (tilelang.partition(c, [1, bm, bn]), a, b))  # type: ignore[attr-defined]
            else:
                c = torch.full((B * M, N), float("nan"), device="cuda", dtype=torch.float32)
                a2, b2 = a.reshape(B * M, K), b.reshape(B * K, N)
                call = (mod.bmm2[bm, bn, bk], (tilelang.partition(c, [bm, bn]), a2, b2, M, K))  # type: ignore[attr-defined]
            kern, part = call
            kern(*part).launch().wait()
            t = time_ms(lambda kern=kern, part=part: kern(*part).launch(), args.reps)
        except Exception as e:  # say so and go on
            print(f"{name:44s} FAILED {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)
            continue
        err = float((c.reshape(B, M, N) - want).abs().max() / want.abs().max())
        print(f"{name:44s} {t:.4f} ms {flops / t / 1e9:6.1f} TFLOP/s ratio {t_ref / t:.2f} err {err:.1e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
