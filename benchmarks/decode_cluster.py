"""Issue 15 / 17: flash decoding with the merge inside the attention, through
the cluster exchange (`cluster_gather`), against the two-launch pair.

    python benchmarks/decode_cluster.py [--reps 30] [--ctx 1024,8192,32768]
    python benchmarks/decode_cluster.py --smoke      # the CPU interpreter, small caches: the kernel against NumPy
    python benchmarks/decode_cluster.py --check      # the same on the GPU (NumPy arrays: for compute-sanitizer)

`decode_cluster` (below): the C blocks of KV head kvh's shares are one
thread-block cluster (grid axis 2, `#[cluster(1, 1, C)]`); each computes its
share as std's `decode_split` does (`attend_ring`), then the cluster
exchanges the shares' log-sum-exps ([G] each) and partial outputs ([G, D]
f32, 2 KB at G = 4, D = 128) and each block stores its D / C columns of the
merged output: one launch, no partials in global memory. Against, at batch 1
(32 query heads over 8 KV heads, D = 128, bf16), each as a CUDA graph:
`pair`, the example's plan (split + `decode_combine`, the merge with PDL on
sm_90: what `benchmarks/attention.py` times); `pair8`, the FMA split with
C shares a KV head and its merge (the same shares as the cluster form).
Every output is checked against SDPA in f32.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples" / "python"))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import tilelang  # noqa: E402

SRC = """
use std::attention::attend_ring;
use std::math::{cdiv, min_i32, LOG2_E};

#[cluster(1, 1, C)]
#[hints(num_warps = 4, stages = 4)]
kernel fn decode_cluster<T, const G: i32, const BN: i32, const D: i32, const C: i32, const DC: i32>(
        o: &mut Tensor<T, [1, G, DC]>,
        q: &Tensor<T, [?, G, D]>, k: &Tensor<T, [?, ?, D]>, v: &Tensor<T, [?, ?, D]>,
        cache_len: i32, scale: f32) {
    let kvh = block_id(0);
    let s = block_id(2);
    let sk = min_i32(cache_len, k.shape()[1]);
    let per_split = cdiv(cdiv(sk, BN), C);
    let j0 = s * per_split;
    let j1 = min_i32(j0 + per_split, cdiv(sk, BN));
    let qt = q.partition([1, G, D]).load([kvh, 0, 0]).reshape([G, D]);
    let (m, l, acc) = attend_ring::<T, G, 4, { BN / 4 }, D>(qt, k, v, kvh, j0, j1, sk, scale * LOG2_E);
    let part = acc * (1.0 / maximum(l, 1.0e-30));
    let lse = where(m > -1.0e30, m + log2(maximum(l, 1.0e-30)), -1.0e30);
    let ls = cluster_gather(lse.reshape([G]));
    let os = cluster_gather(part);
    let w = exp2(ls - ls.max(0).reshape([1, G]));
    let wn = w * (1.0 / w.sum(0).reshape([1, G]));
    let merged = (os * wn.reshape([C, G, 1])).sum(0);
    let mine = merged.reshape([G, C, DC]).permute([1, 0, 2]);
    o.store(where(arange::<i32>(C).reshape([C, 1, 1]) == s, mine, 0.0).sum(0).reshape([1, G, DC]) as T);
}
"""

HQ, HKV, D, GRP = 32, 8, 128, 4


def reference(q, k, v):  # type: ignore[no-untyped-def]
    """[Hkv, G, D] f64: softmax(q k^T / sqrt(D)) v per KV head."""
    s = np.einsum("hgd,hkd->hgk", q.astype(np.float64), k.astype(np.float64)) / np.sqrt(q.shape[-1])
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("hgk,hkd->hgd", p / p.sum(-1, keepdims=True), v.astype(np.float64))


def check(device: str, ctx: int = 200, dtype: str = "f32") -> float:
    """The kernel on `device` ("cpu": the interpreter; "gpu") over NumPy arrays
    (2 KV heads, G = 4, D = 32, C = 4 shares of 16-key blocks; `ctx` = 200
    leaves the last key block ragged, 40 one share with no key) against
    NumPy in f64: the largest error."""
    mod = tilelang.compile(SRC, device=device)
    rng = np.random.default_rng(ctx)
    g, d, c, bn = 4, 32, 4, 16
    npt = {"f32": np.float32, "f16": np.float16}[dtype]
    q = rng.standard_normal((2, g, d)).astype(npt)
    k = rng.standard_normal((2, 256, d)).astype(npt)
    v = rng.standard_normal((2, 256, d)).astype(npt)
    o = np.full((2, g, d), np.nan, npt)
    mod.decode_cluster[dtype, g, bn, d, c, d // c](tilelang.partition(o, [1, g, d // c]), q, k, v, ctx,
                                                   d ** -0.5).sync()
    return float(np.abs(o.astype(np.float64) - reference(q, k[:, :ctx], v[:, :ctx])).max())


def bench(ctxs: list[int], reps: int) -> None:
    import torch
    from attention import bench_decode, graph_of, ref_f32, rel_err, time_ms
    from decode_plan import combine_ns, decode_block

    mod = tilelang.compile(SRC)
    c = 8
    print(f"| ctx | pair (plan) us | plan | pair, FMA split, {c} shares us | cluster, {c} shares us | "
          "cluster / pair | cluster / pair8 | err cluster |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for ctx in ctxs:
        base = bench_decode(1, ctx, reps, "cuda", 0.0, sdpa=False)
        bn = decode_block(ctx, D, c)
        dc8 = D
        while combine_ns(c) * GRP * dc8 > 1024 and dc8 % 16 == 0:
            dc8 //= 2
        p8 = bench_decode(1, ctx, reps, "cuda", 0.0, plan=(bn, c, dc8), split="fma", sdpa=False)
        g = torch.Generator(device="cuda").manual_seed(ctx + 1)
        q = torch.randn(1, HQ, 1, D, device="cuda", dtype=torch.bfloat16, generator=g)
        k = torch.randn(1, HKV, ctx, D, device="cuda", dtype=torch.bfloat16, generator=g)
        v = torch.randn(1, HKV, ctx, D, device="cuda", dtype=torch.bfloat16, generator=g)
        o = torch.empty(1, HQ, 1, D, device="cuda", dtype=torch.bfloat16)
        kern = mod.decode_cluster["bf16", GRP, bn, D, c, D // c]
        q3, k3, v3 = q.view(HKV, GRP, D), k.view(HKV, ctx, D), v.view(HKV, ctx, D)

        def run(kern=kern, o=o, q3=q3, k3=k3, v3=v3, ctx=ctx):  # type: ignore[no-untyped-def]
            return kern(tilelang.partition(o.view(HKV, GRP, D), [1, GRP, D // c]), q3, k3, v3, ctx,
                        D ** -0.5).launch()

        ms = time_ms(graph_of(run), reps, "cuda")
        err = rel_err(o, ref_f32(q, k, v, False))
        print(f"| {ctx} | {base['pair_ms'] * 1e3:.2f} | {base['split']} {base['splits']} shares | "
              f"{p8['pair_ms'] * 1e3:.2f} | {ms * 1e3:.2f} | {ms / base['pair_ms']:.2f} | "
              f"{ms / p8['pair_ms']:.2f} | {err:.1e} |", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--ctx", default="1024,8192,32768")
    ap.add_argument("--smoke", action="store_true", help="the kernel on the CPU interpreter against NumPy")
    ap.add_argument("--check", action="store_true", help="the kernel on the GPU over NumPy arrays (no PyTorch: "
                    "for compute-sanitizer) against NumPy")
    a = ap.parse_args()
    if a.smoke or a.check:
        dev = "cpu" if a.smoke else "gpu"
        bad = 0
        for ctx, dtype, tol in ((200, "f32", 1e-4), (40, "f32", 1e-4), (200, "f16", 2e-2)):
            err = check(dev, ctx, dtype)
            bad += not err < tol
            print(f"{dev} ctx={ctx} {dtype}: max err {err:.2e} {'ok' if err < tol else 'WRONG'}")
        return 1 if bad else 0
    bench([int(x) for x in a.ctx.split(",")], a.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
