"""f64 transcendental functions in plain LLVM IR (PTX has no f64 approximations).

Each function takes an emitter with `emit(instr) -> name` and
`fcall(intrinsic, ty, args) -> name` (the backend's `_Emitter`, or the host
test harness in `tests/backend/test_f64math.py`, which JIT-compiles the same
text for the CPU and compares it with NumPy on millions of inputs) and
returns the name of the result. Only target-independent LLVM is used
(`fma`, `rint`, `sqrt`, `fabs`, `copysign`, integer ops on the bits), and
no branches: every lane runs the same straight-line code.

Algorithms (the classic ones, as in fdlibm / CUDA's libdevice, with Taylor
polynomials evaluated by Horner's rule with fused multiply-adds):
- exp: k = rint(x / ln2), r = x - k ln2 with a two-part ln2 (|r| <= 0.35),
  exp(r) by its Taylor polynomial to degree 13, times 2^k built in two
  halves from exponent bits (so subnormal results and overflow are right);
  exp2 is the same with r = (x - rint(x)) ln2.
- log: x = m 2^e with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^54
  first), log m = 2 atanh(s), s = (m - 1) / (m + 1), by its odd series to
  s^21; then e ln2 + log m with a two-part ln2. log2 = e + log m / ln2.
- sin, cos: k = rint(x 2/pi), r = x - k pi/2 with a three-part pi/2 (fma),
  sin/cos of r in [-pi/4, pi/4] by Taylor polynomials to degree 17/18, and
  the quadrant k mod 4 picks and signs them. Accurate while k is exact;
  NaN for |x| >= 2^50 (about 1.1e15), where it would not be.
- tanh: |x| < 1: s = sinh|x| (Taylor to degree 21), s / sqrt(1 + s^2);
  else 1 - 2 / (exp(2|x|) + 1); the sign of x is copied onto the result.
- sigmoid: 1 / (1 + exp(-x)), rsqrt: 1 / sqrt(x) (correctly rounded sqrt
  and division: the interpreter's own formulas).
- erf: the interpreter's algorithm (`interp.numeric.erf_f64`): |x| < 1.5 the
  Taylor series of erf in x^2 (35 terms, Horner), else 1 - erfc with erfc by
  its continued fraction (80 terms, evaluated from the bottom) times
  exp(-x^2); the sign of x is copied on. f32 runs it on the widened value.
- pow: IEEE `pow` (C99 Annex F): exp(y log|x|), the sign from x when y is an
  odd integer, NaN for a negative x and a non-integer y, and the special
  cases (y = 0, x = 1, zeros and infinities) selected explicitly. Relative
  error about |y log x| ulps (the product's rounding is amplified by exp).
Tolerances (measured against NumPy by the test) are in `fastmath.F64_MATH`.
"""

from __future__ import annotations

import math
import struct
from typing import Protocol

import numpy as np


class IREmitter(Protocol):
    def emit(self, instr: str) -> str: ...

    def fcall(self, name: str, ty: str, args: list[str]) -> str: ...

    def declare(self, decl: str) -> None: ...


def c(x: float) -> str:
    """An LLVM double constant (hex: exact)."""
    return "0x{:016X}".format(struct.unpack("<Q", struct.pack("<d", x))[0])


LN2_HI, LN2_LO = 0.6931471805599453, 2.3190468138462996e-17
LOG2E = 1.4426950408889634
TWO_OVER_PI = 0.6366197723675814
PIO2 = (1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33)
SQRT_HALF = 0.7071067811865476

EXP_COEF = [1.0 / math.factorial(i) for i in range(14)]  # 1, 1, 1/2, ... 1/13!
SIN_COEF = [(-1.0) ** i / math.factorial(2 * i + 1) for i in range(1, 9)]  # -1/3!, ... 1/17!
COS_COEF = [(-1.0) ** i / math.factorial(2 * i) for i in range(1, 10)]  # -1/2!, ... 1/18!
SINH_COEF = [1.0 / math.factorial(2 * i + 1) for i in range(1, 11)]  # 1/3!, ... 1/21!
ATANH_COEF = [2.0 / (2 * i + 1) for i in range(1, 11)]  # 2/3, 2/5, ... 2/21


def horner(em: IREmitter, z: str, coef: list[float]) -> str:
    """coef[0] + coef[1] z + ... by Horner's rule with fma."""
    acc = c(coef[-1])
    for a in reversed(coef[:-1]):
        acc = em.fcall("fma", "double", [acc, z, c(a)])
    return acc


def _to_i64(em: IREmitter, kd: str) -> str:
    em.declare("declare i64 @llvm.fptosi.sat.i64.f64(double)")
    return em.emit(f"call i64 @llvm.fptosi.sat.i64.f64(double {kd})")


def _pow2(em: IREmitter, k: str) -> str:
    """2^k as a double for an i64 k in [-1022, 1023] (built from exponent bits)."""
    b = em.emit(f"add i64 {k}, 1023")
    bits = em.emit(f"shl i64 {b}, 52")
    return em.emit(f"bitcast i64 {bits} to double")


def _scale(em: IREmitter, p: str, kd: str) -> str:
    """p * 2^kd for an integral double kd in about [-1080, 1030], in two halves."""
    k = _to_i64(em, kd)
    k1 = em.emit(f"ashr i64 {k}, 1")
    k2 = em.emit(f"sub i64 {k}, {k1}")
    t = em.emit(f"fmul double {p}, {_pow2(em, k1)}")
    return em.emit(f"fmul double {t}, {_pow2(em, k2)}")


def _clamp(em: IREmitter, x: str, lo: float, hi: float) -> str:
    """x clamped to [lo, hi], NaN kept (fcmp is false for NaN)."""
    below = em.emit(f"fcmp olt double {x}, {c(lo)}")
    x1 = em.emit(f"select i1 {below}, double {c(lo)}, double {x}")
    above = em.emit(f"fcmp ogt double {x1}, {c(hi)}")
    return em.emit(f"select i1 {above}, double {c(hi)}, double {x1}")


def exp(em: IREmitter, x: str) -> str:
    xc = _clamp(em, x, -746.0, 710.0)
    kd = em.fcall("rint", "double", [em.emit(f"fmul double {xc}, {c(LOG2E)}")])
    nk = em.emit(f"fneg double {kd}")
    r = em.fcall("fma", "double", [nk, c(LN2_HI), xc])
    r = em.fcall("fma", "double", [nk, c(LN2_LO), r])
    return _scale(em, horner(em, r, EXP_COEF), kd)


def exp2(em: IREmitter, x: str) -> str:
    xc = _clamp(em, x, -1080.0, 1030.0)
    kd = em.fcall("rint", "double", [xc])
    f = em.emit(f"fsub double {xc}, {kd}")  # exact
    lo = em.emit(f"fmul double {f}, {c(LN2_LO)}")
    r = em.fcall("fma", "double", [f, c(LN2_HI), lo])
    return _scale(em, horner(em, r, EXP_COEF), kd)


def _log_parts(em: IREmitter, x: str) -> tuple[str, str]:
    """(e as a double, log m) with x = m 2^e, m in [sqrt(1/2), sqrt(2)), for x > 0 finite."""
    sub = em.emit(f"fcmp olt double {x}, {c(2.0 ** -1022)}")
    xs = em.emit(f"fmul double {x}, {c(2.0 ** 54)}")
    xn = em.emit(f"select i1 {sub}, double {xs}, double {x}")
    adj = em.emit(f"select i1 {sub}, i64 -54, i64 0")
    bits = em.emit(f"bitcast double {xn} to i64")
    ebits = em.emit(f"lshr i64 {bits}, 52")
    ef = em.emit(f"and i64 {ebits}, 2047")
    mbits = em.emit(f"and i64 {bits}, 4503599627370495")  # 2^52 - 1
    m1 = em.emit(f"bitcast i64 {em.emit(f'or i64 {mbits}, 4607182418800017408')} to double")  # [1, 2)
    big = em.emit(f"fcmp ogt double {m1}, {c(2 * SQRT_HALF)}")
    mh = em.emit(f"fmul double {m1}, 0.5")
    m = em.emit(f"select i1 {big}, double {mh}, double {m1}")
    e0 = em.emit(f"add i64 {ef}, {em.emit(f'sub i64 {adj}, 1023')}")
    e = em.emit(f"add i64 {e0}, {em.emit(f'zext i1 {big} to i64')}")
    ed = em.emit(f"sitofp i64 {e} to double")
    num = em.emit(f"fsub double {m}, 1.0")  # exact (Sterbenz)
    den = em.emit(f"fadd double {m}, 1.0")
    s = em.emit(f"fdiv double {num}, {den}")
    z = em.emit(f"fmul double {s}, {s}")
    sz = em.emit(f"fmul double {s}, {z}")
    t = em.emit(f"fmul double {sz}, {horner(em, z, ATANH_COEF)}")
    logm = em.fcall("fma", "double", [s, "2.0", t])
    return ed, logm


def _log_specials(em: IREmitter, x: str, res: str) -> str:
    """log of 0 is -inf, of +inf is +inf, of a negative number or NaN is NaN."""
    nan = em.emit(f"fcmp ult double {x}, 0.0")  # true for NaN too
    zero = em.emit(f"fcmp oeq double {x}, 0.0")
    inf = em.emit(f"fcmp oeq double {x}, 0x7FF0000000000000")
    r1 = em.emit(f"select i1 {inf}, double 0x7FF0000000000000, double {res}")
    r2 = em.emit(f"select i1 {zero}, double 0xFFF0000000000000, double {r1}")
    return em.emit(f"select i1 {nan}, double 0x7FF8000000000000, double {r2}")


def log(em: IREmitter, x: str) -> str:
    ed, logm = _log_parts(em, x)
    lo = em.fcall("fma", "double", [ed, c(LN2_LO), logm])
    return _log_specials(em, x, em.fcall("fma", "double", [ed, c(LN2_HI), lo]))


def log2(em: IREmitter, x: str) -> str:
    ed, logm = _log_parts(em, x)
    lo = em.emit(f"fmul double {logm}, {c(2.0355273740931033e-17)}")
    return _log_specials(em, x, em.emit(f"fadd double {ed}, {em.fcall('fma', 'double', [logm, c(LOG2E), lo])}"))


def _sincos_r(em: IREmitter, x: str) -> tuple[str, str, str]:
    """(sin r, cos r, quadrant k mod 4 as i64) with x = k pi/2 + r."""
    kd = em.fcall("rint", "double", [em.emit(f"fmul double {x}, {c(TWO_OVER_PI)}")])
    nk = em.emit(f"fneg double {kd}")
    r = x
    for part in PIO2:
        r = em.fcall("fma", "double", [nk, c(part), r])
    z = em.emit(f"fmul double {r}, {r}")
    rz = em.emit(f"fmul double {r}, {z}")
    s = em.fcall("fma", "double", [rz, horner(em, z, SIN_COEF), r])
    co = em.fcall("fma", "double", [z, horner(em, z, COS_COEF), "1.0"])
    k = _to_i64(em, kd)
    q = em.emit(f"and i64 {k}, 3")
    return s, co, q


def _quadrant(em: IREmitter, vals: tuple[str, str, str, str], q: str) -> str:
    """vals[q] for q in 0..3."""
    b0 = em.emit(f"trunc i64 {q} to i1")
    hi = em.emit(f"icmp uge i64 {q}, 2")
    lo_pair = em.emit(f"select i1 {b0}, double {vals[1]}, double {vals[0]}")
    hi_pair = em.emit(f"select i1 {b0}, double {vals[3]}, double {vals[2]}")
    return em.emit(f"select i1 {hi}, double {hi_pair}, double {lo_pair}")


def _trig_domain(em: IREmitter, x: str, res: str) -> str:
    """NaN where |x| >= 2^50: the reduction needs k = rint(x 2/pi) exact (a
    loud NaN rather than a quietly wrong value there)."""
    a = em.fcall("fabs", "double", [x])
    big = em.emit(f"fcmp oge double {a}, {c(2.0 ** 50)}")
    return em.emit(f"select i1 {big}, double 0x7FF8000000000000, double {res}")


def sin(em: IREmitter, x: str) -> str:
    s, co, q = _sincos_r(em, x)
    ns, nc = em.emit(f"fneg double {s}"), em.emit(f"fneg double {co}")
    res = _quadrant(em, (s, co, ns, nc), q)
    zero = em.emit(f"fcmp oeq double {x}, 0.0")
    return _trig_domain(em, x, em.emit(f"select i1 {zero}, double {x}, double {res}"))  # sin(-0) = -0


def cos(em: IREmitter, x: str) -> str:
    s, co, q = _sincos_r(em, x)
    ns, nc = em.emit(f"fneg double {s}"), em.emit(f"fneg double {co}")
    return _trig_domain(em, x, _quadrant(em, (co, ns, nc, s), q))


def tanh(em: IREmitter, x: str) -> str:
    a = em.fcall("fabs", "double", [x])
    z = em.emit(f"fmul double {a}, {a}")
    az = em.emit(f"fmul double {a}, {z}")
    sh = em.fcall("fma", "double", [az, horner(em, z, SINH_COEF), a])
    sh2 = em.fcall("fma", "double", [sh, sh, "1.0"])
    small = em.emit(f"fdiv double {sh}, {em.fcall('sqrt', 'double', [sh2])}")
    e = exp(em, em.emit(f"fmul double {a}, 2.0"))
    q = em.emit(f"fdiv double 2.0, {em.emit(f'fadd double {e}, 1.0')}")
    large = em.emit(f"fsub double 1.0, {q}")
    is_small = em.emit(f"fcmp olt double {a}, 1.0")
    t = em.emit(f"select i1 {is_small}, double {small}, double {large}")
    return em.fcall("copysign", "double", [t, x])


def sigmoid(em: IREmitter, x: str) -> str:
    e = exp(em, em.emit(f"fneg double {x}"))
    return em.emit(f"fdiv double 1.0, {em.emit(f'fadd double {e}, 1.0')}")


def rsqrt(em: IREmitter, x: str) -> str:
    return em.emit(f"fdiv double 1.0, {em.fcall('sqrt', 'double', [x])}")


ERF_CUT = 1.5
ERF_TAYLOR = [(-1.0) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(35)]
ERF_CF_TERMS = 80


def erf(em: IREmitter, x: str) -> str:
    a = em.fcall("fabs", "double", [x])
    z = em.emit(f"fmul double {a}, {a}")
    acc = c(ERF_TAYLOR[-1])
    for coef in reversed(ERF_TAYLOR[:-1]):  # the interpreter's order: acc * z + coef
        acc = em.emit(f"fadd double {em.emit(f'fmul double {acc}, {z}')}, {c(coef)}")
    small = em.emit(f"fmul double {c(2.0 / math.sqrt(math.pi))}, {em.emit(f'fmul double {a}, {acc}')}")
    f = a
    for k in range(ERF_CF_TERMS, 0, -1):
        f = em.emit(f"fadd double {a}, {em.emit(f'fdiv double {c(k * 0.5)}, {f}')}")
    e = exp(em, em.emit(f"fneg double {z}"))
    erfc = em.emit(f"fdiv double {em.emit(f'fmul double {e}, {c(1.0 / math.sqrt(math.pi))}')}, {f}")
    large = em.emit(f"fsub double 1.0, {erfc}")
    is_small = em.emit(f"fcmp olt double {a}, {c(ERF_CUT)}")
    r = em.emit(f"select i1 {is_small}, double {small}, double {large}")
    return em.fcall("copysign", "double", [r, x])


# The GPU's f32 erf (round 16): two Chebyshev series selected per element, one Clenshaw walk. Below 1.5,
# erf(x) = x Q(x^2) with Q on z in [0, 2.25] in t = z / 1.125 - 1 (degree 14); on [1.5, 4), erf itself in
# t = (2x - 5.5) / 2.5 (degree 24). Both interpolate `interp.numeric.erf_f64` at Chebyshev points (numpy's
# chebfit): within ~3e-15 relative of it, so an f32 value widened, run through them and rounded once is
# the interpreter's f32 erf (tests/backend/test_erf_f32.py: every f32 of [1.5, 4), a sweep of [0, 1.5) and
# the edges, bit for bit). From 4 on, erf rounds to 1.0 in f32 (erfc(3.9) < 2^-25).
ERF_SMALL_CHEB = (0.8510894713106232, -0.23785121267820367, 0.034691223003108396, -0.004264102804485135,
                  0.0004409197933298002, -3.9013871286334165e-05, 3.0057567849984117e-06,
                  -2.046795013420497e-07, 1.2474368327450523e-08, -6.875750492362002e-10,
                  3.457680225480983e-11, -1.5981065045303369e-12, 6.848643671242914e-14,
                  -2.6810683527976363e-15, 1.405447301340066e-16)
ERF_CHEB = (0.9936550429136795, 0.011392982224149487, -0.008234705953514387, 0.004768235027591645,
            -0.002183675635621061, 0.0007665251919918237, -0.00018943912701217932, 2.2870592764842744e-05,
            4.63459046367783e-06, -3.166455855843252e-06, 7.396780907657003e-07, -3.694628798131617e-08,
            -3.015526429945106e-08, 9.673173353935507e-09, -8.699643398563873e-10, -2.464995466719381e-10,
            9.023730724857604e-11, -7.961577892391256e-12, -2.0307172232602765e-12, 6.654498347117088e-13,
            -4.1647031539174194e-14, -1.601886891833681e-14, 3.882812967062536e-15, -9.258204517344438e-17,
            -1.116417949661637e-16)
ERF_F32_ONE = 4.0


def _erf_coefs() -> list[tuple[float, float]]:
    """(small, mid) coefficient pairs, highest degree first, the small series padded with zeros."""
    small = list(ERF_SMALL_CHEB) + [0.0] * (len(ERF_CHEB) - len(ERF_SMALL_CHEB))
    return list(zip(small, ERF_CHEB, strict=True))


def erf_f32_model(a: np.ndarray) -> np.ndarray:
    """`erf_f32` of |x| (`a` >= 0, below 4) in NumPy, the emitted order (fma as a product and a sum): for the
    test that checks the emitted code and, exhaustively where it is cheap, the interpreter's bits."""
    small = a < ERF_CUT
    t = np.where(small, a * a * (1 / 1.125) - 1.0, (a * 2.0 - 5.5) * 0.4)
    t2 = t * 2.0
    b1, b2 = np.zeros_like(a), np.zeros_like(a)
    coefs = _erf_coefs()
    for cs, cm in coefs[:0:-1]:
        b1, b2 = t2 * b1 + (np.where(small, cs, cm) - b2), b1
    p = t * b1 + (np.where(small, coefs[0][0], coefs[0][1]) - b2)
    return np.where(small, a * p, p)


def erf_f32(em: IREmitter, x: str) -> str:
    """erf of a widened f32 value: |x| below 1.5 as |x| Q(x^2), below 4 the middle series (one Clenshaw walk
    whose variable and coefficients a select picks per element), 1 from 4 on, the sign of x copied on (NaN
    stays NaN). The f64 algorithm's continued fraction (80 f64 divisions and an exp an element, every branch
    computed) made an f32 GELU's code ~430 KB of PTX for a 64 x 64 tile and a minute of ptxas; the interpreter's
    Taylor series and this middle series one after the other cost ~120 f64 operations; this ~75."""
    a = em.fcall("fabs", "double", [x])
    small = em.emit(f"fcmp olt double {a}, {c(ERF_CUT)}")
    z = em.emit(f"fmul double {a}, {a}")
    ts = em.emit(f"fsub double {em.emit(f'fmul double {z}, {c(1 / 1.125)}')}, 1.0")
    a2 = em.emit(f"fmul double {a}, 2.0")
    tm = em.emit(f"fmul double {em.emit(f'fsub double {a2}, 5.5')}, 0.4")
    t = em.emit(f"select i1 {small}, double {ts}, double {tm}")
    t2 = em.emit(f"fmul double {t}, 2.0")
    coefs = _erf_coefs()
    b1, b2 = "0.0", "0.0"
    for cs, cm in coefs[:0:-1]:
        ck = em.emit(f"select i1 {small}, double {c(cs)}, double {c(cm)}")
        b1, b2 = em.fcall("fma", "double", [t2, b1, em.emit(f"fsub double {ck}, {b2}")]), b1
    c0 = em.emit(f"select i1 {small}, double {c(coefs[0][0])}, double {c(coefs[0][1])}")
    p = em.fcall("fma", "double", [t, b1, em.emit(f"fsub double {c0}, {b2}")])
    r = em.emit(f"select i1 {small}, double {em.emit(f'fmul double {a}, {p}')}, double {p}")
    one = em.emit(f"fcmp oge double {a}, {c(ERF_F32_ONE)}")  # not NaN: NaN goes through the series
    r = em.emit(f"select i1 {one}, double 1.0, double {r}")
    return em.fcall("copysign", "double", [r, x])


def pow(em: IREmitter, x: str, y: str) -> str:
    """IEEE pow of two doubles (see the module docstring)."""
    INF, NAN = "0x7FF0000000000000", "0x7FF8000000000000"
    ax = em.fcall("fabs", "double", [x])
    mag = exp(em, em.emit(f"fmul double {y}, {log(em, ax)}"))  # |x|^y; log 0 = -inf, log inf = inf
    # y an integer, and odd? (|y| >= 2^53 is always even)
    yint = em.emit(f"fcmp oeq double {y}, {em.fcall('trunc', 'double', [y])}")
    half = em.emit(f"fmul double {y}, 0.5")
    odd0 = em.emit(f"fcmp one double {half}, {em.fcall('trunc', 'double', [half])}")
    odd = em.emit(f"and i1 {yint}, {odd0}")
    # x negative (-0 included): odd integer y -> -|x|^y; other integers -> |x|^y;
    # a finite non-integer y -> NaN (an infinite y is an even integer here)
    xbits = em.emit(f"bitcast double {x} to i64")
    xneg = em.emit(f"icmp slt i64 {xbits}, 0")
    neg_mag = em.emit(f"fneg double {mag}")
    signed = em.emit(f"select i1 {em.emit(f'and i1 {xneg}, {odd}')}, double {neg_mag}, double {mag}")
    yinf = em.emit(f"fcmp oeq double {em.fcall('fabs', 'double', [y])}, {INF}")
    xfin = em.emit(f"fcmp one double {ax}, {INF}")
    xzero = em.emit(f"fcmp oeq double {ax}, 0.0")
    frac = em.emit(f"xor i1 {yint}, true")
    nonint = em.emit(f"and i1 {xneg}, {em.emit(f'and i1 {xfin}, {frac}')}")
    nonint = em.emit(f"and i1 {nonint}, {em.emit(f'xor i1 {xzero}, true')}")
    r = em.emit(f"select i1 {nonint}, double {NAN}, double {signed}")
    # |x| = 1 with an infinite y: 1 (exp(inf * 0) would be NaN)
    one = em.emit(f"fcmp oeq double {ax}, 1.0")
    r = em.emit(f"select i1 {em.emit(f'and i1 {one}, {yinf}')}, double 1.0, double {r}")
    # y = 0 and x = 1 give 1 whatever the other operand, NaN included
    y0 = em.emit(f"fcmp oeq double {y}, 0.0")
    x1 = em.emit(f"fcmp oeq double {x}, 1.0")
    return em.emit(f"select i1 {em.emit(f'or i1 {y0}, {x1}')}, double 1.0, double {r}")


TAN_PI_8 = 0.41421356237309503  # tan(pi / 8), just above: the reduced argument stays within it
PI = (3.141592653589793, 1.2246467991473532e-16)
PIO4 = (0.7853981633974483, 3.061616997868383e-17)
ATAN_COEF = [(-1.0) ** i / (2 * i + 1) for i in range(1, 24)]  # -1/3, 1/5, ... 1/47: z^2 <= 0.1716


def atan2(em: IREmitter, y: str, x: str) -> str:
    """IEEE `atan2(y, x)` (C99 Annex F): the angle of (x, y) in [-pi, pi]. a = min(|x|, |y|) / max(..) in
    [0, 1] (0/0 and inf/inf selected to 0 and 1), above tan(pi/8) reduced by atan(a) = pi/4 + atan((a - 1)
    / (a + 1)), atan of the rest by its odd Taylor series to z^47 (|z| <= tan(pi/8)); then the quadrant's
    r, pi - r (x negative: its sign bit, so atan2(0, -0) is pi), pi/2 - r or pi/2 + r (|y| > |x|), y's
    sign copied on; NaN in, NaN out."""
    ax = em.fcall("fabs", "double", [x])
    ay = em.fcall("fabs", "double", [y])
    hi = em.fcall("maxnum", "double", [ax, ay])
    lo = em.fcall("minnum", "double", [ax, ay])
    a = em.emit(f"fdiv double {lo}, {hi}")
    zero = em.emit(f"fcmp oeq double {hi}, 0.0")
    a = em.emit(f"select i1 {zero}, double 0.0, double {a}")
    both_inf = em.emit(f"fcmp oeq double {lo}, {c(math.inf)}")
    a = em.emit(f"select i1 {both_inf}, double 1.0, double {a}")
    big = em.emit(f"fcmp ogt double {a}, {c(TAN_PI_8)}")
    red = em.emit(f"fdiv double {em.emit(f'fsub double {a}, 1.0')}, {em.emit(f'fadd double {a}, 1.0')}")
    z = em.emit(f"select i1 {big}, double {red}, double {a}")
    z2 = em.emit(f"fmul double {z}, {z}")
    tail = em.emit(f"fmul double {em.emit(f'fmul double {z}, {z2}')}, {horner(em, z2, ATAN_COEF)}")
    base = em.emit(f"select i1 {big}, double {c(PIO4[0])}, double 0.0")
    base_lo = em.emit(f"select i1 {big}, double {c(PIO4[1])}, double 0.0")
    low = em.emit(f"fadd double {tail}, {base_lo}")
    r = em.emit(f"fadd double {base}, {em.emit(f'fadd double {z}, {low}')}")
    steep = em.emit(f"fcmp ogt double {ay}, {ax}")
    xbits = em.emit(f"bitcast double {x} to i64")
    xneg = em.emit(f"icmp slt i64 {xbits}, 0")
    # the quadrant: r, pi - r, pi/2 - r or pi/2 + r, each as hi + (lo +- r) (two-part constants)
    qhi = em.emit(f"select i1 {steep}, double {c(PIO2[0])}, double "
                  f"{em.emit(f'select i1 {xneg}, double {c(PI[0])}, double 0.0')}")
    qlo = em.emit(f"select i1 {steep}, double {c(PIO2[1])}, double "
                  f"{em.emit(f'select i1 {xneg}, double {c(PI[1])}, double 0.0')}")
    minus = em.emit(f"xor i1 {steep}, {xneg}")
    sr = em.emit(f"select i1 {minus}, double {em.emit(f'fneg double {r}')}, double {r}")
    r = em.emit(f"fadd double {qhi}, {em.emit(f'fadd double {qlo}, {sr}')}")
    r = em.fcall("copysign", "double", [r, y])
    nan = em.emit(f"fcmp uno double {x}, {y}")
    return em.emit(f"select i1 {nan}, double {c(math.nan)}, double {r}")


def pow_f32(em: IREmitter, x: str, y: str) -> str:
    """pow of two f32 values widened to f64, for the one rounding to f32 that follows: `pow`, but x * x (exact
    in f64: 48 bits) where y == 2. The interpreter rounds NumPy's f64 pow once (`numeric._float_op`), which is
    exact there; `pow`'s ~1e-13 put x^2 on the wrong side of an f32 tie (an f32 with 25 bits: 1 + 2^-12
    squared) on 1478 of 262,143 such inputs. Where y == 3 both engines take `cube` (4 in 2 million random
    inputs differed before). Other exponents' exact ties (x^5 of 1.8125, 66049^1.5) both engines take to the
    midpoint (`snap_ties`), which rounds to even as the interpreter's exact f64 pow does (hrev28). A run-time y
    of -1 or 0.5 is 1 / x (div.rn) or the square root (sqrt.rn; pow(-0, 0.5) = +0, pow(-inf, 0.5) = +inf), f64's
    correctly rounded values, as NumPy's pow gives them (`pow`'s ~1e-14 put 1 / 1.980704e+28 on the other side
    of an f32 near-tie: 1 of 4 million random x by a run-time -1; hrev28)."""
    sq = em.emit(f"fmul double {x}, {x}")
    two = em.emit(f"fcmp oeq double {y}, 2.0")
    three = em.emit(f"fcmp oeq double {y}, 3.0")
    r = em.emit(f"select i1 {two}, double {sq}, double {snap_ties(em, pow(em, x, y), y)}")
    inv = em.emit(f"fdiv double 1.0, {x}")
    r = em.emit(f"select i1 {em.emit(f'fcmp oeq double {y}, -1.0')}, double {inv}, double {r}")
    root = em.emit(f"fadd double {em.fcall('sqrt', 'double', [x])}, 0.0")  # -0 + 0 = +0
    ninf = em.emit(f"fcmp oeq double {x}, 0xFFF0000000000000")
    root = em.emit(f"select i1 {ninf}, double 0x7FF0000000000000, double {root}")
    r = em.emit(f"select i1 {em.emit(f'fcmp oeq double {y}, 0.5')}, double {root}, double {r}")
    return em.emit(f"select i1 {three}, double {cube(em, x, sq)}, double {r}")


def snap_ties(em: IREmitter, r: str, y: str) -> str:
    """`r` (an f64 pow of exponent `y`) put on the f32 midpoint it is within `numeric.SNAP_ULPS` f64 ulps of (an
    f32-normal value; not for y of 0.5, -1 or 1, whose constants `f32exact.pow_const` computes exactly), as the
    interpreter does (`numeric._snap_ties`): `pow`'s ~1e-13 put an exact tie x^y (66049^1.5 = 257^3) beside the
    midpoint, so the rounding to f32 went away from the even neighbour the interpreter takes (hrev28)."""
    from tilelang.interp.numeric import SNAP_ULPS

    bits = em.emit(f"bitcast double {r} to i64")
    low = em.emit(f"and i64 {bits}, {0x1FFFFFFF}")
    off = em.emit(f"add i64 {low}, {SNAP_ULPS - 0x10000000}")
    near = em.emit(f"icmp ule i64 {off}, {2 * SNAP_ULPS}")
    e = em.emit(f"and i64 {em.emit(f'lshr i64 {bits}, 52')}, 2047")
    normal = em.emit(f"icmp ule i64 {em.emit(f'sub i64 {e}, {1023 - 126}')}, 253")
    ok = em.emit(f"and i1 {near}, {normal}")
    for c in ("0.5", "-1.0", "1.0"):
        ok = em.emit(f"and i1 {ok}, {em.emit(f'fcmp une double {y}, {c}')}")
    snapped = em.emit(f"or i64 {em.emit(f'and i64 {bits}, {~0x1FFFFFFF}')}, {0x10000000}")
    return em.emit(f"bitcast i64 {em.emit(f'select i1 {ok}, i64 {snapped}, i64 {bits}')} to double")


def cube(em: IREmitter, x: str, sq: str | None = None) -> str:
    """x^3 of an f32 widened to f64 as the interpreter defines f32 pow(x, 3) (`numeric._pow_f32`): x * x (exact)
    times x, rounded once to f64 (the f32 rounding follows)."""
    return em.emit(f"fmul double {sq or em.emit(f'fmul double {x}, {x}')}, {x}")


FUNCS = {"exp": exp, "exp2": exp2, "log": log, "log2": log2, "sin": sin, "cos": cos,
         "tanh": tanh, "sigmoid": sigmoid, "rsqrt": rsqrt, "erf": erf}
BINARY_FUNCS = {"pow": pow, "atan2": atan2}
