"""Fit `tilelang/interp/erf32.py`'s coefficients (herf, 2026-12-07) and measure the algorithm's accuracy.

    python3 benchmarks/herf_fit.py            # prints the three tuples (as in erf32.py) and checks them
    python3 benchmarks/herf_fit.py --sweep 13 # and the error over every 13th f32 of [1e-3, 4.5)

Needs SciPy (linprog, erf/erfc; a development tool, not a dependency of tilelang). Each polynomial: minimax
of the weighted error on a grid (a linear program), its coefficients rounded to f32 one at a time from the
highest degree, the lower ones refitted after each. The weights are what each error costs the final erf in
its ulps: Q(s) = erf(x)/x - 1 on [0, 1] (s = x^2) weighted x / ulp(erf(x)); R(t) = log2(erfc(t))/t + 1 on
[1, 4] weighted erfc(t) ln2 t / ulp(erf(t)); 2^f on [-0.5, 0.5] relative, with the constant term fixed at 1.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

f32 = np.float32


def minimax(xs: np.ndarray, f: np.ndarray, w: np.ndarray, degree: int,
            fixed: dict[int, float]) -> tuple[list[float], float]:
    from scipy.optimize import linprog

    free = [k for k in range(degree + 1) if k not in fixed]
    rhs = f - sum((xs ** k * v for k, v in fixed.items()), np.zeros_like(xs))
    if not free:
        return [fixed[k] for k in range(degree + 1)], float(np.max(np.abs(rhs * w)))
    a = np.stack([xs ** k for k in free], 1) * w[:, None]
    b = rhs * w
    ones = np.ones((len(b), 1))
    res = linprog(np.r_[np.zeros(len(free)), 1.0], A_ub=np.block([[a, -ones], [-a, -ones]]), b_ub=np.r_[b, -b],
                  bounds=[(None, None)] * (len(free) + 1), method="highs")
    out = dict(fixed) | dict(zip(free, res.x[:-1], strict=True))
    return [out[k] for k in range(degree + 1)], float(res.x[-1])


def fit_f32(xs: np.ndarray, f: np.ndarray, w: np.ndarray, degree: int,
            fixed: dict[int, float] | None = None) -> tuple[tuple[float, ...], float]:
    fixed = dict(fixed or {})
    for k in range(degree, -1, -1):
        if k not in fixed:
            fixed[k] = float(f32(minimax(xs, f, w, degree, fixed)[0][k]))
    return tuple(fixed[k] for k in range(degree + 1)), minimax(xs, f, w, degree, fixed)[1]


def fit() -> dict[str, tuple[float, ...]]:
    import scipy.special as sp

    def ulp(v: np.ndarray) -> np.ndarray:
        return np.spacing(v.astype(f32)).astype(np.float64)

    x = np.linspace(1e-4, 1.0, 4000)
    small, e1 = fit_f32(x * x, sp.erf(x) / x - 1, x / ulp(sp.erf(x)), 7)
    t = np.linspace(1.0, 4.0, 6000)
    big, e2 = fit_f32(t, np.log2(sp.erfc(t)) / t + 1, sp.erfc(t) * math.log(2) * t / ulp(sp.erf(t)), 5)
    f = np.linspace(-0.5, 0.5, 4000)
    exp2, e3 = fit_f32(f, np.exp2(f), 2.0**24 / np.exp2(f), 6, {0: 1.0})
    print(f"fit errors: Q {e1:.3f} ulp of erf, R {e2:.3f} ulp of erf, 2^f {e3:.3f} x 2^-24 relative")
    return {"ERF_SMALL": small, "ERF_BIG": big, "ERF_EXP2": exp2}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", type=int, default=0, help="also sweep every N-th f32 of [1e-3, 4.5)")
    args = ap.parse_args()
    from tilelang.interp import erf32

    got = fit()
    for name, coefs in got.items():
        print(f"{name} = {coefs!r}")
        print("  as in erf32.py" if coefs == getattr(erf32, name) else "  DIFFERS from erf32.py")
    if args.sweep:
        import scipy.special as sp

        from tilelang.interp.numeric import erf_f32

        lo, hi = (int(f32(v).view(np.uint32)) for v in (1e-3, 4.5))
        x = np.arange(lo, hi, args.sweep, dtype=np.uint32).view(f32)
        ref = sp.erf(x.astype(np.float64))
        u = np.abs(erf_f32(x).astype(np.float64) - ref) / np.spacing(ref.astype(f32)).astype(np.float64)
        print(f"every {args.sweep}th f32 of [1e-3, 4.5): {x.size} values, {u.max():.3f} ulp at most "
              f"(at {x[np.argmax(u)]!r}), mean {u.mean():.3f}")


if __name__ == "__main__":
    main()
