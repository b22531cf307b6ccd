"""hnum's f32 `atan2` on the card (benchmarks/hnum_device.sh): bits against the interpreter, and time.

    python3 benchmarks/hnum_device.py bits          # on the card: how many of each sample differ (NaN equals NaN)
    python3 benchmarks/hnum_device.py time          # on the card: ms of an f32 atan2 of 2^24 pairs (this arm's switch)
    python3 benchmarks/hnum_device.py bits --sim    # llsim instead of the card, a small sample (checks this script)

`bits`: f32 atan2 of ~4.8 million pairs (benchmarks/hnum_atan2.py's ten classes: 400k of each random one, every
2048th f32 of [0, 1) for its sweeps), f16 and bf16 atan2 of 1M
random pairs each, f32 `asin` and `acos` of 1M values of [-1.1, 1.1]; the interpreter's values are its
element-wise ops (`numeric.elementwise`, what its kernels run). `time`: a [2^24] atan2 kernel, median of 20
launches by CUDA events, after a warm-up.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests"), str(ROOT / "tests" / "backend")]

from tilelang.dtypes import DType  # noqa: E402
from tilelang.ir import nodes as ir  # noqa: E402
from tilelang.ir.builder import Builder  # noqa: E402

TILE = 1024
f32 = np.float32


def kernel(dt: DType, op: str) -> ir.Kernel:
    """o = atan2(y, x), or asin(x) / acos(x) (the lowering's formula, built as `inverse_trig` builds it)."""
    b = Builder(f"{op}_{dt.value}")
    names = ("y", "x", "o") if op == "atan2" else ("x", "o")
    for name in names:
        b.tensor_param(name, dt, 1)
    off = b.mul(b.block_id(0), b.const(TILE, DType.I32))
    a = [b.load(n, (off,), (TILE,)) for n in names[:-1]]
    if op == "atan2":
        r = b.elementwise(ir.ElemOp.ATAN2, *a)
    else:
        x = a[0]
        one = b.const(1.0, dt, (TILE,))
        c = b.elementwise(ir.ElemOp.SQRT, b.elementwise(ir.ElemOp.MUL, b.elementwise(ir.ElemOp.SUB, one, x),
                                                         b.elementwise(ir.ElemOp.ADD, one, x)))
        r = b.elementwise(ir.ElemOp.ATAN2, *((x, c) if op == "asin" else (c, x)))
    b.store("o", (off,), r)
    return b.finish()


def interp(dt: DType, op: str, arrays: list[np.ndarray]) -> np.ndarray:
    from tilelang.interp import numeric as num

    with np.errstate(all="ignore"):
        if op == "atan2":
            return num.elementwise(ir.ElemOp.ATAN2, arrays, dt)
        x = arrays[0]
        one = num.const_array(1.0, dt, x.shape)
        e = num.elementwise
        c = e(ir.ElemOp.SQRT, [e(ir.ElemOp.MUL, [e(ir.ElemOp.SUB, [one, x], dt), e(ir.ElemOp.ADD, [one, x], dt)],
                                 dt)], dt)
        return e(ir.ElemOp.ATAN2, [x, c] if op == "asin" else [c, x], dt)


def pad(a: np.ndarray) -> np.ndarray:
    return np.concatenate([a, np.ones((-a.size) % TILE, a.dtype)])


def on_card(dt: DType, op: str, arrays: list[np.ndarray], sim: bool) -> np.ndarray:
    k = kernel(dt, op)
    n = arrays[0].size
    if sim:
        from llsim import SimDevice

        bufs = [*arrays, np.zeros_like(arrays[0])]
        SimDevice().run(k, (n // TILE,), bufs)
        return bufs[-1]
    from tilelang.runtime import cuda

    dev = cuda.device()
    bufs = [dev.upload(a, dt) for a in arrays] + [dev.upload(np.zeros_like(arrays[0]), dt)]
    dev.run(dev.prepare(k), (n // TILE,), bufs)
    dev.sync()
    return dev.download(bufs[-1], dt, arrays[0].shape)


def differ(got: np.ndarray, want: np.ndarray) -> int:
    g, w = np.asarray(got, f32), np.asarray(want, f32)
    return int((~((g.view(np.uint32) == w.view(np.uint32)) | (np.isnan(g) & np.isnan(w)))).sum())


def bits(sim: bool) -> None:
    from hnum_atan2 import classes

    from tilelang.interp.numeric import round_bf16

    cl = classes(3, 2_000, 1 << 19) if sim else classes(3, 400_000, 2048)
    y = pad(np.concatenate([v[0] for v in cl.values()]))
    x = pad(np.concatenate([v[1] for v in cl.values()]))
    rows = [("atan2 f32, every class", DType.F32, "atan2", [y, x])]
    r = np.random.default_rng(4)
    m = 8 * TILE if sim else 1 << 20
    h = [r.integers(0, 1 << 16, m, dtype=np.uint32).astype(np.uint16).view(np.float16) for _ in range(2)]
    rows.append(("atan2 f16, random bit pairs", DType.F16, "atan2", h))
    bb = [round_bf16((r.integers(0, 1 << 16, m, dtype=np.uint32) << np.uint32(16)).view(f32)) for _ in range(2)]
    rows.append(("atan2 bf16, random bit pairs", DType.BF16, "atan2", bb))
    u = r.uniform(-1.1, 1.1, m).astype(f32)
    rows += [("asin f32, [-1.1, 1.1]", DType.F32, "asin", [u]), ("acos f32, [-1.1, 1.1]", DType.F32, "acos", [u])]
    for name, dt, op, arrays in rows:
        got = on_card(dt, op, arrays, sim)
        print(f"{name:32s} {arrays[0].size:>9,} values: {differ(got, interp(dt, op, arrays)):,} differ", flush=True)


def timing() -> None:
    from tilelang.interp import atan32
    from tilelang.runtime import cuda

    n = 1 << 24
    r = np.random.default_rng(5)
    y, x = (r.uniform(-2, 2, n).astype(f32) for _ in range(2))
    dev = cuda.device()
    bufs = [dev.upload(y, DType.F32), dev.upload(x, DType.F32), dev.upload(np.zeros_like(x), DType.F32)]
    pk = dev.prepare(kernel(DType.F32, "atan2"))
    for _ in range(3):
        dev.run(pk, (n // TILE,), bufs)
    dev.sync()
    times = []
    for _ in range(20):
        a = dev.record_event()
        dev.run(pk, (n // TILE,), bufs)
        b = dev.record_event()
        times.append(dev.event_seconds(a, b))
        dev.release_event(a)
        dev.release_event(b)
    ms = statistics.median(times) * 1e3
    arm = "new (f32 algorithm)" if atan32.enabled() else "old (TILEC_ATAN2_F32=0, f64)"
    print(f"atan2 f32 [2^24] {arm:30s} {ms:.4f} ms  {12 * n / ms / 1e6:.0f} GB/s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("bits", "time"))
    ap.add_argument("--sim", action="store_true")
    args = ap.parse_args()
    bits(args.sim) if args.what == "bits" else timing()


if __name__ == "__main__":
    main()
