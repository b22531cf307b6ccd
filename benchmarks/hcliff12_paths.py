"""hcliff12: probes of the two cliffs hcliff11's natural kernels left (RESULTS "call 38": the f16 GEMV of 4 tokens
at 0.20x torch, the sum over the leading axis at 0.50x), the same kernels (`benchmarks/hcliff11.tile`) under other
tiles, so that a device run says which cause holds: too few bytes in flight a CTA (a larger tile a step, or
`TILEC_STREAM_AUTO=1`'s ring, should help) or too few CTAs (more, smaller tiles should), and for the GEMV what
the tensor-core path gives where the tokens are padded to 8 (`mma.sync`, N % 8).

    python benchmarks/hcliff12_paths.py [--dry] [--only TEXT] [--reps N]   (hcliff11_paths.py's command line)

`ratio` = torch time / ours, torch timed on the case's own shapes (the padded GEMV's torch multiplies 8 columns).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hcliff11_paths as hp

W, T = 8192, 4


def gemv(name: str, bm: int, bk: int, nb: int) -> hp.Case:
    return hp.Case(name, "gemv", (("BM", bm), ("BK", bk), ("NB", nb)),
                   [("t", "y", "f16", (W, nb), (bm, nb)), ("t", "w", "f16", (W, W), None),
                    ("t", "x", "f16", (W, nb), None)], "gemv")


def col_sum(name: str, bm: int, bn: int) -> hp.Case:
    return hp.Case(name, "col_sum", (("BM", bm), ("BN", bn)),
                   [("t", "s", "f32", (W,), (bn,)), ("t", "x", "f32", (W, W), None)], "col_sum")


def cases() -> list[hp.Case]:
    return [gemv("gemv", 64, 64, T),              # call 38's: 128 CTAs, 8 KB of W a CTA a step
            gemv("gemv_bm16", 16, 64, T),         # 512 CTAs (4 an SM), 2 KB a step each
            gemv("gemv_bm16_bk256", 16, 256, T),  # 512 CTAs, 8 KB a step each (4x call 38's bytes an SM)
            gemv("gemv_bk256", 64, 256, T),       # 128 CTAs, 32 KB a step each
            gemv("gemv_nb8", 64, 64, 8),          # the tokens padded to 8: mma.sync (N % 8)
            col_sum("col_sum", 32, 128),          # call 38's: 64 CTAs, 16 KB a step
            col_sum("col_sum_bn32", 32, 32),      # 256 CTAs, 4 KB a step
            col_sum("col_sum_bm128", 128, 128),   # 64 CTAs, 64 KB a step
            col_sum("col_sum_bm128_bn32", 128, 32)]  # 256 CTAs, 16 KB a step each (4x the bytes in flight)


hp.cases = cases  # (hcliff11_paths' run / dry / main read the module's `cases`)

if __name__ == "__main__":
    sys.exit(hp.main())
