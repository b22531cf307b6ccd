"""Whether `attention.py`'s prefill rows time the host (GPU, one step, ~20 s a tree; one line a row).

The 2026-12-06 11:53 call read main's std prefill rows at 0.47-1.03x SDPA on one H100 and an older tree with
byte-identical PTX and launch description at 0.93-1.03x beside it, SDPA steady. attention.py's `time_ms` enqueues
each rep behind a 2,000,000-cycle GPU sleep (~1 ms) so that the events time the kernel, not the launch call: an
event pair reads host time too wherever our launch call takes longer on the host than that sleep, and a prefill
row at S = 1,024 is a ~0.25 ms kernel, so 0.25 ms of host time over the sleep halves its ratio.

Per row of `attention.py`'s prefill table (this tree's `benchmarks/attention.py`, imported):
  host    ms a launch call on the host, `kern(partition(o), q, k, v, scale, causal).launch()` after a sync
          (min / median / max of 20)
  ev2M    attention.py's own timing (sleep 2,000,000 cycles, 9 reps): median / max
  ev20M   the same behind a 20,000,000-cycle sleep (~10 ms, far longer than any launch call): median / max
  sdpa    SDPA timed as ev2M
If the host median is near or over ~1 ms, or ev2M > ev20M by more than the spread, the table times the host.

    python benchmarks/prefill_host_probe.py [--only f16-128,bf16-64] [--seqs 1024,4096]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import attention as A  # noqa: E402  (this tree's benchmark: its kernels, shapes and launch)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from launch_cases import prefill_shape, view_call  # noqa: E402


def events(fn, reps: int, sleep: int) -> list[float]:  # type: ignore[no-untyped-def]
    for _ in range(2):
        A.fn_wait(fn())
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(sleep)
        a.record()
        h = fn()
        b.record()
        A.fn_wait(h)
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return ts


def host(fn, n: int = 20) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(n):
        torch.cuda.synchronize()
        t = time.perf_counter()
        h = fn()
        out.append((time.perf_counter() - t) * 1e3)
        A.fn_wait(h)
    return out


def row(dtype: str, d: int, causal: bool, s: int, tokens: int) -> str:
    b, h = prefill_shape(s, d, tokens)
    g = torch.Generator(device="cuda").manual_seed(s + d)
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=A.DT[dtype], generator=g) for _ in range(3))
    bm, bn = A.blocks(d, "cuda")
    kern = A.ATTN.flash_attention[dtype, bm, bn, d]
    o = torch.empty_like(q)
    tile = view_call(kern, o, q, k, v, causal, bm)

    def sdpa():  # type: ignore[no-untyped-def]
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    A.fn_wait(tile())  # (the first call binds the instance: not a launch's cost)
    hs = host(tile)
    e2, e20, sd = events(tile, 9, 2_000_000), events(tile, 9, 20_000_000), events(sdpa, 9, 2_000_000)
    med = statistics.median
    return (f"{dtype}-{d} {'causal' if causal else 'full  '} S={s:5d}  host {min(hs):.3f}/{med(hs):.3f}/{max(hs):.3f}"
            f"  ev2M {med(e2):.3f}/{max(e2):.3f}  ev20M {med(e20):.3f}/{max(e20):.3f}  sdpa {med(sd):.3f}"
            f"  ratio2M {med(sd) / med(e2):.2f}  ratio20M {med(sd) / med(e20):.2f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="f16-128,bf16-64")
    ap.add_argument("--seqs", default="1024,4096")
    a = ap.parse_args()
    seqs = [int(x) for x in a.seqs.split(",")]
    for dtype, d in ((x.split("-")[0], int(x.split("-")[1])) for x in a.only.split(",")):
        for causal in (False, True):
            for s in seqs:
                print(row(dtype, d, causal, s, 16384), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
