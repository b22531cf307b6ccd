"""hcliff5 (2026-12-06): FlashAttention-2's backward as a user writes it, through the Python API, against PyTorch's
SDPA backward on the same shapes: a01's dQ pass and a13's dK/dV pass (tests/user/programs), H = 32 query heads on
8 KV heads, S = 4096, D = 128, f16, causal (one step, ~30-60 s warm on an H100, most of it compiling).

    python benchmarks/hcliff5_paths.py                 # GPU: dq, dkdv, and the pair against SDPA's backward
    python benchmarks/hcliff5_paths.py --only dkdv     # one case
    python benchmarks/hcliff5_paths.py --dry           # CPU: each kernel's sm_90a path and notes (no timing)

`ratio` = SDPA's whole backward (dQ, dK and dV: 5 products a block pair) / ours; a `share` line puts it against
the part of SDPA's backward that case's products are (dq: 3 of 5, dkdv: 4 of 5; goal >= 1), and `pair` both our
passes against the whole of it. TFLOP/s counts our causal products (S^2 D a product a head).
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

CASES = ["dq", "dkdv"]
FILES = {"dq": "a01_gqa_attention_backward_dq", "dkdv": "a13_gqa_attention_backward_dkdv"}
PRODUCTS = {"dq": 3, "dkdv": 4}
H, HKV, S, D = 32, 8, 4096, 128
TILE = {"dq": (64, 64), "dkdv": (64, 64)}  # (BM, BN); `--tile dkdv=128x64` changes one
DRY = {
    "dq": "let q = zeros::<f16>([4, 256, 128]); let k = zeros::<f16>([1, 256, 128]); let l = zeros::<f32>([4, 256]);"
          " let mut dq = zeros::<f32>([4, 256, 128]);"
          " attn_dq::<BM, BN, 128, 4>(dq.partition([1, BM, 128]), &q, &k, &k, &q, &l, &l, 0.1).sync();",
    "dkdv": "let q = zeros::<f16>([4, 256, 128]); let k = zeros::<f16>([1, 256, 128]); let l = zeros::<f32>([4, 256]);"
            " let mut dk = zeros::<f32>([1, 256, 128]); let mut dv = zeros::<f32>([1, 256, 128]);"
            " attn_dkdv::<BM, BN, 128, 4>(dk.partition([1, BN, 128]), dv.partition([1, BN, 128]), &q, &k, &k, &q, &l,"
            " &l, 0.1).sync();",
}
TIMES: dict[str, tuple[float, float]] = {}


def dry(cases: list[str]) -> None:
    for case in cases:
        src = (PROGRAMS / f"{FILES[case]}.tile").read_text(encoding="utf-8")
        bm, bn = TILE[case]
        main = DRY[case].replace("BM", str(bm)).replace("BN", str(bn))
        print_notes(case, src[:src.index("fn main()")] + "fn main() { " + main + " }\n")


def _inputs():  # type: ignore[no-untyped-def]
    """Q, K, V, dO, SDPA's output and the forward's saved lse and delta (f32, a head at a time)."""
    import torch
    import torch.nn.functional as F

    g = torch.Generator(device="cuda").manual_seed(17)
    q, do = (torch.randn(H, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(2))
    k, v = (torch.randn(HKV, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(2))
    scale = D**-0.5
    qg, kg, vg = (x[None].clone().requires_grad_() for x in (q, k, v))
    o = F.scaled_dot_product_attention(qg, kg, vg, is_causal=True, scale=scale, enable_gqa=True)
    with torch.no_grad():
        lse = torch.empty(H, S, device="cuda")
        mask = torch.ones(S, S, device="cuda", dtype=torch.bool).triu(1)
        for h in range(H):
            s = (q[h].float() @ k[h // (H // HKV)].float().T) * scale
            lse[h] = s.masked_fill(mask, float("-inf")).logsumexp(-1)
        delta = (do.float() * o[0].float()).sum(-1)
    return q, k, v, do, o, (qg, kg, vg), lse, delta, scale


def run(case: str, reps: int) -> None:
    import torch

    import tilelang

    q, k, v, do, o, (qg, kg, vg), lse, delta, scale = _inputs()
    mod = tilelang.load(PROGRAMS / f"{FILES[case]}.tile")
    bm, bn = TILE[case]
    G = H // HKV
    if case == "dq":
        dq = torch.zeros(H, S, D, device="cuda")

        def ours():  # type: ignore[no-untyped-def]
            return mod.attn_dq[bm, bn, D, G](tilelang.partition(dq, [1, bm, D]), q, k, v, do, lse, delta,
                                             float(scale)).launch()
    else:
        dk, dv = torch.zeros(HKV, S, D, device="cuda"), torch.zeros(HKV, S, D, device="cuda")

        def ours():  # type: ignore[no-untyped-def]
            return mod.attn_dkdv[bm, bn, D, G](tilelang.partition(dk, [1, bn, D]), tilelang.partition(dv, [1, bn, D]),
                                               q, k, v, do, lse, delta, float(scale)).launch()

    def ref():  # type: ignore[no-untyped-def]
        return torch.autograd.grad(o, (qg, kg, vg), do[None], retain_graph=True)

    if (tt := timed(case, ours, ref, reps)) is None:
        return
    t, t_ref = tt
    TIMES[case] = tt
    wq, wk, wv = (x[0].float() for x in ref())
    pairs = [(dq, wq)] if case == "dq" else [(dk, wk), (dv, wv)]
    err = max(float((a - b).abs().max() / b.abs().max()) for a, b in pairs)
    report(case, t, t_ref, err, PRODUCTS[case] * H * S * S * D, "sdpa bwd (dq,dk,dv)")
    share = PRODUCTS[case] / 5
    print(f"{case:10s} share      ours vs {PRODUCTS[case]}/5 of sdpa bwd: ratio {t_ref * share / t:.2f}", flush=True)


def runner(cases: list[str], reps: int) -> None:
    user_paths.each({c: (lambda r, c=c: run(c, r)) for c in CASES})(cases, reps)
    if len(TIMES) == 2:
        t = TIMES["dq"][0] + TIMES["dkdv"][0]
        ref = min(TIMES["dq"][1], TIMES["dkdv"][1])
        print(f"pair       {t:.4f} ms (dq + dkdv)  sdpa bwd {ref:.4f} ms  ratio {ref / t:.2f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    while "--tile" in argv:  # --tile dkdv=128x64
        i = argv.index("--tile")
        c, _, bmbn = argv[i + 1].partition("=")
        TILE[c] = tuple(int(x) for x in bmbn.split("x"))  # type: ignore[assignment]
        del argv[i:i + 2]
    return user_paths.main(argv, CASES, runner, dry)


if __name__ == "__main__":
    sys.exit(main())
