"""Issue 15: why one prefill row runs up to 45 % slower in one process than in
the next (RESULTS.md, "the session's final calls on main 949ca4cd": SDPA's rows
vary by <= 3 % between processes, ours by up to 45 %, and a slow row stays
slow through its reps). Written without a device (2026-12-06); its first run
is the probe.

For each row, in one process: the launch's kernel as the runtime chose it (its
CTAs an SM by the ABI, `KernelABI.persistent`, against the driver's occupancy
calculator for the same threads and shared memory, and the CUDA grid), then
ALLOCS fresh sets of q, k, v, o (a spacer of a random size allocated before
each, so the bases move), each timed REPS times launch by launch (a sleep
kernel before each, as `attention.py`'s `time_ms`): Tile alone, then Tile with
SDPA launched right before it in the same stream, then SDPA alone. One line an
allocation: the bases modulo 2 MiB, the medians and the min/max of each.

Reading it: a slow allocation with fast neighbours points at placement (L2
partitions, DRAM channels); Tile after SDPA slower than Tile alone points at the
SMs' shared-memory configuration (the persistent grid then runs part of its
CTAs as a second wave: about 2x on the CTAs' tiles); resident < persistent says
the grid cannot be co-resident at all.

    python benchmarks/prefill_variance.py [--rows f16-128-full-1024,...] [--allocs 4] [--reps 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import attention as bench  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tilelang  # noqa: E402
from launch_record import CHOSEN, record, resident  # noqa: E402

ROWS = "f16-128-full-1024,f16-128-full-4096,bf16-64-causal-1024,f16-64-full-1024,bf16-128-full-1024"


def each_ms(fn: Any, reps: int, before: Any = None) -> list[float]:
    """Milliseconds of `fn()` launch by launch (after `before()` where given)."""
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(2_000_000)
        if before is not None:
            before()
        a.record()
        h = fn()
        b.record()
        bench.fn_wait(h)
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b))
    return out


def clocks() -> str:
    """The SM clock, power and temperature now (nvidia-smi), or "" without it."""
    import subprocess

    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=10)
        return "[" + r.stdout.strip() + "]"
    except Exception:
        return ""


def summary(ts: list[float]) -> str:
    return f"{statistics.median(ts) * 1e3:8.1f} us [{min(ts) * 1e3:.1f}, {max(ts) * 1e3:.1f}]"


def probe(row: str, allocs: int, reps: int, tokens: int, after_kinds: list[str]) -> None:
    dtype, d_s, mode, s_s = row.split("-")
    d, s, causal = int(d_s), int(s_s), mode == "causal"
    h, b = 2048 // d, max(1, tokens // s)
    dt = bench.DT[dtype]
    bm, bn = bench.blocks(d, "cuda")
    kern = bench.ATTN.flash_attention[dtype, bm, bn, d]
    fl = 4 * b * h * s * s * d * (0.5 if causal else 1.0)
    print(f"== {row}: B={b} H={h} blocks {bm}x{bn}")
    gen = torch.Generator(device="cuda").manual_seed(s + d)
    keep: list[Any] = []
    for n in range(allocs):
        keep.append(torch.empty(int(torch.randint(1, 1 << 22, (1,))), dtype=torch.uint8, device="cuda"))
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dt, generator=gen) for _ in range(3))
        o = torch.empty_like(q)
        q3, k3, v3 = (t.view(b * h, s, d) for t in (q, k, v))

        def tile() -> Any:
            return kern(tilelang.partition(o.view(b * h, s, d), [1, bm, d]), q3, k3, v3, d**-0.5, causal).launch()

        def sdpa() -> Any:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        bench.fn_wait(tile())
        torch.cuda.synchronize()
        if n == 0 and CHOSEN:
            dev, abi = CHOSEN[-1][:2]
            res = resident(CHOSEN[-1])
            print(f"   kernel {abi.name}: {abi.num_threads} threads, {abi.smem_bytes} B shared, persistent "
                  f"{getattr(abi, 'persistent', 0)} an SM, the driver's occupancy {res} an SM, "
                  f"{dev.ctx.info.sm_count} SMs")
        if after_kinds:
            junk = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
            kinds = {"none": None, "sdpa": sdpa, "tile": tile, "zero": junk.zero_}
            for who, fn in (("Tile", tile), ("SDPA", sdpa)):
                print(f"   alloc {n}: {who} after " + " | ".join(
                    f"{a} {summary(each_ms(fn, reps, before=kinds[a]))}" for a in after_kinds))
            burst = []
            for who, fn in (("Tile", tile), ("SDPA", sdpa)):
                for _ in range(3):
                    torch.cuda._sleep(2_000_000)
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    for _ in range(10):
                        fn()
                    e1.record()
                    torch.cuda.synchronize()
                    burst.append(f"{who} {e0.elapsed_time(e1) * 100:.1f}")
            print("   ten back to back, us a launch: " + ", ".join(burst))
            del junk
            continue
        alone = each_ms(tile, reps)
        after = each_ms(tile, reps, before=sdpa)
        ref = each_ms(sdpa, reps)
        chosen = f"{CHOSEN[-1][1].name}/{id(CHOSEN[-1][2]) % 10000}" if CHOSEN else "?"
        bases = " ".join(f"{t.data_ptr() % (1 << 21):#08x}" for t in (q, k, v, o))
        print(f"   alloc {n}: {chosen} {clocks()} bases mod 2 MiB {bases} | Tile alone {summary(alone)} "
              f"({fl / statistics.median(alone) / 1e9:.0f} TFLOP/s) | Tile after SDPA {summary(after)} | "
              f"SDPA {summary(ref)} ({fl / statistics.median(ref) / 1e9:.0f} TFLOP/s)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default=ROWS, help="dtype-D-full|causal-S, comma separated")
    ap.add_argument("--allocs", type=int, default=4)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--after", default="", help="none,sdpa,tile,zero: time each kernel after each of these "
                    "(zero: a 256 MiB memset, all SMs and no shared memory) instead of the default three columns")
    ap.add_argument("--tokens", type=int, default=16384, help="B x S, as attention.py's rows")
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("prefill_variance: needs a CUDA GPU")
        return 2
    record()
    for row in a.rows.split(","):
        probe(row, a.allocs, a.reps, a.tokens, [x for x in a.after.split(",") if x])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
