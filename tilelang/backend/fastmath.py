"""How each math op is computed on the GPU, and the tolerance that buys.

The interpreter computes math in f32 with NumPy (correctly rounded or close);
the GPU uses the PTX approximations below where they are within the stated
tolerance. `tests/backend/` compares GPU results with the interpreter using
exactly this table, so a change here is a change to the promise.

For f16/bf16 the op runs in f32 and is rounded once, so the tolerance of the
narrow type (its half-ulp) dominates; `tolerance()` folds that in.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilelang.backend.env_switch import flag, mode, number
from tilelang.dtypes import DType


@dataclass(frozen=True, slots=True)
class MathImpl:
    how: str  # what the backend emits
    rtol: float  # relative tolerance vs the interpreter, f32 inputs in `domain`
    atol: float  # absolute tolerance
    domain: str = "all finite f32"


# op name (ir.ElemOp value) -> implementation for f32 (f16/bf16 run it in f32).
MATH: dict[str, MathImpl] = {
    # `.ftz`: one MUFU.EX2 (the denormal-preserving form costs three more
    # instructions); subnormal results flush to 0, inside the atol of 1e-30
    # atol 1e-18 (1e-30 until 2026-12-06): an online softmax's exp(s - m) skips the error term
    # (`exp_nonpos_plain`), 4.1e-6 relative where exp(x) < 1.3e-13; every other exp is within 6e-7
    "exp": MathImpl("ex2.approx.ftz.f32 of x*log2(e), with the rounding error of the product fed back by fma "
                    "(an overflow gives +inf, -inf gives 0, NaN gives NaN, as the interpreter); where x is an "
                    "online softmax's difference (s - maximum(s, ..), s minus its row max: <= 0 by construction) "
                    "without the error term, as Triton's tl.exp and CUDA's __expf (not in an attention loop that "
                    "loads a bias tile): within 1e-18 absolute where exp(x) < 1.3e-13",
                    2e-6, 1e-18, "|x| < 88"),
    "exp2": MathImpl("ex2.approx.ftz.f32", 2e-6, 1e-30),
    "log": MathImpl("lg2.approx.f32 times ln(2)", 1e-6, 1e-6, "x > 0"),
    "log2": MathImpl("lg2.approx.f32", 1e-6, 1e-6, "x > 0"),
    "sqrt": MathImpl("sqrt.rn.f32 (correctly rounded)", 0.0, 0.0),
    "rsqrt": MathImpl("rsqrt.approx.f32", 2e-6, 0.0, "x > 0"),
    "sin": MathImpl("sin.approx.f32 after a reduction to [-pi, pi]: two constants below |x| = 2^13, an exact "
                    "one beyond (x times 1/(2 pi) in integers, Payne-Hanek)", 1e-6, 4e-6),
    "cos": MathImpl("cos.approx.f32 after a reduction to [-pi, pi]: two constants below |x| = 2^13, an exact "
                    "one beyond (x times 1/(2 pi) in integers, Payne-Hanek)", 1e-6, 4e-6),
    "tanh": MathImpl("x + x^3 P(x^2) below |x| = 0.6 (degree-5 P, TANH_POLY), sign(x) * (1 - 2 / (exp(2|x|) "
                     "+ 1)) with the exp above from there (|x| clamped to 10, where that is 1.0; the quotient by "
                     "div.rn's own fast path: its bits, no slow-path call)", 1e-6, 1e-30),
    "sigmoid": MathImpl("1 / (1 + exp(-x)) with the exp above, div.rn", 4e-6, 1e-7),
    "floor": MathImpl("cvt.rmi.f32.f32 (exact)", 0.0, 0.0),
    "ceil": MathImpl("cvt.rpi.f32.f32 (exact)", 0.0, 0.0),
    # the same bits as the interpreter: both run `interp/erf32.py` (or, `TILEC_ERF_F32=0`, both the f64 series)
    "erf": MathImpl("interp/erf32.py's f32 algorithm, which the interpreter runs too: fma(x, Q(x^2), x) below |x| "
                    "= 1, else sign(x) (1 - 2^S) with S = fma(R(t), t, -t), t = min(|x|, 4), 2^S by the shifter, "
                    "a degree-6 polynomial and 2^n added to the exponent bits; only .rn add/mul/fma, integer and "
                    "bit ops, min and a select (no MUFU, no FP64): ~30 SASS instructions an element, within 1.04 "
                    "ulp of erf; bit for bit the interpreter's (`TILEC_ERF_F32=0`: f64math.erf_f32, the f64 "
                    "series rounded once, ~123, on both engines)",
                    0.0, 0.0),
    # the interpreter rounds NumPy's f64 pow once: the same bits but at an exact tie of x^y for an integer y >= 3
    "pow": MathImpl("f64math.pow_f32: f64math.pow on the values widened to f64 (x * x, exact, where y == 2; x * x "
                    "* x where y == 3, as the interpreter defines it; a value within 2^-36 of an f32 midpoint put on "
                    "it, as the interpreter puts its own: an exact tie rounds to even on both; a run-time y of -1 or 0.5 "
                    "f64's div.rn or sqrt.rn), rounded once, as the "
                    "interpreter rounds its f64 pow (~200 SASS instructions an element, ~60 of them FP64); by a constant 2, 0.5, -1 or 1 "
                    "one f32 operation of the same bits (f32exact.pow_const: x * x, sqrt.rn, div.rn, x), by 3 two "
                    "f64 multiplies", 2e-7, 1e-30, "finite results"),
    "atan2": MathImpl("interp/atan32.py's f32 algorithm, which the interpreter runs too: lo / hi, or (lo - hi) / "
                      "(lo + hi) above tan(1/2) (plus pi/4), atan of it by fma(z, Q(z^2), z), the quadrant by "
                      "two-part constants; only .rn add/mul/div/fma, min/max and selects (no MUFU, no FP64), "
                      "within 1.46 ulp of atan2; bit for bit the interpreter's (`asin`, `acos` and `atan` are "
                      "atan2 of `x` and `sqrt((1 - x) (1 + x))` or 1, in f32; `TILEC_ATAN2_F32=0`: "
                      "f64math.atan2 on the values widened to f64, rounded once, ~185 SASS instructions an "
                      "element, on both engines)", 0.0, 0.0),
    "abs": MathImpl("abs.f32 (exact)", 0.0, 0.0),
    "fma": MathImpl("fma.rn.f32 (one rounding)", 0.0, 0.0),
    "div": MathImpl("div.rn.f32 (IEEE)", 0.0, 0.0),
    "rem": MathImpl("exact fmod in f64 (trunc quotient, one fma, sign fix-up; a loop that takes 51 bits of "
                    "the quotient a trip past 2^52)", 0.0, 0.0),
}

# `#[hints(fast_math = true)]` on a kernel: these f32 ops by the GPU's approximate forms instead of `MATH`'s (f16
# and bf16 run them in f32 and round once, as there); every other op as `MATH` says (exp2, log, log2, rsqrt, sin
# and cos are MUFU forms already). The interpreter is unchanged: the hint buys speed within these bounds.
# exp: 4.1e-6 at most on [-88.8, 88.7] (the product's rounding at |t| >= 64, log2(e)'s, the MUFU's 2^-22;
# NumPy emulation, tests/backend/test_fast_math.py); tanh: the MUFU.TANH's bound as the PTX ISA gives it
# (2^-10.987, about 5e-4: fine for an activation of f16/bf16 values, not for f32 numerics); division: div.full's
# 2 ulp over the full range (no slow path for subnormals or huge divisors; a subnormal result may flush).
FAST_MATH: dict[str, MathImpl] = {
    "exp": MathImpl("ex2.approx.ftz.f32 of x*log2(e), no error term (Triton's tl.exp, CUDA's __expf)",
                    4.2e-6, 1e-30, "|x| < 88"),
    "sigmoid": MathImpl("rcp.approx.ftz.f32 of 1 + exp(-x), with the exp above", 4.5e-6, 1e-30),
    "tanh": MathImpl("tanh.approx.f32 (one MUFU.TANH)", 5e-4, 1.2e-38),
    "div": MathImpl("div.full.f32 (2 ulp over the full range)", 3e-7, 1.2e-38, "normal operands and results"),
}


# tanh below |x| = TANH_POLY_BELOW: x + x^3 P(x^2), P of degree 5 in x^2
# (coefficients of x^3 .. x^11; relative least squares for tanh on
# [0, 0.6], fitted in f64): 7.2e-8 relative at most in f32 (about one ulp),
# where 1 - 2 / (e^2x + 1) loses everything to cancellation (its absolute
# error, 1e-7, is all of tanh(1e-7)). Checked against NumPy over 200k points
# by tests/backend/test_numerics_diff.py.
TANH_POLY_BELOW = 0.6
# tanh of |x| >= TANH_ONE is 1.0 in f32 (1 - 2 / (e^20 + 1) is within 4.2e-9 of 1, under half an ulp below it): the
# GPU clamps |x| there (`codegen/arith.ftanh`), which changes no result and keeps exp(2|x|) finite
TANH_ONE = 10.0


def tanh_fast_div() -> bool:
    """`TILEC_TANH_DIV`: "fast" (unset: tanh's quotient by div.rn's own fast path, |x| clamped to TANH_ONE,
    `codegen/arith.ftanh`) or "rn" (div.rn with its slow-path call, no clamp: the code before hcliff13, the
    same bits, for an A/B on a GPU)."""
    return mode("TILEC_TANH_DIV", "fast", ("fast", "rn")) == "fast"
TANH_POLY = (-0.33333294366595045, 0.13331880556516756, -0.053783345663406916, 0.02080266713075199,
             -0.005910838947703119)

def atan2_f32() -> bool:
    """f32 `atan2` (f16/bf16 in f32; `asin`, `acos`, `atan` through it) by `interp/atan32.py`'s algorithm,
    `f32exact.atan2` (`TILEC_ATAN2_F32` "1", the default), or by the f64 atan2 rounded once, `f64math.atan2` ("0"):
    the interpreter reads the same switch (`atan32.enabled`), so both engines give the same bits either way."""
    return flag("TILEC_ATAN2_F32", "1")


def erf_f32() -> bool:
    """f32 `erf` (f16/bf16 in f32) by `interp/erf32.py`'s algorithm, `f32exact.erf` (`TILEC_ERF_F32` "1",
    the default), or by the f64 series rounded once, `f64math.erf_f32` ("0"): the interpreter reads the same
    switch (`erf32.enabled`), so both engines give the same bits either way. Another value: E0604."""
    return flag("TILEC_ERF_F32", "1")


# exp2 on the FMA pipe, for a share of a tile's elements (`TILEC_EXP2_POLY=N`:
# one register in N of each thread's exp2s; unset or "0": none): where a
# kernel's exp2s keep the MUFU as busy as its tensor cores (flash attention
# at D = 64: 64 MUFU.EX2 a thread a key block), FlashAttention-4's split
# moves some of them to the FMA pipe. x clamped to [-126, 128] (NaN kept),
# n = round(x) by the 1.5 * 2^23 shifter, 2^(x - n) by the degree-5
# polynomial below in f = x - n in [-0.5, 0.5] (relative minimax, times 2),
# times 2^(n - 1) built from n's bits: 13 instructions for one MUFU.EX2.
# Within `MATH["exp2"]`'s promise: relative error 2.2e-7 on [-125.5, 128]
# (f32 evaluation emulated over 5M points, tests/backend/test_exp2_poly.py),
# 0 below (under the atol of 1e-30), inf from 128, NaN for NaN.
EXP2_POLY = (2.0000001433108636, 1.386293934124081, 0.48044239440148384, 0.1110142655219293,
             0.01935108308022134, 0.002655294347257227)


def exp2_poly_share() -> int:
    """N of `TILEC_EXP2_POLY` (one register in N of a tile's f32 exp2s by
    the polynomial); 0: every exp2 is `ex2.approx.ftz.f32`."""
    return number("TILEC_EXP2_POLY", 0, 0)


def skip_unit_scale(accumulator: bool) -> bool:
    """An f32 tile times a tile of at most 4 distinct registers a thread (a
    row vector broadcast over an accumulator) skips its multiplies where
    every factor of the warp is exactly 1.0 (one vote.all; x * 1.0 is x
    exactly): flash attention's O rescale by alpha = 1 when no row's max
    moved (std::attention's stale max). `TILEC_SKIP_UNIT_SCALE` "auto" (the
    default: on for tiles in the wgmma accumulator layout, `accumulator`),
    "1" (every such multiply), "0" (none)."""
    want = mode("TILEC_SKIP_UNIT_SCALE", "auto", ("auto", "0", "1"))
    return want == "1" or (want == "auto" and accumulator)


def exp_nonpos_plain(loads: bool = False) -> bool:
    """`exp(x)` of an online softmax's difference (`x = a - maximum(a, ..)` or `a` minus its row max: <= 0 or
    NaN by construction, `codegen/arith.nonpositive_exp_args`) as ex2.approx.ftz(x * log2(e)) with no error term
    (`codegen/arith.fexp_plain`): the form Triton's `tl.exp` and CUDA's `__expf` take everywhere. Its error is
    the product's rounding (|x| 2^-24 in the exponent) and the MUFU's: within 2e-6 relative down to x = -29.7
    (exp(x) >= 1.3e-13) and within 1e-18 absolute below (4.1e-6 relative at most, MUFU at its worst), which is
    `MATH["exp"]`'s promise (rtol 2e-6, atol 1e-18). Three instructions an element fewer than `fexp_ln2`'s <= 0
    form, in the key loop of a user's `exp(s - m)` attention. `loads`: the kernel's accumulator-layout code loads
    tiles itself (an attention loop's additive bias, read by the consumers): there the plain form measured
    slower (H100, call 17: `cliffs.py`'s attn_bias 0.98x -> 0.87x SDPA, where the plain loop spilled 100 B
    against 48 B; the cause not found), so the error term's form stays. `TILEC_EXP_NONPOS` "1" (the default:
    every layout, but not beside such loads), "all" (beside them too), "0" (off: `exp_ln2`'s forms)."""
    want = mode("TILEC_EXP_NONPOS", "1", ("1", "all", "0"))
    return want == "all" or (want != "0" and not loads)


def exp_ln2(accumulator: bool) -> bool:
    """`exp`'s feedback of the product's rounding error computed as x - t ln2 (t = x * log2(e) rounded; as
    log2(e) ln2 = 1: one fma with ln2 rounded to f32) instead of (x log2(e) - t) ln2 from log2(e)'s two halves
    (two fmas and a multiply): two instructions fewer an element, within 5.9e-7 of exp(x) instead of 3.6e-7 (2M
    points on [-88, 88], the MUFU off by its worst error both ways; ln2's rounding leaves out at most 2.4e-7 of
    the term), a third of the promised 2e-6.
    `TILEC_EXP_LN2` "auto" (the default: for tiles in the accumulator layout, the attention pipeline's
    consumers, where a user's `exp(s - m)` makes the key loop issue-bound: no std or engine kernel has one
    there, so their PTX is unchanged), "1" (every f32 exp, sigmoid and tanh), "0" (none)."""
    want = mode("TILEC_EXP_LN2", "auto", ("auto", "0", "1"))
    return want == "1" or (want == "auto" and accumulator)


# op name -> implementation for f64. PTX has no f64 approximations, so the
# transcendental ops are computed in plain LLVM IR (`backend/f64math.py`,
# range reduction + Taylor polynomials); the rest are exact instructions.
# Tolerances: measured on 600k+ inputs per op against NumPy (worst 4.4e-16
# relative, `tests/backend/test_f64math.py`), stated with a margin.
F64_MATH: dict[str, MathImpl] = {
    "exp": MathImpl("f64math.exp: ln2 reduction, degree-13 Taylor, 2^k in two halves", 1e-15, 1e-307,
                    "all f64 (subnormal results to within an ulp of the smallest subnormal)"),
    "exp2": MathImpl("f64math.exp2: same core as exp", 1e-15, 1e-307, "all f64"),
    "log": MathImpl("f64math.log: m 2^e split, 2 atanh((m-1)/(m+1)) to s^21", 1e-15, 0.0, "x > 0"),
    "log2": MathImpl("f64math.log2: e + log(m) / ln2", 1e-15, 0.0, "x > 0"),
    "sqrt": MathImpl("sqrt.rn.f64 (correctly rounded)", 0.0, 0.0),
    "rsqrt": MathImpl("div.rn.f64 of sqrt.rn.f64: the interpreter's 1 / sqrt(x) exactly", 0.0, 0.0),
    "sin": MathImpl("f64math.sin: three-part pi/2 reduction, Taylor to degree 17", 1e-15, 1e-15,
                    "|x| < 2^50 (NaN beyond)"),
    "cos": MathImpl("f64math.cos: three-part pi/2 reduction, Taylor to degree 18", 1e-15, 1e-15,
                    "|x| < 2^50 (NaN beyond)"),
    "tanh": MathImpl("f64math.tanh: sinh/sqrt(1+sinh^2) below 1, 1 - 2/(exp(2|x|)+1) above", 1e-15, 1e-300),
    "sigmoid": MathImpl("1 / (1 + exp(-x)) with f64math.exp: the interpreter's formula", 1e-15, 1e-300),
    "floor": MathImpl("cvt.rmi.f64.f64 (exact)", 0.0, 0.0),
    "ceil": MathImpl("cvt.rpi.f64.f64 (exact)", 0.0, 0.0),
    "erf": MathImpl("f64math.erf: the interpreter's algorithm (Taylor below 1.5, erfc's continued "
                    "fraction above)", 1e-15, 1e-300),
    "pow": MathImpl("f64math.pow: exp(y log|x|) with IEEE's special cases", 1e-13, 1e-300,
                    "finite results, |y log x| < 700"),
    "atan2": MathImpl("f64math.atan2: reduced to [0, tan(pi/8)], Taylor to degree 47, two-part pi", 1e-15,
                      1e-300),
    "abs": MathImpl("abs.f64 (exact)", 0.0, 0.0),
    "fma": MathImpl("fma.rn.f64 (one rounding)", 0.0, 0.0),
    "div": MathImpl("div.rn.f64 (IEEE)", 0.0, 0.0),
    "rem": MathImpl("exact fmod (trunc quotient, one fma, sign fix-up; a loop that takes 51 bits of the "
                    "quotient a trip past 2^52)", 0.0, 0.0),
}

# Half an ulp at 1.0 of each narrow type: the rounding every f16/bf16 op adds.
_NARROW_RTOL = {DType.F16: 2.0**-11, DType.BF16: 2.0**-8}
# The smallest subnormal of each narrow type: the last step of its rounding.
_NARROW_STEP = {DType.F16: 2.0**-24, DType.BF16: 2.0**-133}


def tolerance(op: str, dtype: DType, fast_math: bool = False) -> tuple[float, float]:
    """(rtol, atol) for comparing one application of `op` on `dtype` with the interpreter (`fast_math`: in a
    kernel hinted `fast_math = true`)."""
    table = F64_MATH if dtype is DType.F64 else MATH
    impl = table.get(op, MathImpl("exact", 0.0, 0.0))
    if fast_math and dtype is not DType.F64:
        impl = FAST_MATH.get(op, impl)
    rtol, atol = impl.rtol, impl.atol
    if dtype in _NARROW_RTOL and (rtol or atol):  # an exact f32 result rounds as the interpreter's
        # The f32 result may sit on the other side of a rounding boundary: one
        # ulp of the narrow type more, relative (an absolute 1e-3 / 1e-2 let
        # tanh(1e-3) be 0 in bf16), or its smallest step below its normals.
        rtol = rtol + 2 * _NARROW_RTOL[dtype]
        atol = max(atol, _NARROW_STEP[dtype])
    return rtol, atol


def _inv_2pi_words() -> tuple[int, ...]:
    """1/(2 pi) as 8 big-endian u32 words, after 32 zero bits: bit j of the
    256 (MSB first) is 1/(2 pi)'s bit j - 31 (2^-(j-31)). Integers only
    (Machin's formula at 320 bits), so nothing depends on the host's floats."""
    n = 320

    def atan_inv(k: int) -> int:  # atan(1/k) * 2^n
        total, term, i, sign = 0, (1 << n) // k, 1, 1
        while term:
            total += sign * (term // i)
            term //= k * k
            i += 2
            sign = -sign
        return total

    pi = 4 * (4 * atan_inv(5) - atan_inv(239))  # pi * 2^n
    frac = (1 << (2 * n)) // (2 * pi)  # 1/(2 pi) * 2^n
    bits = frac >> (n - 224)  # 1/(2 pi)'s bits 1..224 (it is < 1)
    return tuple((bits >> (32 * (6 - i))) & 0xFFFFFFFF for i in range(-1, 7))


# the exact sin/cos reduction's table (`codegen/arith.freduce_exact`)
INV_2PI_WORDS = _inv_2pi_words()
