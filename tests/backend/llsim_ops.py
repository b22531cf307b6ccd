"""llsim's instruction semantics (tests only): integer and float arithmetic with
LLVM's rules, compares, casts, the math intrinsics, shuffles, warp-wide
operations and atomics."""

from __future__ import annotations

import itertools
import math
import re
import struct
from collections.abc import Callable
from typing import Any

import numpy as np
from llsim_fast import halves_bits
from llsim_values import (
    _FLOATS,
    Memory,
    Unsupported,
    _bf16,
    _bits,
    _decode,
    _decode_any,
    _encode,
    _encode_any,
    _signed,
    _vec,
    knob,
)


def _ibin(f: Callable[[int, int, int], int]) -> Callable[[Any, Any, str], Any]:
    def g(a: Any, b: Any, ty: str) -> Any:
        if ty.startswith("<"):
            n, el = _vec(ty)
            return tuple(g(x, y, el) for x, y in zip(a, b, strict=True))
        bits = _bits(ty)
        return f(int(a), int(b), bits) & ((1 << bits) - 1)
    g.int_op = f  # type: ignore[attr-defined]
    return g


def _fbin(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any, str], Any]:
    def g(a: Any, b: Any, ty: str) -> Any:
        if ty.startswith("<"):
            n, el = _vec(ty)
            return tuple(g(x, y, el) for x, y in zip(a, b, strict=True))
        r = f(a, b)  # run_block ignores floating-point warnings
        return _bf16(r) if ty == "bfloat" else _FLOATS[ty](r)
    g.float_op = f  # type: ignore[attr-defined]
    return g


def _sdiv(a: int, b: int, n: int) -> int:
    x, y = _signed(a, n), _signed(b, n)
    if y == 0:
        raise ZeroDivisionError("sdiv by zero (poison in LLVM)")
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _srem(a: int, b: int, n: int) -> int:
    x, y = _signed(a, n), _signed(b, n)
    if y == 0:
        raise ZeroDivisionError("srem by zero")
    return x - _sdiv(a, b, n) * y


def _udiv(a: int, b: int, n: int) -> int:
    if b == 0:
        raise ZeroDivisionError("udiv by zero")
    return a // b


def _urem(a: int, b: int, n: int) -> int:
    if b == 0:
        raise ZeroDivisionError("urem by zero")
    return a % b


def _shift_ok(b: int, n: int) -> int:
    if b >= n:
        raise ValueError("shift by >= bit width (poison in LLVM)")
    return b


_BINOPS: dict[str, Callable[[Any, Any, str], Any]] = {
    "add": _ibin(lambda a, b, n: a + b),
    "sub": _ibin(lambda a, b, n: a - b),
    "mul": _ibin(lambda a, b, n: a * b),
    "udiv": _ibin(_udiv),
    "sdiv": _ibin(_sdiv),
    "urem": _ibin(_urem),
    "srem": _ibin(_srem),
    "shl": _ibin(lambda a, b, n: a << _shift_ok(b, n)),
    "lshr": _ibin(lambda a, b, n: a >> _shift_ok(b, n)),
    "ashr": _ibin(lambda a, b, n: _signed(a, n) >> _shift_ok(b, n)),
    "and": _ibin(lambda a, b, n: a & b),
    "or": _ibin(lambda a, b, n: a | b),
    "xor": _ibin(lambda a, b, n: a ^ b),
    "fadd": _fbin(lambda a, b: a + b),
    "fsub": _fbin(lambda a, b: a - b),
    "fmul": _fbin(lambda a, b: a * b),
    "fdiv": _fbin(lambda a, b: np.divide(a, b)),
    "frem": _fbin(lambda a, b: _frem(a, b)),
}


def _frem(a: Any, b: Any) -> Any:
    """`frem` as the NVPTX backend lowers it: x - trunc(x / y) * y by one fma
    (`div.rn`, `cvt.rzi`, `fma.rn`), x itself where y is infinite. Not fmod:
    a rounded quotient makes it inexact (off by a multiple of y, the wrong
    sign where x / y rounds up to an integer)."""
    if np.isinf(b) and not np.isnan(a):
        return a
    t = np.trunc(a / b)
    ty = "double" if isinstance(a, np.float64) else "float"
    return _fma(-t, b, a, tys=[ty], name="llvm.fma")


# the operations the block compiler writes inline (the `_BINOPS` lambdas' own expressions)
_INLINE_OPS = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^",
               "fadd": "+", "fsub": "-", "fmul": "*"}


_UCMP = {"eq": "==", "ne": "!=", "ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}  # icmp's unsigned predicates


_SCMP = {"slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}


def _icmp(pred: str, ty: str) -> Callable[[Any, Any], int]:
    bits = _bits(ty) if not ty.startswith("ptr") else 64
    s = (lambda v: _signed(int(v), bits)) if pred[0] == "s" else (lambda v: int(v))
    if ty.startswith("ptr"):
        raise Unsupported("icmp on pointers")
    op = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
          "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
          "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}[pred if pred in ("eq", "ne") else pred[1:]]
    return lambda a, b: int(op(s(a), s(b)))


def _fcmp(pred: str) -> Callable[[Any, Any], int]:
    if pred == "ord":
        return lambda a, b: int(not (np.isnan(a) or np.isnan(b)))
    if pred == "uno":
        return lambda a, b: int(bool(np.isnan(a) or np.isnan(b)))
    if pred in ("true", "false"):
        return lambda a, b: int(pred == "true")
    unordered = pred[0] == "u"
    op = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
          "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}[pred[1:]]

    def f(a: Any, b: Any) -> int:
        if np.isnan(a) or np.isnan(b):
            return int(unordered)
        return int(bool(op(a, b)))
    return f


def _float_of(v: Any, ty: str) -> float:
    return float(v)


def _cast_trunc(v: Any, s: str, d: str) -> Any:
    return int(v) & ((1 << _bits(d)) - 1)


def _cast_zext(v: Any, s: str, d: str) -> Any:
    return int(v)


def _cast_sext(v: Any, s: str, d: str) -> Any:
    return _signed(int(v), _bits(s)) & ((1 << _bits(d)) - 1)


def _cast_fptrunc(v: Any, s: str, d: str) -> Any:
    if d.startswith("<"):  # element-wise over a vector
        _, el = _vec(d)
        if el in _FLOATS:  # each element rounded once, as `_FLOATS[el](x)`
            return tuple(np.array(v, _FLOATS[el]))
        return tuple(_cast_fptrunc(x, "", el) for x in v)
    return _bf16(np.float32(v)) if d == "bfloat" else _FLOATS[d](v)


def _cast_fpext(v: Any, s: str, d: str) -> Any:
    return _FLOATS[d](v)


def _odd(f: float, exact: Any) -> float:
    """`f` (`exact` rounded to nearest) made `exact` rounded to odd: truncated
    toward zero, the last significand bit set when inexact. A narrower type's
    rounding to nearest of it is then the one rounding of `exact` (PTX's
    cvt.rn: NumPy's `np.float32(int)` and `float` then `np.float32` round twice)."""
    if f == exact or math.isinf(f):
        return f
    if abs(f) > abs(exact):
        f = math.nextafter(f, 0.0)
    return struct.unpack("<d", struct.pack("<Q", struct.unpack("<Q", struct.pack("<d", f))[0] | 1))[0]


def _int_to_float(x: int, d: str) -> Any:
    f = float(x)  # Python's int -> float rounds once
    if d == "double":
        return np.float64(f)
    f = _odd(f, x)
    if d == "bfloat":
        g = float(np.float32(f))
        return _bf16(np.float32(_odd(g, f) if abs(g) < math.inf else g))
    return _FLOATS[d](f)


def _cast_sitofp(v: Any, s: str, d: str) -> Any:
    return _int_to_float(_signed(int(v), _bits(s)), d)


def _cast_uitofp(v: Any, s: str, d: str) -> Any:
    return _int_to_float(int(v), d)


def _cast_fptosi(v: Any, s: str, d: str) -> Any:
    f = float(v)
    if math.isnan(f) or math.isinf(f):
        raise ValueError("fptosi of nan/inf (poison)")
    return int(f) & ((1 << _bits(d)) - 1)


def _cast_fptoui(v: Any, s: str, d: str) -> Any:
    return _cast_fptosi(v, s, d)


_WORD = {("float", "i32"): (np.float32, np.uint32), ("i32", "float"): (np.uint32, np.float32),
         ("double", "i64"): (np.float64, np.uint64), ("i64", "double"): (np.uint64, np.float64)}


def _cast_bitcast(v: Any, s: str, d: str) -> Any:
    if s == d:
        return v
    word = _WORD.get((s, d))
    if word is not None:  # `_decode(_encode(v, s), d)` without the bytes
        if s[0] == "i":
            return np.array(int(v) & ((1 << _bits(s)) - 1), word[0]).view(word[1])[()]
        return int(np.array(v, word[0]).view(word[1]))
    if s.startswith("<") or d.startswith("<"):
        return _decode_any(_encode_any(v, s), d)
    return _decode(_encode(v, s), d)


def _cast_ptrtoint(v: Any, s: str, d: str) -> Any:
    key, off = v
    base = 0 if key == "$smem" else 1 << 32  # global buffers are 256-byte aligned, shared at 0
    return (base + off) & ((1 << _bits(d)) - 1)


_CASTS: dict[str, Callable[[Any, str, str], Any]] = {
    "trunc": _cast_trunc, "zext": _cast_zext, "sext": _cast_sext, "fptrunc": _cast_fptrunc,
    "fpext": _cast_fpext, "sitofp": _cast_sitofp, "uitofp": _cast_uitofp, "fptosi": _cast_fptosi,
    "fptoui": _cast_fptoui, "bitcast": _cast_bitcast, "ptrtoint": _cast_ptrtoint,
    "addrspacecast": lambda v, s, d: v, "inttoptr": lambda v, s, d: ("$smem", int(v)),
}


def _scalar_binop(fn: Any, ty: str, va: Any, vb: Any) -> Callable[[dict[str, Any]], Any] | None:
    """`fn(va(r), vb(r), ty)` for a scalar `ty` without the per-call type
    dispatch (the simulator's hottest path); None for vectors."""
    if ty.startswith("<"):
        return None
    op = getattr(fn, "int_op", None)
    if op is not None:
        bits = _bits(ty)
        mask = (1 << bits) - 1
        return lambda r: op(int(va(r)), int(vb(r)), bits) & mask
    fop = getattr(fn, "float_op", None)
    if fop is None:
        return None
    conv = _bf16 if ty == "bfloat" else _FLOATS[ty]
    return lambda r: conv(fop(va(r), vb(r)))


def _scalar_cast(op: str, v: Any, s: str, d: str) -> Callable[[dict[str, Any]], Any] | None:
    """A scalar float cast without the per-call dispatch; None where the
    general `_CASTS` entry is needed."""
    if s.startswith("<") or d.startswith("<") or d not in _FLOATS or op not in ("fptrunc", "fpext"):
        return None
    conv = _FLOATS[d]
    return lambda r: conv(v(r))


_BITS, _BITS_F = struct.Struct("<q"), struct.Struct("<d")


def _f32(x: Any) -> Any:
    return np.float32(x)


def _unary(f: Callable[[float], float]) -> Callable[..., Any]:
    def g(x: Any, tys: list[str], name: str) -> Any:
        r = f(x)
        return np.float64(r) if tys[0] == "double" else np.float32(r)
    g.unary = f  # type: ignore[attr-defined]
    return g


def _fma(a: Any, b: Any, c: Any, tys: list[str], name: str) -> Any:
    if tys[0] == "double":
        return np.float64(_fma_f64(float(a), float(b), float(c)))
    # fma.rn.f32 rounds once: the f32 product is exact in f64, the f64 add is
    # rounded to odd (as the interpreter does), then the one rounding to f32;
    # a plain f64 add would round twice (a * b + c at a tie of f32 with a
    # small c went the wrong way)
    return np.float32(_add_round_odd_scalar(float(a) * float(b), float(c)))


def _fma_f64(a: float, b: float, c: float) -> float:
    """a * b + c rounded once to a double (`fma.rn.f64`), in Python integers:
    each double is m * 2^e with an integer m, so the sum is an integer times
    a power of two, and int -> float conversion and int / int division round
    correctly (subnormal results included). An exact zero is +0 where the
    terms cancel, and IEEE's sum of the two zeros where both are zeros
    (`fma(-0.0, 2.0, -0.0)` is -0.0, as `fma.rn.f64` and the interpreter give;
    it was +0, as `float(Fraction)` gives: hrev15, found by `kernel_diff.py
    --exact`); a non-finite operand gives the plain f64 expression."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    ma, ea = _int_exp(a)
    mb, eb = _int_exp(b)
    mc, ec = _int_exp(c)
    mp, ep = ma * mb, ea + eb
    if mp == 0:
        m, e = mc, ec
    elif mc == 0:
        m, e = mp, ep
    elif ep >= ec:
        m, e = (mp << (ep - ec)) + mc, ec
    else:
        m, e = mp + (mc << (ec - ep)), ep
    if m == 0:
        return a * b + c if mp == 0 and mc == 0 else 0.0  # (a zero product is exact, with its sign)
    try:
        return float(m << e) if e >= 0 else m / (1 << -e)
    except OverflowError:  # past the largest double: the infinity of its sign
        return math.inf if m > 0 else -math.inf


def _int_exp(x: float) -> tuple[int, int]:
    """x = m * 2^e exactly, m an integer (0 for zeros)."""
    f, e = math.frexp(x)
    return int(f * (1 << 53)), e - 53


def _add_round_odd_scalar(p: float, c: float) -> float:
    """`tilelang.interp.numeric._add_round_odd` for one pair of Python floats
    (TwoSum, then the inexact sum's neighbour with an odd last bit): the same
    value without NumPy's per-call cost, which was a sixth of an attention
    simulation's time. test_llsim_fma checks the two agree."""
    s = p + c
    bb = s - p
    e = (p - (s - bb)) + (c - bb)
    if e != 0.0 and math.isfinite(s) and math.isfinite(e) and not (_BITS.unpack(_BITS_F.pack(s))[0] & 1):
        s = math.nextafter(s, math.inf if e > 0 else -math.inf)
    return s


def _minmax(is_max: bool) -> Callable[..., Any]:
    def g(a: Any, b: Any, tys: list[str], name: str) -> Any:
        if np.isnan(a):
            return b
        if np.isnan(b):
            return a
        return max(a, b) if is_max else min(a, b)

    def fast(a: Any, b: Any) -> Any:  # `g` on two f32 scalars without np.isnan (x != x: NaN)
        if type(a) is not np.float32 or type(b) is not np.float32:
            return g(a, b, [], "")
        if a != a:
            return b
        if b != b:
            return a
        if is_max:  # `max(a, b)`: b only where b > a (so a of two equal values)
            return b if b > a else a
        return b if b < a else a
    g.fast = fast  # type: ignore[attr-defined]
    return g


def _nanminmax(is_max: bool) -> Callable[..., Any]:
    # llvm.maximum / llvm.minimum (PTX max.NaN / min.NaN): NaN-propagating, -0.0 < +0.0
    def zeros(a: Any, b: Any) -> Any:
        return a + b if is_max else -((-a) + (-b))  # two zeros: the larger is their sum

    def g(a: Any, b: Any, tys: list[str], name: str) -> Any:
        if np.isnan(a) or np.isnan(b):
            return type(a)(np.nan)
        if a == 0 and b == 0:
            return zeros(a, b)
        return max(a, b) if is_max else min(a, b)

    def fast(a: Any, b: Any) -> Any:  # `g` on two f32 scalars without np.isnan
        if type(a) is not np.float32 or type(b) is not np.float32:
            return g(a, b, [], "")
        if a != a or b != b:
            return np.float32(np.nan)
        if a == 0 and b == 0:
            return zeros(a, b)
        if is_max:  # `max(a, b)`
            return b if b > a else a
        return b if b < a else a
    g.fast = fast  # type: ignore[attr-defined]
    return g


def _iabs(a: Any, poison: Any, tys: list[str], name: str) -> Any:
    bits = _bits(tys[0])
    return abs(_signed(int(a), bits)) & ((1 << bits) - 1)


def _fpto_sat(a: Any, tys: list[str], name: str) -> Any:
    bits = int(name.split(".")[3][1:])
    f = float(a)
    if math.isnan(f):
        return 0
    if ".fptosi." in name:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    else:
        lo, hi = 0, (1 << bits) - 1
    if math.isinf(f):
        return (hi if f > 0 else lo) & ((1 << bits) - 1)
    return max(lo, min(hi, int(f))) & ((1 << bits) - 1)


def _iminmax(kind: str) -> Callable[..., Any]:
    def g(a: Any, b: Any, tys: list[str], name: str) -> Any:
        bits = _bits(tys[0])
        if kind[0] == "s":
            x, y = _signed(int(a), bits), _signed(int(b), bits)
        else:
            x, y = int(a), int(b)
        return (max(x, y) if kind[1:] == "max" else min(x, y)) & ((1 << bits) - 1)
    return g


def _prmt(a: Any, b: Any, c: Any, tys: list[str], name: str) -> Any:
    """prmt.b32 (default mode): byte i of the result is byte (nibble i of c) of the 8 bytes
    b:a, a's lowest first; a nibble's top bit replicates that byte's sign bit instead."""
    src = (int(a) & 0xFFFFFFFF) | (int(b) & 0xFFFFFFFF) << 32
    out = 0
    for i in range(4):
        sel = (int(c) >> (4 * i)) & 0xF
        byte = (src >> (8 * (sel & 7))) & 0xFF
        if sel & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * i)
    return out


def _copysign(a: Any, b: Any, tys: list[str], name: str) -> Any:
    return (np.float64 if tys[0] == "double" else np.float32)(np.copysign(a, b))


def _ff2x2(el: str) -> Callable[..., Any]:
    """cvt.rn.{f16,bf16}x2.f32: two f32 rounded into one pair, the first operand the high half."""
    def f(hi: Any, lo: Any, tys: list[str], name: str) -> Any:
        return (_cast_fptrunc(lo, "float", el), _cast_fptrunc(hi, "float", el))
    return f


# The hardware approximations' documented worst errors (PTX ISA, "Floating
# point instructions"): (relative, absolute) of the exact result r; the
# `.ftz` forms flush subnormal inputs and results to zero. `APPROX_ERROR`
# = +1 / -1 (a knob on `llsim`) moves every result of these by that much up /
# down, so a formula that amplifies the hardware's error (1 - 2/(e^2x + 1)
# at a small x) shows it in a test; 0 (the default) computes them exactly.
_APPROX_ERR = {
    "ex2": (2.0**-22, 0.0), "lg2": (2.0**-24, 2.0**-22), "rsqrt": (2.0**-22, 0.0),
    "rcp": (2.0**-23, 0.0), "sin": (0.0, 2.0**-20.5), "cos": (0.0, 2.0**-20.5),
    "tanh": (2.0**-10.987, 0.0),  # (tanh.approx; div.full: 2 ulp, `_div_full`)
}


def _approx(kind: str, f: Callable[[Any], Any], ftz: bool = False) -> Callable[..., Any]:
    rel, ab = _APPROX_ERR[kind]

    def hw(x: Any) -> Any:
        if ftz and abs(x) < 2.0**-126:
            x = np.copysign(np.float32(0.0), x)
        r = np.float64(f(x))
        d = knob("APPROX_ERROR")
        if d and np.isfinite(r) and (r != 0.0 or ab):
            r = r + d * (rel * abs(r) + ab)
        if ftz and abs(r) < 2.0**-126:
            r = np.copysign(0.0, r)
        return r
    g = _unary(hw)
    g.approx = (f, ftz)  # type: ignore[attr-defined]  # (the compiled blocks' `llsim_fast.approx32`)
    return g


def _div_full(a: Any, b: Any, tys: list[str], name: str) -> Any:
    """div.full.f32: a / b within 2 ulp over the full range (moved by `APPROX_ERROR` as the unary forms)."""
    with np.errstate(all="ignore"):
        r = np.float64(a) / np.float64(b)
        r32 = np.float32(r)
    d = knob("APPROX_ERROR")
    if d and np.isfinite(r32) and r32 != 0.0:  # 2 ulp of the f32 result (a zero, an infinity as they are)
        r32 = np.float32(np.float64(r32) + d * 2 * np.float64(np.spacing(np.abs(r32))))
    return r32


_INTRINSICS: dict[str, Callable[..., Any]] = {
    "llvm.nvvm.ff2f16x2.rn": _ff2x2("half"),
    "llvm.nvvm.ff2bf16x2.rn": _ff2x2("bfloat"),
    "llvm.fma": _fma,
    "llvm.nvvm.ex2.approx": _approx("ex2", np.exp2),
    "llvm.nvvm.ex2.approx.ftz": _approx("ex2", np.exp2, ftz=True),
    "llvm.nvvm.lg2.approx": _approx("lg2", np.log2),
    "llvm.nvvm.lg2.approx.ftz": _approx("lg2", np.log2, ftz=True),
    "llvm.nvvm.rsqrt.approx": _approx("rsqrt", lambda x: 1.0 / np.sqrt(np.float64(x))),
    "llvm.nvvm.rsqrt.approx.ftz": _approx("rsqrt", lambda x: 1.0 / np.sqrt(np.float64(x)), ftz=True),
    "llvm.nvvm.rcp.approx.ftz": _approx("rcp", lambda x: 1.0 / np.float64(x), ftz=True),
    "llvm.nvvm.tanh.approx": _approx("tanh", lambda x: np.tanh(np.float64(x))),
    "llvm.nvvm.div.full": _div_full,
    "llvm.nvvm.sin.approx": _approx("sin", lambda x: np.sin(np.float64(x))),
    "llvm.nvvm.cos.approx": _approx("cos", lambda x: np.cos(np.float64(x))),
    "llvm.sqrt": _unary(np.sqrt),
    "llvm.fabs": _unary(np.abs),
    "llvm.floor": _unary(np.floor),
    "llvm.ceil": _unary(np.ceil),
    "llvm.trunc": _unary(np.trunc),
    "llvm.rint": _unary(np.rint),
    "llvm.maxnum": _minmax(True),
    "llvm.maximum": _nanminmax(True),
    "llvm.minimum": _nanminmax(False),
    "llvm.minnum": _minmax(False),
    "llvm.abs": _iabs,
    "llvm.fptosi.sat": _fpto_sat,
    "llvm.fptoui.sat": _fpto_sat,
    "llvm.smax": _iminmax("smax"),
    "llvm.smin": _iminmax("smin"),
    "llvm.umax": _iminmax("umax"),
    "llvm.umin": _iminmax("umin"),
    "llvm.copysign": _copysign,
    "llvm.nvvm.prmt": _prmt,
}


def _shfl(mode: str, vals: list[int], arg: int, c: int) -> list[int]:
    out = []
    for lane in range(32):
        if mode == "bfly":
            src = lane ^ arg
        elif mode == "idx":
            src = arg if isinstance(arg, int) else arg
        elif mode == "up":
            src = lane - arg if lane - arg >= 0 else lane
        elif mode == "down":
            src = lane + arg if lane + arg < 32 else lane
        else:
            raise Unsupported(mode)
        out.append(vals[src if 0 <= src < 32 else lane])
    return out


def _halves(word: int, ty: str) -> tuple[float, float]:
    lo, hi = word & 0xFFFF, word >> 16
    if ty == "half":
        return tuple(float(np.array(h, np.uint16).view(np.float16)) for h in (lo, hi))  # type: ignore[return-value]
    return tuple(float(np.array(h << 16, np.uint32).view(np.float32)) for h in (lo, hi))  # type: ignore[return-value]


def _warp_op(name: str, args: list[list[Any]], mem: Memory) -> list[Any]:
    """ldmatrix and mma.sync.m16n8k16 over the 32 lanes' operands (and
    `bar.warp.sync`, which only gathers them)."""
    if name == "llvm.nvvm.bar.warp.sync":
        return [None] * len(args)
    if name in ("llvm.nvvm.vote.all.sync", "llvm.nvvm.vote.any.sync"):  # full mask only
        if any(a[0] & 0xFFFFFFFF != 0xFFFFFFFF for a in args):
            raise Unsupported(f"{name} with a partial mask")
        got = [bool(a[1]) for a in args]
        return [int(all(got) if name.endswith("all.sync") else any(got))] * len(args)
    if name.startswith("llvm.nvvm.ldmatrix.sync.aligned.m8n8."):
        n = int(re.search(r"\.x(\d)", name).group(1))  # type: ignore[union-attr]
        trans = ".trans" in name
        rows = [a[0] for a in args]  # lane t: address of row t % 8 of matrix t // 8
        got = _ldmatrix(mem, rows, n, trans)
        if got is not None:
            return got
        out = []
        for lane in range(32):
            regs = []
            for i in range(n):
                if trans:
                    # element (r, c) of matrix i lives at row r; lane gets (2q, g), (2q+1, g)
                    g, q = lane // 4, lane % 4
                    e0 = mem.load((rows[8 * i + 2 * q][0], rows[8 * i + 2 * q][1] + 2 * g), "i16")
                    e1 = mem.load((rows[8 * i + 2 * q + 1][0], rows[8 * i + 2 * q + 1][1] + 2 * g), "i16")
                else:
                    g, q = lane // 4, lane % 4
                    base = rows[8 * i + g]
                    e0 = mem.load((base[0], base[1] + 4 * q), "i16")
                    e1 = mem.load((base[0], base[1] + 4 * q + 2), "i16")
                regs.append(e0 | (e1 << 16))
            out.append(tuple(regs))
        return out
    if name.startswith("llvm.nvvm.mma.m16n8k32.row.col."):  # s8/u8: 4 bytes a register, wrapping i32 sums
        return _mma_int8(args, np.int8 if name.endswith("s8") else np.uint8)
    if name.startswith("llvm.nvvm.mma.m16n8k16.row.col."):
        ty = "bfloat" if name.endswith("bf16") else "half"

        def word(x: Any) -> int:
            if isinstance(x, tuple):  # <2 x half>: int(np.array(x[0], np.float16).view(np.uint16)) | x[1]'s << 16
                return halves_bits((x[0], x[1]))
            return int(x)

        got = _mma(args, ty, word)
        if got is not None:
            return got
        A = np.zeros((16, 16))
        B = np.zeros((16, 8))
        C = np.zeros((16, 8))
        for lane, a in enumerate(args):
            g, q = lane // 4, lane % 4
            w = [word(x) for x in a[:6]]
            for (r, c), x in zip([(g, 2 * q), (g + 8, 2 * q), (g, 2 * q + 8), (g + 8, 2 * q + 8)], w[:4], strict=True):
                A[r, c], A[r, c + 1] = _halves(x, ty)
            for k0, x in zip((2 * q, 2 * q + 8), w[4:6], strict=True):
                B[k0, g], B[k0 + 1, g] = _halves(x, ty)
            cs = [float(x) for x in a[6:10]]
            C[g, 2 * q], C[g, 2 * q + 1], C[g + 8, 2 * q], C[g + 8, 2 * q + 1] = cs
        D = (A @ B + C).astype(np.float32)
        out = []
        for lane in range(32):
            g, q = lane // 4, lane % 4
            out.append((D[g, 2 * q], D[g, 2 * q + 1], D[g + 8, 2 * q], D[g + 8, 2 * q + 1]))
        return out
    raise Unsupported(name)


# ldmatrix: [lane, matrix] the row (of the 32 lanes' addresses) and the byte
# offset in it of the register's two halves (the loop above: the plain form's
# e0 at row 8i + g, 4q; the transposed form's at rows 8i + 2q and 8i + 2q + 1, 2g)
_LANE, _MAT = np.meshgrid(np.arange(32), np.arange(4), indexing="ij")
_LD_ROW = (8 * _MAT + _LANE // 4, 8 * _MAT + 2 * (_LANE % 4))  # plain, transposed (e0; e1 one row on)
_LD_OFF = (4 * (_LANE % 4), 2 * (_LANE // 4))


def _ldmatrix(mem: Memory, rows: list[Any], n: int, trans: bool) -> list[Any] | None:
    """`ldmatrix`'s registers, the loop's `mem.load`s of i16 as one gather:
    None (the loop then runs, and raises where it must) unless every address
    is in one buffer, inside it, and clear of in-flight cp.async chunks (the
    chunks `Memory.guard` tests for each 2-byte load at `off`: `off // 16`
    and `(off + 1) // 16`, tested at once against the chunks in flight, so
    that a pipelined kernel's ldmatrix, with other stages' copies in flight,
    still takes the gather)."""
    key = rows[0][0]
    if any(r[0] != key for r in rows):
        return None
    base = np.array([r[1] for r in rows], np.int64)
    r0 = _LD_ROW[trans][:, :n]
    off0 = base[r0] + _LD_OFF[trans][:, :n]
    off1 = base[r0 + 1] + _LD_OFF[trans][:, :n] if trans else off0 + 2
    buf = mem.bufs[key]
    lo, hi = min(off0.min(), off1.min()), max(off0.max(), off1.max())
    if lo < 0 or hi + 2 > len(buf):
        return None
    if key == "$smem" and mem.inflight:
        offs = np.concatenate((off0.ravel(), off1.ravel()))
        if not mem.inflight.keys().isdisjoint(np.concatenate((offs >> 4, (offs + 1) >> 4)).tolist()):
            return None
    u8 = np.frombuffer(buf, np.uint8)
    e0 = u8[off0].astype(np.int64) | (u8[off0 + 1].astype(np.int64) << 8)
    e1 = u8[off1].astype(np.int64) | (u8[off1 + 1].astype(np.int64) << 8)
    return [tuple(x) for x in (e0 | (e1 << 16)).tolist()]


# mma.m16n8k16: [lane, half] the rows and columns of A's 8 halves (4 words), B's 4 (2 words), C's and D's 4
_G, _Q = np.arange(32)[:, None] // 4, np.arange(32)[:, None] % 4
_MA_R = np.repeat(np.hstack([_G, _G + 8, _G, _G + 8]), 2, axis=1)
_MA_C = np.hstack([2 * _Q, 2 * _Q + 1, 2 * _Q, 2 * _Q + 1, 2 * _Q + 8, 2 * _Q + 9, 2 * _Q + 8, 2 * _Q + 9])
_MB_R = np.hstack([2 * _Q, 2 * _Q + 1, 2 * _Q + 8, 2 * _Q + 9])
_MB_C = np.repeat(_G, 4, axis=1)
_MC_R, _MC_C = np.hstack([_G, _G, _G + 8, _G + 8]), np.hstack([2 * _Q, 2 * _Q + 1, 2 * _Q, 2 * _Q + 1])


def _mma_halves(ops: list[Any]) -> np.ndarray | None:
    """The [lane, half] u16 bits of the lanes' six A and B operands, all at
    once where every operand is a pair (a `<2 x half>`: `word`'s
    `halves_bits`, whose every path is the bits of `np.array(pair,
    np.float16)`, as here: one conversion of the 32 lanes' pairs) or every
    one a Python int in range (the words themselves); None otherwise (`word`
    of each then)."""
    chain = itertools.chain.from_iterable
    types = set(map(type, chain(ops)))
    if types == {tuple}:
        if len(ops) != 32 or set(map(len, ops)) != {6} or set(map(len, chain(ops))) != {2}:
            return None
        # (the 384 halves as one flat sequence: each converted as in `np.array(ops, np.float16)`, in half its time)
        return np.fromiter(chain(chain(ops)), np.float16, 384).view(np.uint16).reshape(32, 12)
    if types == {int}:
        w = np.array(ops, np.int64) if all(0 <= x < 1 << 32 for o in ops for x in o) else None
        return None if w is None or w.shape != (32, 6) else w.astype(np.uint32).view(np.uint16).reshape(32, 12)
    return None


def _mma(args: list[list[Any]], ty: str, word: Callable[[Any], int]) -> list[Any] | None:
    """`mma.sync.m16n8k16`'s loop with its halves placed at once: each lane's
    words and C values taken in the loop's order, then A, B and C filled by
    index (the same float64 values as `_halves`); None where a word is not a
    32-bit value (the loop then runs)."""
    u = _mma_halves([a[:6] for a in args])
    if u is None:
        words = [[word(x) for x in a[:6]] for a in args]
        if any(not 0 <= w < 1 << 32 for ws in words for w in ws):
            return None
        u = np.array(words, np.uint32).view(np.uint16).reshape(32, 12)  # [lane, half]: each word's low half first
    cs = [[float(x) for x in a[6:10]] for a in args]
    h = u.view(np.float16).astype(np.float64) if ty == "half" else (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    A = np.zeros((16, 16))
    B = np.zeros((16, 8))
    C = np.zeros((16, 8))
    A[_MA_R, _MA_C] = h[:, :8]
    B[_MB_R, _MB_C] = h[:, 8:]
    C[_MC_R, _MC_C] = cs
    D = (A @ B + C).astype(np.float32)
    return list(zip(*D[_MC_R, _MC_C].T))  # (each lane's 4 np.float32 values, as `tuple` of its row)


def _atomic(op: str, old: Any, v: Any, ty: str) -> Any:
    if op == "fadd":
        return _FLOATS[ty](old + v) if ty in _FLOATS else _bf16(old + v)
    if op in ("fmax", "fmin"):
        return (max if op == "fmax" else min)(old, v)
    bits = _bits(ty)
    m = (1 << bits) - 1
    so, sv = _signed(int(old), bits), _signed(int(v), bits)
    return {"add": (int(old) + int(v)) & m, "max": max(so, sv) & m, "min": min(so, sv) & m,
            "umax": max(int(old), int(v)), "umin": min(int(old), int(v)),
            "or": int(old) | int(v), "and": int(old) & int(v), "xchg": int(v)}[op]


def _mma_int8(args: list[list[Any]], ty: Any) -> list[Any]:
    """`mma.sync.m16n8k32` of s8 or u8 (PTX ISA, "Matrix Fragments for
    mma.m16n8k32"): lane (g = lane / 4, q = lane % 4) holds A's bytes at rows
    g (registers 0, 2) and g + 8 (1, 3), columns 4q..4q+3 (0, 1) and +16
    (2, 3), the lowest byte first; B's at rows 4q.. (register 4) and 4q+16..
    (5), column g; C and D as the f32 m16n8 layout. D = A B + C, wrapped to
    i32 (returned as the simulator's unsigned words)."""
    A = np.zeros((16, 32), np.int64)
    B = np.zeros((32, 8), np.int64)
    C = np.zeros((16, 8), np.int64)
    for lane, a in enumerate(args):
        g, q = lane // 4, lane % 4
        w = np.array([int(x) & 0xFFFFFFFF for x in a[:6]], np.uint32).view(np.uint8).view(ty).astype(np.int64)
        for reg, (r, c0) in enumerate([(g, 4 * q), (g + 8, 4 * q), (g, 4 * q + 16), (g + 8, 4 * q + 16)]):
            A[r, c0:c0 + 4] = w[4 * reg:4 * reg + 4]
        B[4 * q:4 * q + 4, g] = w[16:20]
        B[4 * q + 16:4 * q + 20, g] = w[20:24]
        cs = [int(np.array(int(x) & 0xFFFFFFFF, np.uint32).view(np.int32)) for x in a[6:10]]
        C[g, 2 * q], C[g, 2 * q + 1], C[g + 8, 2 * q], C[g + 8, 2 * q + 1] = cs
    D = (A @ B + C) & 0xFFFFFFFF
    out = []
    for lane in range(32):
        g, q = lane // 4, lane % 4
        out.append(tuple(int(v) for v in (D[g, 2 * q], D[g, 2 * q + 1], D[g + 8, 2 * q], D[g + 8, 2 * q + 1])))
    return out

