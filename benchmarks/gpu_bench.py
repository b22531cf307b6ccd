"""GPU benchmarks of the NVPTX backend and the CUDA runtime (issue 5 targets).

    python benchmarks/gpu_bench.py [--out DIR] [--only NAME,...] [--n-log2 28]

Sections (each prints one line and adds to gpu_bench.json; a table of them
ends the output, and the kernels' roofline is drawn in roofline_gpu_bench.png
when matplotlib is installed):
  vecadd       f32 z = x + y at 2^28 elements: Tile vs PyTorch vs Triton, same run,
               CUDA-event timed, median of 20 after 3 warm-ups (target >= 4.2 TB/s)
  first        first launch of the add kernel in a fresh process, cold and warm
               compile cache (target <= 0.2 s, warm)
  launch       host cost of one cached launch, same arguments (target <= 10 us)
  graph        per-kernel time of a replayed CUDA graph of 100 launches (target <= 3 us)
  cases        runs every backend test case once (for compute-sanitizer)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "backend"))

RESULTS: dict[str, object] = {}
# (label, FLOPs, bytes, seconds) of each kernel measured, for the roofline chart
POINTS: list[tuple[str, float, float, float]] = []


def log(name: str, text: str, **data: object) -> None:
    print(f"[{name}] {text}", flush=True)
    RESULTS[name] = {"text": text, **data}


def _median_ms(fn, iters: int = 20, warm: int = 3) -> float:  # type: ignore[no-untyped-def]
    from tilelang.runtime.cuda import Timer

    for _ in range(warm):
        fn()
    times = []
    t = Timer()
    for _ in range(iters):
        t.start()
        fn()
        t.stop()
        times.append(t.elapsed_ms())
    return statistics.median(times)


def bench_vecadd(n_log2: int) -> None:
    from tilelang.ir import samples
    from tilelang.runtime import cuda

    dev = cuda.device()
    n = 1 << n_log2
    nbytes = 3 * 4 * n
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    dx, dy, dz = dev.upload(x), dev.upload(y), dev.upload(np.zeros(n, np.float32))
    results = {}
    for block, warps in ((1024, 4), (2048, 4), (4096, 8)):
        k = samples.vector_add(block)
        if warps != 4:
            from dataclasses import replace

            k = replace(k, num_warps=warps)
        p = dev.prepare(k)
        grid = (-(-n // block),)
        ms = _median_ms(lambda: dev.run(p, grid, [dz, dx, dy]))
        results[f"tile_B{block}_w{warps}"] = nbytes / ms / 1e6
    got = dev.download(dz, None, (n,))
    assert np.array_equal(got, x + y), "vector add is wrong"
    best = max(results, key=results.get)  # type: ignore[arg-type]
    POINTS.append((f"Tile add 2^{n_log2}", n, nbytes, nbytes / (results[best] * 1e9)))
    try:
        import torch

        tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
        tz = torch.empty_like(tx)
        torch.cuda.synchronize()
        ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ts = []
        for i in range(23):
            ev0.record()
            torch.add(tx, ty, out=tz)
            ev1.record()
            ev1.synchronize()
            if i >= 3:
                ts.append(ev0.elapsed_time(ev1))
        results["torch"] = nbytes / statistics.median(ts) / 1e6
        POINTS.append((f"torch add 2^{n_log2}", n, nbytes, statistics.median(ts) / 1e3))
        try:
            import triton
            import triton.language as tl

            @triton.jit
            def add_k(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
                pid = tl.program_id(0)
                offs = pid * BLOCK + tl.arange(0, BLOCK)
                m = offs < n
                tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

            grid = (triton.cdiv(n, 1024),)
            ts = []
            for i in range(23):
                ev0.record()
                add_k[grid](tx, ty, tz, n, BLOCK=1024)
                ev1.record()
                ev1.synchronize()
                if i >= 3:
                    ts.append(ev0.elapsed_time(ev1))
            results["triton"] = nbytes / statistics.median(ts) / 1e6
        except Exception as e:  # triton missing or broken: say so, keep the rest
            results["triton_error"] = repr(e)[:200]  # type: ignore[assignment]
    except Exception as e:
        results["torch_error"] = repr(e)[:200]  # type: ignore[assignment]
    text = ", ".join(f"{k} {v:.0f} GB/s" if isinstance(v, float) else f"{k} {v}" for k, v in results.items())
    log("vecadd", f"2^{n_log2} f32: {text}; best Tile {best}", **results)


FIRST_SCRIPT = r"""
import sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
import numpy as np
from tilelang.ir import samples
from tilelang.runtime import cuda
t1 = time.perf_counter()
dev = cuda.device()
n = 1 << 20
x = dev.upload(np.ones(n, np.float32)); z = dev.upload(np.zeros(n, np.float32))
t2 = time.perf_counter()
p = dev.prepare(samples.vector_add(1024))
dev.run(p, (n // 1024,), [z, x, x]); dev.sync()
t3 = time.perf_counter()
assert dev.download(z, None, (n,))[123] == 2.0
print(f"{{t1-t0:.4f}} {{t2-t1:.4f}} {{t3-t2:.4f}}")
"""


EXAMPLE_SCRIPT = r"""
import io, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
from tilelang.runtime import launch
times = []
orig = launch.Operation.sync
def timed_sync(self):
    t = time.perf_counter(); orig(self); times.append(time.perf_counter() - t)
launch.Operation.sync = timed_sync
from tilelang.run import execute
execute({path!r}, "gpu", out=io.StringIO())
print(f"{{time.perf_counter() - t0:.4f}} {{times[0]:.4f}}")
"""


def bench_first_example() -> None:
    """`examples/add.tile` through the whole pipeline in a fresh process: the first `.sync()`."""
    import tempfile

    env = dict(os.environ)
    env["TILEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilec-cache-")
    env["CUDA_CACHE_DISABLE"] = "1"
    rows = {}
    for label in ("cold", "warm", "warm2"):
        out = subprocess.run([sys.executable, "-c", EXAMPLE_SCRIPT.format(root=str(ROOT),
                              path=str(ROOT / "examples" / "add.tile"))], env=env, capture_output=True,
                             text=True, check=False)
        if out.returncode != 0:
            log("first_example", f"failed: {out.stderr[-800:]}")
            return
        total, first = (float(v) for v in out.stdout.split())
        rows[label] = {"process_s": total, "first_sync_s": first}
    log("first_example", "; ".join(f"{k}: first `.sync()` {v['first_sync_s']:.3f} s (whole process "
                                    f"{v['process_s']:.3f} s)" for k, v in rows.items()), **rows)


def bench_first() -> None:
    import tempfile

    env = dict(os.environ)
    env["TILEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilec-cache-")
    env["CUDA_CACHE_DISABLE"] = "1"
    rows = {}
    for label in ("cold", "warm", "warm2"):
        out = subprocess.run([sys.executable, "-c", FIRST_SCRIPT.format(root=str(ROOT))], env=env,
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            log("first", f"failed: {out.stderr[-800:]}")
            return
        imp, init, launch = (float(v) for v in out.stdout.split())
        rows[label] = {"import_s": imp, "cuda_init_s": init, "first_launch_s": launch}
    text = "; ".join(
        f"{k}: imports {v['import_s']:.3f} s, CUDA init+copies {v['cuda_init_s']:.3f} s, "
        f"first launch (compile+load+run) {v['first_launch_s']:.3f} s" for k, v in rows.items())
    log("first", text, **rows)


def bench_launch() -> None:
    from tilelang.ir import samples
    from tilelang.runtime import cuda

    dev = cuda.device()
    p = dev.prepare(samples.vector_add(1024))
    x = dev.upload(np.ones(1024, np.float32))
    z = dev.upload(np.zeros(1024, np.float32))
    args = [z, x, x]
    for _ in range(100):
        dev.run(p, (1,), args)
    dev.sync()
    # Batches short enough that the launch queue never fills (then the host would
    # wait for the GPU and we would time the kernels, not the launch path).
    def timed(fn, batches: int = 40, per: int = 200) -> float:  # type: ignore[no-untyped-def]
        ts = []
        for _ in range(batches):
            t0 = time.perf_counter()
            for _ in range(per):
                fn()
            ts.append((time.perf_counter() - t0) / per * 1e6)
            dev.sync()
        return statistics.median(ts)

    enq = timed(lambda: dev.run(p, (1,), args))
    os.environ["TILEC_LAUNCH"] = "ctypes"
    p2 = dev.prepare(samples.vector_add(1024))
    dev.run(p2, (1,), args)
    enq_ctypes = timed(lambda: dev.run(p2, (1,), args))
    del os.environ["TILEC_LAUNCH"]
    abi, fn = next(iter(p.variants.values()))
    packed = next(iter(p.packed.values()))
    d = dev.ctx.d
    binding = timed(lambda: d.cuLaunchKernel(fn.handle, 1, 1, 1, abi.num_threads, 1, 1, 0, dev.ctx.stream,
                                             packed.address, 0))
    raw = timed(lambda: fn.launch((1, 1, 1), abi.num_threads, 0, packed))
    log("launch", f"cached launch: {enq:.2f} us host per `run` (median of 40 batches of 200), "
                  f"{enq_ctypes:.2f} us with TILEC_LAUNCH=ctypes; "
                  f"Function.launch {raw:.2f} us; cuda.bindings cuLaunchKernel alone {binding:.2f} us",
        run_us=enq, run_ctypes_us=enq_ctypes, function_launch_us=raw, binding_us=binding)


def bench_graph() -> None:
    from tilelang.ir import samples
    from tilelang.runtime import cuda

    dev = cuda.device()
    p = dev.prepare(samples.vector_add(1024))
    x = dev.upload(np.ones(1024, np.float32))
    z = dev.upload(np.zeros(1024, np.float32))
    s = dev.new_stream()
    dev.run(p, (1,), [z, x, z])  # compile outside the capture
    dev.sync()
    n = 100
    dev.capture(s)
    for _ in range(n):
        dev.run(p, (1,), [z, x, z], stream=s)
    g = dev.end_capture(s)
    dev.write(z, np.zeros(1024, np.float32))
    dev.replay(g)
    dev.sync()
    assert dev.download(z, None, (1024,))[5] == n
    ms = _median_ms(lambda: dev.replay(g), iters=20)
    log("graph", f"graph of {n} launches: {ms * 1e3:.1f} us per replay, {ms * 1e3 / n:.2f} us per kernel",
        per_kernel_us=ms * 1e3 / n)


def bench_gemm() -> None:
    """f16 x f16 -> f32 GEMM through `mma` (tensor cores), vs torch.matmul (informational)."""
    from tilelang.dtypes import DType
    from tilelang.ir import samples
    from tilelang.runtime import cuda

    dev = cuda.device()
    M = N = K = 4096
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    da, db, dc = dev.upload(a), dev.upload(b), dev.upload(np.zeros((M, N), np.float32))
    out = {}
    for bm, bn, bk, w in ((64, 64, 32, 4), (128, 128, 32, 8), (128, 128, 64, 8), (128, 64, 64, 4)):
        from dataclasses import replace

        k = replace(samples.gemm(bm, bn, bk, DType.F16, DType.F32), num_warps=w)
        p = dev.prepare(k)
        grid = (M // bm, N // bn)
        ms = _median_ms(lambda: dev.run(p, grid, [dc, da, db]), iters=5, warm=1)
        out[f"tile_{bm}x{bn}x{bk}_w{w}"] = 2 * M * N * K / ms / 1e9
    gemm_bytes = 2 * M * K + 2 * K * N + 4 * M * N
    best = max((v, k) for k, v in out.items() if isinstance(v, float))
    POINTS.append((f"Tile gemm {M}^3", 2 * M * N * K, gemm_bytes, 2 * M * N * K / (best[0] * 1e12)))
    c = dev.download(dc, None, (M, N))
    ref = a[:256].astype(np.float32) @ b.astype(np.float32)
    err = float(np.abs(c[:256] - ref).max())
    try:
        import torch

        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ts = []
        for _ in range(6):
            ev0.record()
            torch.matmul(ta, tb)
            ev1.record()
            ev1.synchronize()
            ts.append(ev0.elapsed_time(ev1))
        out["torch_f16"] = 2 * M * N * K / statistics.median(ts[1:]) / 1e9
        POINTS.append((f"torch gemm {M}^3", 2 * M * N * K, gemm_bytes, statistics.median(ts[1:]) / 1e3))
    except Exception as e:
        out["torch_error"] = repr(e)[:200]  # type: ignore[assignment]
    text = ", ".join(f"{k} {v:.1f} TFLOP/s" if isinstance(v, float) else f"{k} {v}" for k, v in out.items())
    log("gemm", f"{M}x{N}x{K} f16->f32: {text}; max |err| vs NumPy (256 rows) {err:.2e}", max_err=err, **out)


def bench_softmax() -> None:
    """Row softmax, 65536 x 1024 f32 (memory bound), vs torch.softmax (informational)."""
    from dataclasses import replace

    from tilelang.ir import samples
    from tilelang.runtime import cuda

    dev = cuda.device()
    M, N = 65536, 1024
    x = np.random.default_rng(0).standard_normal((M, N), dtype=np.float32)
    dx, dz = dev.upload(x), dev.upload(np.zeros((M, N), np.float32))
    out = {}
    nbytes = 2 * M * N * 4
    for rows, w in ((1, 4), (2, 4), (4, 8)):
        p = dev.prepare(replace(samples.row_softmax(rows, N), num_warps=w))
        ms = _median_ms(lambda: dev.run(p, (M // rows, 1), [dz, dx]), iters=10, warm=2)
        out[f"tile_{rows}x{N}_w{w}"] = nbytes / ms / 1e6
    # FLOPs counted per element: max, subtract, exp, sum, scale
    best_gbs = max(v for v in out.values() if isinstance(v, float))
    POINTS.append((f"Tile softmax {M}x{N}", 5 * M * N, nbytes, nbytes / (best_gbs * 1e9)))
    z = dev.download(dz, None, (M, N))
    e = np.exp(x[:64] - x[:64].max(1, keepdims=True))
    err = float(np.abs(z[:64] - e / e.sum(1, keepdims=True)).max())
    try:
        import torch

        tx = torch.from_numpy(x).cuda()
        ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ts = []
        for _ in range(12):
            ev0.record()
            torch.softmax(tx, 1)
            ev1.record()
            ev1.synchronize()
            ts.append(ev0.elapsed_time(ev1))
        out["torch"] = nbytes / statistics.median(ts[2:]) / 1e6
        POINTS.append((f"torch softmax {M}x{N}", 5 * M * N, nbytes, statistics.median(ts[2:]) / 1e3))
    except Exception as e2:
        out["torch_error"] = repr(e2)[:200]  # type: ignore[assignment]
    text = ", ".join(f"{k} {v:.0f} GB/s" if isinstance(v, float) else f"{k} {v}" for k, v in out.items())
    log("softmax", f"{M}x{N} f32: {text}; max |err| vs NumPy (64 rows) {err:.1e}", max_err=err, **out)


def bench_cases() -> None:
    from backend_cases import CASES, SUITES, Case
    from test_gpu import run_both

    from tilelang.runtime import cuda

    dev = cuda.device()
    bad = []
    for c in CASES:
        for name, want, got in run_both(dev, c):
            if not np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=c.rtol, atol=c.atol):
                bad.append(f"{c.name}.{name}")
    for s in SUITES:  # the op-by-op suites: run for the sanitizer, compared by the tests
        run_both(dev, Case(s.name, s.kernel, s.args, s.grid))
    log("cases", f"{len(CASES)} cases + {len(SUITES)} op suites, mismatches: {bad or 'none'}", bad=bad)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--only", default="vecadd,first,first_example,launch,graph,gemm,softmax")
    ap.add_argument("--n-log2", type=int, default=28)
    a = ap.parse_args()
    from tilelang.runtime import cuda

    if not cuda.is_available():
        print("no CUDA device: nothing to benchmark")
        return 0
    info = cuda.context().info
    RESULTS["device"] = {"name": info.name, "arch": info.arch, "sms": info.sm_count,
                         "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    print(f"device: {info.name} ({info.arch}, {info.sm_count} SMs)")
    for name in a.only.split(","):
        fn = {"vecadd": lambda: bench_vecadd(a.n_log2), "first": bench_first, "launch": bench_launch,
              "graph": bench_graph, "cases": bench_cases, "gemm": bench_gemm, "softmax": bench_softmax, "first_example": bench_first_example}[name]
        try:
            fn()
        except Exception as e:  # keep going: one broken section must not hide the others
            import traceback

            log(name, f"FAILED: {e!r}\n{traceback.format_exc()[-1500:]}")
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / "gpu_bench.json").write_text(json.dumps(RESULTS, indent=2, default=str))
    print_table()
    import _roofline

    print(_roofline.write(POINTS, Path(a.out) / "roofline_gpu_bench.png", "gpu_bench.py", info.name))
    return 0


def print_table() -> None:
    """One table of every section's line (the numbers are in gpu_bench.json)."""
    rows = [(k, str(v.get("text", "")) if isinstance(v, dict) else str(v)) for k, v in RESULTS.items()]
    w = max((len(k) for k, _ in rows), default=8)
    print(f"\n| {'section':<{w}} | result |\n| {'-' * w} | --- |")
    for k, text in rows:
        print(f"| {k:<{w}} | {text.splitlines()[0] if text else ''} |")


if __name__ == "__main__":
    sys.exit(main())
