"""hgemm3 on the GPU (one step, ~80-110 s on a fresh machine: 15 kernel variants compile; <= 120 s; one line a
result, printed as timed):

    python benchmarks/hgemm3_device.py              # both parts
    python benchmarks/hgemm3_device.py --part launch   # ~15 s; or --part gemm (~90 s)
    python benchmarks/hgemm3_device.py --stub       # CPU: a dry run (launch rows on the stub device, each gemm
                                                    # case's variant: grid, threads, shared memory, ptxas)

Part `launch` (why call 19's launch_host.py read the 4096^3 GEMM at 51 us median, max 212, where call 18 read
12 us, once the default launched the wide variant): the same 128x128x64 GEMM launched as the plain kernel
(`TILEC_GEMM_WIDEN=0`) and as the default (the wide, persistent variant), in one process, each timed as
  api      `kern(partition(c), a, b).launch()` after a sync (launch_host.py's row), min / median / max us
  fast     the API's `FastLaunch` called directly (`plan.launcher`: the TMA descriptors, the native launcher)
  driver   `cuLaunchKernel` through cuda-python with the launcher's packed parameters (no Tile Python at all)
  queued   the API call with 8 launches queued on the stream (no sync between): does a launch block?
On the CPU stub (`launch_cpu_profile.py`) both variants take the same Python path: 22.3 vs 22.8 us, no driver
call but the launch, the same slots (2 TMA descriptors, no counters, no asserts), so the API rows should read
alike (~10-15 us) for both. Expected, if the difference is the driver's (a 384-thread CTA of 226 KB of shared
memory, 132 of them): `driver` reads the gap too (wide >> plain); if only `api` does, it is the Python path
on the GPU (then `--profile`-like digging in launch_host.py). If `queued` reads ~kernel time (~200 us) for the
wide variant, its launch waits for the previous kernel (some synchronous step in the driver).

Part `gemm` (f16, against torch.matmul in the same process: cliffs.time_pair, reps interleaved; `plain` = the
case's switch off, `default` = this tree's default):
- K steps deeper than 64 (4096^3, switch `TILEC_GEMM_WIDEN`): the default now takes the wide variant for these
  tiles too, a K step of 128 or 256 copied and multiplied as 2 or 4 ring stages of 64 (`gemm_widen.k_parts`), the
  ring of the x64 wide tile (4 stages + staging) where a 96 KB wide stage did not fit. Expected: 128x128x128
  ~0.95x (call 19: plain 0.81x; 128x128x64 wide 0.97x, whose stage this is), 64x64x128 ~0.85x (64x64x64 wide's
  0.83-0.85x), 128x128x256 nt ~0.9x (the plain line is now the wgmma pipeline in 4 stages of 32 KB too; before
  this tree sm_80's ring), 128x128x64 0.97x (control: unchanged kernel). `same True` (the same wgmma k-steps in
  the same order).
- Skinny M = 64 rows x 4096 x 4096 with 32- and 16-row tiles (switch `TILEC_GEMM_ROWS`, `passes/gemm_rows.py`):
  the split-K variant computes 2 / 4 row tiles as one m64 warpgroup's rows (B read once per column tile, not
  2 / 4 times). Expected: 32x128x64 0.71x -> ~0.9x (the 64x128x64 tile's 0.92x in call 19: the same work),
  16x64x128 0.54x (plain: sm_80's ring) -> ~0.85x (64x64's split-K 0.87x). `same` may read False there (the
  split's pieces differ: s follows the coarse tile count); err ~1e-3. And the 128x128x64 tile over 64 rows
  (its rows 64-127 past the output): the default computes 64 rows (`gemm_rows.shrinkable`, the launch's
  `rows_at_most` fact): 0.66x -> ~0.9x (64x128x64's 0.92x), `same True` (the same pieces, the same rows).
Every err ~1e-3 or below.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from launch_cases import GEMM as _GEMM  # noqa: E402
from launch_cases import GEMM_NT, gemm_tensors  # noqa: E402

GEMM = _GEMM + GEMM_NT


def _module(widen: str, tag: str = "") -> Any:
    """The module compiled under `TILEC_GEMM_WIDEN=widen` (the switches are read when a launch lowers: the
    comment keeps the programs apart in the compile cache; `tag` names other switches)."""
    import tilelang

    os.environ["TILEC_GEMM_WIDEN"] = widen
    return tilelang.compile(f"// TILEC_GEMM_WIDEN={widen} {tag}\n" + GEMM)


def _stats(ts: list[float]) -> str:
    return f"{min(ts):7.1f} {statistics.median(ts):7.1f} {max(ts):8.1f} us"


def launch_part(n: int, stub: bool = False) -> None:
    """The `launch` rows; `stub`: on the CPU stub device (`cuda_stub`, a dry run of this code: no GPU, no torch)."""
    import tilelang

    P = tilelang.partition
    a, b, c, cs, sync = gemm_tensors(4096, stub, outs=8)
    for name, widen in (("plain", "0"), ("default", "auto")):
        mod = _module(widen)
        kern = mod.gemm[128, 128, 64]
        try:
            for _ in range(5):
                kern(P(c, [128, 128]), a, b).launch().wait()
            ts = []
            for _ in range(n):
                sync()
                t = time.perf_counter()
                h = kern(P(c, [128, 128]), a, b).launch()
                ts.append((time.perf_counter() - t) * 1e6)
                sync()
                h.wait()
            print(f"launch {name:8s} api    {_stats(ts)}", flush=True)
            op = kern(P(c, [128, 128]), a, b)
            op.launch().wait()
            plan = op._plan
            fl = plan.launcher
            print(f"launch {name:8s} info   launcher {type(fl).__name__} grid {fl._call[2:5] if fl else '-'} threads "
                  f"{fl._call[5] if fl else '-'} smem {fl._call[6] if fl else '-'} native {fl._native is not None if fl else '-'} "
                  f"slots {fl._slots is not None if fl else '-'}", flush=True)
            args, stream, raw = op._args, plan.stream, plan.stream_handle
            ts = []
            for _ in range(n):
                sync()
                t = time.perf_counter()
                ok = fl(args, stream, raw)
                ts.append((time.perf_counter() - t) * 1e6)
                assert ok, "the fast launcher refused"
            sync()
            print(f"launch {name:8s} fast   {_stats(ts)}", flush=True)
            d = fl.device.ctx.d
            launch, handle, gx, gy, gz, threads, smem, _ = fl._call
            ts = []
            for _ in range(n):
                sync()
                t = time.perf_counter()
                (err,) = d.cuLaunchKernel(handle, gx, gy, gz, threads, 1, 1, smem, stream, fl.packed.address, 0)
                ts.append((time.perf_counter() - t) * 1e6)
                assert err == d.CUresult.CUDA_SUCCESS, err
            sync()
            print(f"launch {name:8s} driver {_stats(ts)}", flush=True)
            ts = []
            for _ in range(max(1, n // 8)):
                sync()
                hs = []
                for ck in cs:
                    t = time.perf_counter()
                    hs.append(kern(P(ck, [128, 128]), a, b).launch())
                    ts.append((time.perf_counter() - t) * 1e6)
                for h in hs:
                    h.wait()
            print(f"launch {name:8s} queued {_stats(ts)}", flush=True)
        except Exception as e:  # one row's failure is a line
            print(f"launch {name:8s} FAILED {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)


CASES = [  # (name, kernel, tile, B stored [N, K], M, the switch `plain` turns off)
    ("128x128x128", "gemm", (128, 128, 128), False, 4096, "TILEC_GEMM_WIDEN"),
    ("M64 32x128x64", "gemm", (32, 128, 64), False, 64, "TILEC_GEMM_ROWS"),
    ("M64 16x64x128", "gemm", (16, 64, 128), False, 64, "TILEC_GEMM_ROWS"),
    ("M64 128x128x64", "gemm", (128, 128, 64), False, 64, "TILEC_GEMM_ROWS"),
    ("64x64x128", "gemm", (64, 64, 128), False, 4096, "TILEC_GEMM_WIDEN"),
    ("128x128x256 nt", "gemm_nt", (128, 128, 256), True, 4096, "TILEC_GEMM_WIDEN"),
    ("128x128x64", "gemm", (128, 128, 64), False, 4096, "TILEC_GEMM_WIDEN"),
]
PLAIN = {"TILEC_GEMM_WIDEN": "0", "TILEC_GEMM_ROWS": "0"}
DEFAULT = {"TILEC_GEMM_WIDEN": "auto", "TILEC_GEMM_ROWS": "1"}


def _set(label: str, switch: str) -> None:
    """The switches of a case's `plain` (its own switch off) or `default` line."""
    os.environ.update(DEFAULT)
    if label == "plain":
        os.environ[switch] = PLAIN[switch]


def gemm_stub() -> None:
    """`--stub`: each `gemm` case launched once on the stub device (`_choose` picks the variant as on an H100 of
    132 SMs; nothing runs): the variant's CUDA grid, threads and shared memory, and ptxas's registers / spills."""
    import numpy as np

    import tilelang
    from tilelang.runtime.cuda_stub import DevArray

    m = 4096
    b = DevArray.zeros((m, m), np.float16)
    dev = tilelang.api.engines._device("cuda:0")
    for name, kname, (bm, bn, bk), _nt, rows, switch in CASES:
        a = DevArray.zeros((rows, m), np.float16)
        c = DevArray.zeros((rows, m), np.float16)
        for label in ("plain", "default"):
            _set(label, switch)
            mod = _module(os.environ["TILEC_GEMM_WIDEN"], f"{label} {switch}")
            before = dict(dev.ctx.ptx)
            op = getattr(mod, kname)[bm, bn, bk](tilelang.partition(c, [bm, bn]), a, b)
            op.launch().wait()
            fl = op._plan.launcher
            new = [p for k_, p in dev.ctx.ptx.items() if before.get(k_) is not p]
            regs = _ptxas(new[-1]) if new else "(compiled before)"
            print(f"stub {name:15s} {label:8s} grid {fl._call[2:5]} threads {fl._call[5]} smem {fl._call[6]} {regs}",
                  flush=True)


def _ptxas(ptx: str) -> str:
    import re
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(ptx)
    try:
        r = subprocess.run(["ptxas", "-v", "-arch=sm_90a", f.name, "-o", os.devnull], capture_output=True, text=True,
                           timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"ptxas: {type(e).__name__}"
    regs = re.findall(r"Used (\d+) registers", r.stderr)
    spills = re.findall(r"(\d+) bytes spill stores", r.stderr)
    return f"ptxas {regs[-1] if regs else '?'} regs, {spills[-1] if spills else '?'} B spilled"


def gemm_part(reps: int) -> None:
    import torch

    import tilelang
    from cliffs import time_pair, warm_up

    warm_up(1.0)
    g = torch.Generator(device="cuda").manual_seed(3)
    m = 4096
    a = torch.randn(m, m, device="cuda", dtype=torch.float16, generator=g) * 0.25
    b = torch.randn(m, m, device="cuda", dtype=torch.float16, generator=g) * 0.25
    want = a.float() @ b.float()
    want_nt = a.float() @ b.float().t()
    for name, kname, (bm, bn, bk), nt, rows, switch in CASES:
        outs = {}
        ar = a[:rows]
        for label in ("plain", "default"):
            if name == "128x128x64" and label == "plain":
                continue  # (the control: call 19 has its plain line)
            _set(label, switch)
            kern = getattr(_module(os.environ["TILEC_GEMM_WIDEN"], f"{label} {switch}"), kname)[bm, bn, bk]
            c = torch.full((rows, m), float("nan"), device="cuda", dtype=torch.float16)
            try:
                part = (tilelang.partition(c, [bm, bn]), ar, b)
                kern(*part).launch().wait()
                ref = (want_nt if nt else want)[:rows]
                err = float((c.float() - ref).abs().max() / ref.abs().max())
                t, t_ref = time_pair(lambda: kern(*part).launch(), lambda: torch.matmul(ar, b.t() if nt else b), reps)
            except Exception as e:  # say so and go on
                print(f"gemm {name:15s} {label:8s} FAILED {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)
                continue
            outs[label] = c
            fl = 2 * rows * m * m
            # (the same sums: wide tiles, K stages, row tiles at s = 1; split-K's pieces may differ from plain's)
            same = f" same {bool(torch.equal(outs['plain'], c))}" if label == "default" and "plain" in outs else ""
            print(f"gemm {name:15s} {label:8s} {t:.4f} ms {fl / t / 1e9:6.1f} TFLOP/s torch {fl / t_ref / 1e9:6.1f} "
                  f"ratio {t_ref / t:.2f} err {err:.1e}{same}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", default="launch,gemm")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--stub", action="store_true", help="CPU: the launch part on the stub device (a dry run)")
    args = ap.parse_args(argv)
    if args.stub:
        from tilelang.runtime import cuda_stub

        with cuda_stub.installed(cuda_stub.stub_device("sm_90a", 132), None):
            if "launch" in args.part:
                launch_part(args.n, stub=True)
            if "gemm" in args.part:
                gemm_stub()
        return 0
    import torch

    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    if "launch" in args.part:
        launch_part(args.n)
    if "gemm" in args.part:
        gemm_part(args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
