"""Host cost of a Tile launch from Python, against PyTorch and Triton in one run
(issue 16's targets), and of building an operation on NumPy arrays.

    python benchmarks/launch.py [--out DIR] [--only cpu,fake,gpu,graph,profile] [--n 4096]

Sections (a table of everything measured ends the output):
  cpu      building `mod.add(tilelang.partition(z, [1024]), x, y)` on NumPy arrays,
           no run (target <= 15 us); runs anywhere
  fake     the whole host path of a GPU call (fresh call, prebuilt operation,
           `.sync()`) on the fake CUDA device of `tilelang/runtime/cuda_fake.py`
           (the real native launcher over a stub libcuda that does nothing),
           PyTorch CPU tensors standing for CUDA ones (and
           `__cuda_array_interface__` arrays): CPU time of this thread, least mean
           over batches, and the Python bytecodes and functions a fresh
           launch + wait still runs (`sys.settrace`, deterministic); the
           `torch+native-py` row is the same without the C plan; runs anywhere
           with a C compiler
  gpu      a 4,096-element f32 vector add on PyTorch CUDA tensors, host time per call
           (median of per-call `perf_counter` samples, the GPU never the bottleneck):
           Tile `.launch()` (a fresh call each time, and a prebuilt operation), Tile
           `.sync()`, `torch.add(out=)` and `+ torch.cuda.synchronize()`, the Triton
           kernel's launch and launch + sync (targets: `.launch()` <= 8 us, `.sync()`
           <= 20 us), for each of Tile's driver-call paths (the native launcher of
           `runtime/cuda_native.py`, the default once built; the cuda.bindings
           binding, `TILEC_LAUNCH=binding`; ctypes, `TILEC_LAUNCH=ctypes`)
  graph    a Tile graph of 100 launches (`tilelang.graph()`) replayed: GPU time per
           kernel (target <= 1.5 us); and 100 Tile launches captured by
           `torch.cuda.graph`, replayed by PyTorch
  profile  `tilelang.profile()` GPU times of a large vector add against CUDA events
           taken around the same launches by PyTorch; writes a roofline PNG

Every section prints its lines and adds to `launch.json` in `--out`; the
output ends with issue 16's table (Tile vs `torch.add` + sync vs Triton
launch + sync) and a table of everything measured with the targets; the
profile section draws `roofline_launch.png` (matplotlib, optional).
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
    # Machines compared by ratios, not absolute numbers: a pure-Python loop and
    # PyTorch's own `torch.add(out=)` on 4,096 CPU floats, timed here too
    torch_add = None
    try:
        import torch

        tx, ty, tz = torch.randn(n), torch.randn(n), torch.zeros(n)
        torch_add, _ = per_call_us(lambda: torch.add(tx, ty, out=tz), n=5000)
    except ImportError:
        pass
    log(
        "cpu",
        f"build an operation on NumPy arrays: {med:.2f} us median ({p10:.2f} p10), target <= 15 us; "
        f"running it on the interpreter {run:.0f} us; yardstick {yardstick_us() * 1e3:.1f} ns per loop step"
        + (f"; torch.add(out=) on {n} CPU floats {torch_add:.2f} us" if torch_add is not None else ""),
        build_us=med,
        build_p10_us=p10,
        interp_run_us=run,
        yardstick_ns=yardstick_us() * 1e3,
        torch_cpu_add_us=torch_add,
    )


# ---------------------------------------------------------------- fake
def _stub_native() -> Any:
    """The native launcher's extension built here against a stub libcuda
    (`tilelang.runtime.cuda_fake`) whose entry points return at once, so the
    fake device runs the same Python and C path as the GPU (None without a
    C compiler or `Python.h`)."""
    import tempfile

    from tilelang.runtime import cuda_fake

    try:
        return cuda_fake.stub_native(Path(tempfile.mkdtemp(prefix="tile-stub-")))[0]
    except Exception:
        return None


class _CaiArray:
    """A CUDA array of another library (`__cuda_array_interface__`), over host memory."""

    def __init__(self, host: np.ndarray) -> None:
        self.host = host  # the interface is made once: a library's own cost is not Tile's
        self._iface = {
            "shape": host.shape, "typestr": host.dtype.str, "version": 3, "stream": 7,
            "data": (host.__array_interface__["data"][0], False), "strides": None,
        }  # fmt: skip

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return self._iface


def count_bytecodes(fn) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """(Python bytecodes executed, Python functions entered) by one call of
    `fn` after a warm-up call, `fn`'s own frame not counted: how much of
    the path is still Python (finalisers included)."""
    fn()
    counts = [0, 0]
    own = fn.__code__

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "call":
            if frame.f_code is own:
                return None
            counts[1] += 1
            frame.f_trace_opcodes = True
            return tracer
        if event == "opcode":
            counts[0] += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return counts[0], counts[1]


def cpu_us(fn, n: int = 200, rounds: int = 30) -> float:  # type: ignore[no-untyped-def]
    """The least mean CPU time (this thread's, so a busy machine's other work
    is not counted) of `fn` over `rounds` batches of `n` calls, in us."""
    best = float("inf")
    clock = time.thread_time
    for _ in range(rounds):
        t0 = clock()
        for _ in range(n):
            fn()
        best = min(best, (clock() - t0) / n)
    return best * 1e6


def bench_fake(n: int) -> None:
    """The whole Python path of a launch on a fake CUDA device (no GPU needed)."""
    from tilelang.runtime import cuda_fake

    try:
        import torch
    except ImportError:
        torch = None
    warnings.simplefilter("ignore", RuntimeWarning)  # built operations not run
    P = tilelang.partition
    stub = _stub_native() if torch is not None else None
    flavours = []
    if torch is not None:
        flavours.append(("torch", torch.randn(n), torch.randn(n), torch.zeros(n)))
        if stub is not None:  # the GPU's path: the native launcher, here over a stub
            flavours.append(("torch+native", torch.randn(n), torch.randn(n), torch.zeros(n)))
            # the same without the C plan (`FastPlan`): the generated Python memo and launch
            flavours.append(("torch+native-py", torch.randn(n), torch.randn(n), torch.zeros(n)))
    h = [np.zeros(n, np.float32) for _ in range(3)]
    flavours.append(("cuda-array", *(_CaiArray(a) for a in h)))
    from tilelang.api import operation

    native_memo = operation._native_memo
    for name, x, y, z in flavours:
        operation._native_memo = (  # type: ignore[assignment]
            (lambda plan, nat: None) if name == "torch+native-py" else native_memo
        )
        with cuda_fake.installed(stub if name.startswith("torch+native") else None):
            mod = tilelang.load(ADD)
            op = mod.add(P(z, [1024]), x, y)
            op.sync()
            op.sync()
            assert op._plan.engine == "cuda:0" and op._plan.launcher is not None

            def build(mod=mod, x=x, y=y, z=z) -> None:  # type: ignore[no-untyped-def]
                mod.add(P(z, [1024]), x, y)._runs = 1

            def fresh(m=mod, x=x, y=y, z=z) -> None:  # type: ignore[no-untyped-def]
                m.add(P(z, [1024]), x, y).launch().wait()

            row = {
                "fresh_launch_wait_us": cpu_us(fresh),
                "build_us": cpu_us(build),
                "prebuilt_launch_wait_us": cpu_us(lambda op=op: op.launch().wait()),
                "fresh_sync_us": cpu_us(lambda m=mod, x=x, y=y, z=z: m.add(P(z, [1024]), x, y).sync()),
                "prebuilt_sync_us": cpu_us(op.sync),
            }
            row["one_function"] = op._plan.fast_launch is not None
            row["native_plan"] = type(op._plan.fast_launch).__name__ == "builtin_function_or_method"
            row["fresh_launch_wait_bytecodes"], row["fresh_launch_wait_calls"] = count_bytecodes(fresh)
            log(
                "fake",
                f"fake CUDA device, {name} arrays (CPU time of the Python path, no driver"
                f"{'; launch in C' if row['native_plan'] else '; one-function launch' if row['one_function'] else ''}): "
                f"fresh call + launch + wait {row['fresh_launch_wait_us']:.2f} us "
                f"({row['fresh_launch_wait_bytecodes']} bytecodes in {row['fresh_launch_wait_calls']} Python calls), build "
                f"{row['build_us']:.2f} us, prebuilt launch + wait {row['prebuilt_launch_wait_us']:.2f} us, "
                f"fresh .sync() {row['fresh_sync_us']:.2f} us, prebuilt .sync() {row['prebuilt_sync_us']:.2f} us",
                arrays=name,
                **row,
            )
    operation._native_memo = native_memo  # type: ignore[assignment]
    log("fake", f"yardstick: an empty call {cpu_us(lambda: None) * 1e3:.0f} ns", yardstick_call_ns=cpu_us(lambda: None) * 1e3)


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
    from tilelang.runtime import cuda_native

    for mode in ("native", "binding", "ctypes"):
        if mode == "native":
            os.environ.pop("TILEC_LAUNCH", None)
            if cuda_native.native(wait=True) is None:
                log("gpu", f"native launcher not available: {cuda_native.native_error()}")
                continue
        else:
            os.environ["TILEC_LAUNCH"] = mode
        mod = tilelang.load(ADD)  # new kernels: new plans and launchers for this mode
        mod.add(P(z, [1024]), x, y).sync()
        torch.testing.assert_close(z, x + y)
        fresh, fresh10 = per_call_us(
            lambda m=mod: m.add(P(z, [1024]), x, y).launch(), between=lambda h: h.wait()
        )
        op = mod.add(P(z, [1024]), x, y)
        pre, _ = per_call_us(op.launch, between=lambda h: h.wait())
        full, full10 = per_call_us(lambda m=mod: m.add(P(z, [1024]), x, y).sync())
        pre_sync, _ = per_call_us(op.sync)
        if mode == "native":
            _breakdown(mod, op, x, y, z)
        log(
            "gpu",
            f"Tile ({mode}) `.launch()`: {fresh:.2f} us (call + launch; p10 {fresh10:.2f}), "
            f"{pre:.2f} us (prebuilt operation); `.sync()` {full:.2f} us (call + sync; p10 "
            f"{full10:.2f}), {pre_sync:.2f} us (prebuilt)",
            mode=mode,
            launch_us=fresh,
            launch_p10_us=fresh10,
            prebuilt_launch_us=pre,
            sync_us=full,
            sync_p10_us=full10,
            prebuilt_sync_us=pre_sync,
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


def _breakdown(mod: Any, op: Any, x: Any, y: Any, z: Any) -> None:
    """Where a native `.launch()` spends its host time, piece by piece on the
    same tensors (median us of per-call samples): the driver call alone (the
    extension's launch of the prebuilt operation's kernel, waited for between
    calls like the rest), PyTorch's tensor checks, the API's objects; and
    whether the memo (`TensorGuards`) and the one-function launch are in use.
    Read against `torch.add`'s launch: what Tile adds over the driver."""
    import torch

    from tilelang.api import operation as O
    from tilelang.runtime.cuda_native import _STATE

    plan = op._plan
    nat = _STATE["module"]
    fl = plan.launcher
    raw = int(plan.stream_of())
    P = tilelang.partition
    parts: dict[str, float] = {}
    if nat is not None and getattr(fl, "_native_own", None) is not None:
        import functools

        go = functools.partial(nat.launch, *fl._native_own)
        parts["driver_call"] = per_call_us(lambda: go(raw, *op._ptrs), between=lambda _: nat.sync(raw))[0]
        parts["stream_sync_idle"] = per_call_us(lambda: nat.sync(raw))[0]
    objs = op._objs
    if plan.guard is not None:
        parts["tensor_guards"] = per_call_us(lambda: plan.guard(*objs))[0]
    parts["data_ptrs"] = per_call_us(lambda: list(map(O._DATA_PTR, objs)))[0]
    parts["stream_of"] = per_call_us(plan.stream_of)[0]
    if plan.bump is not None:
        parts["version_bump"] = per_call_us(lambda: plan.bump((z,)))[0]
    parts["partition"] = per_call_us(lambda: P(z, [1024]))[0]

    def build() -> None:
        mod.add(P(z, [1024]), x, y)._runs = 1

    parts["build"] = per_call_us(build)[0]
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # a non-default stream: the legacy stream's cost, if any
        op.sync()
        parts["launch_on_a_side_stream"] = per_call_us(op.launch, between=lambda h: h.wait())[0]
    parts["torch_empty_like"] = per_call_us(lambda: torch.empty_like(z))[0]
    parts["yardstick_ns_per_loop_step"] = yardstick_us() * 1e3
    text = ", ".join(f"{k} {v:.2f}" for k, v in parts.items())
    log(
        "gpu",
        f"native `.launch()` breakdown (us): {text}; memo {'on' if mod.add._memo is not None else 'OFF'}, "
        f"one-function launch {'on' if plan.fast_launch is not None else 'OFF'}, "
        f"guard {'on' if plan.guard is not None else 'OFF'}",
        breakdown=parts,
        memo=mod.add._memo is not None,
        one_function=plan.fast_launch is not None,
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


def _get(section: str, field: str, **match: Any) -> float | None:
    for row in RESULTS.get(section, []):
        if field in row and all(row.get(k) == v for k, v in match.items()):
            return float(row[field])
    return None


def issue_table() -> None:
    """Issue 16's table: host time per call of a 4,096-element vector add, Tile
    (the default launch path: native when built, else the binding) against
    PyTorch's `torch.add` + sync and Triton's launch + sync, in one run."""
    mode = next(
        (m for m in ("native", "binding") if _get("gpu", "sync_us", mode=m) is not None), None
    )
    if mode is None:
        return

    def us(v: float | None) -> str:
        return "" if v is None else f"{v:.1f} us"

    lines = [
        f"| call (Tile: {mode} launch path) | Tile | PyTorch `torch.add` + sync | Triton launch + sync |",
        "| --- | --- | --- | --- |",
        f"| `mod.add(partition(z, [1024]), x, y).sync()` | {us(_get('gpu', 'sync_us', mode=mode))} "
        f"| {us(_get('gpu', 'torch_sync_us'))} | {us(_get('gpu', 'triton_sync_us'))} |",
        f"| `mod.add(partition(z, [1024]), x, y).launch()` | {us(_get('gpu', 'launch_us', mode=mode))} "
        f"| {us(_get('gpu', 'torch_launch_us'))} (launch) | {us(_get('gpu', 'triton_launch_us'))} (launch) |",
        f"| the same `Operation` re-launched | {us(_get('gpu', 'prebuilt_launch_us', mode=mode))} | | |",
        f"| the same `Operation` re-synced | {us(_get('gpu', 'prebuilt_sync_us', mode=mode))} | | |",
    ]
    g = _get("graph", "torch_graph_us_per_kernel")
    if g is not None:
        lines.append(f"| a Tile launch replayed in `torch.cuda.graph`, per kernel | {us(g)} | | |")
    tg = _get("graph", "tile_graph_us_per_kernel")
    if tg is not None:
        lines.append(f"| a `tilelang.graph()` replay, per kernel (GPU) | {us(tg)} | | |")
    print()
    print("\n".join(lines))


def print_table() -> None:
    """One table of everything measured, with issue 16's targets."""

    def us(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f} us"

    def verdict(v: float | None, target: float) -> str:
        return "" if v is None else ("met" if v <= target else "missed")

    issue_table()
    rows: list[tuple[str, str, str, str]] = []
    for mode in ("native", "binding", "ctypes"):
        fresh = _get("gpu", "launch_us", mode=mode)
        if fresh is None:
            continue
        pre = _get("gpu", "prebuilt_launch_us", mode=mode)
        sync_ = _get("gpu", "sync_us", mode=mode)
        rows += [
            (f"Tile fresh call `.launch()` ({mode})", us(fresh), "<= 8 us", verdict(fresh, 8)),
            (f"Tile prebuilt `.launch()` ({mode})", us(pre), "", ""),
            (f"Tile fresh call `.sync()` ({mode})", us(sync_), "<= 20 us", verdict(sync_, 20)),
            (f"Tile prebuilt `.sync()` ({mode})", us(_get("gpu", "prebuilt_sync_us", mode=mode)), "", ""),
        ]
    g = _get("graph", "tile_graph_us_per_kernel")
    if g is not None:
        rows.append(("Tile `tilelang.graph()` replay, per kernel (GPU)", us(g), "<= 1.5 us", verdict(g, 1.5)))
        tg = _get("graph", "torch_graph_us_per_kernel")
        rows.append(("Tile launches in `torch.cuda.graph`, per kernel", us(tg), "<= 1.5 us", verdict(tg, 1.5)))
    for label, field in (
        ("PyTorch `torch.add(out=)` launch", "torch_launch_us"),
        ("PyTorch `torch.add(out=)` + synchronize", "torch_sync_us"),
        ("Triton launch", "triton_launch_us"),
        ("Triton launch + synchronize", "triton_sync_us"),
    ):
        v = _get("gpu", field)
        if v is not None:
            rows.append((label, us(v), "", ""))
    b = _get("cpu", "build_us")
    if b is not None:
        rows.append(("build an operation on NumPy arrays (CPU)", us(b), "<= 15 us", verdict(b, 15)))
    for flavour in ("torch", "torch+native", "cuda-array"):
        for label, field in (
            ("fresh call + launch + wait", "fresh_launch_wait_us"),
            ("prebuilt launch + wait", "prebuilt_launch_wait_us"),
            ("fresh call + `.sync()`", "fresh_sync_us"),
        ):
            v = _get("fake", field, arrays=flavour)
            if v is not None:
                rows.append((f"fake CUDA device, {flavour} arrays: {label} (Python only)", us(v), "", ""))
    if not rows:
        return
    w = max(len(r[0]) for r in rows)
    print()
    print(f"{'measurement':<{w}}  {'host time':>11}  {'target':>9}  verdict")
    print(f"{'-' * w}  {'-' * 11}  {'-' * 9}  -------")
    for name, value, target, v in rows:
        print(f"{name:<{w}}  {value:>11}  {target:>9}  {v}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--only", default="cpu,fake,gpu,graph,profile")
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
    t0 = time.perf_counter()
    if "cpu" in only:
        bench_cpu(a.n)
    if "fake" in only:
        bench_fake(a.n)
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
    print_table()
    print(f"\n{time.perf_counter() - t0:.1f} s; results in {out / 'launch.json'}")


if __name__ == "__main__":
    main()
