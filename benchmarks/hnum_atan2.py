"""Fit `tilelang/interp/atan32.py`'s polynomial (hnum, 2026-12-07) and measure the f32 atan2's accuracy (CPU only).

    python3 benchmarks/hnum_atan2.py          # the error over ten classes of inputs (~75 million pairs, ~1 min)
    python3 benchmarks/hnum_atan2.py --fit    # and refit ATAN_POLY (SciPy, as herf_fit.py), checked against it

The error is |atan2_f32(y, x) - atan2(y, x)| (NumPy's f64 arctan2) in ulps of the f64 value rounded to f32 (the
subnormals' step below 2^-126); the algorithm is `numeric.atan2_f32`, which the GPU computes bit for bit.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

f32, F64 = np.float32, np.float64


def fit() -> tuple[float, ...]:
    """atan(z) / z - 1 in z^2 on [0, tan(1/2)^2], degree 6, no constant term, weighted by z / ulp(atan(z))."""
    from herf_fit import fit_f32

    z = np.linspace(1e-4, math.tan(0.5), 8000)
    ulp = np.spacing(np.arctan(z).astype(f32)).astype(F64)
    poly, err = fit_f32(z * z, np.arctan(z) / z - 1, z / ulp, 6, {0: 0.0})
    print(f"ATAN_POLY = {poly}  (weighted error {err:.3f} ulp)")
    return poly


def ulps(got: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        want = np.arctan2(y.astype(F64), x.astype(F64))
        ulp = np.maximum(np.spacing(np.abs(want).astype(f32)), np.spacing(f32(2.0**-126))).astype(F64)
        e = np.abs(got.astype(F64) - want) / ulp
    return np.where((np.isnan(got) & np.isnan(want)) | (got == want), 0.0, e)


def classes(seed: int = 1, n: int = 4_000_000, step: int = 64) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Ten classes of pairs (y, x): n of each random one, every `step`th f32 of [0, 1) for the three sweeps."""
    r = np.random.default_rng(seed)

    def bits(k: int) -> np.ndarray:
        return r.integers(0, 1 << 32, k, dtype=np.uint64).astype(np.uint32).view(f32)

    a = np.arange(0, 0x3F800000, step, dtype=np.uint32).view(f32)  # every 64th f32 of [0, 1)
    d = r.uniform(-1, 1, n).astype(f32)
    sub = r.integers(1, 1 << 23, (2, n)).astype(np.uint32).view(f32)
    big = (r.uniform(-1, 1, n) * 3.4e38).astype(f32)
    cut = (f32(0.5463025) * (1 + r.uniform(-1e-4, 1e-4, n))).astype(f32)
    return {
        "random bit patterns (every magnitude, both signs)": (bits(n), bits(n)),
        "uniform in [-1, 1]^2": (r.uniform(-1, 1, n).astype(f32), r.uniform(-1, 1, n).astype(f32)),
        "near the diagonal (y/x in [0.7, 1.3])": ((d * r.uniform(0.7, 1.3, n)).astype(f32), d),
        "near the cut (y/x ~ tan(1/2))": (cut, np.ones(n, f32)),
        "x = 1, y every 64th f32 of [0, 1)": (a, np.ones_like(a)),
        "x = -1, y every 64th f32 of [0, 1)": (a, -np.ones_like(a)),
        "y = 1, x every 64th f32 of [0, 1) (steep)": (np.ones_like(a), a),
        "subnormal y, any x": ((sub[0] * r.choice([-1, 1], n)).astype(f32), bits(n)),
        "both subnormal": (sub[0], (sub[1] * r.choice([-1, 1], n)).astype(f32)),
        "near FLT_MAX": (big, (big * r.uniform(0.5, 1.0, n)).astype(f32)),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", action="store_true")
    args = ap.parse_args()
    from tilelang.interp import atan32
    from tilelang.interp.numeric import atan2_f32

    if args.fit:
        poly = fit()
        assert tuple(f32(v) for v in poly) == tuple(f32(v) for v in atan32.ATAN_POLY), "ATAN_POLY differs"
    worst, total = 0.0, 0
    for name, (y, x) in classes().items():
        e = ulps(atan2_f32(y, x), y, x)
        i = int(np.argmax(e))
        worst, total = max(worst, float(e[i])), total + e.size
        print(f"{name:50s} {e.size:>9,} pairs  max {e[i]:.3f} ulp (y={y[i]!r}, x={x[i]!r})  "
              f"> 1 ulp: {int((e > 1).sum()):,}  mean {e.mean():.3f}")
    print(f"all: {total:,} pairs, max {worst:.3f} ulp")


if __name__ == "__main__":
    main()
