"""hgemv: the GEMV of a few tokens (y = W x, W [8192, 8192], x [8192, NB]) on the FMA pipeline, f16 and bf16, against
`W @ x` in PyTorch: hcliff12's GEMV probes (other tiles of W) and NB = 1, 2, 4, 8 tokens. The kernel is hcliff11's
`gemv` (`benchmarks/hcliff11.tile`), and the same with bf16 tensors (`gemv_bf16`).

    python benchmarks/hgemv_paths.py [--dry] [--only TEXT] [--reps N]   (hcliff11_paths.py's command line)
    HGEMV_CASES=gemv,gemv_bm16 python benchmarks/hgemv_paths.py          (those cases, by exact name)

`ratio` = torch time / ours. The switches (`TILEC_FMA_KSPLIT`, ...) are read when a kernel is lowered: an arm a
process (`benchmarks/hgemv_device.sh`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hcliff11_paths as hp

W = 8192
_GEMV = hp.KERNELS[hp.KERNELS.index("// a GEMV of a few tokens"):hp.KERNELS.index("// a gated MLP")]
hp.KERNELS = _GEMV + _GEMV.replace("f16", "bf16").replace("fn gemv<", "fn gemv_bf16<")


def gemv(name: str, bm: int, bk: int, nb: int, dt: str = "f16") -> hp.Case:
    return hp.Case(name, "gemv" if dt == "f16" else "gemv_bf16", (("BM", bm), ("BK", bk), ("NB", nb)),
                   [("t", "y", dt, (W, nb), (bm, nb)), ("t", "w", dt, (W, W), None),
                    ("t", "x", dt, (W, nb), None)], "gemv")


def cases() -> list[hp.Case]:
    return [gemv("gemv", 64, 64, 4),                # call 38's: 128 CTAs, 8 KB of W a CTA a step
            gemv("gemv_bk256", 64, 256, 4),         # 32 KB a step
            gemv("gemv_bm16", 16, 64, 4),           # 512 CTAs, 2 KB a step
            gemv("gemv_bm16_bk256", 16, 256, 4),    # 512 CTAs, 8 KB a step
            gemv("f16_n1", 64, 64, 1),
            gemv("f16_n2", 64, 64, 2),
            gemv("f16_n8", 64, 64, 8),              # N % 8: mma.sync (tensor cores), no FMA
            gemv("bf16_n1", 64, 64, 1, "bf16"),
            gemv("bf16_n2", 64, 64, 2, "bf16"),
            gemv("bf16_n4", 64, 64, 4, "bf16"),
            gemv("bf16_n8", 64, 64, 8, "bf16")]


def picked() -> list[hp.Case]:
    names = [n for n in os.environ.get("HGEMV_CASES", "").split(",") if n]
    return [c for c in cases() if not names or c.name in names]


hp.cases = picked  # (hcliff11_paths' run / dry / main read the module's `cases`)

if __name__ == "__main__":
    sys.exit(hp.main())
