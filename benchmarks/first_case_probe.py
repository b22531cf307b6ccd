"""Why cliffs.py's first case reads slow for all its reps (GPU, one step, ~30-60 s; one line a measurement).

Call 13 (H100, 2026-12-06 10:53): `gemm f16 4096x4096x4096 128x128x64`, cliffs.py's first case, read 1.149 ms
(0.16x) while gemm_hints_sweep.py's own process read 0.218 ms for the same kernel; call 7's first case read 0.37x
against 0.84x warm. cliffs.time_ms times GPU events around our launch, each rep enqueued behind a 1,000,000-cycle
GPU sleep: an event pair reads host time too where our launch call takes longer on the host than the sleep
(~0.5 ms), and the card's clock where it idled before.

This script runs that first case as cliffs.py does (`--jobs` prewarm in spawned processes first, unless
`--no-prewarm`), then times it three ways, in three passes:
  pass  N  host  (ms a launch call on the host: kern(*args).launch(), min / median / max)
           event (cliffs.time_ms's event pair behind the sleep: median / max)
           round (events around 10 launch + wait round trips, no sleep: ms a round trip)
and the SM clock (nvidia-smi) before each pass.

Expected (hcliff2, before the run): if pass 1's host median is > ~0.5 ms and passes 2-3 are ~0.02-0.05 ms, the
first launches of a process are slow on the host (our launch path: a lazy import, a cache filled per call, a fast
launcher not yet made) and users see it too; if host is small in every pass but pass 1's event median is high,
the GPU (clock ramp after idle, a first-touch of memory) - not our code; `round` reads the kernel plus the
host's launch and wait (~0.25-0.3 ms warm) in every pass.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def sm_clock() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.draw", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip().splitlines()[0]
    except Exception as e:  # no nvidia-smi: say so
        return f"? ({type(e).__name__})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-prewarm", action="store_true")
    ap.add_argument("--jobs", type=int, default=14)
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args(argv)
    import torch

    import cliffs
    import tilelang
    from cliffs_cases import all_cases

    case = all_cases()[0]
    print(f"# {torch.cuda.get_device_name()}; case {case.name}; prewarm {not a.no_prewarm}", flush=True)
    if not a.no_prewarm:
        cliffs.prewarm(all_cases(), a.jobs)
    cliffs.warm_up()
    t = cliffs.make_tensors(case)
    kern = getattr(cliffs.module(case), case.kernel)[case.generics]
    args = [tilelang.partition(t[x[1]], list(x[4])) if x[4] is not None else t[x[1]] for x in case.args if x[0] == "t"]
    t0 = time.perf_counter()
    kern(*args).launch().wait()
    torch.cuda.synchronize()
    print(f"first launch (load + compile-cache hit or compile): {(time.perf_counter() - t0) * 1e3:.1f} ms", flush=True)
    for p in range(1, 4):
        clock = sm_clock()
        hosts, events = [], []
        for _ in range(a.reps):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(1_000_000)
            e0.record()
            h0 = time.perf_counter()
            h = kern(*args).launch()
            hosts.append((time.perf_counter() - h0) * 1e3)
            e1.record()
            h.wait()
            e1.synchronize()
            events.append(e0.elapsed_time(e1))
        torch.cuda.synchronize()
        b0, b1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        b0.record()
        for _ in range(10):
            kern(*args).launch().wait()  # (a second launch writing `c` may not start while one is in flight)
        b1.record()
        b1.synchronize()
        print(f"pass {p}  host {min(hosts):.3f} / {statistics.median(hosts):.3f} / {max(hosts):.3f} ms  "
              f"event {statistics.median(events):.3f} / {max(events):.3f} ms  round {b0.elapsed_time(b1) / 10:.3f} ms  "
              f"clock {clock}", flush=True)
    print(f"cliffs.time_ms now: {cliffs.time_ms(lambda: kern(*args).launch(), a.reps):.3f} ms", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
