"""huser16's user kernels on the GPU against PyTorch (round 16): two programs a PyTorch user writes first,
written the natural way, and the paths they take (one step, ~30-60 s warm on an H100, most of it compiling; one line a variant, printed as it is timed).

    python benchmarks/huser16_paths.py                # GPU: every case
    python benchmarks/huser16_paths.py --only mlp     # or `cross`
    python benchmarks/huser16_paths.py --dry          # CPU: each kernel's sm_90a path and notes (no timing)

Cases (f16 storage, f32 sums; `ratio` = torch time / ours, > 1 is faster than torch):
- mlp: a transformer MLP block y = x + gelu(x W1 + b1) W2 + b2, T = 16384 tokens, D = 128, H = 512, fused in one
  kernel (tests/user/programs/o01_fused_mlp_gelu.tile's spelling) against PyTorch's x @ W1 + b1 -> F.gelu ->
  @ W2 + b2 + x (cuBLAS and elementwise kernels).
  * `mlp erf` (the natural kernel: exact GELU, residual and bias after the loop): ldmatrix + mma.sync with no
    pipeline (the attention pipeline refuses its residual, the tile of x read again after the loop).
    Expected ~0.2-0.4x. Before round 16 its f32 erf was the f64 continued fraction (80 f64 divisions an
    element; ptxas took ~1 minute for it): now a Chebyshev series (~60 f64 operations, no division).
  * `mlp tanh`: the same with the tanh GELU (PyTorch's approximate='tanh'): what erf's f64 series costs.
  * `mlp inner erf` (no residual, no b2: W2's product is the kernel's result): the Hopper attention pipeline
    (x = Q, W1's [D, BH] tiles = K stored N-major, W2's = V), which refused it before round 16 where BH = D.
    Expected ~0.6-1.0x of torch's inner (`x @ W1 + b1 -> gelu -> @ W2`); the gap to `mlp erf` is what
    an epilogue load in the attention pipeline would give the natural kernel.
- cross: cross-attention over a padded batch, B = 16, S_q = S_k = 1024, D = 64, the keys' lengths (256 ..
  1024) read from an i32 tensor in the kernel (o05_cross_attention_padding.tile's spelling, 128 x 64 blocks),
  against SDPA with a boolean key-padding mask, and the same kernel with the length `k.shape()[1]` (no
  padding: the attention pipeline takes it, as an upper bound).
  * `cross lens`: refused by the attention pipeline until hattn2's `attention_match.scalar_reads` (12-06,
    4498201e: a length read from a tensor before the loop runs with the loop's scalars); now the pipeline.
    Expected ~1-2x of SDPA-with-mask (which runs its efficient/math kernel for a boolean mask, not flash);
    with TILEC_ATTN_SCALAR_READS=0, mma.sync with no pipeline, ~0.3-0.6x.
  * `cross full`: the Hopper attention pipeline at the full length (no padding), the bound for `cross lens`.

`CROSS` and `LENS` are also the kernel tests/backend/test_attention_scalar_reads.py checks (its path, llsim against
the interpreter): edit them there together.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import user_paths  # noqa: E402

MLP = """
kernel fn mlp<const BM: i32, const D: i32, const BH: i32>(y: &mut Tensor<f16, [BM, D]>,
        x: &Tensor<f16, [?, D]>, w1: &Tensor<f16, [D, ?]>, b1: &Tensor<f32, [?]>,
        w2: &Tensor<f16, [?, D]>, b2: &Tensor<f32, [D]>) {
    let xt = x.load_like(y);
    let pw1 = w1.partition([D, BH]);
    let pw2 = w2.partition([BH, D]);
    let pb1 = b1.partition([BH]);
    let mut acc = zeros::<f32>([BM, D]);
    for c in 0..pw1.num_tiles(1) {
        let h = mma(xt, pw1.load([0, c]), zeros::<f32>([BM, BH])) + pb1.load([c]).reshape([1, BH]);
        let g = GELU;
        acc = mma(g as f16, pw2.load([c, 0]), acc);
    }
    let bias = b2.partition([D]).load([0]).reshape([1, D]);
    y.store((acc + bias + xt as f32) as f16);
}

kernel fn mlp_inner<const BM: i32, const D: i32, const BH: i32>(y: &mut Tensor<f16, [BM, D]>,
        x: &Tensor<f16, [?, D]>, w1: &Tensor<f16, [D, ?]>, b1: &Tensor<f32, [?]>, w2: &Tensor<f16, [?, D]>) {
    let xt = x.load_like(y);
    let pw1 = w1.partition([D, BH]);
    let pw2 = w2.partition([BH, D]);
    let pb1 = b1.partition([BH]);
    let mut acc = zeros::<f32>([BM, D]);
    for c in 0..pw1.num_tiles(1) {
        let h = mma(xt, pw1.load([0, c]), zeros::<f32>([BM, BH])) + pb1.load([c]).reshape([1, BH]);
        let g = GELU;
        acc = mma(g as f16, pw2.load([c, 0]), acc);
    }
    y.store(acc as f16);
}
"""
ERF = "0.5 * h * (1.0 + erf(h * 0.70710678))"
TANH = "0.5 * h * (1.0 + tanh(0.7978845608 * (h + 0.044715 * h * h * h)))"

CROSS = """
kernel fn cross<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<f16, [1, BM, D]>,
        q: &Tensor<f16, [?, ?, D]>, k: &Tensor<f16, [?, ?, D]>, v: &Tensor<f16, [?, ?, D]>,
        lens: &Tensor<i32, [?]>, scale: f32) {
    let b = block_id(0);
    let n = LEN;
    let qt = q.load_like(o).reshape([BM, D]);
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let mut m = full::<f32>([BM, 1], f32::NEG_INFINITY);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..(n + BN - 1) / BN {
        let kt = pk.load([b, j, 0]).reshape([BN, D]);
        let s = mma(qt, kt.transpose(), zeros::<f32>([BM, BN])) * scale;
        let keys = arange::<i32>(BN).reshape([1, BN]) + j * BN;
        let s = where(keys < n, s, f32::NEG_INFINITY);
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let safe = where(mn == f32::NEG_INFINITY, 0.0, mn);
        let p = exp(s - safe);
        let alpha = exp(m - safe);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as f16, pv.load([b, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store(where(l > 0.0, acc / l, 0.0).reshape([1, BM, D]) as f16);
}
"""
LENS = "lens.partition([1]).load([b]).item()"
FULL = "k.shape()[1]"

T, D, H = 16384, 128, 512
MLP_TILE = (128, 128, 64)    # BM, D, BH of the natural kernel (BH = 128 there: 1 MB of PTX, ptxas 25 s, spills)
INNER_TILE = (128, 128, 128)  # BH = D: the K tile the attention pipeline refused before round 16
B, S, DH = 16, 1024, 64
CROSS_TILE = (128, 64, 64)


def _src(case: str) -> str:
    if case.startswith("mlp"):
        return MLP.replace("GELU", TANH if "tanh" in case else ERF)
    return CROSS.replace("LEN", FULL if "full" in case else LENS)


CASES = ["mlp erf", "mlp inner erf", "mlp tanh", "cross lens", "cross full"]   # the likeliest to matter first


def dry(cases: list[str]) -> None:
    """Each case's kernel path on sm_90a (`tilec emit --explain` on a main with the case's tiles)."""
    for case in cases:
        if case.startswith("mlp"):
            kern = "mlp_inner" if "inner" in case else "mlp"
            extra = "" if "inner" in case else ", &zeros::<f32>([128])"
            tile = INNER_TILE if "inner" in case else MLP_TILE
            main = (f"fn main() {{ let x = zeros::<f16>([256, 128]); let mut y = zeros::<f16>([256, 128]);\n"
                    f"    {kern}::<{tile[0]}, {tile[1]}, {tile[2]}>(y.partition([128, 128]), &x, "
                    f"&zeros::<f16>([128, 512]), &zeros::<f32>([512]), &zeros::<f16>([512, 128]){extra}).sync(); }}\n")
        else:
            main = ("fn main() { let q = zeros::<f16>([2, 256, 64]); let mut o = zeros::<f16>([2, 256, 64]);\n"
                    f"    cross::<{CROSS_TILE[0]}, {CROSS_TILE[1]}, {CROSS_TILE[2]}>(o.partition([1, 128, 64]), &q, "
                    "&q, &q, &full::<i32>([2], 200), 0.125).sync(); }\n")
        rc, lines, err = user_paths.explain(_src(case) + main)
        kname = "mlp_inner" if "inner" in case else "mlp" if case.startswith("mlp") else "cross"
        path = next((ln for ln in lines if f"kernel `{kname}`" in ln), f"? (status {rc}) {err[:300]}")
        why = [ln for ln in lines if "kernel `" not in ln]
        print(f"{case:16s} {path.split(']', 1)[-1].strip()}" + (f" | {why[0][6:]}" if why else ""), flush=True)


def run_mlp(cases: list[str], reps: int) -> None:
    import torch
    import torch.nn.functional as F

    import tilelang

    g = torch.Generator(device="cuda").manual_seed(16)
    x = torch.randn(T, D, device="cuda", dtype=torch.float16, generator=g)
    w1 = (torch.randn(D, H, device="cuda", generator=g) * D**-0.5).half()
    b1 = torch.randn(H, device="cuda", generator=g) * 0.1
    w2 = (torch.randn(H, D, device="cuda", generator=g) * H**-0.5).half()
    b2 = torch.randn(D, device="cuda", generator=g) * 0.1
    b1h, b2h = b1.half(), b2.half()
    flops = 2 * 2 * T * D * H
    for case in cases:
        mod = tilelang.compile(_src(case))
        approx = "tanh" if "tanh" in case else "none"
        y = torch.full((T, D), float("nan"), device="cuda", dtype=torch.float16)
        bm, d, bh = INNER_TILE if "inner" in case else MLP_TILE
        if "inner" in case:
            def ours(mod=mod, y=y):  # type: ignore[no-untyped-def]
                return mod.mlp_inner[bm, d, bh](tilelang.partition(y, [bm, d]), x, w1, b1, w2).launch()

            def ref(approx=approx):  # type: ignore[no-untyped-def]
                return F.gelu(x @ w1 + b1h, approximate=approx) @ w2
        else:
            def ours(mod=mod, y=y):  # type: ignore[no-untyped-def]
                return mod.mlp[bm, d, bh](tilelang.partition(y, [bm, d]), x, w1, b1, w2, b2).launch()

            def ref(approx=approx):  # type: ignore[no-untyped-def]
                return F.gelu(x @ w1 + b1h, approximate=approx) @ w2 + b2h + x
        if (tt := user_paths.timed(case, ours, ref, reps, 16)) is None:
            continue
        want = (F.gelu(x.float() @ w1.float() + b1, approximate=approx).half().float() @ w2.float()
                + (0 if "inner" in case else b2 + x.float()))
        err = float((y.float() - want).abs().max() / want.abs().max())
        user_paths.report(case, *tt, err, flops, "torch", 16)


def run_cross(cases: list[str], reps: int) -> None:
    import torch
    import torch.nn.functional as F

    import tilelang

    g = torch.Generator(device="cuda").manual_seed(5)
    q, k, v = (torch.randn(B, S, DH, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    lens = torch.randint(256, S + 1, (B,), device="cuda", generator=g, dtype=torch.int32)
    scale = DH**-0.5
    bm, bn, d = CROSS_TILE
    for case in cases:
        full = "full" in case
        n = torch.full_like(lens, S) if full else lens
        mask = (torch.arange(S, device="cuda")[None, :] < n[:, None].long())[:, None, None, :]   # [B, 1, 1, S]
        mod = tilelang.compile(_src(case))
        o = torch.full((B, S, DH), float("nan"), device="cuda", dtype=torch.float16)

        def ours(mod=mod, o=o, n=n):  # type: ignore[no-untyped-def]
            return mod.cross[bm, bn, d](tilelang.partition(o, [1, bm, d]), q, k, v, n, scale).launch()

        def ref(mask=mask):  # type: ignore[no-untyped-def]
            return F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None], attn_mask=mask)

        if (tt := user_paths.timed(case, ours, ref, reps, 16)) is None:
            continue
        want = ref()[:, 0].float()
        err = float((o.float() - want).abs().max() / want.abs().max())
        flops = 4 * S * DH * float(n.sum()) * 1.0
        user_paths.report(case, *tt, err, flops, "sdpa+mask", 16)


def main(argv: list[str] | None = None) -> int:
    def run(cases: list[str], reps: int) -> None:
        run_mlp([c for c in cases if c.startswith("mlp")], reps)
        run_cross([c for c in cases if c.startswith("cross")], reps)

    return user_paths.main(argv, CASES, run, dry)


if __name__ == "__main__":
    sys.exit(main())
