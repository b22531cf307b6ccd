"""The f32 `erf` both engines compute, fully specified (herf, 2026-12-07): its constants and its switch; the
interpreter's NumPy form is `numeric.erf_f32`, the GPU's `backend/f32exact.erf`.

Every step is a correctly rounded IEEE f32 operation (add, sub, mul, fma, all
round-to-nearest-even), a min, a compare and select, a copysign, or an integer
operation on a value's bits, so the interpreter and the GPU give the same bits
for every input: no MUFU, no approximate instruction, no step whose rounding either
engine may choose. With a = |x|:

- a < ERF_CUT (1.0; NaN too): erf(x) = fma(x, Q(x*x), x), Q of degree 7 in x^2
  (`ERF_SMALL`, Horner by fma).
- else, t = min(a, ERF_CLAMP) (4.0; erf(t) rounds to 1.0 in f32 from 3.92 on):
  erfc(t) = 2^S with S = fma(R(t), t, -t) (`ERF_BIG`, R of degree 5 in t: S is
  log2(erfc(t))); 2^S as 2^n 2^f with n = rint(S) by the 1.5 2^23 shifter
  (j = S + C, n = j - C, f = S - n, all three exact), 2^f by a degree-6
  polynomial (`ERF_EXP2`, Horner by fma, leading 1), 2^n by adding n << 23 to
  its bits (n is the low bits of j's; n in [-26, -2], so the result is normal);
  erf(x) = copysign(1 - 2^S, x).

Accuracy (`benchmarks/herf_fit.py` fitted the coefficients: minimax on a grid,
rounded to f32 one at a time from the highest degree, the rest refitted): against
SciPy's f64 erf, 1.035 ulp at most over every f32 of [0.5, 4.5) (0.5 of it the
final rounding; 31 of 26 million inputs above 1 ulp), 0.62 over every 7th of
[1e-38, 0.5), 0.51 over every 1013th below (subnormals: in their step);
`tests/backend/test_erf32.py` checks a sweep against `math.erf`.
Below 1e-3 the first form is x (1 + Q0) rounded once (Q0 within 1e-9 of
2/sqrt(pi) - 1), subnormals included; +-0 keep their sign, +-inf give +-1, NaN
gives NaN.

The fma (`numeric._fma64`): a f32 product is exact in f64, and the f64 sum
rounded to f32 is the correctly rounded a*b + c except where that sum is an f32
midpoint or below 2^-126; those take the round-to-odd sum (Boldo and Melquiond,
IEEE TC 2008: 53 >= 24 + 2; the interpreter's `fma`). ~0.3 s a million values,
as the f64 series.

`TILEC_ERF_F32` "1" (the default) selects this algorithm for f32 (and f16/bf16,
computed in f32 and rounded once) on both engines; "0" selects the f64 series
rounded once (`numeric.erf_f64`; `backend/f64math.erf_f32` on the GPU, ~123
SASS instructions an element on the FP64 pipe), within half an ulp, on both
engines as well.
"""

from __future__ import annotations

from tilelang.env_switch import flag

ERF_CUT = 1.0
ERF_CLAMP = 4.0
ERF_SHIFT = 12582912.0  # 1.5 * 2^23: S + C rounds S to an integer n in C's last bits
# erf(x) / x - 1 in x^2 on [0, 1], x^0 .. x^14
ERF_SMALL = (0.12837916612625122, -0.37612637877464294, 0.11283782124519348, -0.02686540223658085,
             0.00522092217579484, -0.0008482127450406551, 0.00011249753151787445, -9.616022907721344e-06)
# log2(erfc(t)) / t + 1 on [1, 4], t^0 .. t^5
ERF_BIG = (-0.6280460953712463, -0.9173324704170227, -0.1516224443912506, 0.03287337347865105,
           -0.0045922668650746346, 0.0003032285603694618)
# 2^f on [-0.5, 0.5], f^0 .. f^6
ERF_EXP2 = (1.0, 0.6931471824645996, 0.24022647738456726, 0.055503323674201965, 0.00961843691766262,
            0.0013398875016719103, 0.00015353361959569156)


def enabled() -> bool:
    """`TILEC_ERF_F32`: "1" (default, unset or empty) this algorithm, "0" the f64 series rounded once. Read by
    both engines (the backend through `fastmath.erf_f32`), so they agree whichever is set; any other value is
    E0604 (`env_switch.flag`)."""
    return flag("TILEC_ERF_F32", "1")
