"""hcliff11: causal prefill at sequence lengths of an odd number of 128-row query blocks (the once variant,
`attention_tiles.ONCE_KIND`) and an even control, `std::attention` against SDPA in one process
(`attention.bench_prefill`: 16k tokens a call, batch 16,384 / S, 16 heads at D = 128, 32 at D = 64).

    python benchmarks/hcliff11_prefill.py [--seqs 1100,4200,640,384,1024] [--reps 10]   # GPU

One line a row: dtype, D, S, query blocks a head (nf), B, ours ms and TFLOP/s, SDPA's, ratio (SDPA / ours), err.
`TILEC_ATTN_ONCE` (read when the kernel is lowered: an arm a process) picks the walk.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seqs", default="1100,4200,640,384,1024")
    ap.add_argument("--ds", default="128,64")
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args(argv)
    import attention
    import torch

    attention.flash_attn_func = attention.triton_attention = None  # (SDPA only: Triton tunes each shape)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    arm = os.environ.get("ARM", "once=" + os.environ.get("TILEC_ATTN_ONCE", "1"))
    rows = [(int(d), int(s)) for d in a.ds.split(",") for s in a.seqs.split(",")]
    tokens = 16384
    if dev != "cpu":
        attention.bench_prefill("f16", 128, True, 1024, tokens, 2, dev)  # (a process's first row reads slow)
    for d, s in rows:
        r = attention.bench_prefill("f16", d, True, s, tokens, a.reps, dev)
        nf = -(-s // 128)
        print(f"{arm} f16 D={d} S={s} nf={nf} B={r['B']}  ours {r['tile_ms']:.4f} ms {r['tile_tflops']:6.1f} TFLOP/s"
              f"  sdpa {r['sdpa_ms']:.4f} ms {r['sdpa_tflops']:6.1f}  ratio {r['sdpa_ms'] / r['tile_ms']:.3f}"
              f"  err {r['err']:.1e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
