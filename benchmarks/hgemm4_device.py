"""hgemm4 (2026-12-06, round 18): GEMM epilogues that fell off the Hopper pipeline, timed against PyTorch in the same
process (`cliffs.time_pair`: medians of interleaved reps), one line a case. `benchmarks/hgemm4_device.sh` runs it
twice, the rule on (default) and off (`TILEC_GEMM_EPILOGUE_OPS=0`: the epilogue as before round 18), one process an
arm.

    python benchmarks/hgemm4_device.py                 # GPU: every case (~30-50 s warm, most of it compiling)
    python benchmarks/hgemm4_device.py --only mask     # a substring of a case's name
    python benchmarks/hgemm4_device.py --dry           # CPU: each case's sm_90a path (no timing)

Cases (f16, 4096^3, 128 x 128 x 64 tiles, B stored [N, K] as a linear layer's weight; torch: cuBLAS's GEMM, then
its epilogue as separate element-wise kernels, as a PyTorch user writes it):
- linear: `relu(acc + bias)` (the pipeline took it before too): the baseline, ~1.0-1.1x torch (call 22's
  linear+bias+relu read 1.10x).
- scaled_bias: `relu(acc + bias * s)`, the bias scaled before its broadcast (s a scalar argument).
- col_mask: `where(col < n, acc, 0)`, columns from `arange(BN) + block_id(1) * BN` (n = N - 100).
- item_scale: `acc * scale.item()` with the scale read after the loop (a per-tensor dequant scale).
- col_scale: `acc * (col * 1e-4 + 1.0)`, a per-column scale computed from the column's index.
`--fma-split`: f32 GEMMs of few tiles (64 x 4096 x 4096 and 64 x 2048 x 8192, 64 x 64 x 16 tiles: 64 and 32 tiles
on 132 SMs) on the FMA pipeline, split-K's variant (the default, `passes/fma_split.py`: 2 and 4 pieces a tile) vs
one tile a CTA (`TILEC_GEMM_SPLITK=0`) vs torch's SGEMM. Expected: split well above the plain rows (6 CTAs an SM
of 2 warps, 8 pieces a tile, against 64 / 32 CTAs of 2 warps; less the records' traffic and the merge); plain
well below torch (most SMs idle, ~0.2-0.5x). And a GEMV 4096 x 4096 (`mma` by a [BK, 1] column: the FMA pipeline
since hgemm4, before the FMA loop with no pipeline), 64 row tiles: GB/s of A read; split likely several times
plain; against torch's `a @ x` maybe ~0.3-0.8x (A goes through shared memory).

Call 25 (H100) measured the epilogue cases: on 726-732 TFLOP/s (the baseline's 727), off 325-349.

Expected, and why: rule on, each case runs the linear baseline's kernel with a few register ops more (the small
tile's expression once a distinct column a thread; nothing moves between threads): ~the baseline's ratio,
0.95-1.15x. Rule off, these four go to sm_80's cp.async ring + mma.sync (`TILEC_EXPLAIN` said "not an
epilogue"): roughly 0.4-0.7x (no wgmma). `same` = allclose to torch's (f16 rounding).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# the GEMM with an epilogue to fill in (EPILOGUE); its output's type OUT and the bias's BT (f16 and f32 here:
# `_source`); tests/backend/test_gemm_epilogue_ops.py checks the same kernel's forms in llsim
SRC = """
kernel fn mm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<OUT, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
        w: &Tensor<f16, [?, ?]>, bias: &Tensor<BT, [?]>, scale: &Tensor<f32, [?]>, s: f32, n: i32) {
    let pa = a.partition([BM, BK]);
    let pw = w.partition([BN, BK]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pw.load([block_id(1), k]).transpose(), acc);
    }
    EPILOGUE
}
"""
EPILOGUES = {
    "linear": "let b = bias.partition([BN]).load([block_id(1)]).reshape([1, BN]);\n"
              "    c.store(maximum(acc + b, 0.0) as f16);",
    "scaled_bias": "let b = (bias.partition([BN]).load([block_id(1)]) * s).reshape([1, BN]);\n"
                   "    c.store(maximum(acc + b, 0.0) as f16);",
    "col_mask": "let col = arange::<i32>(BN).reshape([1, BN]) + block_id(1) * BN;\n"
                "    c.store(where(col < n, acc, 0.0) as f16);",
    "item_scale": "let t = scale.partition([1]).load([0]).item();\n    c.store((acc * t) as f16);",
    "col_scale": "let col = (arange::<i32>(BN) + block_id(1) * BN) as f32;\n"
                 "    c.store((acc * (col * 0.0001 + 1.0).reshape([1, BN])) as f16);",
}
MNK, TILE = 4096, (128, 128, 64)


def _source(case: str) -> str:
    return SRC.replace("EPILOGUE", EPILOGUES[case]).replace("OUT", "f16").replace("BT", "f32")


def dry(cases: list[str]) -> None:
    from tilelang import driver
    from tilelang.backend import explain, lower_gpu
    from tilelang.backend.facts import TensorFacts

    for case in cases:
        main = ("fn main() { let a = zeros::<f16>([256, 256]); let b = zeros::<f32>([256]);"
                " let mut c = zeros::<f16>([256, 256]);"
                " mm::<128, 128, 64>(c.partition([128, 128]), &a, &a, &b, &b, 0.5, 7).sync(); }\n")
        k = driver.compile(_source(case) + main, "ir").output[0]
        f2, f1 = TensorFacts(True, (True, True)), TensorFacts(True, (True,))
        gk = lower_gpu(k, "sm_90a", {"c": f2, "a": f2, "w": f2, "bias": f1, "scale": f1})
        why = "; ".join(x.message for x in gk.notes)
        print(f"{case:12s} {explain.path_of(gk)}" + (f"  why: {why}" if why else ""), flush=True)


def run(case: str, reps: int) -> None:
    import torch

    import tilelang
    from cliffs import time_pair

    g = torch.Generator(device="cuda").manual_seed(4)
    a, w = ((torch.rand(MNK, MNK, device="cuda", generator=g) * 2 - 1).half() for _ in range(2))
    bias = torch.randn(MNK, device="cuda", generator=g)
    scale = torch.rand(1, device="cuda", generator=g) + 0.5
    s, n = 0.5, MNK - 100
    c = torch.zeros(MNK, MNK, device="cuda", dtype=torch.float16)
    mod = tilelang.compile(_source(case))
    bm, bn, bk = TILE
    cols = torch.arange(MNK, device="cuda")

    def ours():  # type: ignore[no-untyped-def]
        return mod.mm[bm, bn, bk](tilelang.partition(c, [bm, bn]), a, w, bias, scale, s, n).launch()

    def ref():  # type: ignore[no-untyped-def]
        y = a @ w.T
        if case == "linear":
            return torch.relu(y + bias).half()
        if case == "scaled_bias":
            return torch.relu(y + bias * s).half()
        if case == "col_mask":
            return y.masked_fill(cols >= n, 0.0)
        if case == "item_scale":
            return (y * scale).half()
        return (y * (cols * 1e-4 + 1.0)).half()

    ours().wait()
    t, t_ref = time_pair(ours, ref, reps)
    want = ref().float()
    same = bool(torch.allclose(c.float(), want, rtol=2e-2, atol=2e-2))
    arm = "off" if os.environ.get("TILEC_GEMM_EPILOGUE_OPS") == "0" else "on"
    tf = 2.0 * MNK**3 / t / 1e9
    print(f"{case:12s} {arm:3s} {t:.4f} ms {tf:6.1f} TFLOP/s  torch {t_ref:.4f} ms  ratio {t_ref / t:.2f}  same {same}",
          flush=True)


FMA = """
kernel fn sk<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f32, [?, ?]>,
        b: &Tensor<f32, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
}
"""
SKINNY = [(64, 4096, 4096), (64, 2048, 8192)]  # f32 GEMMs of few 64x64x16 tiles: 64 and 32 tiles on 132 SMs
GEMV = """
kernel fn gv<const BM: i32, const BK: i32>(y: &mut Tensor<f32, [BM, 1]>, a: &Tensor<f32, [?, ?]>,
        x: &Tensor<f32, [?, 1]>) {
    let pa = a.partition([BM, BK]);
    let px = x.partition([BK, 1]);
    let mut acc = zeros::<f32>([BM, 1]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), px.load([k, 0]), acc);
    }
    y.store(acc);
}
"""


def fma_split(reps: int) -> None:
    """f32 skinny GEMMs on the FMA pipeline: split-K's variant (`TILEC_GEMM_SPLITK` unset: "auto", the runtime
    picks it for few tiles) against the one tile a CTA kernel (`=0`) and torch's SGEMM (TF32 off)."""
    import torch

    import tilelang
    from cliffs import time_pair

    torch.backends.cuda.matmul.allow_tf32 = False
    for m, n, k in SKINNY:
        g = torch.Generator(device="cuda").manual_seed(5)
        a = torch.randn(m, k, device="cuda", generator=g)
        b = torch.randn(k, n, device="cuda", generator=g)
        want = a @ b
        for arm, env in (("split", None), ("plain", "0")):
            if env is None:
                os.environ.pop("TILEC_GEMM_SPLITK", None)
            else:
                os.environ["TILEC_GEMM_SPLITK"] = env
            mod = tilelang.compile(f"// {arm}\n" + FMA)  # (the comment: one program an arm in the caches)
            c = torch.full((m, n), float("nan"), device="cuda")
            args = (tilelang.partition(c, [64, 64]), a, b)
            try:
                mod.sk[64, 64, 16](*args).launch().wait()
                t, t_ref = time_pair(lambda: mod.sk[64, 64, 16](*args).launch(), lambda: a @ b, reps)
            except Exception as e:  # a row's failure is its line
                print(f"fma_split {m}x{n}x{k} {arm:5s} FAILED {type(e).__name__}: {str(e)[:120]}", flush=True)
                continue
            err = float((c - want).abs().max() / want.abs().max())
            print(f"fma_split {m}x{n}x{k} 64x64x16 {arm:5s} {t:.4f} ms {2.0 * m * n * k / t / 1e9:6.1f} TFLOP/s  "
                  f"torch {t_ref:.4f} ms  ratio {t_ref / t:.2f}  err {err:.1e}", flush=True)
    m = k = 4096  # a GEMV (x a [K, 1] column): 64 row tiles of 64
    g = torch.Generator(device="cuda").manual_seed(6)
    a = torch.randn(m, k, device="cuda", generator=g)
    x = torch.randn(k, 1, device="cuda", generator=g)
    want = a @ x
    for arm, env in (("split", None), ("plain", "0")):
        if env is None:
            os.environ.pop("TILEC_GEMM_SPLITK", None)
        else:
            os.environ["TILEC_GEMM_SPLITK"] = env
        mod = tilelang.compile(f"// {arm}\n" + GEMV)
        y = torch.full((m, 1), float("nan"), device="cuda")
        args = (tilelang.partition(y, [64, 1]), a, x)
        try:
            mod.gv[64, 64](*args).launch().wait()
            t, t_ref = time_pair(lambda: mod.gv[64, 64](*args).launch(), lambda: a @ x, reps)
        except Exception as e:  # a row's failure is its line
            print(f"gemv {m}x{k} {arm:5s} FAILED {type(e).__name__}: {str(e)[:120]}", flush=True)
            continue
        err = float((y - want).abs().max() / want.abs().max())
        print(f"gemv {m}x{k} 64x64 {arm:5s} {t:.4f} ms {4.0 * m * k / t / 1e9:6.1f} GB/s  torch {t_ref:.4f} ms  "
              f"ratio {t_ref / t:.2f}  err {err:.1e}", flush=True)
    os.environ.pop("TILEC_GEMM_SPLITK", None)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="")
    p.add_argument("--dry", action="store_true")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--fma-split", action="store_true", help="the f32 split-K rows only")
    args = p.parse_args()
    cases = [c for c in EPILOGUES if args.only in c]
    if args.dry:
        dry(cases)
        return
    from cliffs import warm_up

    warm_up()
    if args.fma_split:
        fma_split(args.reps)
        return
    for case in cases:
        run(case, args.reps)


if __name__ == "__main__":
    main()
