"""Run each row case of `tests/backend/row_cases.py` once on the GPU (small
shapes, no PyTorch), for compute-sanitizer (memcheck, racecheck, synccheck):

    compute-sanitizer --tool racecheck python3 benchmarks/rows_sanitize.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "backend"))

from row_cases import CASES, compare, run_interp  # noqa: E402

from tilelang.ir import nodes as ir  # noqa: E402
from tilelang.runtime import cuda  # noqa: E402


# one of each kind: masked lanes, cross-warp partials, replicas, loops, scans
FEW = ("softmax_5x768_bm2_w4", "softmax_3x2560_bm1_w8", "layernorm_5x1000_bm1_w4", "looped_softmax_3x300_bm1_bn100_w2",
       "argmax1_f32_6x12_w2", "sum1_f32_2x3000_w8", "cumsum0_f32_10x6_w4", "total_300_b3_w2", "min1_f32_3x5_w4")


def main() -> int:
    dev = cuda.device()
    bad = 0
    cases = CASES if "--all" in sys.argv else [c for c in CASES if c.name in FEW]
    assert "--all" in sys.argv or len(cases) == len(FEW), [c.name for c in cases]
    for case in cases:
        k = case.kernel()
        args = case.args(np.random.default_rng(0), k)
        want = run_interp(k, case, args)
        bufs = [dev.upload(a, p.dtype) for p, a in zip(k.params, args, strict=True)]
        dev.run(dev.prepare(k), case.grid, bufs)
        dev.sync()
        got = [dev.download(b, p.dtype, a.shape) if isinstance(p, ir.TensorParam) else a
               for p, a, b in zip(k.params, args, bufs, strict=True)]
        try:
            compare(case, k, want, got)
        except AssertionError as e:
            bad += 1
            print(f"MISMATCH {case.name}: {str(e)[:300]}")
    print(f"rows_sanitize: {len(cases)} cases, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
