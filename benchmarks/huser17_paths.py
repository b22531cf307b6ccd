"""huser17's user kernels on the GPU against PyTorch (round 17): the programs of tests/user/programs a01, a02, a03
and a05 as written there (the natural way), at sizes a PyTorch user runs them, and the paths they take (one step,
~40-70 s warm on an H100, most of it compiling; one line a case, printed as it is timed).

    python benchmarks/huser17_paths.py                # GPU: every case
    python benchmarks/huser17_paths.py --only dq      # or scaled_mm, blur, maxpool
    python benchmarks/huser17_paths.py --dry          # CPU: each kernel's sm_90a path and notes (no timing)

`ratio` = torch time / ours (> 1: faster than torch). Expected, and why:
- dq: a01's GQA causal attention backward dQ pass (3 products a key block: S = Q K^T, dP = dO V^T, dQ += dS K),
  H = 32 query heads on 8 KV heads, S = 4096, D = 128, f16, 64 x 64 blocks, against PyTorch's whole SDPA backward
  (FlashAttention-2's, which also computes dK and dV: 5 products to our 3) through `torch.autograd.grad(o, q)`.
  The loop is on mma.sync with its K/V loads in registers an iteration at a time (no pipeline takes a loop of
  three products; `--explain` now says so): expect ~0.2-0.5x of the whole backward, i.e. well below the
  ~3/5 of its time a dQ pass would take at FA2's speed. TFLOP/s counts our 3 causal products (3 S^2 D per head).
- scaled_mm: a02's bf16 GEMM with rowwise dequant scales and a bias in the epilogue, 4096^3, 128 x 128 x 64
  tiles, against PyTorch's bf16 matmul then `* sa[:, None] * sb + bias` (3 kernels). The Hopper GEMM pipeline
  takes it with the epilogue's loads: expect >= 1.0x (one pass over C instead of three).
- scaled_mm first: the same kernel with its scale and bias tiles loaded before the K loop (where a user who
  loads what a block needs first writes them): sm_80's cp.async ring before round 17's `gemm_sink`, the Hopper
  GEMM pipeline now: expect scaled_mm's ratio (it was ~0.5-0.6x of it on the ring).
- blur: a03's separable 5-tap blur, each pass three band products of [32, 64] tiles (f32: scalar FMAs), on a
  4096 x 4096 f32 image, against F.conv2d with [1, 5] then [5, 1] kernels. A tile has no element-offset load,
  so the halo comes as whole neighbour tiles and a 5-tap filter costs 3 x 64 multiply-adds an output (a
  Triton kernel reads shifted columns): expect ~0.1-0.4x.
- maxpool: a05's max_pool2d(3, 2, 1) with indices over 8 x 64 planes of 112 x 112 (a ResNet stem), the
  window's column 2j - 1 shifted in by a [64, 64] f32 product a row, against F.max_pool2d(return_indices=True):
  expect ~0.2-0.6x (the shift product is most of the work).
- alibi: a12's causal attention with ALiBi slopes and soft-capping (cap 1e4, so that it is ALiBi alone to
  f16's precision), H = 16, S = 4096, D = 64, 128 x 128 blocks, its causal rows made before the loop: the
  Hopper attention pipeline since round 17 (it fell to mma.sync without a note before), against SDPA given
  the ALiBi + causal bias as a float mask (no soft-capping in SDPA). Expect ~1-3x (SDPA with a dense bias
  reads H S^2 of it); before the fix it was the generic path, ~0.05-0.2x. Call 22 (H100): 0.50x.
- alibi fast_math: the same with `#[hints(fast_math = true)]` (tanh.approx, exp without its error term): how much of
  alibi's gap the accurate tanh of every score is (attention_advice's note says so, unmeasured).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
PROGRAMS = ROOT / "tests" / "user" / "programs"

import user_paths  # noqa: E402
from user_paths import print_notes, report, timed  # noqa: E402

CASES = ["dq", "scaled_mm", "scaled_mm first", "blur", "maxpool", "alibi", "alibi fast_math"]
FILES = {"dq": "a01_gqa_attention_backward_dq", "scaled_mm": "a02_scaled_mm_rowwise_bf16",
         "blur": "a03_gaussian_blur_separable", "maxpool": "a05_maxpool3x3_indices",
         "alibi": "a12_alibi_softcap_attention", "scaled_mm first": "a02_scaled_mm_rowwise_bf16",
         "alibi fast_math": "a12_alibi_softcap_attention"}
# a02 with its epilogue tiles loaded before the loop
EPILOGUE = ("    let rs = sa.partition([BM]).load([block_id(0)]).reshape([BM, 1]);\n"
            "    let cs = sb.partition([BN]).load([block_id(1)]).reshape([1, BN]);\n"
            "    let bb = bias.partition([BN]).load([block_id(1)]).reshape([1, BN]);\n")


def _first(src: str) -> str:
    """a02's source with `EPILOGUE` moved before the K loop."""
    assert EPILOGUE in src
    return src.replace(EPILOGUE, "").replace("    let mut acc = zeros::<f32>([BM, BN]);\n",
                                             EPILOGUE + "    let mut acc = zeros::<f32>([BM, BN]);\n", 1)
H, HKV, S, D, DQ_TILE = 32, 8, 4096, 128, (64, 64)
MNK, MM_TILE = 4096, (128, 128, 64)
IMG, BLUR_TILE = 4096, (32, 64)
PLANES, HW, WO = 8 * 64, 112, 64
AH, AS, AD, A_TILE = 16, 4096, 64, (128, 128)


DRY_MAINS = {
    "dq": "let q = zeros::<f16>([4, 128, 128]); let k = zeros::<f16>([1, 128, 128]); let l = zeros::<f32>([4, 128]);"
          " let mut dq = zeros::<f32>([4, 128, 128]);"
          " attn_dq::<64, 64, 128, 4>(dq.partition([1, 64, 128]), &q, &k, &k, &q, &l, &l, 0.1).sync();",
    "scaled_mm first": "let a = zeros::<bf16>([256, 256]); let s = zeros::<f32>([256]); let mut c = zeros::<bf16>([256, 256]);"
                       " scaled_mm::<128, 128, 64>(c.partition([128, 128]), &a, &a, &s, &s, &s).sync();",
    "scaled_mm": "let a = zeros::<bf16>([256, 256]); let s = zeros::<f32>([256]); let mut c = zeros::<bf16>([256, 256]);"
                 " scaled_mm::<128, 128, 64>(c.partition([128, 128]), &a, &a, &s, &s, &s).sync();",
    "blur": "let x = zeros::<f32>([64, 128]); let w = zeros::<f32>([5]); let mut y = zeros::<f32>([64, 128]);"
            " blur_rows::<32, 64>(y.partition([32, 64]), &x, &w).sync();"
            " blur_cols::<32, 64>(y.partition([32, 64]), &x, &w).sync();",
    "maxpool": "let x = zeros::<f32>([2, 112, 112]); let mut y = zeros::<f32>([2, 56, 56]);"
               " let mut i = zeros::<i32>([2, 56, 56]); pool3::<64>(y.partition([1, 1, 64]), i.partition([1, 1, 64]), &x).sync();",
    "alibi": "let q = zeros::<f16>([2, 256, 64]); let mut o = zeros::<f16>([2, 256, 64]);"
             " alibi_attn::<128, 128, 64>(o.partition([1, 128, 64]), &q, &q, &q, &zeros::<f32>([2]), 0.125, 1.0e4).sync();",
}


def dry(cases: list[str]) -> None:
    """Each case's kernels' sm_90a path and notes at the benchmark's generics (`tilec emit --explain` of the
    program with a `main` of small constant shapes in place of its own)."""
    for case in cases:
        src = (PROGRAMS / f"{FILES[case]}.tile").read_text(encoding="utf-8")
        src = _first(src) if case == "scaled_mm first" else src
        if case == "alibi fast_math":
            src = src.replace("kernel fn alibi_attn", "#[hints(fast_math = true)]\nkernel fn alibi_attn", 1)
        src = src[:src.index("fn main()")] + "fn main() { " + DRY_MAINS[case.replace(" fast_math", "")] + " }\n"
        print_notes(case, src)


def run_dq(reps: int) -> None:
    import torch
    import torch.nn.functional as F

    import tilelang

    g = torch.Generator(device="cuda").manual_seed(17)
    q, do = (torch.randn(H, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(2))
    k, v = (torch.randn(HKV, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(2))
    scale = D**-0.5
    qg = q[None].clone().requires_grad_()
    o = F.scaled_dot_product_attention(qg, k[None], v[None], is_causal=True, scale=scale, enable_gqa=True)
    with torch.no_grad():   # the forward's saved values, in f32 a head at a time
        lse = torch.empty(H, S, device="cuda")
        for h in range(H):
            s = (q[h].float() @ k[h // (H // HKV)].float().T) * scale
            lse[h] = s.masked_fill(torch.ones(S, S, device="cuda", dtype=torch.bool).triu(1), float("-inf")).logsumexp(-1)
        delta = (do.float() * o[0].float()).sum(-1)
    mod = tilelang.load(PROGRAMS / f"{FILES['dq']}.tile")
    dq = torch.zeros(H, S, D, device="cuda")
    bm, bn = DQ_TILE

    def ours():  # type: ignore[no-untyped-def]
        return mod.attn_dq[bm, bn, D, H // HKV](tilelang.partition(dq, [1, bm, D]), q, k, v, do, lse, delta,
                                                 float(scale)).launch()

    def ref():  # type: ignore[no-untyped-def]
        return torch.autograd.grad(o, qg, do[None], retain_graph=True)

    if (tt := timed("dq", ours, ref, reps)) is None:
        return
    t, t_ref = tt
    want = ref()[0][0].float()
    err = float((dq - want).abs().max() / want.abs().max())
    report("dq", t, t_ref, err, 3.0 * H * S * S * D, "sdpa bwd (dq,dk,dv)")


def run_scaled_mm(reps: int, first: bool = False) -> None:
    import torch

    import tilelang

    g = torch.Generator(device="cuda").manual_seed(2)
    a, b = ((torch.rand(MNK, MNK, device="cuda", generator=g) * 2 - 1).bfloat16() for _ in range(2))
    sa, sb = (torch.rand(MNK, device="cuda", generator=g) * 0.01 + 0.001 for _ in range(2))
    bias = torch.randn(MNK, device="cuda", generator=g) * 0.01
    c = torch.zeros(MNK, MNK, device="cuda", dtype=torch.bfloat16)
    src = (PROGRAMS / f"{FILES['scaled_mm']}.tile").read_text(encoding="utf-8")
    mod = tilelang.compile(_first(src) if first else src)
    bm, bn, bk = MM_TILE

    def ours():  # type: ignore[no-untyped-def]
        return mod.scaled_mm[bm, bn, bk](tilelang.partition(c, [bm, bn]), a, b, sa, sb, bias).launch()

    def ref():  # type: ignore[no-untyped-def]
        return ((a @ b).float() * sa[:, None] * sb[None, :] + bias).bfloat16()

    if (tt := timed("scaled_mm first" if first else "scaled_mm", ours, ref, reps)) is None:
        return
    t, t_ref = tt
    want = ref().float()
    err = float((c.float() - want).abs().max() / want.abs().max())
    report("scaled_mm first" if first else "scaled_mm", t, t_ref, err, 2.0 * MNK**3)


def run_blur(reps: int) -> None:
    import torch
    import torch.nn.functional as F

    import tilelang

    img = torch.rand(IMG, IMG, device="cuda", generator=torch.Generator(device="cuda").manual_seed(7))
    w = torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0], device="cuda") / 16
    tmp, out = torch.zeros_like(img), torch.zeros_like(img)
    mod = tilelang.load(PROGRAMS / f"{FILES['blur']}.tile")
    br, bw = BLUR_TILE

    def rows():  # type: ignore[no-untyped-def]
        return mod.blur_rows[br, bw](tilelang.partition(tmp, [br, bw]), img, w).launch()

    def cols():  # type: ignore[no-untyped-def]
        return mod.blur_cols[br, bw](tilelang.partition(out, [br, bw]), tmp, w).launch()

    def ref_rows():  # type: ignore[no-untyped-def]
        return F.conv2d(img[None, None], w.reshape(1, 1, 1, 5), padding=(0, 2))

    def ref_cols():  # type: ignore[no-untyped-def]
        return F.conv2d(tmp[None, None], w.reshape(1, 1, 5, 1), padding=(2, 0))

    # each pass timed on its own (the second reads the first's result: two launches in one timing would wait
    # for the first on the host between them)
    p1 = timed("blur rows", rows, ref_rows, reps)
    p2 = timed("blur cols", cols, ref_cols, reps) if p1 is not None else None
    if p1 is None or p2 is None:
        return
    (t1, r1), (t2, r2) = p1, p2
    want = F.conv2d(ref_rows(), w.reshape(1, 1, 5, 1), padding=(2, 0))[0, 0]
    report("blur rows", t1, r1, float((tmp - ref_rows()[0, 0]).abs().max()), what="conv2d [1,5]")
    report("blur cols", t2, r2, float((out - want).abs().max() / want.abs().max()), what="conv2d [5,1]")


def run_maxpool(reps: int) -> None:
    import torch
    import torch.nn.functional as F

    import tilelang

    x = torch.randn(PLANES, HW, HW, device="cuda", generator=torch.Generator(device="cuda").manual_seed(3))
    ho = (HW + 2 - 3) // 2 + 1
    y = torch.zeros(PLANES, ho, ho, device="cuda")
    idx = torch.zeros(PLANES, ho, ho, device="cuda", dtype=torch.int32)
    mod = tilelang.load(PROGRAMS / f"{FILES['maxpool']}.tile")

    def ours():  # type: ignore[no-untyped-def]
        return mod.pool3[WO](tilelang.partition(y, [1, 1, WO]), tilelang.partition(idx, [1, 1, WO]), x).launch()

    def ref():  # type: ignore[no-untyped-def]
        return F.max_pool2d(x[None], 3, 2, 1, return_indices=True)

    if (tt := timed("maxpool", ours, ref, reps)) is None:
        return
    t, t_ref = tt
    wy, wi = ref()
    ok = bool(torch.equal(y, wy[0])) and bool(torch.equal(idx.long(), wi[0]))
    report("maxpool", t, t_ref, 0.0 if ok else math.inf)


def run_alibi(reps: int, fast: bool = False) -> None:
    import torch
    import torch.nn.functional as F

    import tilelang

    g = torch.Generator(device="cuda").manual_seed(12)
    q, k, v = (torch.randn(AH, AS, AD, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    slopes = 2.0 ** (-8.0 * (torch.arange(AH, device="cuda", dtype=torch.float32) + 1) / AH)
    pos = torch.arange(AS, device="cuda")
    rel = (pos[None, :] - pos[:, None]).float()
    bias = torch.where(rel <= 0, slopes[:, None, None] * rel, float("-inf")).half()[None]   # [1, H, S, S]
    o = torch.zeros(AH, AS, AD, device="cuda", dtype=torch.float16)
    src = (PROGRAMS / f"{FILES['alibi']}.tile").read_text(encoding="utf-8")
    if fast:
        src = src.replace("kernel fn alibi_attn", "#[hints(fast_math = true)]\nkernel fn alibi_attn", 1)
    mod = tilelang.compile(src)
    bm, bn = A_TILE
    scale = AD**-0.5

    def ours():  # type: ignore[no-untyped-def]
        return mod.alibi_attn[bm, bn, AD](tilelang.partition(o, [1, bm, AD]), q, k, v, slopes, scale, 1.0e4).launch()

    def ref():  # type: ignore[no-untyped-def]
        return F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=bias, scale=scale)

    if (tt := timed("alibi fast_math" if fast else "alibi", ours, ref, reps)) is None:
        return
    t, t_ref = tt
    want = ref()[0].float()
    err = float((o.float() - want).abs().max() / want.abs().max())
    report("alibi fast_math" if fast else "alibi", t, t_ref, err, 2.0 * AH * AS * AS * AD, "sdpa+bias")


def main(argv: list[str] | None = None) -> int:
    runs = {"dq": run_dq, "scaled_mm": run_scaled_mm, "scaled_mm first": lambda r: run_scaled_mm(r, True),
            "blur": run_blur, "maxpool": run_maxpool, "alibi": run_alibi,
            "alibi fast_math": lambda r: run_alibi(r, True)}
    return user_paths.main(argv, CASES, user_paths.each(runs), dry)


if __name__ == "__main__":
    sys.exit(main())
