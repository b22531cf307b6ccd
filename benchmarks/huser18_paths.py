"""huser18's user kernels on the GPU against PyTorch (round 18): programs of tests/user/programs t03, t06, t09 and
t17 as written there (the natural way), at sizes a PyTorch user runs them, and the paths they take (one step, ~40-80 s
warm on an H100, most of it compiling; one line a case, printed as it is timed).

    python benchmarks/huser18_paths.py                # GPU: every case
    python benchmarks/huser18_paths.py --only paged   # or matpow, resize, w8a8
    python benchmarks/huser18_paths.py --dry          # CPU: each kernel's sm_90a path and notes (no timing)

`ratio` = torch time / ours (> 1: faster than torch). Expected, and why:
- paged: t03's paged decode attention (vLLM's block table, pages of 16), 32 sequences of 512..4096 keys, 8 KV
  heads, 4 query heads each (G = 4), D = 128, f16 K/V, against what a PyTorch user writes without a paged kernel:
  the pages gathered through the block table (`k_pool[:, rows]`) and SDPA with a key-padding mask. `--explain`:
  scalar FMAs (the attention pipeline takes BM of 64 or more: here 4 rows), a page id read with `item()` before
  each page's loads, so each step waits for one load before the next. Expect ~0.3-1.5x (the reference gathers
  every sequence to the longest, 2x the bytes at these lengths, and runs three kernels); GB/s counts K and V once.
- matpow: t06's f32 GEMM (`dot` of f32 tiles) at 4096^3, the program's 32 x 32 x 16 tiles and 128 x 128 x 32,
  against torch.matmul in f32 (TF32 off: PyTorch's default for matmul). `--explain`: sm_80's cp.async ring with
  register-blocked FMAs (wgmma takes f16/bf16 only), 1 warp at 32 x 32. Expect ~0.2-0.6x at 32 x 32 (1 warp a
  block) and ~0.5-0.9x at 128 x 128.
- resize: t09's bilinear resize of 512 channels of 100 x 100 to 120 x 120 (F.interpolate, align_corners=False):
  a row of the output is the two source rows mixed, then a [1, 128] x [128, 128] product with the column
  weights built in the block (Tile has no load of a tile at per-element indices: a gather is a one-hot or
  weight-matrix product; wider images need wider tiles: a [1024, 1024] weight matrix is a whole tile's limit).
  Call 27 (H100, the FMA loop over the matrix, ~130 multiply-adds an output): 1.009 ms, 0.21x. Since hcliff8
  (`codegen/gather_dot.py`, `TILEC_GATHER_DOT=0` off) the product runs as the gather it is: 2 FMAs an output
  over the row staged once; expect ~2-7x (hcliff8_device.sh).
- w8a8: t17's W8A8 linear layer (int8 x int8 into i32 by `mma`, per-row and per-column dequant and a bias to
  bf16) at 4096^3, 64 x 64 x 64 tiles, against torch._int_mm then the same epilogue in PyTorch, with
  `TILEC_INT8_MMA=0`: scalar FMAs (the FMA pipeline takes inputs of the accumulator's type; wgmma f16/bf16 only).
  Call 27 (H100): 4.88 ms, 0.27x.
- w8a8 int8mma: the same with `TILEC_INT8_MMA=1` (the default since hcliff6, 2026-12-06): sm_80's cp.async ring
  with ldmatrix + mma.sync.m16n8k32, the accumulator in registers (`--explain` says so). Call 27 (H100, before
  the ring: each `mma` through shared memory) 2.85 ms, 0.47x, err 0; expect >= 0.8x now (hcliff6_device.sh).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
PROGRAMS = ROOT / "tests" / "user" / "programs"

import user_paths  # noqa: E402
from user_paths import print_notes, report, timed  # noqa: E402

CASES = ["paged", "matpow 32", "matpow 128", "resize", "w8a8", "w8a8 int8mma"]
FILES = {"paged": "t03_paged_decode_attention", "matpow": "t06_markov_matrix_power", "resize": "t09_bilinear_resize",
         "w8a8": "t17_int8_gemm_dequant_bf16"}
NSEQ, HKV, G, HD, PAGE = 32, 8, 4, 128, 16
MNK = 4096
MM_TILES = {"matpow 32": (32, 32, 16), "matpow 128": (128, 128, 32)}
CH, HIN, HOUT, RW = 512, 100, 120, 128
W8_TILE = (64, 64, 64)

DRY_MAINS = {
    "paged": "let q = zeros::<f16>([2, 8, 128]); let kp = zeros::<f16>([2, 256, 128]); let t = zeros::<i32>([2, 8]);"
             " let l = full::<i32>([2], 100); let mut o = zeros::<f32>([2, 8, 128]);"
             " paged_decode::<4, 16, 128>(o.partition([1, 4, 128]), &q, &kp, &kp, &t, &l, 0.1).sync();",
    "matpow 32": "let a = zeros::<f32>([256, 256]); let mut c = zeros::<f32>([256, 256]);"
                 " matmul::<32, 32, 16>(c.partition([32, 32]), &a, &a).sync();",
    "matpow 128": "let a = zeros::<f32>([256, 256]); let mut c = zeros::<f32>([256, 256]);"
                  " matmul::<128, 128, 32>(c.partition([128, 128]), &a, &a).sync();",
    "w8a8": "let a = zeros::<i8>([128, 128]); let s = zeros::<f32>([128]); let mut c = zeros::<bf16>([128, 128]);"
            " w8a8::<64, 64, 64>(c.partition([64, 64]), &a, &a, &s, &s, &s).sync();",
    "resize": "let x = zeros::<f32>([2, 64, 64]); let mut y = zeros::<f32>([2, 96, 96]);"
              " resize_row::<128>(y.partition([1, 1, 128]), &x, 0.5, 0.5).sync();",
}


def _kernels(case: str) -> str:
    """The program's kernels (and device and host functions), without its `main`."""
    src = (PROGRAMS / f"{FILES[case.split()[0]]}.tile").read_text(encoding="utf-8")
    return src[:src.index("fn main()")]


def dry(cases: list[str]) -> None:
    import os

    for case in cases:
        os.environ["TILEC_INT8_MMA"] = "1" if "int8mma" in case else "0"   # (read by the child `tilec emit`)
        print_notes(case, _kernels(case) + "fn main() { " + DRY_MAINS[case.replace(" int8mma", "")] + " }\n")


def run_paged(reps: int) -> None:
    import torch
    import torch.nn.functional as F

    import tilelang

    g = torch.Generator(device="cuda").manual_seed(18)
    lens = torch.randint(512, 4097, (NSEQ,), device="cuda", generator=g, dtype=torch.int32)
    maxp = 4096 // PAGE
    pages = NSEQ * maxp
    table = torch.randperm(pages, device="cuda", generator=g).to(torch.int32).reshape(NSEQ, maxp)
    q = torch.randn(NSEQ, HKV * G, HD, device="cuda", dtype=torch.float16, generator=g)
    k_pool, v_pool = (torch.randn(HKV, pages * PAGE, HD, device="cuda", dtype=torch.float16, generator=g)
                      for _ in range(2))
    o = torch.zeros(NSEQ, HKV * G, HD, device="cuda")
    mod = tilelang.compile(_kernels("paged"))
    scale = HD**-0.5
    rows = (table.long()[:, :, None] * PAGE + torch.arange(PAGE, device="cuda")).reshape(NSEQ, -1)   # [B, L]
    mask = (torch.arange(maxp * PAGE, device="cuda")[None, :] < lens[:, None].long())[:, None, None, :]

    def ours():  # type: ignore[no-untyped-def]
        return mod.paged_decode[G, PAGE, HD](tilelang.partition(o, [1, G, HD]), q, k_pool, v_pool, table, lens,
                                             float(scale)).launch()

    def ref():  # type: ignore[no-untyped-def]
        k = k_pool[:, rows].permute(1, 0, 2, 3)   # [B, HKV, L, D]
        v = v_pool[:, rows].permute(1, 0, 2, 3)
        return F.scaled_dot_product_attention(q[:, :, None], k, v, attn_mask=mask, scale=scale, enable_gqa=True)

    if (tt := timed("paged", ours, ref, reps)) is None:
        return
    want = ref()[:, :, 0].float()
    err = float((o - want).abs().max() / want.abs().max())
    gbytes = 2 * HKV * HD * 2 * float(lens.sum()) / 1e9
    t, t_ref = tt
    report("paged", t, t_ref, err, what=f"({gbytes / t:.0f} GB/s) gather+sdpa")


def run_matpow(case: str, reps: int) -> None:
    import torch

    import tilelang

    torch.backends.cuda.matmul.allow_tf32 = False   # PyTorch's default: f32 products in f32
    g = torch.Generator(device="cuda").manual_seed(6)
    a, b = (torch.rand(MNK, MNK, device="cuda", generator=g) / MNK for _ in range(2))
    c = torch.zeros(MNK, MNK, device="cuda")
    mod = tilelang.compile(_kernels(case))
    bm, bn, bk = MM_TILES[case]

    def ours():  # type: ignore[no-untyped-def]
        return mod.matmul[bm, bn, bk](tilelang.partition(c, [bm, bn]), a, b).launch()

    def ref():  # type: ignore[no-untyped-def]
        return a @ b

    if (tt := timed(case, ours, ref, reps)) is None:
        return
    want = ref()
    report(case, *tt, float((c - want).abs().max() / want.abs().max()), 2.0 * MNK**3, "torch f32")


def run_resize(reps: int) -> None:
    import torch
    import torch.nn.functional as F

    import tilelang

    img = torch.rand(CH, HIN, HIN, device="cuda", generator=torch.Generator(device="cuda").manual_seed(9))
    out = torch.zeros(CH, HOUT, HOUT, device="cuda")
    mod = tilelang.compile(_kernels("resize"))
    s = HIN / HOUT

    def ours():  # type: ignore[no-untyped-def]
        return mod.resize_row[RW](tilelang.partition(out, [1, 1, RW]), img, s, s).launch()

    def ref():  # type: ignore[no-untyped-def]
        return F.interpolate(img[None], size=(HOUT, HOUT), mode="bilinear", align_corners=False)

    if (tt := timed("resize", ours, ref, reps)) is None:
        return
    report("resize", *tt, float((out - ref()[0]).abs().max()), what="F.interpolate")


def run_w8a8(case: str, reps: int) -> None:
    import os

    import torch

    import tilelang

    os.environ["TILEC_INT8_MMA"] = "1" if "int8mma" in case else "0"   # read when the kernel is compiled
    g = torch.Generator(device="cuda").manual_seed(17)
    a, b = (torch.randint(-127, 128, (MNK, MNK), device="cuda", generator=g, dtype=torch.int8) for _ in range(2))
    sa, sb = (torch.rand(MNK, device="cuda", generator=g) * 1e-3 for _ in range(2))
    bias = torch.randn(MNK, device="cuda", generator=g)
    c = torch.zeros(MNK, MNK, device="cuda", dtype=torch.bfloat16)
    mod = tilelang.compile(_kernels("w8a8"))
    bm, bn, bk = W8_TILE

    def ours():  # type: ignore[no-untyped-def]
        return mod.w8a8[bm, bn, bk](tilelang.partition(c, [bm, bn]), a, b, sa, sb, bias).launch()

    def ref():  # type: ignore[no-untyped-def]
        return (torch._int_mm(a, b).float() * sa[:, None] * sb[None, :] + bias).bfloat16()

    if (tt := timed(case, ours, ref, reps)) is None:
        return
    want = ref().float()
    report(case, *tt, float((c.float() - want).abs().max() / want.abs().max()), 2.0 * MNK**3, "torch._int_mm")


def main(argv: list[str] | None = None) -> int:
    runs = {"paged": run_paged, "matpow 32": lambda r: run_matpow("matpow 32", r),
            "matpow 128": lambda r: run_matpow("matpow 128", r), "resize": run_resize,
            "w8a8": lambda r: run_w8a8("w8a8", r), "w8a8 int8mma": lambda r: run_w8a8("w8a8 int8mma", r)}
    return user_paths.main(argv, CASES, user_paths.each(runs), dry)


if __name__ == "__main__":
    sys.exit(main())
