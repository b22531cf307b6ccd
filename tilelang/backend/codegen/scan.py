"""Scans (inclusive cumsum/cumprod/cummax/cummin) of tiles in a blocked layout: registers, then
warp shuffles, then shared memory across warps (`scan_blocked`).

Along the scanned dim `a` of a blocked layout the elements are ordered by
repetition, then warp, then lane, then a thread's own `s` consecutive ones
(`codegen/views.py`). Each repetition is scanned in three stages and carried
into the next:

1. registers: each thread scans its `s` elements of every line (the slots that
   differ only along `a`), masked lanes counting as the identity;
2. lanes: a Hillis-Steele scan of the threads' totals over the lanes along `a`
   (`shfl.sync.up` by 1, 2, 4, ... lane strides), giving each thread the total
   of the lanes before it;
3. warps: when `a` spans W > 1 warps, the last lane of each warp's group
   writes the warp's total to shared memory, a barrier, and every thread
   folds the totals of the warps before its own (and all W, for the carry).

Replicas (lanes or warps past the padded extent) compute the same values as
the copies they mirror. f16/bf16 accumulate in f32 and round once at the
end; the order of float accumulation differs from the interpreter's
sequential one, which the IR allows.
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .llvm_types import const_operand, reg_ty, smem_size
from .views import BlockedView

S = ir.ScanOp


def _identity(rop: S, dt: DType) -> str:
    if rop in (S.CUMMAX, S.CUMMIN):  # what never wins a maximum (minimum); -inf keeps a NaN and a -0.0
        low = rop is S.CUMMAX
        if dt is DType.BOOL:
            return "false" if low else "true"
        if dt.is_float:
            return const_operand(dt, float("-inf") if low else float("inf"))
        lo = -(1 << (dt.bits - 1)) if dt.is_signed else 0
        hi = (1 << (dt.bits - 1)) - 1 if dt.is_signed else (1 << dt.bits) - 1
        return const_operand(dt, lo if low else hi)
    if dt is DType.BOOL:
        return "true" if rop is S.CUMPROD else "false"
    # -0.0 for a float sum: -0.0 + x is x for every x, +0.0 + -0.0 is +0.0
    # (a prefix of -0.0s would turn +0.0 in the lanes that start from it)
    return const_operand(dt, 1 if rop is S.CUMPROD else -0.0 if dt.is_float else 0)


def shfl(em: Any, mode: str, v: str, dt: DType, arg: str | int) -> str:
    """`v` of another lane: mode "up" (lane - arg, own value below 0) or "idx"
    (lane `arg`), for every type (64-bit values in two halves)."""
    name = f"llvm.nvvm.shfl.sync.{mode}.i32"
    clamp = 0 if mode == "up" else 31
    em.declare(f"declare i32 @{name}(i32, i32, i32, i32)")

    def one(x: str) -> str:
        return em.call("i32", name, f"i32 -1, i32 {x}, i32 {arg}, i32 {clamp}")

    ty = reg_ty(dt)
    if ty in ("i64", "double"):
        w = v if ty == "i64" else em.emit(f"bitcast double {v} to i64")
        lo = one(em.emit(f"trunc i64 {w} to i32"))
        hi = one(em.emit(f"trunc i64 {em.emit(f'lshr i64 {w}, 32')} to i32"))
        lo64 = em.emit(f"zext i32 {lo} to i64")
        hi64 = em.emit(f"shl i64 {em.emit(f'zext i32 {hi} to i64')}, 32")
        w2 = em.emit(f"or i64 {lo64}, {hi64}")
        return w2 if ty == "i64" else em.emit(f"bitcast i64 {w2} to double")
    if ty == "float":
        return em.emit(f"bitcast i32 {one(em.emit(f'bitcast float {v} to i32'))} to float")
    if ty == "i32":
        return one(v)
    w = em.emit(f"{'sext' if dt.is_signed else 'zext'} {ty} {v} to i32")
    return em.emit(f"trunc i32 {one(w)} to {ty}")


def scan_blocked(em: Any, op: ir.Scan) -> bool:
    """Emit `op` when its input and result share one blocked layout (no slice);
    False when it does not apply."""
    x, r, axis = op.x, op.result, op.axis
    xv = em.lay(x)
    rv = em.lay(r)
    if not (isinstance(xv, BlockedView) and isinstance(rv, BlockedView) and xv.drop is None
            and rv.layout == xv.layout and rv.slots == xv.slots):
        return False
    dt = x.dtype
    rop = op.op
    acc_dt = DType.F32 if dt in (DType.F16, DType.BF16) else dt
    ty = reg_ty(dt)
    fa = axis
    m = xv.dims[fa]
    ident = _identity(rop, dt)
    slots = em.tile(x)

    def comb(a: str, b: str) -> str:
        return em.combine(rop, a, b, dt)

    # lines: slots that differ only along `fa`, grouped per repetition, in order
    lines: dict[tuple[int, ...], dict[int, list[int]]] = {}
    for i, c in enumerate(xv.slots):
        key = tuple(0 if d == fa else v for d, v in enumerate(c))
        rep, e = divmod(c[fa], m.cov) if not m.repl else (0, c[fa])
        lines.setdefault(key, {}).setdefault(rep, []).append(i)
    for reps in lines.values():
        for members in reps.values():
            members.sort(key=lambda i: xv.slots[i][fa])

    lane_d = xv.lane_digit(em, fa)
    L = m.lanes
    lane_pos = lane_d if m.tpw == L else em.emit(f"and i32 {lane_d}, {L - 1}")
    W = m.warps
    warp_d = xv.warp_digit(em, fa)
    warp_pos = warp_d if m.wpc == W else em.emit(f"and i32 {warp_d}, {W - 1}")
    lane = em.emit(f"and i32 {em.tid0()}, 31")
    # the lane holding the last position of this thread's group along `fa`
    last_src = em.emit(f"or i32 {em.emit(f'and i32 {lane}, {31 ^ ((m.tpw - 1) << m.lshift)}')}, "
                       f"{(L - 1) << m.lshift}") if L > 1 else None
    # the shared-memory row of each line: its coordinates off `fa`, over the padded extents
    ext = [mm.extent if d != fa else 1 for d, mm in enumerate(xv.dims)]
    n_span = math.prod(ext)
    row_of: dict[tuple[int, ...], str] = {}
    if m.warps > 1:
        for key in lines:
            lin, stride = "0", m.warps
            for d in range(len(xv.dims) - 1, -1, -1):
                if d == fa:
                    continue
                tp = xv.tp(em, d)
                c = key[d]
                coord = str(c) if tp == "0" else (tp if c == 0 else em.emit(f"add i32 {tp}, {c}"))
                if coord != "0":
                    term = coord if stride == 1 else em.emit(f"mul i32 {coord}, {stride}")
                    lin = term if lin == "0" else em.emit(f"add i32 {lin}, {term}")
                stride *= ext[d]
            row_of[key] = lin
    out = list(slots)
    max_reps = max(len(reps) for reps in lines.values())
    carry = dict.fromkeys(lines)
    for rep in range(max_reps):
        totals: dict[tuple[int, ...], str] = {}
        local: dict[tuple[int, ...], list[str]] = {}
        for key, reps in lines.items():
            members = reps.get(rep, [])
            run: list[str] = []
            acc = None
            for i in members:
                v = xv.live_or(em, slots, i, ty, ident)
                acc = v if acc is None else comb(acc, v)
                run.append(acc)
            local[key] = run
            totals[key] = acc if acc is not None else ident
        # lanes: inclusive scan of the totals, then the exclusive part by one shuffle up
        excl: dict[tuple[int, ...], str] = dict.fromkeys(lines, ident)
        incl = dict(totals)
        bit = 0
        while (1 << bit) < L:
            delta = (1 << bit) << m.lshift
            take = em.emit(f"icmp uge i32 {lane_pos}, {1 << bit}")
            for key in lines:
                got = shfl(em, "up", incl[key], acc_dt, delta)
                incl[key] = em.emit(f"select i1 {take}, {ty} {comb(got, incl[key])}, {ty} {incl[key]}")
            bit += 1
        if L > 1:
            first = em.emit(f"icmp eq i32 {lane_pos}, 0")
            for key in lines:
                prev = shfl(em, "up", incl[key], acc_dt, 1 << m.lshift)
                excl[key] = em.emit(f"select i1 {first}, {ty} {ident}, {ty} {prev}")
        group_total = {key: shfl(em, "idx", incl[key], acc_dt, last_src) if last_src else incl[key]
                       for key in lines}
        # warps
        if W > 1:
            esz = smem_size(acc_dt)
            em.need_smem(n_span * W * esz, op.span)
            em.barrier()
            writer = em.and_all([em.emit(f"icmp eq i32 {lane_pos}, {L - 1}") if L > 1 else None,
                                 em.emit(f"icmp eq i32 {lane_d}, {lane_pos}") if m.tpw != L else None,
                                 em.emit(f"icmp eq i32 {warp_d}, {warp_pos}") if m.wpc != W else None,
                                 xv.owner(em, skip=fa)])
            for key in lines:
                go, jn = em.new_label("sw"), em.new_label("sx")
                em.cbr(writer or "true", go, jn)
                em.label(go)
                em.smem_store(0, acc_dt, em.emit(f"add i32 {warp_pos}, {row_of[key]}"), group_total[key])
                em.br(jn)
                em.label(jn)
            em.barrier()
            for key in lines:
                before = ident
                whole = ident
                for w in range(W):
                    t = em.smem_load(0, acc_dt, em.emit(f"add i32 {row_of[key]}, {w}"))
                    earlier = em.emit(f"icmp ult i32 {w}, {warp_pos}")
                    before = em.emit(f"select i1 {earlier}, {ty} {comb(before, t)}, {ty} {before}")
                    whole = comb(whole, t)
                excl[key] = comb(before, excl[key])
                group_total[key] = whole
        # results of this repetition, and the carry into the next
        for key, reps in lines.items():
            base = excl[key] if carry[key] is None else comb(carry[key], excl[key])
            for i, v in zip(reps.get(rep, []), local[key], strict=True):
                out[i] = em.round_to(comb(base, v), dt)
            carry[key] = group_total[key] if carry[key] is None else comb(carry[key], group_total[key])
    em.env[r.id] = out
    return True


__all__ = ["scan_blocked", "shfl"]
