"""The f32 `atan2` both engines compute, fully specified (hnum, 2026-12-07): its constants and its switch; the
interpreter's NumPy form is `numeric.atan2_f32`, the GPU's `backend/f32exact.atan2`. `asin`, `acos` and `atan`
are atan2 of their operand and `sqrt((1 - x) (1 + x))` or 1 (`lower.intrinsics.inverse_trig`), so they take it
too; f16 and bf16 are computed in f32 and rounded once.

As `erf32`, every step is a correctly rounded IEEE f32 operation (add, sub, mul, div, fma, round-to-nearest-
even), a max/min of non-NaN values, a compare and select or a copysign, so the interpreter and the GPU give the
same bits for every input: no MUFU, no approximate instruction. With hi = max(|x|, |y|), lo = min(..):

- L, H = lo h, hi h with h = 1/4 where hi > 2^126, 2^64 where hi < 2^-100, else 1 (exact: a power of two; the
  cut's product below is then of a normal H, and L + H cannot overflow).
- big = L > ATAN_CUT H (ATAN_CUT = tan(1/2)), or both infinite: z = (L - H) / (L + H) (L - H exact: Sterbenz),
  the rest z = L / H; z = 0 where hi is 0 (0/0) or both are infinite. |z| <= 0.2934.
- t = fma(z, Q(z^2), z) = atan(z), Q of degree 6 in z^2 with no constant term (`ATAN_POLY`, Horner by fma);
  atan(lo / hi) = t, or for big (PIO4_LO + t) + PIO4_HI (pi/4 + atan(z)).
- the quadrant as `f64math.atan2`'s: r, pi - r (x's sign bit: atan2(0, -0) = pi), pi/2 - r or pi/2 + r (|y| >
  |x|), each hi + (lo +- r) with two-part constants; y's sign copied on; NaN in, NaN out.

Accuracy against NumPy's f64 arctan2 (`benchmarks/hnum_atan2.py`, this machine, once): **1.46 ulp at most** (1.448
over its ~78 million pairs in ten classes: random bit patterns of every magnitude; uniform in [-1, 1]^2; near
the diagonal; near the cut; x = +-1 and y = 1 against every 64th f32 of [0, 1); subnormal against any, both
subnormal; near FLT_MAX; 1.459 on another seed's both-subnormal pairs), 0.5 of it the last rounding; the
specials (zeros of both signs, infinities, NaN) as C99's atan2 but atan2(+-inf, +-inf), the polynomial's pi/4
(0.7853982, correctly rounded) and 3 pi/4. The fit: `benchmarks/hnum_atan2.py --fit` (SciPy's linprog, as
`herf_fit.py`) reproduces `ATAN_POLY`.

`TILEC_ATAN2_F32` "1" (the default) selects this algorithm on both engines; "0" the f64 atan2 rounded once
(NumPy's arctan2 in f64; `backend/f64math.atan2` on the GPU, ~185 SASS instructions an element, ~57 on the
FP64 pipe), within half an ulp, on both engines as well.
"""

from __future__ import annotations

from tilelang.env_switch import flag

ATAN_CUT = 0.5463024973869324  # tan(0.5) in f32: above it atan(a) = pi/4 + atan((a - 1) / (a + 1))
# atan(z) / z - 1 in z^2 on [0, tan(0.5)^2], z^0 .. z^12 (no constant term: atan(z) = z (1 + Q))
ATAN_POLY = (0.0, -0.33333316445350647, 0.1999891847372055, -0.14261096715927124, 0.10850702226161957,
             -0.07651873677968979, 0.0342189259827137)
PI = (3.1415927410125732, -8.742277657347586e-08)  # f32 hi and the f32 of the rest
PIO2 = (1.5707963705062866, -4.371138828673793e-08)
PIO4 = (0.7853981852531433, -2.1855694143368964e-08)
BIG_SCALE = (2.0**126, 0.25)  # hi above: L, H scaled by 1/4
SMALL_SCALE = (2.0**-100, 2.0**64)  # hi below: scaled by 2^64


def enabled() -> bool:
    """`TILEC_ATAN2_F32`: "1" (default, unset or empty) this algorithm, "0" the f64 atan2 rounded once. Read by both
    engines (the backend through `fastmath.atan2_f32`), so they agree whichever is set; any other value is E0604
    (`env_switch.flag`)."""
    return flag("TILEC_ATAN2_F32", "1")
