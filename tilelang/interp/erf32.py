# mypy: disable-error-code="no-any-return"
"""The f32 `erf` both engines compute, fully specified (herf, 2026-12-07).

Every step is a correctly rounded IEEE f32 operation (add, sub, mul, fma, all
round-to-nearest-even), a min, a compare and select, a copysign, or an integer
operation on a value's bits, so the interpreter (NumPy, below) and the GPU
(`backend/codegen/arith.ferf`, the same steps in LLVM IR) give the same bits for
every input: no MUFU, no approximate instruction, no step whose rounding either
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

Accuracy (`benchmarks/herf_fit.py` fitted the coefficients; `tests/backend/test_erf32.py`
checks): within 1.04 ulp of erf over every 13th f32 of [1e-3, 4.5) against
SciPy's f64 erf (0.5 of it the final rounding); every f32 of [0.5, 4.5) once:
see benchmarks/RESULTS.md (herf). Below 1e-3 the first form is x (1 + Q0) rounded
once (Q0 within 1e-9 of 2/sqrt(pi) - 1), subnormals included; +-0 keep their
sign, +-inf give +-1, NaN gives NaN.

The fma: a f32 product is exact in f64; the f64 sum rounded to odd and then
rounded to f32 is the correctly rounded a*b + c (Boldo and Melquiond, IEEE TC
2008: 53 >= 24 + 2; `numeric._add_round_odd`, the interpreter's `fma`), also
where the f32 result is subnormal (the f64 value is not).

`TILEC_ERF_F32` "1" (the default) selects this algorithm for f32 (and f16/bf16,
computed in f32 and rounded once) on both engines; "0" selects the f64 series
rounded once (`numeric.erf_f64`; `backend/f64math.erf_f32` on the GPU, ~138
SASS instructions an element on the FP64 pipe), within half an ulp, on both
engines as well.
"""

from __future__ import annotations

import numpy as np

from tilelang.backend.env_switch import flag
from tilelang.interp.numeric import _add_round_odd

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

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
    """`TILEC_ERF_F32`: "1" (default, unset or empty) this algorithm, "0" the f64 series rounded once; any other
    value is an E0604 `SwitchError`. Read by both engines, so they agree whichever is set."""
    return flag("TILEC_ERF_F32", "1")


def fma(a: np.ndarray, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """fma.rn.f32: a * b + c rounded once (the module docstring's proof)."""
    p = np.asarray(a, F32).astype(F64) * np.asarray(b, F32).astype(F64)
    return _add_round_odd(p, np.asarray(c, F32).astype(F64)).astype(F32)


def _horner(coefs: tuple[float, ...], v: np.ndarray) -> np.ndarray:
    p = np.full(v.shape, coefs[-1], F32)
    for c in coefs[-2::-1]:
        p = fma(p, v, c)
    return p


def erf_f32(x: np.ndarray) -> np.ndarray:
    """erf of f32 values by the algorithm above, element-wise (f32 in, f32 out)."""
    x = np.asarray(x, F32)
    with np.errstate(all="ignore"):  # x*x of the largest values and NaN: the other form's, not taken
        a = np.abs(x)
        small = fma(x, _horner(ERF_SMALL, x * x), x)
        t = np.fmin(a, F32.type(ERF_CLAMP))  # minnum: NaN gives 4 (NaN takes the first form)
        s = fma(_horner(ERF_BIG, t), t, -t)
        j = s + F32.type(ERF_SHIFT)
        n = j - F32.type(ERF_SHIFT)
        p = _horner(ERF_EXP2, s - n)
        y = (p.view(np.uint32) + (j.view(np.uint32) << np.uint32(23))).view(F32)
        big = np.copysign(F32.type(1.0) - y, x)
        return np.where(a >= F32.type(ERF_CUT), big, small).astype(F32, copy=False)
