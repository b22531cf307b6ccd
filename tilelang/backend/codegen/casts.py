"""Casts between element types (the emitter's `CastOps`): to and from `bool`,
float to float (f64 -> bf16 correctly rounded, through f32 rounded to odd),
int to float (i64/u64 -> bf16 through f32 rounded to odd), float to int with
saturation (NaN -> 0), int to int wrapping, and the bit casts `t.to_bits()` /
`from_bits::<T>(u)`: the interpreter's rules (`ir/nodes.py`).

A mixin of `backend/llvm.py`'s `_Emitter`, above `ArithOps` in its one
inheritance chain (it rounds with `round_to` and converts to odd with
`f64_to_f32_odd` / `arith.odd_f32`); split from `arith.py` (2026-12-07, its
class at 699 lines), no change of behaviour.
"""

from __future__ import annotations

from tilelang.backend.codegen.llvm_types import const_operand, reg_ty
from tilelang.dtypes import DType

from .arith import ArithOps, odd_f32


class CastOps(ArithOps):
    """Element type conversions."""

    def cast(self, x: str, src: DType, dst: DType) -> str:
        if src is dst:
            return x
        st, dt_ = reg_ty(src), reg_ty(dst)
        if dst is DType.BOOL:
            if src.is_float:
                return self.emit(f"fcmp une {st} {x}, 0.0")
            return self.emit(f"icmp ne {st} {x}, 0")
        if src is DType.BOOL:
            if dst.is_float:
                return self.emit(f"uitofp i1 {x} to {dt_}")
            return self.emit(f"zext i1 {x} to {dt_}")
        if src.is_float and dst.is_float:
            if src is DType.F64 and dst is DType.BF16:
                return self.f64_to_bf16(x)
            if st == "double" and dt_ == "float":
                narrow = {DType.F16: "half", DType.BF16: "bfloat", DType.F32: "float"}[dst]
                h = self.emit(f"fptrunc double {x} to {narrow}")
                return h if narrow == "float" else self.emit(f"fpext {narrow} {h} to float")
            if st == "float" and dt_ == "double":
                return self.emit(f"fpext float {x} to double")
            return self.round_to(x, dst)  # between f16/bf16/f32 (all in f32 registers)
        if src.is_int and src.bits == 64 and dst is DType.F32:
            # one rounding (cvt.rn.f32.s64), as the interpreter's round-to-odd f64 gives:
            # through f64 to nearest, 2^53 + 2^29 + 1 tied down to 2^53
            return self.emit(f"{'sitofp' if src.is_signed else 'uitofp'} {st} {x} to float")
        if src.is_int and src.bits == 64 and dst is DType.BF16:
            return self.round_to(self.int64_to_f32_odd(x, src.is_signed), DType.BF16)
        if src.is_int and dst.is_float and ((src.bits == 64 and dst is not DType.F64) or dst is DType.BF16):
            # Through f64 (exact below 2^53; an f16 of anything larger is infinite), then one
            # rounding to `dst`: bf16 from f32 would round twice on sm_80.
            wide = self.emit(f"{'sitofp' if src.is_signed else 'uitofp'} {st} {x} to double")
            return self.cast(wide, DType.F64, dst)
        if src.is_int and dst.is_float:
            narrow = {DType.F16: "half", DType.BF16: "bfloat"}.get(dst, dt_)
            h = self.emit(f"{'sitofp' if src.is_signed else 'uitofp'} {st} {x} to {narrow}")
            return h if narrow == dt_ else self.emit(f"fpext {narrow} {h} to float")
        if src.is_float and dst.is_int:
            nm = f"llvm.fpto{'si' if dst.is_signed else 'ui'}.sat.{dt_}.{'f32' if st == 'float' else 'f64'}"
            self.declare(f"declare {dt_} @{nm}({st})")
            return self.call(dt_, nm, f"{st} {x}")
        # int -> int
        if src.bits == dst.bits:
            return x
        if src.bits > dst.bits:
            return self.emit(f"trunc {st} {x} to {dt_}")
        return self.emit(f"{'sext' if src.is_signed else 'zext'} {st} {x} to {dt_}")

    def bitcast(self, x: str, src: DType, dst: DType) -> str:
        """`t.to_bits()` / `from_bits::<T>(u)`: the bits of a float as the unsigned integer of its width,
        or back. f16 and bf16 live in f32 registers (exactly): f16 through `half`, bf16 as the high half of
        the f32's bits (its low half is zero). A NaN's bits are `numeric.CANONICAL_NAN` (the interpreter's)."""
        if src.is_float:
            from tilelang.interp.numeric import CANONICAL_NAN

            bits = self._bits_of(x, src, dst)
            nan = self.emit(f"fcmp uno {reg_ty(src)} {x}, {x}")
            return self.emit(f"select i1 {nan}, {reg_ty(dst)} {CANONICAL_NAN[src]}, {reg_ty(dst)} {bits}")
        return self._bits_of(x, src, dst)

    def _bits_of(self, x: str, src: DType, dst: DType) -> str:
        if src is DType.BF16:
            w = self.emit(f"bitcast float {x} to i32")
            return self.emit(f"trunc i32 {self.emit(f'lshr i32 {w}, 16')} to i16")
        if dst is DType.BF16:
            w = self.emit(f"shl i32 {self.emit(f'zext i16 {x} to i32')}, 16")
            return self.emit(f"bitcast i32 {w} to float")
        if src is DType.F16:
            return self.emit(f"bitcast half {self.emit(f'fptrunc float {x} to half')} to i16")
        if dst is DType.F16:
            return self.emit(f"fpext half {self.emit(f'bitcast i16 {x} to half')} to float")
        return self.emit(f"bitcast {reg_ty(src)} {x} to {reg_ty(dst)}")

    def f64_to_bf16(self, x: str) -> str:
        """f64 -> bf16 correctly rounded (the interpreter's rule): f64 -> f32 with
        round-to-odd (exact, or truncated with the last bit set), then -> bf16
        to nearest. A plain fptrunc is that on sm_90 but rounds twice (via f32
        to nearest) on sm_80."""
        return self.round_to(self.f64_to_f32_odd(x), DType.BF16)

    def int64_to_f32_odd(self, x: str, signed: bool) -> str:
        """An i64 or u64 -> f32 rounded to odd, for bf16 (the interpreter's
        `numeric.int_to_f64_odd` rounded to f32 to odd): the conversion to
        nearest, read back with saturation, says whether it was inexact and
        whether it went past the integer (a result of 2^63, or 2^64 unsigned,
        saturates back to the largest integer, below it)."""
        s = "si" if signed else "ui"
        f = self.emit(f"{s}tofp i64 {x} to float")
        nm = f"llvm.fpto{s}.sat.i64.f32"
        self.declare(f"declare i64 @{nm}(float)")
        back = self.call("i64", nm, f"float {f}")
        top = self.emit(f"fcmp oge float {f}, {const_operand(DType.F32, 2.0**63 if signed else 2.0**64)}")
        ne = self.emit(f"icmp ne i64 {back}, {x}")
        inexact = self.emit(f"or i1 {ne}, {top}")
        if signed:  # past the integer: above it for x >= 0, below it for x < 0 (sign-magnitude)
            up = self.emit(f"icmp sgt i64 {back}, {x}")
            down = self.emit(f"icmp slt i64 {back}, {x}")
            neg = self.emit(f"icmp slt i64 {x}, 0")
            past = self.emit(f"select i1 {neg}, i1 {down}, i1 {up}")
        else:
            past = self.emit(f"icmp ugt i64 {back}, {x}")
        away = self.emit(f"or i1 {past}, {top}")
        return odd_f32(self.emit, f, away, inexact)
