"""What the user rounds' benchmarks share (huser25_bench.py, huser26_bench.py, huser27_bench.py): a kernel of
tests/user/programs timed on the GPU against PyTorch on the same CUDA tensors through the Python API, or, with
`--cpu`, each call run once on NumPy arrays on the interpreter (no PyTorch, no timings).

`torch` and `F` are None under `--cpu`."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
P = ROOT / "tests" / "user" / "programs"
CPU = "--cpu" in sys.argv
if CPU:
    torch: Any = None
    F: Any = None
else:
    import torch
    import torch.nn.functional as F  # noqa: F401  (re-exported for the benches)


def arr(x: np.ndarray) -> Any:
    """`x` where the kernels run: a CUDA tensor, or the NumPy array itself on the interpreter."""
    return x if CPU else torch.from_numpy(np.ascontiguousarray(x)).cuda()


def host(x: Any) -> np.ndarray:
    """`x` (a CUDA tensor, bf16 widened to f32, or a NumPy array) as a NumPy array."""
    if CPU or isinstance(x, np.ndarray):  # (a reference computed on the host: call 42's q04 / w08 / w10 / w12)
        return x
    return x.float().cpu().numpy() if x.dtype == torch.bfloat16 else x.cpu().numpy()


def time_ms(fn: Callable[[], Any], wait: bool, reps: int = 20) -> float:
    """The median ms of `fn` between CUDA events, the GPU kept busy while the host enqueues (`wait`: `fn` returns
    a handle to wait on); under `--cpu` `fn` runs once and the time is NaN."""
    if CPU:
        h = fn()
        if wait:
            h.wait()
        return float("nan")
    for _ in range(3):
        h = fn()
        if wait:
            h.wait()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(5_000_000)
        a.record()
        h = fn()
        b.record()
        if wait:
            h.wait()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def close(a: Any, b: Any, tol: float) -> str:
    """"same" where `a` is within `tol` of `b` (relative to |b| + 1), else "DIFFERENT", with the error."""
    a, b = host(a).astype(np.float64), host(b).astype(np.float64)
    err = float(np.max(np.abs(a - b) / (np.abs(b) + 1.0)))
    return f"same (max rel {err:.1e})" if err <= tol else f"DIFFERENT (max rel {err:.1e} > {tol})"


ROWS: list[tuple[str, float, float, str]] = []  # (name, Tile ms, torch ms, verdict): `bench`'s table


def bench(name: str, run: Callable[[], Any], wait: bool, ref: Callable[[], Any] | None,
          check: Callable[[], str]) -> None:
    """`run` once, `check` its result, then time `run` (a launch whose handle is waited on, or, `wait` False, a
    pipeline of synced launches) and PyTorch's `ref`."""
    try:
        h = run()
        if wait:
            h.wait()
        verdict = check()
        t_tile = time_ms(run, wait)
    except Exception as e:  # one kernel's failure is a row of the table, not the end of the script
        ROWS.append((name, float("nan"), float("nan"), f"FAILED {type(e).__name__}: {str(e)[:160]}"))
        print(f"{name:34s} FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
        return
    try:
        t_torch = time_ms(ref, False) if ref is not None and not CPU else float("nan")
    except Exception as e:  # (a PyTorch op this build lacks: no ratio)
        print(f"  (torch's {name}: {type(e).__name__}: {str(e)[:120]})", flush=True)
        t_torch = float("nan")
    ROWS.append((name, t_tile, t_torch, verdict))
    print(f"{name:34s} tile {t_tile:8.3f} ms  torch {t_torch:8.3f} ms  torch/tile {t_torch / t_tile:6.2f}  "
          f"{verdict}", flush=True)


def print_rows(rows: list[tuple[str, float, float, str]], summary: bool = True) -> None:
    """The rows `(kernel, Tile ms, torch ms, verdict)` as a Markdown table (on the GPU only), then with `summary`
    how many are "same" and which are not."""
    if not CPU:
        print("\n| kernel | Tile ms | torch ms | torch / Tile | result |\n| --- | --- | --- | --- | --- |")
        for name, ta, tb, v in rows:
            print(f"| {name} | {ta:.3f} | {tb:.3f} | {tb / ta:.2f} | {v} |")
    if summary:
        bad = [r for r in rows if not r[3].startswith("same")]
        print(f"{len(rows) - len(bad)} of {len(rows)} same" + (f"; DIFFERENT: {[r[0] for r in bad]}" if bad else ""))
