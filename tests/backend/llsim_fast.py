"""llsim's fast paths (tests only): what the compiled blocks (`llsim_blocks`)
call instead of NumPy's scalar constructors and casts, which cost ~0.6-2 us a
call where the arithmetic itself is ~0.1 us (a float operation's rounding
`np.float32(a * b)` was most of its time).

Each function is, value for value, bits and NumPy type included, the NumPy
expression its docstring names: it takes a shortcut only where that is
exact, and otherwise runs the expression itself. The shortcuts:
- an operand already of the result's type is the result (`np.float32(x)` of
  an `np.float32` is `x`'s bits);
- a float that is not NaN converts to a NumPy float as `-0.0 + x` in that
  type (NEP 50: a Python float is cast to the NumPy operand's type, one
  correct rounding; adding -0.0 is exact and keeps the sign of a zero);
- IEEE half and single values pack and unpack through `struct` exactly,
  except NaNs (their payloads and signalling bit), which take the NumPy path;
- a half of known bits (a bitcast to halves, a load of halves) is the entry
  of `_HALF`, the table of every half NumPy decodes from its bits.
The per-instruction closures (`llsim_parse`, `llsim.COMPILED = False`) keep
the NumPy expressions, and tests/backend/test_llsim_blocks.py holds the two to
identical registers; tests/backend/test_llsim_fast.py checks each shortcut
against its expression on every half, and on single and double edge and
random patterns.
"""

from __future__ import annotations

import functools
import struct
from math import isnan
from collections.abc import Callable
from typing import Any

import numpy as np
from llsim_values import _CODES, _decode, _encode, _encode_any, _size, _vec, knob, load_value, store_bytes

F16, F32, F64 = np.float16, np.float32, np.float64
_NZ16, _NZ32 = F16(-0.0), F32(-0.0)
_F, _U = struct.Struct("<f"), struct.Struct("<I")
_HH = struct.Struct("<ee")
_E, _H = struct.Struct("<e"), struct.Struct("<H")
_TINY = 2.0**-126  # the `.ftz` forms' flush threshold (`llsim_ops._approx`)
# every half by its bits (NaN payloads and signed zeros included): a bitcast to halves and a load of halves
# is an index, the scalar `np.frombuffer` of the bits gives (~3x `_NZ16 + x` of the unpacked float)
_HALF = list(np.arange(1 << 16, dtype=np.uint16).view(F16))


def to32(x: Any) -> Any:
    """`np.float32(x)`."""
    t = type(x)
    if t is F32:
        return x
    if (t is float or t is F64 or t is F16) and x == x:
        return _NZ32 + float(x)
    return F32(x)


def to16(x: Any) -> Any:
    """`np.float16(x)`."""
    t = type(x)
    if t is F16:
        return x
    if (t is float or t is F32 or t is F64) and x == x:
        return _NZ16 + float(x)
    return F16(x)


def to64(x: Any) -> Any:
    """`np.float64(x)`."""
    t = type(x)
    if t is F64:
        return x
    if (t is float or t is F32 or t is F16) and x == x:
        return F64(float(x))
    return F64(x)


def bf16(x: Any) -> Any:
    """`llsim_values._bf16(x)` (x rounded to f32, then to bfloat16 by nearest even, as an f32)."""
    f = to32(x)
    if f != f:  # (`np.isnan` of an np.float32)
        return f
    b = _U.unpack(_F.pack(f))[0]
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000  # never a NaN: an infinity at most
    return _NZ32 + _F.unpack(_U.pack(b))[0]


TO = {"float": to32, "half": to16, "double": to64}
TYPES = {"float": F32, "half": F16, "double": F64}


def f32_bits(x: Any) -> Any:
    """`int(np.array(x, np.float32).view(np.uint32))` (bitcast float to i32)."""
    if type(x) is F32 and x == x:
        return _U.unpack(_F.pack(x))[0]
    return int(np.array(x, F32).view(np.uint32))


def bits_f32(v: Any) -> Any:
    """`np.array(int(v) & 0xFFFFFFFF, np.uint32).view(np.float32)[()]` (bitcast i32 to float)."""
    w = int(v) & 0xFFFFFFFF
    if (w & 0x7F800000) != 0x7F800000:  # not an infinity or NaN
        return _NZ32 + _F.unpack(_U.pack(w))[0]
    return np.array(w, np.uint32).view(F32)[()]


def f16_bits(x: Any) -> Any:
    """`_decode(_encode(x, "half"), "i16")` (bitcast half to i16)."""
    if type(x) is F16 and x == x:
        return _H.unpack(_E.pack(x))[0]
    return _decode(_encode(x, "half"), "i16")


def bits_f16(v: Any) -> Any:
    """`_decode(_encode(v, "i16"), "half")` (bitcast i16 to half)."""
    return _HALF[int(v) & 0xFFFF]


def halves_bits(v: Any) -> Any:
    """`_decode(_encode_any(v, "<2 x half>"), "i32")` (bitcast <2 x half> to i32)."""
    a, b = v
    if type(a) is F16 and type(b) is F16 and a == a and b == b:
        return _U.unpack(_HH.pack(a, b))[0]
    return _decode(_encode_any(v, "<2 x half>"), "i32")


def bits_halves(v: Any) -> Any:
    """`_decode_any(_encode(v, "i32"), "<2 x half>")` (bitcast i32 to <2 x half>): the low half first."""
    w = int(v) & 0xFFFFFFFF
    return (_HALF[w & 0xFFFF], _HALF[w >> 16])


def trunc16(v: Any) -> Any:
    """`tuple(np.array(v, np.float16))` (fptrunc of a vector to halves)."""
    if len(v) == 2:  # `pair16`'s shortcut
        a, b = v
        if type(a) is F32 and type(b) is F32 and a == a and b == b:
            return (_NZ16 + float(a), _NZ16 + float(b))
    if all(type(x) is F32 for x in v):
        return tuple(to16(x) for x in v)
    return tuple(np.array(v, F16))


def pair16(hi: Any, lo: Any) -> Any:
    """`(np.float16(lo), np.float16(hi))` (`cvt.rn.f16x2.f32`, `llsim_ops._ff2x2`)."""
    if type(lo) is F32 and type(hi) is F32 and lo == lo and hi == hi:  # `to16`'s shortcut inline
        return (_NZ16 + float(lo), _NZ16 + float(hi))
    return (to16(lo), to16(hi))


def fma32(a: Any, b: Any, c: Any, round_odd: Callable[[float, float], float]) -> Any:
    """`llsim_ops._fma` on f32: `np.float32(round_odd(float(a) * float(b), float(c)))`."""
    return to32(round_odd(float(a) * float(b), float(c)))


def approx32(hw: Callable[[Any], Any], f: Callable[[Any], Any], ftz: bool) -> Callable[[Any], Any]:
    """`np.float32(hw(x))` for `llsim_ops._approx`'s `hw` of the exact function
    `f`: where no error is added (`APPROX_ERROR` 0), `.ftz` flushes neither x
    nor the result and that is not NaN, `hw` returns `np.float64(f(x))`, so
    the result is `f(x)` itself for an `np.float32` (the f32 round trip is
    exact) and `np.float32(f(x))` for an `np.float64`."""
    def fast(x: Any) -> Any:
        if not knob("APPROX_ERROR") and not (ftz and abs(x) < _TINY):
            r = f(x)
            if r == r and (r == 0 or not (ftz and abs(r) < _TINY)):  # (.ftz keeps a zero's sign)
                if type(r) is F32:
                    return r
                if type(r) is F64:  # (rsqrt, rcp: computed in f64) np.float32(r)
                    return to32(r)
        return to32(hw(x))
    return fast


FTYPES = (F32, F64, F16)
# `llsim_ops._fcmp(pred)(a, b)` for two NumPy floats `_fa`, `_fb` as IEEE comparisons
# (`np.isnan(x)` is `x != x`; an ordered comparison with a NaN is false)
FCMP = {"oeq": "int(_fa == _fb)", "ogt": "int(_fa > _fb)", "oge": "int(_fa >= _fb)", "olt": "int(_fa < _fb)",
        "ole": "int(_fa <= _fb)", "one": "int(_fa < _fb or _fa > _fb)", "ord": "int(_fa == _fa and _fb == _fb)",
        "ueq": "int(not (_fa < _fb or _fa > _fb))", "ugt": "int(not (_fa <= _fb))", "uge": "int(not (_fa < _fb))",
        "ult": "int(not (_fa >= _fb))", "ule": "int(not (_fa > _fb))", "une": "int(_fa != _fb)",
        "uno": "int(_fa != _fa or _fb != _fb)"}


def insert(v: Any, i: Any, x: Any) -> Any:
    """`insertelement`: `v` with element `i` replaced by `x`, a tuple (`llsim_parse`'s closure)."""
    t = list(v)
    t[i] = x
    return tuple(t)


def load(mem: Any, t: int, p: tuple[Any, int], ty: str) -> Any:
    """Thread `t`'s load of a `ty` at `p` (the scheduler's answer to a
    per-instruction closure's request; the compiled blocks call it in place)."""
    if p[0] != "$smem" and p[1] % (n := 8 if ty.startswith("ptr") else _size(ty)):
        # a misaligned global load faults on the GPU as a store does ("misaligned address")
        raise IndexError(f"load of {ty} at {p[1]} in {p[0]!r}: not {n}-byte aligned")
    _track(mem, t, p, ty, False)
    return mem.load(p, ty)


def store(mem: Any, t: int, p: tuple[Any, int], ty: str, v: Any) -> None:
    """Thread `t`'s store of `v`, a `ty`, at `p` (as `load`)."""
    if p[0] != "$smem" and p[1] % _size(ty):
        # the GPU faults on a misaligned access ("misaligned address")
        raise IndexError(f"store of {ty} at {p[1]} in {p[0]!r}: not {_size(ty)}-byte aligned")
    _track(mem, t, p, ty, True)
    mem.store(p, ty, v)
    if mem.unfenced is not None and p[0] == "$smem":
        mem.unfenced[p[1]:p[1] + _size(ty)] = t


@functools.cache
def loader(ty: str) -> Callable[[Any, int, tuple[Any, int]], Any]:
    """`load` of a `ty` (`ld(mem, t, p)` is `load(mem, t, p, ty)`), one
    function with the type's size and bytes worked out once: the alignment
    test, the racecheck (`_track`), `Memory.load`'s tests and `load_value`
    in the same order, each with the same error. Integers and floats that are
    not NaN unpack through `struct` (`load_value`); a `bfloat` too, as the
    float of its bits shifted up 16 (`_decode`'s `b"\0\0" + raw`); anything
    else (pointers, NaNs, odd widths) is `load` itself. Halves unpack as their
    bits, each the `_HALF` entry `load_value`'s decoding gives (NaNs too)."""
    if ty.startswith("ptr"):
        return lambda mem, t, p: load(mem, t, p, ty)
    n = _size(ty)
    vec, el = (True, _vec(ty)[1]) if ty.startswith("<") else (False, ty)
    k = n // _size(el)
    code = _CODES.get(el) if el not in ("bfloat", "half") else "H"
    if code is None:
        return lambda mem, t, p: load(mem, t, p, ty)
    unpack = struct.Struct(f"<{k}{code}").unpack_from
    isint, isbf, isdouble, ishalf = el[0] == "i", el == "bfloat", el == "double", el == "half"
    bf_words, bf_floats = struct.Struct(f"<{k}I").pack, struct.Struct(f"<{k}f").unpack
    nz = _NZ32 if el in ("float", "bfloat") else _NZ16 if el == "half" else None

    if not vec and not isbf and el in ("float", "half", "double", "i1", "i8", "i16", "i32", "i64"):
        # a scalar of a type `struct` unpacks (most loads): the same steps, without the vector's and bfloat's
        # branches, and `_Hazards.access` of a read inline (noted while its epoch has had no write)
        one = struct.Struct(f"<{code}").unpack_from

        def ld1(mem: Any, t: int, p: tuple[Any, int]) -> Any:
            key, off = p
            if key == "$smem":
                h = mem.hazards
                if h is not None:
                    noted = h.pending
                    if noted is not None:
                        noted.append((t, off, n))
                    else:
                        h._access(t, off, n, False)
                else:
                    _track_global(mem, t, key, off, n, False)
            else:
                if off % n:
                    raise IndexError(f"load of {ty} at {off} in {key!r}: not {n}-byte aligned")
                g = mem.global_hazards
                if g is not None and key in g.names:
                    g.access(t, key, off, n, False)
            buf = mem.bufs[key]
            if mem.inflight:
                mem.guard(key, off, n, "load")
            if off < 0 or off + n > len(buf):
                raise IndexError(f"load of {n} bytes at {off} outside buffer {key!r} ({len(buf)} bytes)")
            x = one(buf, off)[0]
            if isint:
                return x
            if ishalf:
                return _HALF[x]
            if x == x:
                return F64(x) if isdouble else nz + x
            return load_value(buf, off, ty)
        return ld1

    def ld(mem: Any, t: int, p: tuple[Any, int]) -> Any:
        key, off = p
        if key == "$smem":
            h = mem.hazards
            if h is not None:
                h.access(t, off, n, False)
            else:
                _track_global(mem, t, key, off, n, False)
        else:
            if off % n:
                raise IndexError(f"load of {ty} at {off} in {key!r}: not {n}-byte aligned")
            g = mem.global_hazards
            if g is not None and key in g.names:
                g.access(t, key, off, n, False)
        buf = mem.bufs[key]
        if mem.inflight:
            mem.guard(key, off, n, "load")
        if off < 0 or off + n > len(buf):
            raise IndexError(f"load of {n} bytes at {off} outside buffer {key!r} ({len(buf)} bytes)")
        xs = unpack(buf, off)
        if isint:
            return xs if vec else xs[0]
        if ishalf:
            return tuple(map(_HALF.__getitem__, xs)) if vec else _HALF[xs[0]]
        if isbf:  # the f32 of the bits shifted up 16
            xs = bf_floats(bf_words(*[w << 16 for w in xs]))
        if vec:
            if not any(map(isnan, xs)):
                return tuple(map(F64, xs)) if isdouble else tuple(map(nz.__add__, xs))
        else:
            x = xs[0]
            if x == x:
                return F64(x) if isdouble else nz + x
        return load_value(buf, off, ty)
    return ld


@functools.cache
def storer(ty: str) -> Callable[[Any, int, tuple[Any, int], Any], None]:
    """`store` of a `ty` (`st(mem, t, p, v)` is `store(mem, t, p, ty, v)`), as
    `loader`: the same tests in the same order; the bytes through `struct`
    where `store_bytes` takes that path (integers; floats of the type, not
    NaN; a vector of its length), `store_bytes` itself otherwise."""
    if ty.startswith("ptr"):
        return lambda mem, t, p, v: store(mem, t, p, ty, v)
    n = _size(ty)
    vec, el = (True, _vec(ty)[1]) if ty.startswith("<") else (False, ty)
    k = n // _size(el)
    code = _CODES.get(el)
    if code is None:
        return lambda mem, t, p, v: store(mem, t, p, ty, v)
    pack = struct.Struct(f"<{k}{code}").pack
    isint = el[0] == "i"
    mask = (1 << (8 * _size(el))) - 1
    ft = TYPES.get(el)

    def st(mem: Any, t: int, p: tuple[Any, int], v: Any) -> None:
        key, off = p
        if key == "$smem":
            h = mem.hazards
            if h is not None:
                h.access(t, off, n, True)
            else:
                _track_global(mem, t, key, off, n, True)
        else:
            if off % n:
                raise IndexError(f"store of {ty} at {off} in {key!r}: not {n}-byte aligned")
            g = mem.global_hazards
            if g is not None and key in g.names:
                g.access(t, key, off, n, True)
        buf = mem.bufs[key]
        if mem.inflight:
            mem.guard(key, off, n, "store")
        if off < 0 or off + n > len(buf):
            raise IndexError(f"store of {n} bytes at {off} outside buffer {key!r} ({len(buf)} bytes)")
        if vec:
            if type(v) is tuple and len(v) == k and (isint or all(type(x) is ft and x == x for x in v)):
                raw = pack(*(int(x) & mask for x in v)) if isint else pack(*v)
            else:
                raw = store_bytes(v, ty)
        elif isint:
            raw = pack(int(v) & mask)
        elif type(v) is ft and v == v:
            raw = pack(v)
        else:
            raw = store_bytes(v, ty)
        if key == "$smem":
            if mem.wgmma_live:
                mem.guard_wgmma(slice(off, off + n), "a store")
            if mem.bulk_live:
                mem.guard_bulk(slice(off, off + n), "a store")
            buf[off:off + n] = raw
            if mem.unfenced is not None:
                mem.unfenced[off:off + n] = t
        else:
            buf[off:off + n] = raw
    return st


def _track_global(mem: Any, t: int, key: Any, off: int, n: int, write: bool) -> None:
    """`_track`'s global part (a shared access without `_Hazards` falls through to it, as there)."""
    g = mem.global_hazards
    if g is not None and key in g.names:
        g.access(t, key, off, n, write)


def _track(mem: Any, t: int, p: tuple[Any, int], ty: str, write: bool) -> None:
    """The racecheck of a load or store: `_Hazards` for shared memory, `_GlobalHazards` for the kernel's tensors."""
    if p[0] == "$smem":
        if mem.hazards is not None:
            mem.hazards.access(t, p[1], _size(ty), write)
            return
    g = mem.global_hazards
    if g is not None and p[0] in g.names:
        g.access(t, p[0], p[1], _size(ty), write)
