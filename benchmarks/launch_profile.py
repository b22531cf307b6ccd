"""Where the host time of a std::attention prefill launch goes (GPU, one step, ~20 s; cProfile tables).

The 2026-12-06 13:20 call (H100) read ~0.58 ms of host time a launch call of `std::attention`'s prefill kernel
from PyTorch tensors (`prefill_host_probe.py`: min 0.55, max ~1.1 ms), against <= 8 us for a vector add's
`.launch()` (`launch.py`) and ~0.07 ms for a GEMM (`first_case_probe.py`); on the fake CUDA device (no driver)
the same attention call is ~23 us of Python. So the rest is on the real device's path: this script profiles
50 launch calls (each waited for after its clock stops) of the f16 D = 128 prefill kernel at S = 1,024, and
prints the functions by cumulative and by own time.

    python benchmarks/launch_profile.py [--causal] [--s 1024]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import attention as A  # noqa: E402
import torch  # noqa: E402
from launch_cases import prefill_shape, view_call  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--s", type=int, default=1024)
    a = ap.parse_args()
    s, d = a.s, 128
    b, h = prefill_shape(s, d)
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
    bm, bn = A.blocks(d, "cuda")
    kern = A.ATTN.flash_attention["f16", bm, bn, d]
    o = torch.empty_like(q)
    tile = view_call(kern, o, q, k, v, a.causal, bm)

    for _ in range(5):
        A.fn_wait(tile())
    torch.cuda.synchronize()
    ts = []
    pr = cProfile.Profile()
    for _ in range(50):
        torch.cuda.synchronize()
        t = time.perf_counter()
        pr.enable()
        hd = tile()
        pr.disable()
        ts.append((time.perf_counter() - t) * 1e3)
        A.fn_wait(hd)
    ts.sort()
    print(f"host ms a launch call (profiled): min {ts[0]:.3f} median {ts[25]:.3f} max {ts[-1]:.3f}")
    st = pstats.Stats(pr)
    st.sort_stats("cumulative").print_stats(28)
    st.sort_stats("tottime").print_stats(15)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
