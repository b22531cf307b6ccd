"""LLVM types and constants of Tile's dtypes: the one place that says which
LLVM type a value of each dtype has in registers, in global memory and in
shared memory, and how a constant is written (converted as the
interpreter's `Const` converts it). The emitter (`backend/llvm.py`) and its
helpers in `codegen/` all spell types through it."""

from __future__ import annotations

import math
import struct

import numpy as np

from tilelang.dtypes import DType


def reg_ty(dt: DType) -> str:
    """The LLVM type a value of `dt` lives in while in registers."""
    if dt is DType.BOOL:
        return "i1"
    if dt in (DType.F16, DType.BF16, DType.F32):
        return "float"
    if dt is DType.F64:
        return "double"
    return f"i{dt.bits}"


def mem_ty(dt: DType, bf16_f32: bool = False) -> str:
    """The LLVM type of one element of a tensor of `dt` in global memory
    (`bf16_f32`: a bf16 tensor held as f32 values, `TensorFacts.bf16_f32`)."""
    if dt is DType.BOOL:
        return "i8"
    if dt is DType.F16:
        return "half"
    if dt is DType.BF16:
        return "float" if bf16_f32 else "bfloat"
    return reg_ty(dt)


def mem_size(dt: DType, bf16_f32: bool = False) -> int:
    return {"i8": 1, "half": 2, "bfloat": 2, "float": 4, "double": 8}.get(mem_ty(dt, bf16_f32), dt.itemsize)


def smem_ty(dt: DType) -> str:
    return "i8" if dt is DType.BOOL else reg_ty(dt)


def smem_size(dt: DType) -> int:
    t = smem_ty(dt)
    return {"i8": 1, "float": 4, "double": 8}.get(t, dt.itemsize)


def f64_hex(x: float) -> str:
    return "0x{:016X}".format(struct.unpack("<Q", struct.pack("<d", x))[0])


def const_operand(dt: DType, value: bool | int | float) -> str:
    """An LLVM constant for `value` converted to `dt` as the interpreter's `Const` does."""
    if dt is DType.BOOL:
        return "true" if bool(value) else "false"
    if dt.is_int:
        bits = dt.bits
        v = int(value) & ((1 << bits) - 1)
        if v >= 1 << (bits - 1):
            v -= 1 << bits
        return str(v)
    x = float(value)
    if dt is DType.F16:
        x = float(np.float16(x))
    elif dt is DType.BF16:
        from tilelang.interp.numeric import (
            finish,  # f64 -> bf16 correctly rounded, as the interpreter
        )

        x = float(finish(np.asarray(x, dtype=np.float64), DType.BF16))
    elif dt is DType.F32:
        x = float(np.float32(x))
    if math.isnan(x):
        return "0x7FF8000000000000"
    return f64_hex(x)


def param_reg(name: str) -> str:
    """The LLVM register of the kernel parameter (or TMA descriptor) `name`:
    `%p.` and the name, a namespace the emitter's own registers and labels
    (`%t12`, `%tid`, `%err`, `%pbuf`, `%arrive`, `entry`) never use, so a
    parameter may have any Tile name (`err`, `t1`, `entry` were redefinitions
    that LLVM refused). A descriptor's name keeps its dot (`x.tma0`), which a
    Tile identifier cannot have; a character LLVM does not take unquoted
    becomes `_` followed by its code point. LLVM cuts a local name at 1,024
    characters, which made a long parameter and its `.d0` one name (an ICE):
    a name past 64 characters keeps its first 48 and a hash of the whole."""
    text = "".join(ch if (ch.isascii() and ch.isalnum()) or ch in "_." else f"_{ord(ch):x}_" for ch in name)
    if len(text) > 64:
        import hashlib

        text = f"{text[:48]}.{hashlib.sha1(name.encode()).hexdigest()[:12]}"
    return "%p." + text
