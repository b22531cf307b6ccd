"""The consumers' key loop of the attention pipeline (`attention.py`) in its
serial and overlapped schedules: which schedule applies (`schedule`,
`TILEC_ATTN_SCHEDULE`, `pingpong`), the first product's issue
(`s_product`), the loops themselves (`serial`, `overlapped`, the optional
peel of the last key block: `peel_fits`; S of the next block issued before
the softmax, opt-in: `attention_rotated.s_ahead`, two blocks an iteration,
`_two_blocks`), and `unshare` (tile constants cloned for each reader). The
rotated loop is `attention_rotated`'s.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Layout, WgmmaAcc
from . import attention_vmask as vmask
from .attention_match import AttnPlan
from .attention_rotated import _reads, pin_wait, s_ahead
from .context import Fresh
from .pipeline import PRODUCER_REGS, _Build, role_registers
from .rewrite import substitute
from .switches import flag, mode


@dataclass(frozen=True, slots=True)
class Bufs:
    q: ir.Value
    k: ir.Value
    v: ir.Value
    full: ir.Value
    empty: ir.Value
    zero: ir.Value  # the i32 constant 0 (defined before the loop)
    C: int
    BN: int
    S: int
    base: ir.Value  # the ring's counter at the loop's start (`zero`, or carried from tile to tile)
    qs: ir.Value  # Q's stage: `zero`, or the tile's (`attention_tiles.q_slots`: Q double-buffered)


SCHEDULES = ("overlap", "serial")
# Named barriers of the warpgroups' turns: this one (warpgroup 0's) and the next
TURN_BARRIER = 2
# `TILEC_ATTN_PINGPONG` unset: "0" (the H200, 2026-12-03: within -2..+1.3 % of the
# default at D = 64, not faster; benchmarks/RESULTS.md)
PINGPONG_DEFAULT = "0"


def pingpong() -> str:
    """Whether two consumer warpgroups take turns to issue their products
    (FlashAttention-3's ping-pong: one's softmax under the other's products):
    `TILEC_ATTN_PINGPONG` "1" (on the overlapped loop, which then replaces the
    rotated one at D = 128) or "0". Turns on the rotated loop gave WRONG
    results and illegal addresses on the H200 (2026-12-03, right in llsim):
    the switch that built them ("rotated-unsafe") is gone, so no setting
    builds a kernel known to be wrong."""
    return mode("TILEC_ATTN_PINGPONG", PINGPONG_DEFAULT, ("0", "1"))


def schedule(loop: ir.For, p: AttnPlan) -> str:
    """How the consumers order their products: "serial" (wait for S, softmax,
    wait for P V), "overlap" (the default: S of the next block and P V of
    this one issued together; the next softmax runs while P V does:
    FlashAttention-3's intra-warpgroup pipelining). `TILEC_ATTN_SCHEDULE`
    picks one; overlap needs the loop to yield the second product as is,
    else serial applies.

    "pingpong" (overlap, the two consumer warpgroups taking turns to issue
    through named barriers, one tile a block) computed WRONG results on the
    H200 at D = 128, BN = 64 (2026-12-02; right in the simulator): refused
    (E0604). "pingpong-unsafe" built it, later with the P V wait after the
    spin and every turn consumed (right on the H200's probe shapes,
    2026-12-03): that kernel is `TILEC_ATTN_PINGPONG=1 TILEC_ATTN_PERSISTENT=0`'s
    byte for byte (the turns, `pingpong()`, on the one-tile-a-block loop), so
    the name is gone and refused (E0604) with that spelling as its help."""
    want = os.environ.get("TILEC_ATTN_SCHEDULE", "overlap")
    if want not in SCHEDULES:
        from tilelang.backend.codegen.core import CodegenError
        from tilelang.diagnostics.codes.codegen import GPU_SCHEDULE_REFUSED
        from tilelang.diagnostics.model import Diagnostic

        why = ("it computes wrong results on the H200 (two consumer warpgroups taking turns through "
               "named barriers; benchmarks/RESULTS.md, 2026-12-02)" if want == "pingpong"
               else "it is no longer a schedule: its kernel is the overlapped one with the warpgroups' turns, "
               "one tile a block" if want == "pingpong-unsafe"
               else "it is not one the attention pipeline knows")
        helps = ("unset `TILEC_ATTN_SCHEDULE` and set `TILEC_ATTN_PINGPONG=1 TILEC_ATTN_PERSISTENT=0` (the same "
                 "kernel); `TILEC_ATTN_PINGPONG=1` alone takes the turns on the persistent walk"
                 if want == "pingpong-unsafe" else
                 "unset `TILEC_ATTN_SCHEDULE` (the default, `overlap`, is the fastest correct schedule) "
                 "or set it to `serial`")
        raise CodegenError(
            Diagnostic.error(GPU_SCHEDULE_REFUSED, f"attention schedule `{want}` refused: {why}")
            .primary(loop.span, f"`TILEC_ATTN_SCHEDULE={want}` asked for it for this loop")
            .with_help(helps)
        )
    ys = loop.body.ops[-1]
    # overlap holds a block's stage while it waits for the next one's: a ring of 2 deadlocks (llsim)
    if want != "serial" and (p.stages < 3 or not any(v is p.o_dot.result for v in ys.values)):  # type: ignore[union-attr]
        return "serial"
    return want


def s_product(b: _Build, p: AttnPlan, bufs: Bufs, stage: ir.Value, fresh: Fresh,
               layouts: dict[int, Layout], issue: bool = True) -> tuple[ir.Value, g.Wgmma]:
    """S = Q K[stage]^T (not waited for): its raw result and the op, issued
    here unless `issue` is False (the caller issues it with another)."""
    shape = p.s_dot.result.shape
    raw, undef = fresh.value(DType.F32, shape, "s"), fresh.value(DType.F32, shape, "s0")
    no = fresh.value(DType.BOOL, (), "no_acc")
    layouts[raw.id] = layouts[undef.id] = WgmmaAcc(bufs.C, 64, bufs.BN)
    op = g.Wgmma(raw, bufs.q, bufs.k, stage, undef, True, p.k_kmajor, no, p.s_dot.span, bufs.qs)
    b.ops += [g.Undef(undef, p.s_dot.span), ir.Const(no, False)]
    if issue:
        b.ops.append(op)
    return raw, op


def serial(loop: ir.For, p: AttnPlan, cast: ir.Cast, chained: set[int], bufs: Bufs, fresh: Fresh,
            layouts: dict[int, Layout]) -> tuple[ir.For, list[object], tuple[list[object], dict[int, ir.Value], ir.Value]]:
    """Each iteration: wait for its stage, S, wait, the body, P V, wait, release."""
    E = ir.ElemOp
    span = loop.span
    c_it = fresh.value(DType.I32, (), "it")
    cb = _Build(fresh)
    stage, phase = cb.ring(c_it, bufs.S)
    cb.ops.append(g.BarrierWait(bufs.full, stage, phase, span))
    for op in loop.body.ops:
        if id(op) in chained:
            continue
        if op is p.s_dot:
            raw, _ = s_product(cb, p, bufs, stage, fresh, layouts)
            cb.ops.append(g.WgmmaWait((op.result,), (raw,), 0, op.span))
            continue
        if op is p.o_dot:
            o_raw = fresh.value(DType.F32, op.result.shape, "o")
            cb.ops += vmask.zero(p.vmask, bufs.v, stage, {}, 128 * bufs.C)
            cb.ops += [g.WgmmaRegA(o_raw, cast.x, bufs.v, stage, op.acc, p.v_kmajor, None, op.span, cast.result.dtype),
                       g.WgmmaWait((op.result,), (o_raw,), 0, op.span),
                       g.BarrierArrive(bufs.empty, stage, None, span)]
            continue
        if isinstance(op, ir.Yield):
            cb.ops.append(ir.Yield((*op.values, cb.elem(E.ADD, c_it, cb.const(1)))))
            continue
        cb.ops.append(op)
    c_loop = ir.For((*loop.results, fresh.value(DType.I32, (), "trips")), loop.lower, loop.upper, loop.step,
                    (*loop.inits, bufs.base), ir.Region((*loop.body.args, c_it), tuple(unshare(cb.ops, fresh))),
                    span)  # type: ignore[arg-type]
    return c_loop, [], ([], {}, c_loop.results[-1])


def overlapped(loop: ir.For, p: AttnPlan, cast: ir.Cast, chained: set[int], bufs: Bufs, fresh: Fresh,
                layouts: dict[int, Layout], pingpong: bool, before: list[object]
                ) -> tuple[ir.For, list[object], tuple[list[object], dict[int, ir.Value], ir.Value]]:
    """The loop software-pipelined (FlashAttention-3): S of block j arrives
    with the iteration (the prologue computes the first); the body runs on
    it while the previous P V is still in flight, waiting for that product
    just before the accumulator is first read (and then releasing its stage);
    where the body multiplies P V, the consumers issue S of block j + 1 and
    P V of block j, then wait for S only. The last block's iteration is
    peeled off after the loop (P V alone) where the registers allow a second
    copy of the body (`peel_fits`; opt-in, `TILEC_ATTN_PEEL=1`): no product is wasted and Q is free (the
    persistent walk's next Q copy starts) one block before the tile ends;
    otherwise the last iteration issues S of its own block again (its stage
    is still held: no branch around the tensor cores). With `pingpong` the
    two warpgroups take turns at that issue (never peeled).

    An accumulator that starts at zero is never materialised: the first P V
    ignores it (`use_acc`), so no instruction writes those registers while
    a product may be in flight (ptxas would serialise every wgmma); the loop
    result is that zero when the loop runs no iteration. The first rescale
    (`acc * alpha` of zeros) is then skipped, a difference only for a
    non-finite alpha."""
    E = ir.ElemOp
    span = loop.span
    ys = loop.body.ops[-1]
    assert isinstance(ys, ir.Yield)
    pos = next(i for i, v in enumerate(ys.values) if v is p.o_dot.result)
    acc_arg = loop.body.args[1 + pos]
    s_shape = p.s_dot.result.shape
    # prologue: S of the first block when the loop runs at all
    pre: list[object] = []
    ran = fresh.value(DType.BOOL, (), "ran")
    pre.append(ir.Elementwise(ran, E.LT, (loop.lower, loop.upper)))
    rb = _Build(fresh)
    st0, ph0 = (bufs.zero, bufs.zero) if bufs.base is bufs.zero else rb.ring(bufs.base, bufs.S)
    pre += rb.ops
    tb = _Build(fresh)
    tb.ops.append(g.BarrierWait(bufs.full, st0, ph0, span))
    raw0, _ = s_product(tb, p, bufs, st0, fresh, layouts)
    s0w = fresh.value(DType.F32, s_shape, "s")
    tb.ops += [g.WgmmaWait((s0w,), (raw0,), 0, span), ir.Yield((s0w,))]
    s0u = fresh.value(DType.F32, s_shape, "s")
    s_init = fresh.value(DType.F32, s_shape, "s")
    pre.append(ir.If((s_init,), ran, ir.Region((), tuple(tb.ops)),  # type: ignore[arg-type]
                     ir.Region((), (g.Undef(s0u, span), ir.Yield((s0u,)))), span))  # type: ignore[arg-type]
    init = loop.inits[pos]
    zdef = next((op for op in before if isinstance(op, ir.Const) and op.result is init), None)
    zero_acc = zdef is not None and float(zdef.value) == 0.0 and str(float(zdef.value)) == "0.0"  # type: ignore[attr-defined]
    # ... and the product's accumulator operand is then zero too: the carried
    # value itself or a multiple of it (the rescale), nothing added to it
    rescale = next((op for op in loop.body.ops if p.o_dot.acc in g.results(op)), None)
    zero_acc = zero_acc and (p.o_dot.acc is acc_arg or (
        isinstance(rescale, ir.Elementwise) and rescale.op is E.MUL and acc_arg in rescale.operands))
    inits = list(loop.inits)
    if zero_acc:
        inits[pos] = fresh.value(init.dtype, init.shape, init.hint)
        pre.append(g.Undef(inits[pos], span))
    # the loop; without pingpong its last iteration is peeled off after it
    # (P V only: no S of a next block), so the loop needs no dummy product
    # and the consumers are done with Q one iteration before the tile ends
    peel = not pingpong and peel_fits(p, bufs.C)  # opt-in: TILEC_ATTN_PEEL=1
    ahead = not pingpong and not peel and s_ahead(p, bufs.C)  # opt-in: TILEC_ATTN_SAHEAD=1
    c_it = fresh.value(DType.I32, (), "it")
    s_cur = fresh.value(DType.F32, s_shape, "s")
    if ahead:  # S crosses the back edge as a product's registers (`build`): the loop's S in the product's layout
        for v in (s0w, s0u, s_init, s_cur):
            layouts[v.id] = WgmmaAcc(bufs.C, 64, bufs.BN)

    def build(last: bool) -> tuple[list[object], ir.Value | None]:
        """One iteration: S of this block is `s_cur`; `last`: the peeled one."""
        cb = _Build(fresh)
        stage, phase = cb.ring(c_it, bufs.S)
        mapping: dict[int, ir.Value] = {p.s_dot.result.id: s_cur}
        waited = False
        s_next: ir.Value | None = None
        next_stage: tuple[ir.Value, ir.Value] | None = None
        raw_ahead: ir.Value | None = None  # `ahead`: S of the next block, issued before this block's softmax

        def wait_next() -> tuple[ir.Value, ir.Value]:
            """The next block's stage (this one's again on the last iteration),
            waited for once its K and V have landed."""
            nonlocal next_stage
            if next_stage is None:
                if last:  # held already: the spin passes at once
                    sel_st, sel_ph = stage, phase
                else:
                    nit = cb.elem(E.ADD, c_it, cb.const(1))
                    sel_st, sel_ph = cb.ring(nit, bufs.S)
                    if not peel:
                        after = cb.elem(E.ADD, loop.body.args[0], loop.step)
                        more = cb.elem(E.LT, after, loop.upper, dtype=DType.BOOL, hint="more")
                        nst, nph = sel_st, sel_ph
                        sel_st, sel_ph = fresh.value(DType.I32, (), "nstage"), fresh.value(DType.I32, (), "nphase")
                        cb.ops += [ir.Elementwise(sel_st, E.WHERE, (more, nst, stage)),
                                   ir.Elementwise(sel_ph, E.WHERE, (more, nph, phase))]
                cb.ops.append(g.BarrierWait(bufs.full, sel_st, sel_ph, span, () if last else pin_wait(cb.ops, p.BM)))
                next_stage = (sel_st, sel_ph)
            return next_stage

        def wait_acc() -> None:
            nonlocal waited
            # The wait for the previous P V comes after a spin on an mbarrier
            # (a loop, so a basic block of its own): ptxas's scheduler hoists a
            # `wgmma.wait_group` to the top of its basic block, and placed among
            # the body's element-wise ops it would wait before the softmax that
            # is meant to run under that product (measured in the SASS: the wait
            # landed before the row max, all 64 exp2 after it).
            if raw_ahead is not None:  # the top spun on the next stage already: this spin on the same (seen full,
                # it passes at its first try) only ends the softmax's basic block, for the same reason
                st, ph = wait_next()
                cb.ops.append(g.BarrierWait(bufs.full, st, ph, span))
            wait_next()
            accw = fresh.value(acc_arg.dtype, acc_arg.shape, acc_arg.hint)
            # (`ahead`: the next block's S too, issued behind that P V at the top and done by now; its registers
            # are taken as they are by the next iteration's wait, see `build`)
            cb.ops.append(g.WgmmaWait((accw,), (acc_arg,), 0, span))
            # the previous block's stage is free: its S and P V are done
            prev = cb.elem(E.REM, cb.elem(E.ADD, c_it, cb.const(bufs.S - 1)), cb.const(bufs.S))
            started = cb.elem(E.GT, c_it, bufs.base, dtype=DType.BOOL)
            cb.ops.append(g.BarrierArrive(bufs.empty, prev, started, span))
            mapping[acc_arg.id] = accw
            waited = True

        if ahead and not last:  # S of the next block (this one's again on the last iteration) before the softmax.
            # This block's S crossed the back edge as the wgmma's own registers, complete since the previous
            # iteration's `wait_group 0`: the wait here (only P V of the previous block may be in flight) binds
            # them. Waited for in the iteration that issued it instead, the S tile rebound there was the loop
            # argument's registers, live through the softmax beside the new S: LLVM copied the new S into them
            # before the wait (the asm's tied operands) and ptxas 13.0 serialised every wgmma (C7514).
            s_w = fresh.value(DType.F32, s_shape, "s")
            cb.ops.append(g.WgmmaWait((s_w,), (s_cur,), 1, span))
            mapping[p.s_dot.result.id] = s_w
            sel_st, _ = wait_next()
            raw_ahead, _ = s_product(cb, p, bufs, sel_st, fresh, layouts)
            s_next = raw_ahead
        for op in loop.body.ops:
            if id(op) in chained or op is p.s_dot:
                continue
            if not waited and (op is p.o_dot or _reads(op, acc_arg)):
                wait_acc()
            if op is p.o_dot and raw_ahead is not None:  # P V alone (S of the next block waited for with P V's)
                cb.ops += vmask.zero(p.vmask, bufs.v, stage, mapping, 128 * bufs.C)
                o_raw = fresh.value(DType.F32, op.result.shape, "o")
                use = cb.elem(E.GT, c_it, bufs.base, dtype=DType.BOOL, hint="use_acc") if zero_acc else None
                cb.ops.append(g.WgmmaRegA(o_raw, mapping.get(cast.x.id, cast.x), bufs.v, stage,
                                          mapping.get(op.acc.id, op.acc), p.v_kmajor, use, op.span, cast.result.dtype))
                mapping[op.result.id] = o_raw
                continue
            if op is p.o_dot:
                cb.ops += vmask.zero(p.vmask, bufs.v, stage, mapping, 128 * bufs.C)  # this block's V, read below
                sel_st, _ = wait_next()
                if pingpong:  # this warpgroup's turn to issue, after the spin on its stage
                    cb.ops.append(g.WarpgroupTurn("wait", TURN_BARRIER, span))
                s_op = None
                if not last:
                    raw, s_op = s_product(cb, p, bufs, sel_st, fresh, layouts, issue=False)
                o_raw = fresh.value(DType.F32, op.result.shape, "o")
                a = mapping.get(cast.x.id, cast.x)
                acc = mapping.get(op.acc.id, op.acc)
                # one statement issues both groups: S first (waited for below), P V second
                use = cb.elem(E.GT, c_it, bufs.base, dtype=DType.BOOL, hint="use_acc") if zero_acc else None
                cb.ops.append(g.WgmmaRegA(o_raw, a, bufs.v, stage, acc, p.v_kmajor, use, op.span, cast.result.dtype,
                                          s_op))
                if pingpong:
                    cb.ops.append(g.WarpgroupTurn("pass", TURN_BARRIER, span))
                if not last:
                    s_next = fresh.value(DType.F32, s_shape, "s")
                    cb.ops.append(g.WgmmaWait((s_next,), (raw,), 1, span))
                mapping[op.result.id] = o_raw
                continue
            if isinstance(op, ir.Yield):
                vals = tuple(mapping.get(v.id, v) for v in op.values)
                nxt = cb.elem(E.ADD, c_it, cb.const(1))
                cb.ops.append(ir.Yield((*vals, nxt) if last else (*vals, nxt, s_next)))  # type: ignore[arg-type]
                continue
            cb.ops.append(substitute(op, mapping))
        return cb.ops, s_next

    loop_ops, _ = build(False)
    upper = loop.upper
    if peel:  # the loop runs all blocks but the last
        upper = fresh.value(DType.I32, (), "upper")
        pre.append(ir.Elementwise(upper, E.SUB, (loop.upper, loop.step)))
    c_results = tuple(fresh.value(v.dtype, v.shape, v.hint) for v in loop.results)
    trips = fresh.value(DType.I32, (), "trips")
    s_last = fresh.value(DType.F32, s_shape, "s")
    step = loop.step
    if ahead:
        layouts[s_last.id] = layouts[s_cur.id]
        if unroll_ahead():  # two blocks an iteration: the S tiles alternate between two register sets
            loop_ops, step = _two_blocks(loop, loop_ops, build(False)[0], c_it, s_cur, pos, fresh, layouts, pre, span)
    c_loop = ir.For((*c_results, trips, s_last), loop.lower, upper, step, (*inits, bufs.base, s_init),
                    ir.Region((*loop.body.args, c_it, s_cur), tuple(unshare(loop_ops, fresh))), span)  # type: ignore[arg-type]
    zero: list[object] = []  # the accumulator's value when the loop never ran
    if zero_acc:
        z = fresh.value(init.dtype, init.shape, "acc")
        zero.append(ir.Const(z, zdef.value))  # type: ignore[union-attr]
    else:
        z = inits[pos]
    if not peel:
        # after the loop: the last P V (the zero it started from when it
        # never ran), waited for unconditionally (nothing is in flight when
        # the loop never ran), the zeros selected after the wait: as a
        # branch's value beside registers a wgmma wrote, ptxas 13.0 spilled
        # 26 of the accumulator's registers at 128 x 128, D = 128 (208 B,
        # reloaded in the epilogue) and injected a wait (C7517)
        w = fresh.value(init.dtype, init.shape, "acc")
        back = {r.id: c for r, c in zip(loop.results, c_results, strict=True)}
        back[loop.results[pos].id] = w
        post: list[object] = [g.WgmmaWait((w,), (c_results[pos],), 0, span)]
        if zero_acc:
            ran_t, acc_f = fresh.value(DType.BOOL, init.shape), fresh.value(init.dtype, init.shape, "acc")
            post += [*zero, ir.Broadcast(ran_t, ran), ir.Elementwise(acc_f, E.WHERE, (ran_t, w, z))]
            back[loop.results[pos].id] = acc_f
        return c_loop, pre, (post, back, trips)
    # the peeled last block, when there is one: its iteration's values are
    # the loop's results (S included: the loop's last S, or the prologue's)
    from .attention_tiles import clone

    peel_ops, _ = build(True)
    pb = _Build(fresh)
    n = pb.elem(E.SUB, trips, bufs.base)
    j_last = pb.elem(E.ADD, loop.lower, pb.elem(E.MUL, n, loop.step), hint="j")
    remap: dict[int, ir.Value] = {loop.body.args[0].id: j_last, c_it.id: trips, s_cur.id: s_last}
    for a, r in zip(loop.body.args[1:], c_results, strict=True):
        remap[a.id] = r
    body = clone(peel_ops, fresh, remap)
    ys_peel = body[-1]
    assert isinstance(ys_peel, ir.Yield)
    then = ir.Region((), (*pb.ops, *unshare(body[:-1], fresh), ys_peel))  # type: ignore[arg-type]
    # when the loop never ran: its inits, the zero accumulator selected after
    # the join (zeros as a branch's value beside registers a wgmma wrote make
    # ptxas serialise every wgmma of the kernel: C7512, measured in ptxas 13.0)
    else_ = ir.Region((), (ir.Yield((*inits[:len(loop.results)], bufs.base)),))  # type: ignore[arg-type]
    finals = tuple(fresh.value(v.dtype, v.shape, v.hint) for v in loop.results)
    ring = fresh.value(DType.I32, (), "trips")
    # the last P V is waited for after the join (a wait inside the branch,
    # beside the zeros, also cost the C7512 above)
    w = fresh.value(init.dtype, init.shape, "acc")
    post: list[object] = [ir.If((*finals, ring), ran, then, else_, span), g.WgmmaWait((w,), (finals[pos],), 0, span)]
    back = {r.id: f for r, f in zip(loop.results, finals, strict=True)}
    back[loop.results[pos].id] = w
    if zero_acc:
        ran_t, acc_f = fresh.value(DType.BOOL, init.shape), fresh.value(init.dtype, init.shape, "acc")
        post += [*zero, ir.Broadcast(ran_t, ran), ir.Elementwise(acc_f, E.WHERE, (ran_t, w, z))]
        back[loop.results[pos].id] = acc_f
    return c_loop, pre, (post, back, ring)


# `TILEC_ATTN_SAHEAD_UNROLL` unset: "1" (with `TILEC_ATTN_SAHEAD=1`, the loop runs two key blocks an iteration)
SAHEAD_UNROLL_DEFAULT = "1"


def unroll_ahead() -> bool:
    """Whether the loop with S ahead runs two key blocks an iteration (`TILEC_ATTN_SAHEAD_UNROLL` "1" / "0"):
    one block an iteration, the S tile carried over the back edge and the one the softmax reads are live
    together, so ptxas copies one into the other's registers each block (128 x 64, D = 64: 32 MOVs, 42
    more registers); two, each half's S has its own registers."""
    return mode("TILEC_ATTN_SAHEAD_UNROLL", SAHEAD_UNROLL_DEFAULT, ("0", "1")) == "1"


def _two_blocks(loop: ir.For, first: list[object], again: list[object], c_it: ir.Value, s_cur: ir.Value, pos: int,
                fresh: Fresh, layouts: dict[int, Layout], pre: list[object], span: object
                ) -> tuple[list[object], ir.Value]:
    """The body of the loop with S ahead over two key blocks (`first`: one block's ops, ending in its Yield;
    `again`: the same built a second time, run on `first`'s yield from the next block where there is one) and
    the loop's step (two blocks'). Where the second block is past the tile's last, its branch yields the first
    block's values, with its pending P V waited for there (no register of a product in flight is copied)."""
    from .attention_tiles import clone

    E = ir.ElemOp
    ys = first[-1]
    assert isinstance(ys, ir.Yield)
    n = len(loop.body.args) - 1  # the user's loop-carried values, then the ring's counter and S
    b = _Build(fresh)
    iv2 = b.elem(E.ADD, loop.body.args[0], loop.step, hint="j")
    more = b.elem(E.LT, iv2, loop.upper, dtype=DType.BOOL, hint="more")
    remap: dict[int, ir.Value] = {loop.body.args[0].id: iv2, c_it.id: ys.values[n], s_cur.id: ys.values[n + 1],
                                  **{a.id: v for a, v in zip(loop.body.args[1:], ys.values[:n], strict=True)}}
    seeded = set(remap)
    second = clone(again, fresh, remap)
    layouts.update({remap[k].id: lay for k, lay in list(layouts.items()) if k in remap and k not in seeded})
    acc = ys.values[pos]
    accw = fresh.value(acc.dtype, acc.shape, acc.hint)
    alone = list(ys.values)
    alone[pos] = accw
    outs = tuple(fresh.value(v.dtype, v.shape, v.hint) for v in ys.values)
    layouts[outs[n + 1].id] = layouts[s_cur.id]
    pair = ir.If(outs, more, ir.Region((), tuple(second)),  # type: ignore[arg-type]
                 ir.Region((), (g.WgmmaWait((accw,), (acc,), 0, span), ir.Yield(tuple(alone)))), span)  # type: ignore[arg-type]
    step = fresh.value(DType.I32, (), "step")
    pre.append(ir.Elementwise(step, E.ADD, (loop.step, loop.step)))
    return [*first[:-1], *b.ops, pair, ir.Yield(outs)], step


# Registers a consumer thread keeps for everything but the body's S, O and P
# fragments (addresses, row statistics, the walk's state, temporaries) when the
# last iteration is peeled off: with ptxas 13.0, past this the peeled kernel
# serialises every wgmma (C7512) and spills, e.g. 128 x 128 blocks at D = 128
# (S 64 + O 64 + P 32 = 160 registers of 232); 128 x 128 at D = 64 (128) and
# 128 x 64 at D = 128 (112) compile with no spill.
PEEL_HEADROOM = 104
# `TILEC_ATTN_PEEL` unset: "0" until the H200 has timed the peel (attention_prefill_device.sh PEEL=1).
PEEL_DEFAULT = "0"


def peel_fits(p: AttnPlan, C: int) -> bool:
    """Whether the loop's last iteration can be peeled off (a second copy of
    the body after the loop) within the consumers' registers: per thread, S
    ([64, BN] f32 over a warpgroup's 128 threads), O ([64, Dv] f32) and P
    (f16/bf16 pairs). `TILEC_ATTN_PEEL=1`/`0` forces it on/off where it
    fits; unset, `PEEL_DEFAULT` (off until timed on the GPU: correct in the
    simulator and ptxas-clean)."""
    if not flag("TILEC_ATTN_PEEL", PEEL_DEFAULT):
        return False
    return p.BN // 2 + p.o_dot.result.shape[1] // 2 + p.BN // 4 <= role_registers(C, PRODUCER_REGS) - PEEL_HEADROOM


def unshare(ops: list[object], fresh: Fresh) -> list[object]:
    """`ops` with each `arange` or tile constant that several ops read cloned
    before each reader (common-subexpression elimination shares `arange(64)`
    between a row index and a column index; each must live its own way)."""
    count: dict[int, int] = {}
    for op in g.walk(ir.Region((), tuple(ops))):  # type: ignore[arg-type]
        for v in g.operands(op):
            count[v.id] = count.get(v.id, 0) + 1
    shared: dict[int, object] = {}

    def region(xs: list[object]) -> list[object]:
        out: list[object] = []
        for op in xs:
            rs = g.results(op)
            if isinstance(op, ir.Arange | ir.Const) and rs[0].shape and count.get(rs[0].id, 0) > 1:
                shared[rs[0].id] = op
            mapping: dict[int, ir.Value] = {}
            for v in g.operands(op):
                src = shared.get(v.id)
                if src is not None and v.id not in mapping:
                    nv = fresh.value(v.dtype, v.shape, v.hint)
                    out.append(dataclasses.replace(src, result=nv))  # type: ignore[type-var]
                    mapping[v.id] = nv
            op = substitute(op, mapping)
            subs = g.regions(op)
            if subs:
                from .rewrite import with_regions

                op = with_regions(op, lambda r: ir.Region(r.args, tuple(region(list(r.ops)))))  # type: ignore[arg-type]
            out.append(op)
        return out

    return region(ops)



__all__ = ["PEEL_DEFAULT", "PEEL_HEADROOM", "PINGPONG_DEFAULT", "SCHEDULES", "TURN_BARRIER", "Bufs", "overlapped",
           "peel_fits", "pingpong", "s_product", "schedule", "serial", "unshare"]
