"""Pass `attention`: the flash-attention loop on Hopper (sm_90a) tensor cores.

The loop a user writes for attention (and `std::attention` is),

    q = x.load(..)                                    // [BM, D], before the loop
    for j in lo..hi {                                 // carries (m, l, acc, ...)
        s = mma(q, k.load(..).transpose(), zeros) ...  // [BM, BN] scores
        <element-wise ops, masks (where, arange, if), row reductions>
        acc = mma(p as f16, v.load(..), <acc, rescaled>)
    }
    <epilogue: element-wise ops, stores>

becomes a warp-specialised pipeline, with no hard-coded kernel: every op of
the body runs as written, in registers, on the warpgroup-MMA accumulator
layout (`layouts.AccTile`):

- role `consumer` (C = BM / 64 warpgroups, warps 0 .. 4C - 1, each owning
  64 query rows): waits for Q (copied once by TMA), then per iteration waits
  for its ring stage, computes S = Q K^T with `wgmma` from shared memory (K
  K-major through the descriptor: no transpose), runs the body's ops on S's
  registers (a row reduction folds a thread's registers, then its quad:
  two shuffles; broadcasts of row and column vectors move nothing), feeds P
  to the second `wgmma` from registers (`WgmmaRegA`: the accumulator
  fragment is the A fragment), releases the stage, and after the loop runs
  the epilogue in the same layout;
- role `producer` (one warp's thread): copies Q, then for each iteration K
  and V tiles by TMA into a ring of `stages` buffers with full/empty
  mbarriers. TMA's zero fill outside the tensor (3-D descriptors for
  [heads, seq, D] tensors) is the interpreter's rule for loads past the
  edge, so edge blocks compute what the interpreter does; the user's own
  masks (if any) run as written.

Which loops it takes: `attention_match.match` (else the generic path).
The parts, one module each: `attention_match` (the loop it takes, `AttnPlan`),
`attention_loop` (the consumers' serial and overlapped key loops),
`attention_rotated`, `attention_chain`, `attention_spec` (the other loop forms),
`attention_layout` (every consumer tile in the accumulator layout),
`attention_epilogue`, `attention_zeros`, `attention_vmask`, `attention_tiles`
(the persistent walk); this module builds the two roles from them.
"""

from __future__ import annotations

import dataclasses
import os

from tilelang.backend import env_switch, split_form
from tilelang.backend.env_switch import flag
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Barriers, Shared
from . import attention_advice as advice
from . import attention_chain as chain
from . import attention_csplit as csplit
from . import attention_epilogue as epi
from . import attention_loop as loops
from . import attention_qsplit as qsplit
from . import attention_qx as qxm
from . import attention_rotated as rot
from . import attention_softmax as softmax
from . import attention_spec as spec
from . import attention_split as split
from . import attention_tail as tails
from . import attention_tiles as tiles
from . import attention_xrot as xrot
from .attention_layout import Classes, assign, classify, moving_op
from .attention_match import (
    PATH,
    AttnPlan,
    Tma,
    describe,
    last_block_mode,
    last_regions,
    match,
    region_bad,
    scalar_reads,
)
from .attention_reload import reload
from .context import Fresh, PassContext
from .pipeline import PRODUCER_REGS, SMEM_LIMIT, _Build, _slice, role_registers
from .rewrite import substitute

# ---------------------------------------------------------------- the rewrite
# `TILEC_ATTN_PRODUCER_REGS` (unset: "auto"): the producer warp's register budget (setmaxnreg) in every attention
# kernel, "24" or "40"; the consumers get what it gives back (`role_registers`: 232 at 40 beside two consumer
# warpgroups, 240 at 24, FlashAttention-3's budgets). "auto": 40, or 24 at three consumer warpgroups
# (`TILEC_ATTN_PRODUCER3`), in a split kernel of D = 128 (`attention_split.producer_regs`) and where the value
# rows' width is in `attention_tiles.BOUNDARY_D` and 24 gives the consumers more than 40 does (two consumer
# warpgroups; the H100, call 24: with the fast walk and Q released early, +0.8..+2.1 % at D = 128 non-causal).
PRODUCER_REGS_DEFAULT = "auto"


def producer_budget(auto: int) -> int:
    """The producer's registers: `auto` (this kernel's default) unless `TILEC_ATTN_PRODUCER_REGS` names one."""
    want = os.environ.get("TILEC_ATTN_PRODUCER_REGS", PRODUCER_REGS_DEFAULT)
    if want == "auto":
        return auto
    if want not in ("24", "40"):  # (32 gives the consumers no more than 40 does: `role_registers` rounds to 8)
        raise env_switch.SwitchError("TILEC_ATTN_PRODUCER_REGS", want, "auto, 24 or 40")
    return int(want)


def attention(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    if not ctx.has_wgmma or os.environ.get("TILEC_ATTN_SCHEDULE") == "generic":  # (others: `loops.schedule`, E0604)
        return k  # "generic": leave attention loops to the generic path
    before = list(ctx.notes)
    p = match(k, ctx)
    if p is None:
        k2 = reload(k)  # a tile read before the loop and after it: loaded again after it (`attention_reload`)
        if k2 is None:
            return k
        refused = list(ctx.notes)
        ctx.notes[:] = before
        p = match(k2, ctx)
        if p is None:
            ctx.notes[:] = refused  # (the kernel's own refusal)
            return k
        k = k2
    E = ir.ElemOp
    fresh = Fresh(k.next_id)
    layouts = dict(k.layouts)
    ops = list(k.body.ops)
    i = ops.index(p.loop)
    # an epilogue ending in `if last_block(axis) { .. }` (`TILEC_ATTN_LAST_BLOCK`): the consumers run the region
    # after the tile's stores, each tile once (single tiles: a walk of pairs runs an odd middle tile twice, which
    # would arrive twice), and none of the forms that move or cut the epilogue (O through shared memory, the
    # chained variant, the key split and its forms, the halves, the causal tail, the pingpong turns)
    regions = last_regions(ops[i + 1:])
    region = bool(regions)
    # "join" (`attention_match.last_block_mode`): the region leaves the consumers' epilogue for the end of the
    # kernel, after the roles (`joined`: its ops and the scalars and tiles it reads, cloned), one tile a CTA
    joined: list[object] = []
    # (the CTA's warps a power of two: the generic layouts' thread coordinates are masks; 12 warps, two consumer
    # warpgroups and the producer's, gave two warps one coordinate in llsim: the region stays in the consumers)
    warps = 4 * (p.BM // 64) + 4
    if region and last_block_mode() == "join":
        joined = (_joined(ops, i, regions, fresh) or []) if warps & (warps - 1) == 0 else []
        ops = [op for op in ops if id(op) not in regions] if joined else ops
        bad = None if joined else next((b for op in ops[i + 1:] if id(op) in regions and isinstance(op, ir.If)
                                        for b in [region_bad(op.then, p.BM)] if b is not None), None)
        if bad is not None:  # (the matcher left the region to this: "join" takes any region it can move)
            ctx.refuse(PATH, getattr(bad, "span", p.loop.span), f"{describe(bad)} in the `last_block` region after "
                       "the loop, which the consumers run in their layout here (it reads the loop's results, or the "
                       f"CTA's {warps} warps are not a power of two)")
            return k
    ost, p = epi.plan(ops[i + 1:], k, ctx, p, SMEM_LIMIT - 2048) if not region else (None, p)
    p = dataclasses.replace(p, short=chain.short(p, ctx) and not region)
    S, BM, BN = p.stages, p.BM, p.BN
    C = BM // 64
    W = 4 * C
    loop = p.loop
    span = loop.span
    dt = p.s_dot.a.dtype

    def buf(t: Tma, stages: int, name: str) -> tuple[ir.Value, g.TmaDesc]:
        b = fresh.value(dt, (stages, t.rows, t.cols), name)
        layouts[b.id] = Shared(128, "row")
        box = (1, min(t.rows, 256), 64) if t.rank == 3 else (min(t.rows, 256), 64)
        return b, g.TmaDesc(f"{t.load.tensor}.tma_{name}", t.load.tensor, box, 128, t.load.span)

    schedule = loops.schedule(loop, p)
    kv = tiles.kv_axes(k, [*p.k.load.offsets, *p.v.load.offsets])
    persist = kv is not None and tiles.enabled(k) and not joined
    turns = schedule == "overlap" and C == 2 and loops.pingpong() != "0" and not region
    # the walk's last round split along the keys (`attention_split`): the loop's bounds become the tile's piece's
    acc_regs = BM * p.o_dot.result.shape[1] // (W * 32)  # a consumer thread's accumulator registers
    rotating = schedule == "overlap" and rot.enabled(p)
    # the split a form of its own, picked at launch (`split_form`)
    forms = persist and split_form.enabled() and not region
    # the causal long keys' tail variant (`attention_tail`): the kernel without the split's code, with the tail
    tailed = persist and ctx.fact(split.carrier(k)).split_walk == tails.KIND
    # the once variant (`attention_tiles.ONCE_KIND`): the kernel without the split's code, its walk's pairs of an
    # odd number of query blocks each tile once (launched only there: `attention_split.tail_request`)
    onced = persist and ctx.fact(split.carrier(k)).split_walk == tiles.ONCE_KIND
    proof = softmax.prove(loop, ops[:i], ops[i + 1:]) if persist and not turns and ost is None and not p.short \
        and schedule != "serial" and not tailed and not onced \
        and split.pieces() and split.fits(acc_regs, rotating, forms) and split.roomy(C) and not region \
        and chain.setting() != "1" else None
    # the chained short keys' variant with its last round split (`attention_csplit`, `TILEC_ATTN_CHAIN_SPLIT=1`)
    cproof = softmax.prove(loop, ops[:i], ops[i + 1:]) if persist and p.short and not turns and ost is None \
        and schedule == "overlap" and not tailed and not onced and split.pieces() and split.fits_narrow(acc_regs) \
        and split.roomy(C) and csplit.enabled() and p.qx is None else None
    # or as its 64-row halves (`attention_qsplit`, `TILEC_ATTN_CHAIN_HALVES=1`; the key split first where both are set)
    halves = persist and p.short and not turns and ost is None and schedule == "overlap" and not tailed \
        and not onced and C == 2 \
        and p.qx is None and p.vmask is None and cproof is None and qsplit.enabled()
    chained = {id(op) for t in (p.q, p.k, p.v) for op in t.chain} | {id(op) for op in (p.vmask.ops if p.vmask else ())}
    chained |= {id(op) for op in (p.qx.ops if p.qx else ())}  # Q computed after its wait (`attention_qx`)
    before = [op for op in ops[:i] if id(op) not in chained]
    written = {o.tensor for o in g.walk(k.body) if isinstance(o, ir.Store | ir.AtomicRMW)}
    reads = scalar_reads(before, written | {t.name for t in k.tensor_params if t.mutable})
    outside = [op for op in before if not any(v.shape for v in g.results(op)) or id(op) in reads]
    # the split form (the launch's walk splits: the runtime's fact) walks its pieces alone; the other form is
    # the kernel without the split, asking for the split form where a launch's walk splits (`request`)
    kind = ctx.fact(split.carrier(k)).split_walk if forms and proof is not None else ""  # "single" / "pairs"
    form = bool(kind)
    request = None
    if forms and proof is not None and not form:
        assert kv is not None
        request = split.form_request(k, kv, outside, (loop.lower, loop.upper))
        if request is not None or not split.fits(acc_regs, rotating):
            proof = None  # (no plan: the split in the kernel where it fits there, as without the forms)
    # (the walk's tail: never beside the split's code)
    n_tail = tails.rounds(tailed) if proof is None and not region else 0
    asks_tail = tails.asks(int(p.o_dot.result.shape[1]), p.short or tailed or form or onced, n_tail > 0)
    # (a grid whose every axis moves K/V, decode's shares: one tile a kv position, never pairs)
    asks_once = tiles.once_default() and not (tailed or form or onced) and kv is not None \
        and any(a not in kv for a in range(k.grid_rank))
    if request is None and persist and not region and (asks_tail or asks_once):
        assert kv is not None
        request = split.tail_request(k, kv, outside, (loop.lower, loop.upper), asks_tail, asks_once)
    marks = split.marks(loop, fresh) if proof is not None else None
    if marks is not None:
        loop = dataclasses.replace(loop, lower=marks.lower, upper=marks.upper)
        ops[i] = loop
        p = dataclasses.replace(p, loop=loop)
    # Q's buffers: 2 where the walk's next tile's Q may land during this tile (`TILEC_ATTN_QDOUBLE`)
    qn = tiles.q_slots(persist and ost is None, p.q.nbytes, p.k.nbytes + p.v.nbytes, S, SMEM_LIMIT - 2048,
                       xrot.enabled() and p.short, p.short)  # (the rotation: the chained short keys' variant only)
    qbuf, qdesc = buf(p.q, qn, "q")
    kbuf, kdesc = buf(p.k, S, "k")
    vbuf, vdesc = buf(p.v, S, "v")
    full = fresh.value(DType.I64, (S,), "full")
    empty = fresh.value(DType.I64, (S,), "empty")
    qbar = fresh.value(DType.I64, (qn,), "qbar")
    qempty = fresh.value(DType.I64, (qn,), "qempty")  # persistent: the consumers are done with Q
    for b in (full, empty, qbar, qempty):
        layouts[b.id] = Barriers()
    pre: list[object] = [g.SmemAlloc(qbuf, span=span), g.SmemAlloc(kbuf, span=span), g.SmemAlloc(vbuf, span=span),
                         g.BarrierAlloc(full, 1, span=span), g.BarrierAlloc(empty, W, span=span),
                         g.BarrierAlloc(qbar, 1, span=span)]
    if persist:
        pre.append(g.BarrierAlloc(qempty, W, span=span))
    ost, obuf = epi.buffer(ost, p, qbuf, vbuf, schedule == "serial", fresh, layouts, pre, span)
    late = ost is not None and ost.mode != "buf"  # Q (or the last K/V stage) released after O's store has read it
    # persistent: the ring's counter and the tile's number in this CTA, per role
    p_base, p_tn, c_base, c_tn = (fresh.value(DType.I32, (), h) for h in ("ring", "tile", "ring", "tile"))

    def copies(b: _Build, t: Tma, desc: g.TmaDesc, dst: ir.Value, stage: ir.Value, bar: ir.Value,
               mapping: dict[int, ir.Value]) -> None:
        offs = [mapping.get(x.id, x) for x in t.load.offsets]
        lead, row0, col0 = offs[:-2], offs[-2], offs[-1]
        for slab in range(t.slabs):
            c = col0 if slab == 0 else b.elem(E.ADD, col0, b.const(slab * 64))
            b.ops.append(g.TmaLoad(desc.name, (*lead, row0, c), dst, stage, slab * t.rows * 128, bar, t.load.span))

    # -- producer: Q once, then K and V of each iteration
    pb = _Build(fresh)
    zero_p = pb.const(0)
    q_st = zero_p  # Q's stage: tile n's is n % qn, its use (n / qn)'s parity
    if persist:  # the Q buffer is free once the consumers' last S of the tile before (qn tiles before) is done
        one = pb.const(1)
        if qn == 2:
            q_st = pb.elem(E.AND, p_tn, one)
            pb.ops.append(g.BarrierWait(qempty, q_st, pb.elem(E.XOR, pb.elem(E.AND, pb.elem(E.SHR, p_tn, one), one), one),
                                        span))
        else:
            pb.ops.append(g.BarrierWait(qempty, zero_p, pb.elem(E.XOR, pb.elem(E.AND, p_tn, one), one), span))
    pb.ops.append(g.BarrierExpect(qbar, q_st, p.q.nbytes, span))
    copies(pb, p.q, qdesc, qbuf, q_st, qbar, {})
    iv = loop.body.args[0]
    p_iv = fresh.value(iv.dtype, (), iv.hint)
    kv_first = tiles.q_after_first_kv(pb.ops, p_iv, loop.lower, loop.upper, fresh, span) \
        if persist and tiles.kv_first(schedule == "overlap" and rot.enabled(p) and not turns) else None
    lb = _Build(fresh)
    p_it = lb.i32("it")
    stage, phase = lb.ring(p_it, S)
    lb.ops.append(g.BarrierWait(empty, stage, lb.elem(E.XOR, phase, lb.const(1)), span))
    lb.ops.append(g.BarrierExpect(full, stage, p.k.nbytes + p.v.nbytes, span))
    mapping: dict[int, ir.Value] = {iv.id: p_iv}
    for op in _slice(loop.body, [*p.k.load.offsets, *p.v.load.offsets]):
        new = substitute(op, mapping)
        rs = g.results(op)
        nrs = [fresh.value(r.dtype, r.shape, r.hint) for r in rs]
        for r, nr in zip(rs, nrs, strict=True):
            mapping[r.id] = nr
        lb.ops.append(dataclasses.replace(new, result=nrs[0]))  # type: ignore[type-var]
    copies(lb, p.k, kdesc, kbuf, stage, full, mapping)
    copies(lb, p.v, vdesc, vbuf, stage, full, mapping)
    lb.ops += kv_first[0] if kv_first else []
    lb.ops.append(ir.Yield((lb.elem(E.ADD, p_it, lb.const(1)),)))
    pzero = fresh.value(DType.I32, (), "it0")
    p_loop = ir.For((fresh.value(DType.I32, (), "it"),), loop.lower, loop.upper, loop.step,
                    (p_base if persist else pzero,), ir.Region((p_iv, p_it), tuple(lb.ops)), span)  # type: ignore[arg-type]
    p_tile = [p_loop, *kv_first[1]] if kv_first else [*pb.ops, p_loop]  # persistent: one tile's
    if persist:  # (`TILEC_ATTN_STAMPS=1`: the producer's Q buffer free, its Q copy issued, its loop done)
        p_tile = tiles.stamped(p_tile, p_tn, [(len(p_tile), 4)] if kv_first else
                               [(next(i for i, op in enumerate(pb.ops) if isinstance(op, g.BarrierWait)) + 1, 2),
                                (len(pb.ops), 3), (len(p_tile), 4)], span)

    # -- consumers: the body as written, the products on the tensor cores
    moved = [op for op in before if any(v.shape for v in g.results(op))]
    zero_c = fresh.value(DType.I32, (), "q_stage")
    q_slot = fresh.value(DType.I32, (), "q_slot") if qn == 2 else zero_c  # this tile's Q stage (set per tile)
    cast = next(op for op in loop.body.ops if isinstance(op, ir.Cast) and op.result is p.o_dot.a)
    bufs = loops.Bufs(qbuf, kbuf, vbuf, full, empty, zero_c, C, BN, S, c_base if persist else zero_c, q_slot)
    wide = tiles.wide_boundary(int(p.o_dot.result.shape[1]), tailed or onced)  # the boundary's switches on (`BOUNDARY_D`)
    q_early = persist and not turns and not late and tiles.q_early(p.short or wide)  # Q released in the rotated loop's last iteration
    epilogue = loops.unshare(epi.reciprocals([op for op in ops[i + 1:] if not isinstance(op, ir.Yield)], fresh), fresh)
    epilogue0, moved0 = epilogue, moved  # (the chained variant's split pieces build their own tile from these)
    whole = dataclasses.replace(loop, lower=marks.lower0, upper=marks.upper0) if marks is not None else loop
    # (not beside three consumer warpgroups: their 160 registers spilled 424 B in the chained variant, hattn9)
    ch, short = chain.make(p, whole, epilogue, outside, moved, bufs, fresh, persist and not turns and ost is None
                           and schedule == "overlap" and rot.packed() and not region and split.roomy(C))
    if ch is not None and tiles.fine_stamps():  # (`TILEC_ATTN_STAMPS=2`: stamps inside its first iteration)
        ch = dataclasses.replace(ch, tn=c_tn)
    q_early = q_early or chain.q_early(ch)
    turned = rot.rotated(loop, p, cast, chained, bufs, fresh, layouts, moved, loops.s_product, loops.unshare, turns,
                         qempty if q_early else None, ch) \
        if schedule == "overlap" and rot.enabled(p) and not turns else None
    ch = ch if turned is not None else None  # (rotated declined: it never saw `ch`)
    if schedule == "serial":
        c_loop, c_pre, c_post = loops.serial(loop, p, cast, chained, bufs, fresh, layouts)
    elif turned is not None:  # D = 128 or TILEC_ATTN_ROTATE=1: passes/attention_rotated.py
        c_loop, c_pre, c_post = turned
    else:
        c_loop, c_pre, c_post = loops.overlapped(loop, p, cast, chained, bufs, fresh, layouts, turns, moved)
    c_loop = spec.speculate(c_loop, fresh)  # exp2 before the row max: passes/attention_spec.py
    qx_ops = loops.unshare(list(p.qx.ops), fresh) if p.qx else []  # Q computed once it is in (`attention_qx`)
    c_pre = [*qxm.consumer_ops(p.qx and dataclasses.replace(p.qx, ops=tuple(qx_ops)), p.s_dot.a, qbuf, q_slot, span),
             *c_pre]
    moved = loops.unshare(moved, fresh)
    epilogue = [substitute(op, c_post[1]) for op in epilogue]
    acc_out = c_post[1][loop.results[proof.acc].id] if proof is not None else None
    sel = next((op for op in c_post[0] if acc_out is not None and g.results(op) == (acc_out,)), None)
    raw_acc = sel.operands[1] if isinstance(sel, ir.Elementwise) and sel.op is E.WHERE else acc_out
    from .attention_zeros import drop_unread_zeros

    post, epilogue = drop_unread_zeros(c_post[0], epilogue, loop, c_post[1], before)
    c_post, eb = (post, c_post[1], c_post[2]), _Build(fresh)  # the last block's stage; whether the loop ran
    last = eb.elem(E.REM, eb.elem(E.ADD, c_post[2], eb.const(S - 1)), eb.const(S))
    ran = eb.elem(E.GT, c_post[2], bufs.base, dtype=DType.BOOL)
    idle_t = eb.elem(E.LE, c_post[2], bufs.base, dtype=DType.BOOL) if ost is not None and ost.mode == "v" else ran
    epilogue, fin = epi.rewrite(epilogue, ost, obuf, qbuf, last, ran)
    whole_epilogue = epilogue  # a whole tile's (the split's copy without its code: `split.whole_copy`)
    if marks is not None and proof is not None and raw_acc is not None:
        epilogue = split.epilogue(proof, loop, c_post[1], raw_acc, epilogue, ran, marks, W * 32, fresh, span, kind)
    # with turns, warpgroup 0 has the first and takes the last pass (once a CTA:
    # the turns run on from tile to tile; no arrival is left on a barrier)
    start, end = ([g.WarpgroupTurn(x, loops.TURN_BARRIER, span)] if turns else [] for x in ("start", "end"))
    consumer_ops: list[object] = [*start, *moved, ir.Const(zero_c, 0), g.BarrierWait(qbar, zero_c, zero_c, span),
                                  *c_pre, c_loop, *c_post[0], *eb.ops, *epilogue, *fin, *end, ir.Yield(())]
    pc = None  # the chained variant's split pieces (`attention_csplit`), or its halves (`attention_qsplit`)
    if persist:
        tb = _Build(fresh)
        if qn == 2:
            one_c = tb.const(1)
            tb.ops.append(ir.Elementwise(q_slot, E.AND, (c_tn, one_c)))
            q_phase = tb.elem(E.AND, tb.elem(E.SHR, c_tn, one_c), one_c)
        else:
            q_phase = tb.elem(E.AND, c_tn, tb.const(1))
        trips = c_post[2]
        # the last block's stage, once its P V is done (the loop frees the others)
        rel = [g.BarrierArrive(empty, last, ran, span)] if schedule != "serial" else []
        idle = tb.elem(E.GE, loop.lower, loop.upper, dtype=DType.BOOL) if q_early and turned else None
        qrel = g.BarrierArrive(qempty, q_slot, idle, span)
        head, tail, carry = epi.released(ost, qrel, rel, [*c_post[0], *eb.ops], epilogue, fin, ran, idle_t, c_base, S, empty, fresh)
        consumer_ops = [*moved, *tb.ops, g.BarrierWait(qbar, q_slot, q_phase, span), *c_pre, *head, c_loop, *tail]
        n0 = len(moved) + len(tb.ops)  # (`TILEC_ATTN_STAMPS=1`: Q in, the first block done, the loop done,
        n1 = n0 + 1 + len(c_pre) + len(head)  # the last P V's wait returned, the tile's end)
        w5 = next((n1 + 1 + j for j, op in enumerate(tail) if isinstance(op, g.WgmmaWait)), n1 + 1)
        consumer_ops = tiles.stamped(consumer_ops, c_tn, [(n0 + 1, 2), (n1 - len(head), 3), (n1 + 1, 4), (w5 + 1, 5),
                                                          (len(consumer_ops), 6)], span)
        if ch is not None:  # the previous tile's last P V issued by this tile's first iteration
            consumer_ops, trips, chain_init, carry = chain.tile_ops(
                ch, c_loop, c_pre, loop, S, [*tb.ops, g.BarrierWait(qbar, q_slot, q_phase, span)], [qrel], moved,
                before, p, vbuf, cast.result.dtype)
            consumer_ops = chain.stamped(consumer_ops, c_loop, qbar, c_tn, span)  # (`TILEC_ATTN_STAMPS=1`)
            if cproof is not None and ch.xr is None and kv_first is None:  # the split last round's pieces (walk B)
                pc = csplit.piece_tile(cproof, loop, p, cast, chained, bufs, fresh, layouts, moved0, moved, epilogue0,
                                       qempty, q_early, before, tb.ops, g.BarrierWait(qbar, q_slot, q_phase, span),
                                       W * 32, loops, spec)
            elif halves and ch.xr is None and kv_first is None:  # the last round's halves (walk B)
                pc = qsplit.half_tile(loop, p, cast, chained, bufs, fresh, layouts, moved0, moved, epilogue0, qempty,
                                      q_early, before, tb.ops, g.BarrierWait(qbar, q_slot, q_phase, span), loops, spec)
    rows = pc is not None and cproof is None  # walk B the halves
    tbar = None  # walk B's tickets' barrier (`=dyn`: the first CTAs out of walk A run the halves or the pieces)
    if (rows and qsplit.dynamic()) or (pc is not None and not rows and csplit.dynamic()):
        tbar = fresh.value(DType.I64, (1,), "ticket")
        layouts[tbar.id] = Barriers()
        pre.append(g.BarrierAlloc(tbar, 1, span=span))

    # every tile of the consumers in the accumulator layout
    cl = Classes(BM)
    links = [(a, b, y, r) for a, b, y, r in zip(loop.inits, loop.body.args[1:], loop.body.ops[-1].values,  # type: ignore[union-attr]
                                                 loop.results, strict=True)]
    classify([*moved, *qx_ops, *c_loop.body.ops, *c_post[0], *epilogue, *(consumer_ops if ch else ())], cl, links,
             region)
    csplit.classes(pc, cl)
    chain.layouts(ch, cl, W, layouts)
    assign(consumer_ops, cl, W, layouts)
    if pc is not None:
        assign(pc.ops, cl, W, layouts)

    producer_regs = split.producer_regs(acc_regs, PRODUCER_REGS) if marks is not None else PRODUCER_REGS
    if C == 3 and flag("TILEC_ATTN_PRODUCER3", "1"):
        producer_regs = min(producer_regs, split.WIDE_PRODUCER_REGS)
    if wide and role_registers(C, split.WIDE_PRODUCER_REGS) > role_registers(C, producer_regs):
        producer_regs = split.WIDE_PRODUCER_REGS
    if turned is None and schedule == "overlap" and not turns and rot.s_ahead(p, C) and not loops.peel_fits(p, C) \
            and role_registers(C, split.WIDE_PRODUCER_REGS) > role_registers(C, producer_regs):
        producer_regs = split.WIDE_PRODUCER_REGS  # S ahead (opt-in): two S tiles want every register the consumers get
    producer_regs = producer_budget(producer_regs)
    consumer_regs = role_registers(C, producer_regs)
    ws = g.WarpSpecialize((
        g.Role("consumer", W, consumer_regs, ir.Region((), tuple(consumer_ops))),  # type: ignore[arg-type]
        g.Role("producer", 4, producer_regs, ir.Region((), (*pb.ops, ir.Const(pzero, 0), p_loop, ir.Yield(()))), single=True),  # type: ignore[arg-type]
    ), span)
    moving = moving_op([*consumer_ops, *(pc.ops if pc is not None else ())], layouts)
    if moving is not None:  # some value would move between threads: the generic path (round 17: said nothing)
        ctx.refuse(PATH, getattr(moving, "span", span), f"{describe(moving)} would move values between the "
                   "consumers' threads (each thread keeps its own rows and columns of the scores in registers)")
        return k
    advice.advise(p, C, consumer_regs, ctx, k.source.fast_math)  # what its blocks or spelling cost
    if pc is not None and csplit.tail_rounds():  # both switches: the causal tail in a variant of its own (one
        assert kv is not None  # kernel with both walks spilled), launched where the walk has one (`tail_request`)
        request = split.tail_request(k, kv, outside, (loop.lower, loop.upper))
    if persist:
        assert kv is not None
        wb = _Build(fresh)
        bounds = (marks.lower0, marks.upper0) if marks is not None else (loop.lower, loop.upper)
        # the chained short keys' variant's causal tail in a walk of its own (`attention_csplit`, opt-in)
        ct = csplit.tail_rounds() if p.short and ch is not None and ch.xr is None and pc is None and kv_first is None \
            else 0  # (the short keys' variant only, as the split: not `TILEC_ATTN_CHAIN=1`'s long keys' kernels)
        # the fast divisors made by the consumers after the split (`attention_tiles.divs_in_role`): the one walk
        # without a split's, halves' or tail's second walk (their roles walk the set-up's divisors); not in the
        # rotated boundary's (`TILEC_ATTN_XROT`, opt-in: ptxas 13.0 spilled 68 B there in role, 52 before the split)
        hoist = tiles.divs_in_role() and marks is None and pc is None and not ct and not rows \
            and (ch is None or ch.xr is None)
        walk = tiles.walk_setup(wb, k, kv, outside, bounds,
                                split.pieces() if marks is not None or (pc is not None and not rows) else 0,
                                tiles.fastdiv(p.short or wide), form=kind, tail=ct or n_tail, divs_in_role=hoist,
                                single=region, once=onced)
        walk = tiles.halves(wb, walk) if rows else walk
        whole = None  # (with walk B: walk A's rounds, chained: whole tiles or the pairs before the tail)
        if pc is not None:
            whole = csplit.whole_rounds(wb, walk)
            walk = dataclasses.replace(walk, rounds=whole, split=None)
        elif ct and walk.tail is not None:
            whole = csplit.tail_whole(wb, walk)
            walk = dataclasses.replace(walk, rounds=whole, tail=None)
        copy = marks is not None and walk.split is not None and ch is None and not carry and epilogue is not whole_epilogue \
            and not form
        # (with a copy for the launches that do not split, the split walk runs only where single tiles split; the
        # D = 64 kernels' walk as measured, RESULTS 2026-12-04 13:07)
        s_walk, s_pre = split.single_tiles(walk, fresh) if copy and not split.fits_narrow(acc_regs) else (walk, [])
        cw = _Build(fresh)  # (`hoist`: the consumers' divisors, made before their walk)
        c_s_walk = tiles.in_role(cw, s_walk) if hoist else s_walk
        c_walk = [*s_pre, *cw.ops, *tiles.tile_loop(c_s_walk, fresh, outside, consumer_ops, c_base, trips, c_tn, span,
                                                    carry, marks)]
        if copy:  # where the launch's walk does not split: a copy of the tile ops without the split's code
            c_walk = split.whole_copy(walk, c_walk, consumer_ops, epilogue, whole_epilogue, marks, c_base, c_tn, trips,
                                      outside, layouts, fresh, span)
        if ch is not None:  # the last tile's pending P V and epilogue
            walk_a = c_walk[-1]
            if ct and whole is not None:  # the causal tail, chained on
                c_walk += csplit.walk_b(k, kv, bounds, whole, walk, walk_a, consumer_ops, c_base, trips, c_tn, outside,
                                        layouts, fresh, span, carry=carry, tail=ct)
            c_walk = chain.final(ch, chain_init, c_walk, vbuf, p.v_kmajor, cast.result.dtype,
                                 lambda o, new: (classify(new, cl, []), assign(o, cl, W, layouts)))
            if pc is not None and whole is not None:  # then the pieces
                c_walk += csplit.walk_b(k, kv, bounds, whole, walk, walk_a, pc.ops, c_base, pc.trips, c_tn, outside,
                                        layouts, fresh, span, pc.marks, rows=rows,
                                        ticket=qsplit.ticket(tbar, False) if tbar is not None else None)
        c_ops = [*start, ir.Const(zero_c, 0), *c_walk,
                 *([g.TmaStoreWait(span=span)] if ost is not None and ost.mode != "q" else []), *end, ir.Yield(())]
        p_walk = [*s_pre, *tiles.tile_loop(s_walk, fresh, outside, p_tile, p_base, p_loop.results[0], p_tn, span, (),
                                           marks)]
        if copy:
            p_walk = split.whole_copy(walk, p_walk, p_tile, [], [], marks, p_base, p_tn, p_loop.results[0], outside,
                                      layouts, fresh, span)
        if pc is not None and whole is not None:  # the producer's pieces: its tile on the pieces' bounds
            p_walk += csplit.walk_b(k, kv, bounds, whole, walk, p_walk[-1], p_tile, p_base, p_loop.results[0], p_tn,
                                    outside, layouts, fresh, span, pc.marks, None if rows else p_loop, rows=rows,
                                    ticket=qsplit.ticket(tbar, True) if tbar is not None else None)
        elif ct and whole is not None:  # the producer's tail
            p_walk += csplit.walk_b(k, kv, bounds, whole, walk, p_walk[-1], p_tile, p_base, p_loop.results[0], p_tn,
                                    outside, layouts, fresh, span, tail=ct)
        p_ops = [*p_walk, ir.Yield(())]
        ws = g.WarpSpecialize((dataclasses.replace(ws.roles[0], body=ir.Region((), tuple(c_ops))),  # type: ignore[arg-type]
                               dataclasses.replace(ws.roles[1], body=ir.Region((), tuple(p_ops)))), span)  # type: ignore[arg-type]
        body = ir.Region(k.body.args, (*wb.ops, *pre, ws, ir.Yield(())))  # type: ignore[arg-type]
    else:
        if joined:  # the warps' registers evened out once the roles end (`WarpSpecialize.rejoin`): the consumers'
            # budget where every warp can hold it (one consumer warpgroup), else the CTA's 64K over its threads
            ws = dataclasses.replace(ws, rejoin=min(consumer_regs, 65536 // (32 * (W + 4)) // 8 * 8))
        body = ir.Region(k.body.args, (*outside, *pre, ws, *joined, ir.Yield(())))  # type: ignore[arg-type]
        body = tiles.kv_blocks_together(k, kv, body, fresh)
    return dataclasses.replace(k, body=body, layouts=layouts, next_id=fresh.next, persistent=int(persist), short=short, split=request,
                               params=(*k.params, qdesc, kdesc, vdesc, *([ost.desc] if ost else [])), num_warps=W + 4, num_stages=S)


def _joined(ops: list[object], i: int, regions: set[int], fresh: Fresh) -> list[object] | None:
    """The `last_block` region's ops (the arrival and its `if`, among the ops after the loop at `i`) with the
    ops they read that the kernel's top level will not have once the roles are built (the epilogue's scalars,
    the tiles built before the loop: the consumers' own copies), cloned: what runs after the roles; None where
    it reads more (the loop's results, a load before the loop)."""
    from .attention_tiles import clone

    keep = [op for op in ops[i + 1:] if id(op) in regions]
    defs = {r.id: op for op in [*ops[:i], *ops[i + 1:]] for r in g.results(op)}
    top = {r.id for op in ops[:i] if not any(v.shape for v in g.results(op)) for r in g.results(op)}
    need: list[object] = []
    seen: set[int] = set()

    def visit(op: object) -> None:
        for sub in g.walk(ir.Region((), (op,))):  # type: ignore[arg-type]
            for v in g.operands(sub):
                d = defs.get(v.id)
                if d is None or v.id in top or id(d) in seen or id(d) in regions:
                    continue
                seen.add(id(d))
                visit(d)
                need.append(d)

    for op in keep:
        visit(op)
    if any(isinstance(op, ir.For | ir.While | ir.Load | ir.Mma | g.DotOp) for op in need):
        return None  # (it reads the loop's results or another load: the consumers run it, "1")
    order = {id(op): n for n, op in enumerate(ops)}
    return clone(sorted(need, key=lambda op: order[id(op)]) + keep, fresh, {})


__all__ = ["PRODUCER_REGS_DEFAULT", "AttnPlan", "attention", "producer_budget"]

