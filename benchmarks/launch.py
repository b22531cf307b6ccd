"""Host cost of a Tile launch from Python, against PyTorch and Triton in one run
(issue 16's targets), and of building an operation on NumPy arrays.

    python benchmarks/launch.py [--out DIR] [--only cpu,gpu,graph,profile] [--n 4096]

Sections:
  cpu      building `mod.add(tilelang.partition(z, [1024]), x, y)` on NumPy arrays,
           no run (target <= 15 us); runs anywhere
  gpu      a 4,096-element f32 vector add on PyTorch CUDA tensors, host time per call
           (median of per-call `perf_counter` samples, the GPU never the bottleneck):
           Tile `.launch()` (a fresh call each time, and a prebuilt operation), Tile
           `.sync()`, `torch.add(out=)` and `+ torch.cuda.synchronize()`, the Triton
           kernel's launch and launch + sync (targets: `.launch()` <= 8 us, `.sync()`
           <= 20 us), for both of Tile's driver-call paths (the cuda.bindings binding,
           `TILEC_LAUNCH=ctypes`)
  graph    a Tile graph of 100 launches (`tilelang.graph()`) replayed: GPU time per
           kernel (target <= 1.5 us); and 100 Tile launches captured by
           `torch.cuda.graph`, replayed by PyTorch
  profile  `tilelang.profile()` GPU times of a large vector add against CUDA events
           taken around the same launches by PyTorch; writes a roofline PNG

Every section prints its lines and adds to `launch.json` in `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tilelang  # noqa: E402

RESULTS: dict[str, Any] = {}
ADD = ROOT / "examples" / "add.tile"


def log(name: str, text: str, **data: Any) -> None:
    print(f"[{name}] {text}", flush=True)
    RESULTS.setdefault(name, []).append({"text": text, **data})


def per_call_us(fn, n: int = 2000, warm: int = 200, between=None) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Median and 10th percentile of `fn`'s host time in us; `between(result)`
    runs untimed after each call (waiting for a launch, say)."""
    for _ in range(warm):
        r = fn()
        if between is not None:
            between(r)
    samples = []
    clock = time.perf_counter
    for _ in range(n):
        t0 = clock()
        r = fn()
        samples.append(clock() - t0)
        if between is not None:
            between(r)
    samples.sort()
    return statistics.median(samples) * 1e6, samples[len(samples) // 10] * 1e6


def yardstick_us() -> float:
    """A pure-Python loop, to read the machine's speed next to the numbers."""
    t0 = time.perf_counter()
    x = 0
    for i in range(1_000_000):
        x += i
    return (time.perf_counter() - t0) * 1e6 / 1_000_000


# ---------------------------------------------------------------- cpu
def bench_cpu(n: int) -> None:
    mod = tilelang.load(ADD)
    x = np.random.rand(n).astype(np.float32)
    y = np.random.rand(n).astype(np.float32)
    z = np.zeros_like(x)
    mod.add(tilelang.partition(z, [1024]), x, y).sync()
    warnings.simplefilter("ignore", RuntimeWarning)  # the operations are built, never run

    def build() -> Any:
        return mod.add(tilelang.partition(z, [1024]), x, y)

    med, p10 = per_call_us(build, n=5000)
    op = build()
    run, _ = per_call_us(op.sync, n=50, warm=5)
    log(
        "cpu",
        f"build an operation on NumPy arrays: {med:.2f} us median ({p10:.2f} p10), target <= 15 us; "
        f"running it on the interpreter {run:.0f} us; yardstick {yardstick_us() * 1e3:.1f} ns per loop step",
        build_us=med,
        build_p10_us=p10,
        interp_run_us=run,
        yardstick_ns=yardstick_us() * 1e3,
    )


# ---------------------------------------------------------------- gpu
def _triton_add() -> Any:
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(
            z_ptr + offs,
            tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
            mask=mask,
        )

    return add_kernel


def bench_gpu(n: int) -> None:
    import torch

    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    z = torch.zeros(n, device="cuda")
    sync = torch.cuda.synchronize
    P = tilelang.partition
    for mode in ("binding", "ctypes"):
        if mode == "ctypes":
            os.environ["TILEC_LAUNCH"] = "ctypes"
        else:
            os.environ.pop("TILEC_LAUNCH", None)
        mod = tilelang.load(ADD)  # new kernels: new plans and launchers for this mode
        mod.add(P(z, [1024]), x, y).sync()
        torch.testing.assert_close(z, x + y)
        fresh, fresh10 = per_call_us(
            lambda m=mod: m.add(P(z, [1024]), x, y).launch(), between=lambda h: h.wait()
        )
        op = mod.add(P(z, [1024]), x, y)
        pre, _ = per_call_us(op.launch, between=lambda h: h.wait())
        full, full10 = per_call_us(lambda m=mod: m.add(P(z, [1024]), x, y).sync())
        log(
            "gpu",
            f"Tile ({mode}) `.launch()`: {fresh:.2f} us (call + launch; p10 {fresh10:.2f}), "
            f"{pre:.2f} us (prebuilt operation); `.sync()` {full:.2f} us (p10 {full10:.2f})",
            mode=mode,
            launch_us=fresh,
            launch_p10_us=fresh10,
            prebuilt_launch_us=pre,
            sync_us=full,
            sync_p10_us=full10,
        )
    os.environ.pop("TILEC_LAUNCH", None)
    t_add, _ = per_call_us(lambda: torch.add(x, y, out=z), between=lambda _: sync())

    def torch_sync() -> None:
        torch.add(x, y, out=z)
        sync()

    t_sync, _ = per_call_us(torch_sync)
    log(
        "gpu",
        f"PyTorch `torch.add(out=)`: {t_add:.2f} us launch, {t_sync:.2f} us with synchronize",
        torch_launch_us=t_add,
        torch_sync_us=t_sync,
    )
    add_kernel = _triton_add()
    if add_kernel is None:
        log("gpu", "Triton: not installed")
        return
    grid = ((n + 1023) // 1024,)
    add_kernel[grid](x, y, z, n, BLOCK=1024)
    sync()
    t_tl, _ = per_call_us(
        lambda: add_kernel[grid](x, y, z, n, BLOCK=1024), between=lambda _: sync()
    )

    def triton_sync() -> None:
        add_kernel[grid](x, y, z, n, BLOCK=1024)
        sync()

    t_tls, _ = per_call_us(triton_sync)
    import triton

    log(
        "gpu",
        f"Triton {triton.__version__}: {t_tl:.2f} us launch, {t_tls:.2f} us with synchronize",
        triton_launch_us=t_tl,
        triton_sync_us=t_tls,
    )


# ---------------------------------------------------------------- graphs
def bench_graph(n: int, count: int = 100) -> None:
    import torch

    mod = tilelang.load(ADD)
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    zs = [torch.zeros(n, device="cuda") for _ in range(count)]
    P = tilelang.partition
    ops = [mod.add(P(z, [1024]), x, y) for z in zs]
    for op in ops:
        op.sync()
    with tilelang.graph() as g:
        for op in ops:
            op.launch()
    g.replay()
    torch.testing.assert_close(zs[-1], x + y)
    # GPU time of the graph itself: events around the device's graph launch
    # (around `g.replay()` they would also count the replay's host-side checks)
    dev = ops[0]._plan.runtime.device
    real_replay = dev.replay
    spans: list[tuple[Any, Any]] = []

    def timed_replay(graph: Any, stream: Any = None) -> None:
        e0 = dev.record_event(stream)
        real_replay(graph, stream)
        spans.append((e0, dev.record_event(stream)))

    dev.replay = timed_replay
    try:
        for _ in range(20):
            g.replay()
    finally:
        dev.replay = real_replay
    per = statistics.median(dev.event_seconds(a, b) * 1e6 / count for a, b in spans)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(20):
        start.record()
        g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / count)
    host, _ = per_call_us(g.replay, n=50, warm=5)
    with_checks = statistics.median(times)
    log(
        "graph",
        f"tilelang.graph() of {count} launches: {per:.3f} us GPU time per kernel (target <= 1.5 us); "
        f"{with_checks:.3f} us per kernel between events around `g.replay()` (its host-side checks "
        f"included); {host:.1f} us host per replay (incl. its wait)",
        tile_graph_us_per_kernel=per,
        tile_graph_us_per_kernel_with_checks=with_checks,
        replay_host_us=host,
    )
    # PyTorch capturing Tile launches
    for z in zs:
        z.zero_()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for op in ops:
            op.sync()
    torch.cuda.current_stream().wait_stream(s)
    tg = torch.cuda.CUDAGraph()
    for z in zs:
        z.zero_()
    with torch.cuda.graph(tg):
        for op in ops:
            op.sync()  # captured: no wait, no allocation
    assert float(zs[0].abs().sum()) == 0.0  # nothing ran during capture
    tg.replay()
    sync()
    torch.testing.assert_close(zs[-1], x + y)
    times = []
    for _ in range(20):
        start.record()
        tg.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / count)
    per_t = statistics.median(times)
    log(
        "graph",
        f"torch.cuda.graph capturing {count} Tile launches: {per_t:.3f} us per kernel",
        torch_graph_us_per_kernel=per_t,
    )


def sync() -> None:
    import torch

    torch.cuda.synchronize()


# ---------------------------------------------------------------- profiler
def bench_profile(out: Path, n: int = 1 << 26) -> None:
    import torch

    mod = tilelang.load(ADD)
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    z = torch.zeros(n, device="cuda")
    P = tilelang.partition
    op = mod.add(P(z, [1024]), x, y)
    op.sync()
    events = []
    with tilelang.profile(print_table=False) as prof:
        for _ in range(10):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            op.launch()._end_borrows()
            e1.record()
            events.append((e0, e1))
        sync()
    ours = [r.seconds * 1e6 for r in prof.records]
    theirs = [a.elapsed_time(b) * 1e3 for a, b in events]
    worst = max(abs(a - b) / b for a, b in zip(ours, theirs, strict=True))
    rec = prof.records[0]
    pct = rec.percent_of_peak()
    log(
        "profile",
        f"profiler vs CUDA events over 10 launches of a {n}-element add: "
        f"median {statistics.median(ours):.1f} us vs {statistics.median(theirs):.1f} us, worst difference "
        f"{worst * 100:.1f}%; {rec.bandwidth / 1e12:.2f} TB/s"
        + (f", {pct[0]:.0f}% of {rec.peak.name}'s peak {pct[1]}" if pct and rec.peak else ""),
        profiler_us=ours,
        events_us=theirs,
        worst_rel=worst,
        tbps=rec.bandwidth / 1e12,
    )
    print(prof.table(), end="")
    from tilelang.profiler.report import roofline

    pts = [(f"add {n}", rec.cost.flops / rec.cost.bytes, rec.flop_rate)]
    wrote = roofline(
        pts, rec.peak, str(out / "roofline_launch.png"), "vector add (tilelang.profile)"
    )
    log(
        "profile",
        "roofline: " + ("roofline_launch.png" if wrote else "not written (no matplotlib)"),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--only", default="cpu,gpu,graph,profile")
    ap.add_argument("--n", type=int, default=4096)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    RESULTS["machine"] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "numpy": np.__version__,
    }
    only = a.only.split(",")
    if "cpu" in only:
        bench_cpu(a.n)
    gpu = tilelang.gpu_available()
    if not gpu:
        print("[gpu] no GPU: the gpu, graph and profile sections are skipped")
    else:
        import torch

        RESULTS["machine"].update(torch=torch.__version__, device=torch.cuda.get_device_name())
        if "gpu" in only:
            bench_gpu(a.n)
        if "graph" in only:
            bench_graph(a.n)
        if "profile" in only:
            bench_profile(out)
    (out / "launch.json").write_text(json.dumps(RESULTS, indent=2, default=str))


if __name__ == "__main__":
    main()
