"""The f32 `erf` on the card against the interpreter, bit for bit (herf, 2026-12-07): ~1.1e7 f32 values (every
101st f32 of [0, 4.5) and every 1009th of its negation, the whole subnormal band at a stride, the specials) and
every f16 and bf16 value (the whole of both types). One line a type: how many differ (NaN equals NaN).

    python3 benchmarks/herf_sweep.py          # on the card (benchmarks/herf_device.sh)
    python3 benchmarks/herf_sweep.py --sim    # llsim instead of the card, a small sample (checks this script)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "backend")]

from tilelang.dtypes import DType  # noqa: E402
from tilelang.interp import run_kernel  # noqa: E402
from tilelang.ir import nodes as ir  # noqa: E402
from tilelang.ir.builder import Builder  # noqa: E402

TILE = 1024
f32 = np.float32


def kernel(dt: DType) -> ir.Kernel:
    b = Builder(f"erf_{dt.value}")
    b.tensor_param("x", dt, 1)
    b.tensor_param("o", dt, 1)
    off = b.mul(b.block_id(0), b.const(TILE, DType.I32))
    b.store("o", (off,), b.elementwise(ir.ElemOp.ERF, b.load("x", (off,), (TILE,))))
    return b.finish()


def every(step: int, lo: float, hi: float) -> np.ndarray:
    a, b = (int(f32(v).view(np.uint32)) for v in (lo, hi))
    return np.arange(a, b, step, dtype=np.uint32).view(f32)


def inputs(small: bool) -> dict[DType, np.ndarray]:
    k = 1000 if small else 1
    x = every(101 * k, 0.0, 4.5)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4e38, -3.4e38, 1.0, -1.0, 4.0, 1e10],
                        f32)
    x32 = np.concatenate([specials, x, -every(1009 * k, 0.0, 4.5), every(997 * k, 0.0, 1.2e-38), every(7 * k, 4.0, 4.1)])
    h = np.arange(0, 1 << 16, k, dtype=np.uint32).astype(np.uint16).view(np.float16)
    b = (np.arange(0, 1 << 16, k, dtype=np.uint32) << 16).view(f32)
    return {DType.F32: x32, DType.F16: h, DType.BF16: b}


def run(dt: DType, x: np.ndarray, sim: bool) -> tuple[np.ndarray, np.ndarray]:
    x = np.concatenate([x, np.zeros((-x.size) % TILE, x.dtype)])
    k = kernel(dt)
    grid = (x.size // TILE,)
    if sim:
        from llsim import SimDevice

        got = [x, np.zeros_like(x)]
        SimDevice().run(k, grid, got)
        out = got[1]
    else:
        from tilelang.runtime import cuda

        dev = cuda.device()
        bufs = [dev.upload(x, dt), dev.upload(np.zeros_like(x), dt)]
        dev.run(dev.prepare(k), grid, bufs)
        dev.sync()
        out = dev.download(bufs[1], dt, x.shape)
    want = [x, np.zeros_like(x)]
    run_kernel(k, grid, want)
    return out, want[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", action="store_true", help="llsim and a small sample (no GPU)")
    args = ap.parse_args()
    for dt, x in inputs(args.sim).items():
        t = time.time()
        got, want = run(dt, x, args.sim)
        g, w = got.astype(f32), want.astype(f32)
        bad = (g.view(np.uint32) != w.view(np.uint32)) & ~(np.isnan(g) & np.isnan(w))
        where = "" if not bad.any() else f"; first {np.asarray(x)[bad[:x.size]][:3]!r}"
        print(f"sweep {dt.value}: {x.size} values, {int(bad.sum())} differ from the interpreter "
              f"({time.time() - t:.1f} s){where}", flush=True)


if __name__ == "__main__":
    main()
