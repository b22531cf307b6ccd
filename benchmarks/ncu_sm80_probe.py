"""One sm_80-path GEMM at 8192^3 f16, launched twice, for `ncu -s 1 -c 1` to
profile the second launch (issue 14; `benchmarks/issue14_open_device.sh`).
CFG="BM BN BK WARPS STAGES" (0: no hint); run with TILEC_ARCH=sm_80."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "backend"))


def main() -> None:
    import torch
    from gemm_cases import GemmConfig

    import tilelang

    bm, bn, bk, w, s = map(int, os.environ.get("CFG", "128 128 32 4 4").split())
    cfg = GemmConfig(bm, bn, bk, warps=w or None, stages=s or None)
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)
    mod = tilelang.compile(cfg.source())
    for _ in range(2):
        mod.gemm[bm, bn, bk](tilelang.partition(c, [bm, bn]), a, b).sync()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
