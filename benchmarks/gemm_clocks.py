"""What the card's clock does to a GEMM ratio: cuBLAS and Tile's sm_80-path
GEMM (8192^3 bf16), each launched back to back for a second, in the order
cuBLAS, Tile, cuBLAS, idle, Tile, while `nvidia-smi` samples the SM clock and
the power draw. Prints, per phase, each 100 ms of launches' TFLOP/s and the
clock over the same wall-clock window: whether a kernel timed right after
another runs at the other's clock, and how long its own takes to return
(the reason `benchmarks/gemm.py` settles each contender before timing it).

    TILEC_ARCH=sm_80 python benchmarks/gemm_clocks.py [--seconds 1.0] [--dtype bf16]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "backend"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from gemm import tile_launcher  # noqa: E402
from gemm_cases import GemmConfig  # noqa: E402


class Sampler:
    """`nvidia-smi` in a loop: (host time, SM MHz, watts) samples."""

    def __init__(self, period_ms: int = 20) -> None:
        self.samples: list[tuple[float, float, float]] = []
        self.proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", f"-lms={period_ms}"],
            stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                mhz, watts = (float(x) for x in line.split(","))
            except ValueError:
                continue
            self.samples.append((time.perf_counter(), mhz, watts))

    def window(self, t0: float, t1: float) -> tuple[float, float] | None:
        got = [(m, w) for t, m, w in self.samples if t0 <= t < t1]
        if not got:
            return None
        return statistics.median(m for m, _ in got), statistics.median(w for _, w in got)

    def stop(self) -> None:
        self.proc.terminate()


def run_phase(name: str, fn, seconds: float, flops: float, sampler: Sampler, bin_s: float = 0.1) -> None:  # type: ignore[no-untyped-def]
    """Launch `fn` back to back for `seconds`, each launch between two events;
    report each `bin_s` of host time: the launches' TFLOP/s and the clock."""
    import torch

    marks = []  # (host time after the launch was queued, start event, end event)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()  # one launch in flight: the host time is the launch's end, within ~10 us
        marks.append((time.perf_counter(), s, e))
    rows = []
    b = 0
    while True:
        lo, hi = t0 + b * bin_s, t0 + (b + 1) * bin_s
        ms = [s.elapsed_time(e) for t, s, e in marks if lo <= t < hi]
        if not ms and lo > marks[-1][0]:
            break
        clock = sampler.window(lo, hi)
        rate = f"{flops / statistics.median(ms) / 1e9:6.1f}" if ms else "     -"
        where = f"{clock[0]:5.0f} MHz {clock[1]:5.0f} W" if clock else "   (no sample)"
        rows.append(f"  {b * bin_s:4.1f}-{(b + 1) * bin_s:3.1f} s  {rate} TFLOP/s  {where}  ({len(ms)} launches)")
        b += 1
    all_ms = [s.elapsed_time(e) for _, s, e in marks]
    print(f"{name}: {len(marks)} launches, median {flops / statistics.median(all_ms) / 1e9:.1f} TFLOP/s", flush=True)
    print("\n".join(rows), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--dtype", choices=("f16", "bf16"), default="bf16")
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--config", default="128x256x64", help="the Tile config, BMxBNxBK")
    args = ap.parse_args()
    import torch

    n = args.n
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    a = torch.randn(n, n, device="cuda", dtype=tdt)
    b = torch.randn(n, n, device="cuda", dtype=tdt)
    c = torch.empty(n, n, device="cuda", dtype=tdt)
    bm, bn, bk = (int(x) for x in args.config.split("x"))
    tile, _ = tile_launcher(GemmConfig(bm, bn, bk, dtype=args.dtype, out=args.dtype), a, b, c)
    err = ((c.float() - (a @ b).float()).norm() / (a @ b).float().norm()).item()
    print(f"Tile {args.config} {args.dtype} (relative error {err:.2e}); cuBLAS = torch.matmul", flush=True)
    flops = 2.0 * n * n * n
    sampler = Sampler()
    try:
        time.sleep(1.0)
        cublas = lambda: torch.matmul(a, b)  # noqa: E731
        run_phase("cuBLAS after 1 s idle", cublas, args.seconds, flops, sampler)
        run_phase("Tile right after cuBLAS", tile, args.seconds, flops, sampler)
        run_phase("cuBLAS right after Tile", cublas, args.seconds, flops, sampler)
        time.sleep(1.0)
        run_phase("Tile after 1 s idle", tile, args.seconds, flops, sampler)
    finally:
        sampler.stop()


if __name__ == "__main__":
    main()
