"""f32 math of correctly rounded operations only, which the interpreter reproduces bit for bit (herf, 2026-12-07).

Each function emits LLVM IR for an f32 value through the `f64math.IREmitter` protocol (the backend's emitter, or a
test's host emitter that JIT-compiles the same text): `.rn` add/sub/mul/div, fma, sqrt, min, compares and selects,
copysign and integer operations on bits, no MUFU and no f64. NVPTX prints those as `add.rn.f32` and the like,
which ptxas neither contracts nor reorders, so the card computes exactly what the interpreter's NumPy form does:
- `erf`: `interp/erf32.py`'s algorithm (the interpreter's `numeric.erf_f32`), ~30 SASS instructions an element
  for the f64 series' ~123.
- `atan2`: `interp/atan32.py`'s algorithm (the interpreter's `numeric.atan2_f32`; hnum), for the f64 atan2's
  ~185 (~57 on the FP64 pipe).
- `pow_const`: pow(x, c) for c = 2, 0.5, -1, 1 by one operation, the interpreter's f64 pow rounded once (3: x * x
  * x in f64, the interpreter's definition of that case).
"""

from __future__ import annotations

import math

from tilelang.backend.codegen.llvm_types import const_operand
from tilelang.backend.f64math import IREmitter, cube
from tilelang.dtypes import DType
from tilelang.interp import atan32, erf32


def _c(v: float) -> str:
    return const_operand(DType.F32, v)


def _horner(em: IREmitter, coefs: tuple[float, ...], v: str) -> str:
    p = _c(coefs[-1])
    for coef in coefs[-2::-1]:
        p = em.fcall("fma", "float", [p, v, _c(coef)])
    return p


def erf(em: IREmitter, x: str) -> str:
    """erf of an f32 by `interp/erf32.py`'s algorithm, step for step, so the card gives the interpreter's bits:
    fma(x, Q(x^2), x) below |x| = 1 (NaN too: `ult`), else copysign(1 - 2^S, x) with S = fma(R(t), t, -t),
    t = min(|x|, 4), 2^S as 2^f (f = S - rint(S) by the shifter, a polynomial) with 2^n added to its exponent
    bits."""
    ax = em.fcall("fabs", "float", [x])
    small = em.fcall("fma", "float", [x, _horner(em, erf32.ERF_SMALL, em.emit(f"fmul float {x}, {x}")), x])
    t = em.fcall("minnum", "float", [ax, _c(erf32.ERF_CLAMP)])
    s = em.fcall("fma", "float", [_horner(em, erf32.ERF_BIG, t), t, em.emit(f"fneg float {t}")])
    j = em.emit(f"fadd float {s}, {_c(erf32.ERF_SHIFT)}")
    f = em.emit(f"fsub float {s}, {em.emit(f'fsub float {j}, {_c(erf32.ERF_SHIFT)}')}")
    pbits = em.emit(f"bitcast float {_horner(em, erf32.ERF_EXP2, f)} to i32")
    scale = em.emit(f"shl i32 {em.emit(f'bitcast float {j} to i32')}, 23")
    y = em.emit(f"bitcast i32 {em.emit(f'add i32 {pbits}, {scale}')} to float")
    big = em.fcall("copysign", "float", [em.emit(f"fsub float 1.0, {y}"), x])
    near = em.emit(f"fcmp ult float {ax}, {_c(erf32.ERF_CUT)}")
    return em.emit(f"select i1 {near}, float {small}, float {big}")


def atan2(em: IREmitter, y: str, x: str) -> str:
    """atan2 of two f32 values by `interp/atan32.py`'s algorithm, step for step, so the card gives the
    interpreter's bits: lo / hi (scaled by a power of two at the ends of the range) or, above tan(1/2),
    (lo - hi) / (lo + hi); atan of that by fma(z, Q(z^2), z), plus pi/4 for the second; the quadrant by
    two-part constants; y's sign; NaN in, NaN out."""
    def sel(cond: str, a: str, b: str) -> str:
        return em.emit(f"select i1 {cond}, float {a}, float {b}")

    ax, ay = em.fcall("fabs", "float", [x]), em.fcall("fabs", "float", [y])
    hi, lo = em.fcall("maxnum", "float", [ax, ay]), em.fcall("minnum", "float", [ax, ay])
    both_inf = em.emit(f"fcmp oeq float {lo}, {_c(math.inf)}")
    h = sel(em.emit(f"fcmp olt float {hi}, {_c(atan32.SMALL_SCALE[0])}"), _c(atan32.SMALL_SCALE[1]), "1.0")
    h = sel(em.emit(f"fcmp ogt float {hi}, {_c(atan32.BIG_SCALE[0])}"), _c(atan32.BIG_SCALE[1]), h)
    lo_s, hi_s = em.emit(f"fmul float {lo}, {h}"), em.emit(f"fmul float {hi}, {h}")
    cut = em.emit(f"fmul float {_c(atan32.ATAN_CUT)}, {hi_s}")
    big = em.emit(f"or i1 {em.emit(f'fcmp ogt float {lo_s}, {cut}')}, {both_inf}")
    num = sel(big, em.emit(f"fsub float {lo_s}, {hi_s}"), lo_s)
    den = sel(big, em.emit(f"fadd float {lo_s}, {hi_s}"), hi_s)
    z = em.emit(f"fdiv float {num}, {den}")
    none = em.emit(f"or i1 {em.emit(f'fcmp oeq float {hi}, 0.0')}, {both_inf}")
    z = sel(none, "0.0", z)
    t = em.fcall("fma", "float", [z, _horner(em, atan32.ATAN_POLY, em.emit(f"fmul float {z}, {z}")), z])
    quarter = em.emit(f"fadd float {em.emit(f'fadd float {_c(atan32.PIO4[1])}, {t}')}, {_c(atan32.PIO4[0])}")
    r = sel(big, quarter, t)
    steep = em.emit(f"fcmp ogt float {ay}, {ax}")
    xneg = em.emit(f"icmp slt i32 {em.emit(f'bitcast float {x} to i32')}, 0")
    qhi = sel(steep, _c(atan32.PIO2[0]), sel(xneg, _c(atan32.PI[0]), "0.0"))
    qlo = sel(steep, _c(atan32.PIO2[1]), sel(xneg, _c(atan32.PI[1]), "0.0"))
    sr = sel(em.emit(f"xor i1 {steep}, {xneg}"), em.emit(f"fneg float {r}"), r)
    r = em.fcall("copysign", "float", [em.emit(f"fadd float {qhi}, {em.emit(f'fadd float {qlo}, {sr}')}"), y])
    return sel(em.emit(f"fcmp uno float {x}, {y}"), _c(math.nan), r)


def pow_const(em: IREmitter, x: str, y: str) -> str | None:
    """pow(x, c) of an f32 for a constant operand `y` of 2, 0.5, -1 or 1 by the one f32 operation whose correct
    rounding is the interpreter's (its f64 pow rounded once): x * x (x^2 is exact in f64), sqrt.rn (an f32's
    square root is never within an f64 ulp of an f32 midpoint, so the two roundings agree) with IEEE pow's
    pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf, div.rn 1 / x, x itself. The f64 pow they replace costs ~200
    SASS instructions an element, ~60 on the FP64 pipe (`(x - mean).pow(2.0)` in a norm). By 3 (the tanh
    GELU's `x.pow(3.0)`): two f64 multiplies, the interpreter's definition (`f64math.cube`), not one f32 op but
    no pow. None for any other operand (`f64math.pow_f32` then)."""
    c = {_c(v): v for v in (2.0, 0.5, -1.0, 1.0, 3.0)}.get(y)
    if c == 3.0:  # the interpreter's definition: x * x * x in f64 (x^2 exact), rounded once to f32
        return em.emit(f"fptrunc double {cube(em, em.emit(f'fpext float {x} to double'))} to float")
    if c == 2.0:
        return em.emit(f"fmul float {x}, {x}")
    if c == -1.0:
        return em.emit(f"fdiv float 1.0, {x}")
    if c == 1.0:
        return x
    if c == 0.5:
        root = em.emit(f"fadd float {em.fcall('sqrt', 'float', [x])}, 0.0")  # -0 + 0 = +0, any other root kept
        ninf = em.emit(f"fcmp oeq float {x}, {_c(-math.inf)}")
        return em.emit(f"select i1 {ninf}, float {_c(math.inf)}, float {root}")
    return None
