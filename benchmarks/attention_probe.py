"""Where a prefill attention schedule goes wrong on the GPU: every query
block's two 64-row halves (consumer warpgroups 0 and 1) checked on their own
against SDPA in f32, for a few shapes, under the schedule of
`TILEC_ATTN_SCHEDULE` and the other `TILEC_ATTN_*` switches (run once per
setting: they are read when a kernel is lowered).

    TILEC_ATTN_PINGPONG=1 TILEC_ATTN_PERSISTENT=0 python benchmarks/attention_probe.py
    (the warpgroups' turns one tile a block: what `TILEC_ATTN_SCHEDULE=pingpong-unsafe` built)

One line per shape: the error, then how many (head, query block, half)
pieces are wrong and which: by half (0 = warpgroup 0's rows), by query
block, by head. A pattern (only warpgroup 1, only the last block, every
block after the first wave) says which mechanism fails.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

import tilelang  # noqa: E402

ATTN = tilelang.compile("use std::attention::*;\n")
DT = {"f16": torch.float16, "bf16": torch.bfloat16}

# dtype, BH, S, D, BM, BN, causal
SHAPES = [
    ("f16", 1, 128, 128, 128, 64, False),   # one block, two key blocks
    ("f16", 1, 256, 128, 128, 64, False),
    ("f16", 1, 1024, 128, 128, 64, False),  # one head: 8 blocks, 16 key blocks
    ("f16", 8, 1024, 128, 128, 64, False),  # the failing GPU test's shape
    ("f16", 1, 128, 128, 128, 128, False),
    ("f16", 1, 256, 128, 128, 128, False),
    ("f16", 1, 384, 128, 128, 128, False),
    ("f16", 1, 512, 128, 128, 128, False),
    ("f16", 4, 777, 128, 128, 128, False),
    ("f16", 8, 1024, 128, 128, 128, False),
    ("f16", 8, 1024, 64, 128, 64, False),
    ("f16", 8, 1024, 64, 128, 128, False),
    ("f16", 8, 1024, 128, 128, 128, True),
]


def main() -> None:
    sched = os.environ.get("TILEC_ATTN_SCHEDULE", "(default)")
    only = os.environ.get("PROBE_ONLY")
    for dt, bh, s, d, bm, bn, causal in SHAPES:
        if only and f"{d}x{bn}" not in only.split(","):
            continue
        t0 = time.time()
        g = torch.Generator(device="cuda").manual_seed(s + d + bn)
        q, k, v = (torch.randn(bh, s, d, device="cuda", dtype=DT[dt], generator=g) for _ in range(3))
        o = torch.full_like(q, float("nan"))
        try:
            ATTN.flash_attention[dt, bm, bn, d](tilelang.partition(o, [1, bm, d]), q, k, v, d**-0.5, causal).sync()
        except Exception as e:  # noqa: BLE001
            print(f"{sched} {dt} BH={bh} S={s} D={d} {bm}x{bn} causal={causal}: ERROR {str(e)[:200]}", flush=True)
            if "ILLEGAL" in str(e):
                return  # the context is gone
            continue
        want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
        err = float(((o.float() - want).abs().max() / want.abs().max()))
        bad = []
        nb = -(-s // bm)
        for h in range(bh):
            for qb in range(nb):
                for half in range(bm // 64):
                    r0 = qb * bm + half * 64
                    if r0 >= s:
                        continue
                    got, ref = o[h, r0:r0 + 64].float(), want[h, r0:r0 + 64]
                    e = float((got - ref).abs().max() / ref.abs().max().clamp_min(1e-6))
                    if not e < 1e-2:
                        bad.append((h, qb, half))
        by_half = {x: sum(1 for b in bad if b[2] == x) for x in range(bm // 64)}
        qbs = sorted({b[1] for b in bad})
        heads = sorted({b[0] for b in bad})
        print(f"{sched} {dt} BH={bh} S={s} D={d} {bm}x{bn} causal={causal}: err {err:.2e}; wrong {len(bad)} of "
              f"{bh * nb * (bm // 64)} pieces; by half {by_half}; query blocks {qbs[:12]}; heads {heads[:12]} "
              f"({time.time() - t0:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
