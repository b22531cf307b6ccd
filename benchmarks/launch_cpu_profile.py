"""Where a launch call's host time goes without a GPU (CPU only; ~1-2 min the first time: it compiles the
kernels' sm_90a PTX, cached after).

The real `CudaDevice` (`_run_slow`, `_choose`, `tensor_map`, counters, PackedArgs, `FastLaunch`) over a stub
driver (`tilelang/runtime/cuda_stub.py`: cuda-python's types, Python functions for its calls; host memory
described as `cuda:0` memory through `__cuda_array_interface__`, so PyTorch's own checks are not timed), sm_90a with 132 SMs: the ABI, slots and split form the H100 sees. Times
`kern(partition(o), q, k, v, scale, causal).launch()` + its wait for std::attention's prefill (f16, D = 128,
128x128 blocks, S = 1,024, 16 heads x 16 batches as `benchmarks/prefill_host_probe.py`), causal and not,
a 128x128x64 GEMM (cliffs.py's `gemm`, 4096^3) and a vector add, and prints one line a kernel:
`name  us a launch call (median of N)  path  driver calls a launch`, then with --profile the cProfile tables.
A driver call here costs a Python call, on the GPU the binding's ~2-5 us; the fast path's launches go through
the real native launcher built against `cuda_fake`'s stub libcuda (as on the GPU, where it is the default), or
with --binding (or no C compiler) through `FastLaunch`'s binding branch.

    PYTHONPATH=. python3 benchmarks/launch_cpu_profile.py [--profile attn|causal|gemm|add] [--n 200] [--binding]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import tilelang  # noqa: E402
from tilelang.runtime import cuda_fake, cuda_stub  # noqa: E402
from tilelang.runtime.cuda_stub import DevArray  # noqa: E402
from launch_cases import KERNELS, count_general, gemm_tensors, prefill_shape  # noqa: E402

def calls() -> dict[str, Any]:
    """name -> a function of no arguments making one launch call (returns its handle)."""
    attn = tilelang.compile("use std::attention::*;\n")
    mod = tilelang.compile(KERNELS)
    s, d = 1024, 128
    b, h = prefill_shape(s, d)
    q, k, v, o = (DevArray.zeros((b * h, s, d), np.float16) for _ in range(4))
    kern = attn.flash_attention["f16", 128, 128, d]
    a_, b_, c_, _, _ = gemm_tensors(4096, stub=True)
    x, y, z = (DevArray.zeros((1 << 20,)) for _ in range(3))
    P = tilelang.partition
    return {
        "attn": lambda: kern(P(o, [1, 128, d]), q, k, v, d**-0.5, False).launch(),
        # the probe's spelling: the output a view made in the call (`o.view(b * h, s, d)`)
        "attn_view": lambda: kern(P(DevArray(o.host), [1, 128, d]), q, k, v, d**-0.5, False).launch(),
        "causal": lambda: kern(P(o, [1, 128, d]), q, k, v, d**-0.5, True).launch(),
        "gemm": lambda: mod.gemm[128, 128, 64](P(c_, [128, 128]), a_, b_).launch(),
        "add": lambda: mod.add(P(z, [1024]), x, y).launch(),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--binding", action="store_true")
    a = ap.parse_args()
    nat = None
    if not a.binding and cuda_fake.can_build():
        import tempfile

        nat, _lib = cuda_fake.stub_native(Path(tempfile.mkdtemp(prefix="tile-stub-native-")))
    print(f"# launches through {'the native launcher (stub libcuda)' if nat is not None else 'the binding'}")
    dev = cuda_stub.stub_device("sm_90a", 132)
    slow = count_general(dev)
    with cuda_stub.installed(dev, nat):
        for name, fn in calls().items():
            for _ in range(3):  # the first call compiles and binds: not a launch's cost
                fn().wait()
            before = dict(dev.ctx.d.calls)
            runs = slow[0]
            ts = []
            for _ in range(a.n):
                t = time.perf_counter()
                h = fn()
                ts.append((time.perf_counter() - t) * 1e6)
                h.wait()
            per = {k: (v - before.get(k, 0)) / a.n for k, v in dev.ctx.d.calls.items() if v != before.get(k, 0)}
            path = "fast" if slow[0] == runs else f"general {(slow[0] - runs) / a.n:g}"
            print(f"{name:7s} {statistics.median(ts):8.1f} us a launch call (min {min(ts):.1f}, n {a.n})  "
                  f"{path}  driver/launch: " + ", ".join(f"{k} {v:g}" for k, v in sorted(per.items())), flush=True)
            if a.profile == name:
                pr = cProfile.Profile()
                for _ in range(a.n):
                    pr.enable()
                    h = fn()
                    pr.disable()
                    h.wait()
                st = pstats.Stats(pr)
                st.sort_stats("cumulative").print_stats(30)
                st.sort_stats("tottime").print_stats(20)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
