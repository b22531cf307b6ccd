"""Reductions and scans of tile values (the emitter's `ReductionOps`).

Blocked tiles go through `codegen/reduce.py` and `codegen/scan.py`
(registers, shuffles, shared memory; a long Slice-layout row too, its result
laid out apart); other layouts reduce by warp shuffles, by groups, or staged
in shared memory: by groups of threads an output (`codegen/reduce_staged.py`),
or a thread an output in a serial loop where that reads no more (short rows).
f16/bf16 accumulate in f32.

A mixin of `backend/llvm.py`'s `_Emitter`: the emitter's parts form one
inheritance chain (core, arith, casts, memory, reductions, mma, shapes, control,
debug), each calling only what the parts below it define.
"""

from __future__ import annotations

import math

import numpy as np

from tilelang.backend.codegen import reduce as reductions
from tilelang.backend.codegen import scan as scans
from tilelang.backend.codegen.llvm_types import (
    const_operand,
    reg_ty,
    smem_size,
)
from tilelang.backend.codegen.reduce_staged import reduce_staged
from tilelang.backend.codegen.views import (
    ChunkedView,
    strides_of,
)
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .memory import MemoryOps


class ReductionOps(MemoryOps):
    """Reductions and scans of tile values."""

    def reduce(self, op: ir.Reduce) -> None:
        if reductions.reduce_blocked(self, op):
            return
        if isinstance(self.lay(op.x), ChunkedView) and isinstance(self.lay(op.result), ChunkedView) \
                and (self.reduce_shuffle(op) or self.reduce_grouped(op)):
            return
        if reduce_staged(self, op):
            return
        x, r, axis = op.x, op.result, op.axis
        dt = x.dtype
        ty = reg_ty(dt)
        (off,) = self.to_smem([x], op.span)
        xs = strides_of(x.shape)
        L = x.shape[axis]
        rshape = r.shape
        bases = []
        for oc in ([c for _, c in self.out_coords(r)] if rshape else [[]]):
            full = [*oc[:axis], "0", *oc[axis:]]
            bases.append(self.linear(full, x.shape))
        step = xs[axis]
        R = ir.ReduceOp
        is_arg = op.op in (R.ARGMAX, R.ARGMIN)
        firsts = [self.smem_load(off, dt, b) for b in bases]
        carried = [(ty, v) for v in firsts]
        if is_arg:
            carried += [("i32", "0")] * len(bases)

        def body(rr: str, cur: list[str]) -> list[str]:
            nb = len(bases)
            nxt = []
            idx_next = []
            for i, b in enumerate(bases):
                off_r = rr if step == 1 else self.emit(f"mul i32 {rr}, {step}")
                v = self.smem_load(off, dt, self.emit(f"add i32 {b}, {off_r}"))
                acc = cur[i]
                if is_arg:
                    better = self.better(op.op is R.ARGMAX, v, acc, dt)
                    nxt.append(self.emit(f"select i1 {better}, {ty} {v}, {ty} {acc}"))
                    idx_next.append(self.emit(f"select i1 {better}, i32 {rr}, i32 {cur[nb + i]}"))
                else:
                    nxt.append(self.combine(op.op, acc, v, dt))
            return nxt + idx_next

        finals = self.counted_loop(1, L, carried, body) if L > 1 else [v for _, v in carried]
        if is_arg:
            vals = finals[len(bases):]
        else:
            vals = [self.round_to(v, dt) for v in finals[: len(bases)]]
        self.finish(rshape, vals, r)

    def _out_vectors(self, x: ir.Value, axis: int, rshape: tuple[int, ...]) -> dict[bytes, tuple[np.ndarray, list[tuple[int, int]]]]:
        """Slots of `x` grouped by the output index they reduce into, as a function
        of the thread id (-1 for dead lanes): {key: (o[t] for t in 0..T-1, slots)}."""
        lay = self.lay(x)
        t = np.arange(self.T, dtype=np.int64)
        groups: dict[bytes, tuple[np.ndarray, list[tuple[int, int]]]] = {}
        for k in range(lay.K):
            for j in range(lay.V):
                f = (k * self.T + t) * lay.V + j
                live = f < lay.numel
                o = np.full(self.T, -1, dtype=np.int64)
                if live.any():
                    cs = list(np.unravel_index(f[live], x.shape))
                    del cs[axis]
                    o[live] = np.ravel_multi_index(cs, rshape) if rshape else 0
                key = o.tobytes()
                if key not in groups:
                    groups[key] = (o, [])
                groups[key][1].append((k, j))
        return groups

    def shfl_xor(self, v: str, dt: DType, m: int) -> str:
        """`v` of the lane `lane ^ m` (whole warp; 64-bit values in two halves)."""
        self.declare("declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)")
        ty = reg_ty(dt)
        if ty in ("i64", "double"):
            w = v if ty == "i64" else self.emit(f"bitcast double {v} to i64")
            lo = self.emit(f"trunc i64 {w} to i32")
            hi = self.emit(f"trunc i64 {self.emit(f'lshr i64 {w}, 32')} to i32")
            lo2 = self.call("i32", "llvm.nvvm.shfl.sync.bfly.i32", f"i32 -1, i32 {lo}, i32 {m}, i32 31")
            hi2 = self.call("i32", "llvm.nvvm.shfl.sync.bfly.i32", f"i32 -1, i32 {hi}, i32 {m}, i32 31")
            lo64 = self.emit(f"zext i32 {lo2} to i64")
            hi64 = self.emit(f"zext i32 {hi2} to i64")
            hish = self.emit(f"shl i64 {hi64}, 32")
            w2 = self.emit(f"or i64 {lo64}, {hish}")
            return w2 if ty == "i64" else self.emit(f"bitcast i64 {w2} to double")
        if ty == "float":
            i = self.emit(f"bitcast float {v} to i32")
            r = self.call("i32", "llvm.nvvm.shfl.sync.bfly.i32", f"i32 -1, i32 {i}, i32 {m}, i32 31")
            return self.emit(f"bitcast i32 {r} to float")
        if ty == "i32":
            return self.call("i32", "llvm.nvvm.shfl.sync.bfly.i32", f"i32 -1, i32 {v}, i32 {m}, i32 31")
        w = self.emit(f"{'sext' if dt.is_signed else 'zext'} {ty} {v} to i32")
        r = self.call("i32", "llvm.nvvm.shfl.sync.bfly.i32", f"i32 -1, i32 {w}, i32 {m}, i32 31")
        return self.emit(f"trunc i32 {r} to {ty}")

    def reduce_shuffle(self, op: ir.Reduce) -> bool:
        """Reduction with warp shuffles, for layouts where it is exact and simple.

        1. this thread's slots that reduce into the same output (for every
           thread) are combined in registers;
        2. lanes that share an output form aligned blocks of G lanes inside a
           warp: a butterfly of `shfl.sync.bfly` combines them;
        3. each output has the same number C of block partials (C = 1 when a
           row lives in one warp), at consecutive blocks: block leaders write
           them to shared memory, and the owner of an output combines its C.
        Applies to sum/prod/max/min; the order of float accumulation differs
        from the interpreter's, which the IR allows. Returns False otherwise.
        """
        x, r, axis = op.x, op.result, op.axis
        dt = x.dtype
        R = ir.ReduceOp
        if op.op not in (R.SUM, R.PROD, R.MAX, R.MIN) or dt is DType.BOOL:
            return False
        rshape = r.shape
        n_out = math.prod(rshape)
        lay = self.lay(x)
        if not (lay.full or lay.K == 1):
            return False  # a partial last chunk would share partial slots with full ones
        groups = list(self._out_vectors(x, axis, rshape).values())
        G = 32
        while G > 1:
            ok = True
            lanes = np.arange(self.T)
            for o, _ in groups:
                for m in range(1, G):
                    if not np.array_equal(o, o[lanes ^ m]):
                        ok = False
                        break
                if not ok:
                    break
            if ok:
                break
            G //= 2

        # o per block, per group; every live output must get C partials from
        # consecutive blocks of ONE group: o_g(beta) = base_g + beta // C.
        C = None
        counts = np.zeros(n_out, dtype=np.int64)
        for o, _ in groups:
            ob = o[::G]
            live = ob >= 0
            if not live.any():
                continue
            np.add.at(counts, ob[live], 1)
        if counts.min() < 1 or counts.max() != counts.min():
            return False
        C = int(counts[0])
        for o, _ in groups:
            ob = o[::G]
            betas = np.flatnonzero(ob >= 0)
            if len(betas) == 0:
                continue
            base = ob[betas[0]] - betas[0] // C
            if not np.array_equal(ob[betas], base + betas // C):
                return False
        if G == 1 and C > 8:
            return False  # no lane sharing and many partials: the plain path is as good
        acc_dt = DType.F32 if dt in (DType.F16, DType.BF16) else dt
        esz = smem_size(acc_dt)
        self.need_smem(n_out * C * esz, op.span)
        lay = self.lay(x)
        slots = self.tile(x)
        partials = []
        for o, members in groups:
            k0, j0 = members[0]
            part = slots[k0 * lay.V + j0]
            for k, j in members[1:]:
                part = self.combine(op.op, part, slots[k * lay.V + j], dt)
            m = G // 2
            while m >= 1:
                part = self.combine(op.op, part, self.shfl_xor(part, acc_dt, m), dt)
                m //= 2
            partials.append((o, members, part))
        self.barrier()
        lane_in_block = self.emit(f"and i32 {self.tid0()}, {G - 1}") if G > 1 else "0"
        leader = self.emit(f"icmp eq i32 {lane_in_block}, 0") if G > 1 else None
        beta = self.emit(f"lshr i32 {self.tid0()}, {G.bit_length() - 1}") if G > 1 else self.tid0()
        c_idx = self.emit(f"urem i32 {beta}, {C}") if C > 1 else "0"
        for o, members, part in partials:
            if not (o >= 0).any():
                continue
            k0, j0 = members[0]
            valid = self.chunk_valid(lay, k0)
            cs = self.slot_coords(lay, k0, j0, x.shape, valid)
            del cs[axis]
            oi = self.linear(cs, rshape) if rshape else "0"
            slot = oi if C == 1 else self.emit(f"add i32 {self.emit(f'mul i32 {oi}, {C}')}, {c_idx}")
            go, jn = self.new_label("rw"), self.new_label("rx")
            self.cbr(self.and_all([valid, leader]) or "true", go, jn)
            self.label(go)
            self.smem_store(0, acc_dt, slot, part)
            self.br(jn)
            self.label(jn)
        self.barrier()
        vals = []
        for _, _, f in self.out_slots(r):
            base = f if C == 1 else self.emit(f"mul i32 {f}, {C}")
            v = self.smem_load(0, acc_dt, base)
            for c in range(1, C):
                v = self.combine(op.op, v, self.smem_load(0, acc_dt, self.emit(f"add i32 {base}, {c}")), dt)
            vals.append(self.round_to(v, dt))
        self.finish(rshape, vals, r)
        return True

    def reduce_grouped(self, op: ir.Reduce) -> bool:
        """Two-phase reduction: combine this thread's elements that provably share an
        output in registers, then combine across threads with shared-memory atomics
        on an array of the OUTPUT's size. Used for integer sum/max/min (exact in any
        order) and for float sums whose input tile would not fit the plain path's
        shared-memory staging (> 48 KiB). Returns False when it does not apply."""
        x, r, axis = op.x, op.result, op.axis
        dt = x.dtype
        R = ir.ReduceOp
        if op.op not in (R.SUM, R.MAX, R.MIN) or dt is DType.BOOL:
            return False
        lay = self.lay(x)
        if dt.is_float and not (op.op is R.SUM and lay.numel * smem_size(dt) > 48 * 1024):
            return False
        if dt.is_int and dt.bits < 32:
            return False  # sub-word shared atomics: keep the plain path
        rshape = r.shape
        n_out = math.prod(rshape)
        groups = [members for _, members in self._out_vectors(x, axis, rshape).values()]
        acc_dt = DType.F32 if dt in (DType.F16, DType.BF16) else dt
        aty = reg_ty(acc_dt)
        esz = smem_size(acc_dt)
        self.need_smem(n_out * esz, op.span)
        if op.op is R.SUM:
            ident = const_operand(acc_dt, -0.0 if acc_dt.is_float else 0)  # -0.0 + x is x, -0.0 too
        elif dt.is_signed:
            ident = const_operand(acc_dt, -(1 << (dt.bits - 1)) if op.op is R.MAX else (1 << (dt.bits - 1)) - 1)
        else:
            ident = const_operand(acc_dt, 0 if op.op is R.MAX else (1 << dt.bits) - 1)
        self.barrier()
        for i in range(-(-n_out // self.T)):
            idx = self.emit(f"add i32 {self.tid0()}, {i * self.T}")
            ok = self.emit(f"icmp ult i32 {idx}, {n_out}")
            go, jn = self.new_label("ri"), self.new_label("rj")
            self.cbr(ok, go, jn)
            self.label(go)
            self.smem_store(0, acc_dt, idx, ident)
            self.br(jn)
            self.label(jn)
        self.barrier()
        rmw = {R.SUM: "fadd" if dt.is_float else "add",
               R.MAX: "max" if dt.is_signed else "umax", R.MIN: "min" if dt.is_signed else "umin"}[op.op]
        slots = self.tile(x)
        for members in groups:
            k0, j0 = members[0]
            valid = self.chunk_valid(lay, k0)
            part = slots[k0 * lay.V + j0]
            for k, j in members[1:]:
                part = self.combine(op.op, part, slots[k * lay.V + j], dt)
            ci = self.slot_coords(lay, k0, j0, x.shape, valid)
            del ci[axis]
            oi = self.linear(ci, rshape) if rshape else "0"
            go, jn = self.new_label("ra"), self.new_label("rb")
            self.cbr(valid or "true", go, jn)
            self.label(go)
            p = self.smem_ptr(0, acc_dt, oi)
            self.emit(f"atomicrmw {rmw} ptr addrspace(3) {p}, {aty} {part} monotonic")
            self.br(jn)
            self.label(jn)
        self.barrier()
        vals = [self.round_to(self.smem_load(0, acc_dt, f), dt) for _, _, f in self.out_slots(r)]
        self.finish(rshape, vals, r)
        return True

    def better(self, is_max: bool, v: str, best: str, dt: DType) -> str:
        ty = reg_ty(dt)
        if dt.is_float:
            c = self.emit(f"fcmp {'ogt' if is_max else 'olt'} {ty} {v}, {best}")
            vn = self.emit(f"fcmp uno {ty} {v}, 0.0")
            bn = self.emit(f"fcmp ord {ty} {best}, 0.0")
            nanwin = self.emit(f"and i1 {vn}, {bn}")
            return self.emit(f"or i1 {c}, {nanwin}")
        if dt is DType.BOOL:
            return self.emit(f"icmp {'ugt' if is_max else 'ult'} i1 {v}, {best}")
        s = "s" if dt.is_signed else "u"
        return self.emit(f"icmp {s}{'gt' if is_max else 'lt'} {ty} {v}, {best}")

    def combine(self, rop: ir.ReduceOp | ir.ScanOp, acc: str, v: str, dt: DType) -> str:
        """acc (op) v in the accumulation type (f32 for f16/bf16: no rounding here)."""
        R, S, E = ir.ReduceOp, ir.ScanOp, ir.ElemOp
        ty = reg_ty(dt)
        if rop in (R.SUM, S.CUMSUM):
            if dt is DType.BOOL:
                return self.emit(f"or i1 {acc}, {v}")
            return self.emit(f"{'fadd contract' if dt.is_float else 'add'} {ty} {acc}, {v}")
        if rop in (R.PROD, S.CUMPROD):
            if dt is DType.BOOL:
                return self.emit(f"and i1 {acc}, {v}")
            return self.emit(f"{'fmul' if dt.is_float else 'mul'} {ty} {acc}, {v}")
        eop = E.MAXIMUM if rop in (R.MAX, S.CUMMAX) else E.MINIMUM
        if dt.is_float:
            return self.felem(eop, [acc, v], dt, ty)
        return self.ielem(eop, [acc, v], dt, ty)

    def scan(self, op: ir.Scan) -> None:
        if scans.scan_blocked(self, op):
            return
        x, r, axis = op.x, op.result, op.axis
        dt = x.dtype
        ty = reg_ty(dt)
        (off,) = self.to_smem([x], op.span)
        L = x.shape[axis]
        step = strides_of(x.shape)[axis]
        bases, mine = [], []
        for _, oc in self.out_coords(r):
            mine.append(oc[axis])
            full = list(oc)
            full[axis] = "0"
            bases.append(self.linear(full, x.shape))
        firsts = [self.smem_load(off, dt, b) for b in bases]

        def body(rr: str, cur: list[str]) -> list[str]:
            out = []
            for i, b in enumerate(bases):
                off_r = rr if step == 1 else self.emit(f"mul i32 {rr}, {step}")
                v = self.smem_load(off, dt, self.emit(f"add i32 {b}, {off_r}"))
                nx = self.combine(op.op, cur[i], v, dt)
                take = self.emit(f"icmp sle i32 {rr}, {mine[i]}")
                out.append(self.emit(f"select i1 {take}, {ty} {nx}, {ty} {cur[i]}"))
            return out

        finals = self.counted_loop(1, L, [(ty, v) for v in firsts], body) if L > 1 else firsts
        self.env[r.id] = [self.round_to(v, dt) for v in finals]
