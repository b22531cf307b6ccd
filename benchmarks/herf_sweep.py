"""The f32 `erf` on the card against the interpreter, bit for bit (herf, 2026-12-07): ~1.19e7 f32 values (every
101st f32 of [0, 4.5) and every 1009th of its negation, the subnormal band at a stride, the specials) and every
f16 and bf16 value (the whole of both types); and f32 `pow` on 3 x 2^20 operand pairs (random, exact ties of
x^2, integer powers of negative x) and by the constants 2, 0.5 and -1 (one f32 operation each). One line each:
how many differ (NaN equals NaN).

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


def kernel(dt: DType, op: ir.ElemOp = ir.ElemOp.ERF, const: float | None = None) -> ir.Kernel:
    """o = op(x) (or op(x, y) for pow; op(x, const) with a constant exponent), one [TILE] tile a block."""
    b = Builder(f"{op.value}_{dt.value}")
    names = ("x", "y", "o") if op is ir.ElemOp.POW and const is None else ("x", "o")
    for name in names:
        b.tensor_param(name, dt, 1)
    off = b.mul(b.block_id(0), b.const(TILE, DType.I32))
    args = [b.load(n, (off,), (TILE,)) for n in names[:-1]]
    if const is not None:
        args.append(b.broadcast(b.const(const, dt), (TILE,)))
    b.store("o", (off,), b.elementwise(op, *args))
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


def run(dt: DType, xs: list[np.ndarray], sim: bool, op: ir.ElemOp = ir.ElemOp.ERF,
        const: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    xs = [np.concatenate([x, np.zeros((-x.size) % TILE, x.dtype)]) for x in xs]
    k = kernel(dt, op, const)
    grid = (xs[0].size // TILE,)
    if sim:
        from llsim import SimDevice

        got = [*xs, np.zeros_like(xs[0])]
        SimDevice().run(k, grid, got)
        out = got[-1]
    else:
        from tilelang.runtime import cuda

        dev = cuda.device()
        bufs = [dev.upload(x, dt) for x in xs] + [dev.upload(np.zeros_like(xs[0]), dt)]
        dev.run(dev.prepare(k), grid, bufs)
        dev.sync()
        out = dev.download(bufs[-1], dt, xs[0].shape)
    want = [*xs, np.zeros_like(xs[0])]
    with np.errstate(all="ignore"):
        run_kernel(k, grid, want)
    return out, want[-1]


def pow_inputs(small: bool) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """f32 pow (herf's fix): random operands, y = 2 on exact ties of x^2, integer y on negative x."""
    n = 4096 if small else 1 << 20
    r = np.random.default_rng(5)
    x = r.uniform(0.01, 100, n).astype(f32)
    k = np.arange(1, n + 1, dtype=np.float64)
    ties = (1 + k * 2.0**-12).astype(f32)
    return [("random", x, r.uniform(-4, 4, n).astype(f32)), ("x^2 ties", ties, np.full(n, 2.0, f32)),
            ("negative x, integer y", -x, np.round(r.uniform(-6, 6, n)).astype(f32))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", action="store_true", help="llsim and a small sample (no GPU)")
    args = ap.parse_args()
    def report(what: str, got: np.ndarray, want: np.ndarray, x: np.ndarray, t: float) -> None:
        g, w = got.astype(f32), want.astype(f32)
        bad = ((g.view(np.uint32) != w.view(np.uint32)) & ~(np.isnan(g) & np.isnan(w)))[:x.size]
        where = "" if not bad.any() else f"; first {x[bad][:3]!r}"
        print(f"sweep {what}: {x.size} values, {int(bad.sum())} differ from the interpreter "
              f"({time.time() - t:.1f} s){where}", flush=True)

    for dt, x in inputs(args.sim).items():
        t = time.time()
        report(f"erf {dt.value}", *run(dt, [x], args.sim), x, t)
    for what, x, y in pow_inputs(args.sim):
        t = time.time()
        report(f"pow f32 {what}", *run(DType.F32, [x, y], args.sim, ir.ElemOp.POW), x, t)
    x = np.concatenate([pow_inputs(args.sim)[0][1], -pow_inputs(args.sim)[1][1]])  # random, ties of x^2 (negated)
    x = np.concatenate([x, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3.4e38], f32)])
    for c in (2.0, 0.5, -1.0):  # one f32 operation each (`f32exact.pow_const`)
        t = time.time()
        report(f"pow f32 by constant {c}", *run(DType.F32, [x], args.sim, ir.ElemOp.POW, c), x, t)


if __name__ == "__main__":
    main()
