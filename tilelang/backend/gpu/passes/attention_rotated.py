"""The attention loop's overlapped schedule, rotated (the default where the
value rows are 128 wide: `ROTATE_DEFAULT`; `TILEC_ATTN_ROTATE`).

`attention_loop.overlapped` computes S of the first key block before its loop,
and iteration j issues S of block j + 1 with P V of block j: the last
iteration issues an S nobody reads (its own block's again: no branch around
the tensor cores), and Q, which that S reads, is released only after it.
Rotated, iteration j issues S of block j with P V of block j - 1 (one asm
statement, two commit groups), waits for S only, and runs the body on it
while that P V is in flight; the last block's P V follows the loop. The
product nobody reads moves to the first iteration: a P V of zeros (no
previous block) on its own stage, issued with S of the first block, while
the tensor cores would otherwise idle under the first softmax. So per tile:

- no product is issued after the last softmax but that block's P V, so the
  epilogue starts half a block earlier;
- Q's last reader is the last block's S, waited for inside the loop: Q is
  released (`qempty`, persistent walk) a block earlier, and the producer's
  copies of the next tile's Q and first K/V blocks start that much sooner.

The carried values are the body's own, the accumulator taken before its
product (rescaled), and P of the block whose product is pending, packed as
wgmma's A fragment at the end of the body (`g.PackPairs`: 16-bit pairs, half
the registers of f32 P, whose 64 registers a thread made ptxas spill at
128 x 128, D = 128; `TILEC_ATTN_ROTATE_PACK=0` carries f32), and the
stages of this block and the previous one, so that nothing but the operand
descriptors stands between the body's end and the next issue (the stage was
seen full by the previous iteration's spin on "the next stage"; the first
block's is waited for before the loop). A wait at the top of each iteration
(`TILEC_ATTN_ROTATE_TOPWAIT=1`) and the descriptors' 64-bit arithmetic
there left the tensor cores idle for their latency: with both the rotated
loop ran 2.6-4.6 % behind the overlapped one on the H200; with neither it
runs up to 3 % ahead at D = 128. It applies where the accumulator starts at zero
(`use_acc` drops the first two products' accumulators: the zero P V's and
what the first rescale made of it) and the loop yields the product as is,
read by nothing else; else `attention_loop.overlapped` runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tilelang.backend.env_switch import flag
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Layout
from . import attention_vmask as vmask
from .context import Fresh
from .pipeline import PRODUCER_REGS, _Build, role_registers
from .rewrite import substitute
from .switches import mode

# "1": the rotated schedule where it applies; "0": `attention_loop.overlapped`;
# "auto" (the default): rotated where the value rows are 128 wide. On
# the H200 (benchmarks/RESULTS.md, eighth session) the rotated loop matched or
# beat the overlapped one on every D = 128 row (+0.1..+3 %, most at S = 1024)
# but lost 0.5-1.7 % at D = 64 for S >= 4096 (its loop is 7 % longer, all of
# it in the masked block, which full rows never run: not explained). D = 256
# was not timed (at 128 x 64 both schedules spill, the rotated 4 B more).
ROTATE_DEFAULT = "auto"


def enabled(p: Any) -> bool:
    """Whether the loop of plan `p` (`attention_match.AttnPlan`) is rotated:
    `TILEC_ATTN_ROTATE` "1" / "0" / "auto" (unset: `ROTATE_DEFAULT`)."""
    want = mode("TILEC_ATTN_ROTATE", ROTATE_DEFAULT, ("0", "1", "auto"))
    if want == "auto":  # and at every D where compiled for short keys, chained (`attention_chain.short`), unless
        # the overlapped loop takes S ahead there (`TILEC_ATTN_SAHEAD=1`)
        return int(p.o_dot.result.shape[1]) == 128 or (p.short and not s_ahead(p, p.BM // 64))
    return want == "1"


# `TILEC_ATTN_SAHEAD` unset: "0" (opt-in until a GPU has timed it: benchmarks/hattn8_device.sh)
SAHEAD_DEFAULT = "0"
# Registers a consumer thread keeps beside two S tiles, O and P with S ahead (`s_ahead`): the rule admits
# 128 x 128 at D = 64 (2 x 64 + 32 + 32 = 192 of 232), where ptxas 13.0 still spills 28-44 B in the masked blocks'
# path with the two-block loop and the producer at 24 (the default consumers reach R188: RESULTS.md, hattn8),
# and 128 x 64 (0 B); not 128 x 128 at D = 128
AHEAD_HEADROOM = 40


def s_ahead(p: Any, C: int) -> bool:
    """Whether the overlapped loop (`attention_loop.overlapped`) issues S of block j + 1 at the top of
    iteration j, before block j's softmax, instead of with P V of block j
    after it (`TILEC_ATTN_SAHEAD` "1"; unset: `SAHEAD_DEFAULT`). The default
    order leaves the softmax of block j + 1 waiting for its own S (the two
    warpgroups issue together, so both wait with the MUFU idle: the period of
    a block is S + softmax, RESULTS.md 2026-12-03 ncu); ahead, that S runs
    under block j's softmax beside P V of block j - 1, and the period is the
    softmax's. Costs a second S tile in registers while the first is read:
    taken only where it fits (`AHEAD_HEADROOM`: 128 x 128 at D = 64, not at
    D = 128, whose loop is rotated by default anyway). With it the short keys'
    variant at D = 64 runs that loop, unchained (`enabled`)."""
    if mode("TILEC_ATTN_SAHEAD", SAHEAD_DEFAULT, ("0", "1")) != "1":
        return False
    return 2 * (p.BN // 2) + p.o_dot.result.shape[1] // 2 + p.BN // 4 <= role_registers(C, PRODUCER_REGS) - AHEAD_HEADROOM


def packed() -> bool:
    """P crosses the back edge as 16-bit pairs (`g.PackPairs`: half the
    registers of f32 P); `TILEC_ATTN_ROTATE_PACK=0` carries it as f32."""
    return flag("TILEC_ATTN_ROTATE_PACK", "1")


def top_wait() -> bool:
    """Each iteration waits for its own stage again before its products
    (`TILEC_ATTN_ROTATE_TOPWAIT=1`; the previous iteration's spin on the
    next stage has seen it full already): the wait sits between the body's
    end and the issue, where the tensor cores idle."""
    return flag("TILEC_ATTN_ROTATE_TOPWAIT", "0")


# "1": the O rescale `acc * alpha` skipped where alpha is 1 in every row of the warp (one vote,
# `g.WarpAny`, before the spin on the next stage, so that alpha's two exp2s run before it, under the
# softmax's row sums); "0": the code generator's vote at the multiply (`TILEC_SKIP_UNIT_SCALE`), whose
# exp2s ptxas 13.0 sinks below the spin and the wait for the pending P V (SASS, 2026-12-04); "auto": "1"
# where the value rows are 64 wide. On the H200 (benchmarks/RESULTS.md, 2026-12-04) "1" gained nothing on
# the D = 128 rows of S >= 4096 (-0.3..+0.3 %) and lost 1.0-1.9 % at S = 1024 (the latency it moves was
# hidden after all); at D = 64 it is part of the short keys' variant measured (chained, +2.3..+4.2 %)
EARLY_VOTE_DEFAULT = "auto"


def early_vote(p: Any) -> bool:
    """Whether the rotated loop of plan `p` (`attention_match.AttnPlan`) votes early:
    `TILEC_ATTN_EARLY_VOTE` "1" / "0" / "auto" (unset: `EARLY_VOTE_DEFAULT`)."""
    want = mode("TILEC_ATTN_EARLY_VOTE", EARLY_VOTE_DEFAULT, ("0", "1", "auto"))
    return int(p.o_dot.result.shape[1]) == 64 if want == "auto" else want == "1"


def _alpha(rescale: object, acc_arg: ir.Value, ops: tuple[object, ...]) -> ir.Value | None:
    """The f32 row vector the rescale multiplies `acc_arg` by (through
    broadcasts and reshapes), where the body `ops` compute it."""
    if not (isinstance(rescale, ir.Elementwise) and rescale.op is ir.ElemOp.MUL):
        return None
    x = next((v for v in rescale.operands if v is not acc_arg), None)
    defs = {r.id: op for op in ops for r in g.results(op)}
    while x is not None and isinstance(defs.get(x.id), ir.Broadcast | ir.Reshape):
        x = defs[x.id].x  # type: ignore[attr-defined]
    if x is None or x.id not in defs or x.dtype is not DType.F32 or len([n for n in x.shape if n > 1]) != 1:
        return None
    return x


def _carried(cast: ir.Cast) -> tuple[tuple[int, ...], DType]:
    """Shape and type of the P that the loop carries: packed pairs, or f32."""
    if packed():
        *lead, n = cast.x.shape
        return (*lead, n // 2), DType.I32
    return cast.x.shape, DType.F32


# `TILEC_ATTN_PINWAIT` (off: -0.2..-7.6 % on the H200, RESULTS.md 2026-12-04 18:26): "1": the spin on
# the next key block's stage inside the key loop reads the softmax's last row vector (`g.BarrierWait.after`: the row sum, where the body computes it before the rescale), so that
# ptxas cannot issue its first try before the body's exp2s (with the fast walk it did, in the D = 64 loop:
# RESULTS.md 2026-12-04 15:51); "0": where ptxas schedules it.
PINWAIT_DEFAULT = "0"


def pin_wait(ops: list[object], rows: int) -> tuple[ir.Value, ...]:
    """The values a key loop's spin on its next stage waits after
    (`TILEC_ATTN_PINWAIT`): the last f32 row vector (at most `rows`
    elements, a few registers a thread) that `ops`, the body so far, define."""
    if not flag("TILEC_ATTN_PINWAIT", PINWAIT_DEFAULT):
        return ()
    for op in reversed(ops):
        if isinstance(op, ir.Const | ir.Broadcast | ir.Arange):  # no later than what they copy
            continue
        for r in g.results(op):
            if r.dtype is DType.F32 and len(r.shape) == 2 and r.shape[1] == 1 and 1 < math.prod(r.shape) <= rows:
                return (r,)
    return ()


def _boundary(chain: Any, loop: ir.For, p: Any, bufs: Any, fresh: Fresh, layouts: dict[int, Layout],
              build: Callable[..., list[object]], unshare: Callable[[list[object], Fresh], list[object]],
              s_product: Callable[..., tuple[ir.Value, g.Wgmma]], qempty: ir.Value | None, remap: dict[int, ir.Value],
              st0: ir.Value, args: tuple[ir.Value, ...], init_vals: tuple[ir.Value, ...],
              first: tuple[object, ...], span: Any) -> tuple[object, ...]:
    """The chained first iteration's ops (`first`, ending with its Yield) in a branch on `chain.xr.defer`
    (`attention_xrot`): where the previous tile deferred its last key block, the boundary iteration holding
    that block and this tile's first; else `first`. `remap`: the first iteration's clone mapping (built
    from `build(chain)`); `args`: the loop body's own arguments (c_it, p_prev, stage, pv_stage)."""
    from . import attention_xrot as xrot
    from .attention_tiles import clone

    xr = chain.xr
    assert qempty is not None
    c_it, p_prev, stage, pv_stage = args
    sb = _Build(fresh)
    raw, _ = s_product(sb, p, bufs, st0, fresh, layouts)  # this tile's first S, issued in the boundary

    def prefetched(p_l: ir.Value, acc_l: ir.Value, st_l: ir.Value, res: tuple[ir.Value, ...]) -> list[object]:
        one = fresh.value(DType.BOOL, (), "pend")
        m = {**{k: v for k, v in remap.items() if k in (loop.body.args[0].id, c_it.id, stage.id)},
             p_prev.id: p_l, pv_stage.id: st_l, chain.pend.id: one, chain.use.id: one,
             **{a.id: v for a, v in zip(loop.body.args[1:], init_vals, strict=False)},
             loop.body.args[1 + xr.pos].id: acc_l,
             **{r.id: v for r, v in zip(chain.results, res, strict=True)}}
        seeded = set(m)
        ops = clone(build(chain, raw), fresh, m)
        layouts.update({m[k].id: lay for k, lay in list(layouts.items()) if k in m and k not in seeded})
        return [ir.Const(one, True), *ops]

    ops = xrot.boundary(xr, chain, sb.ops, qempty, prefetched)
    outs = tuple(fresh.value(v.dtype, v.shape, v.hint) for v in init_vals)
    inner = ir.If(outs, xr.defer, ir.Region((), (*unshare(ops[:-1], fresh), ops[-1])),  # type: ignore[arg-type]
                  ir.Region((), first), span)  # type: ignore[arg-type]
    return (inner, ir.Yield(outs))


def _second(chain: Any, loop: ir.For, build: Callable[..., list[object]],
            unshare: Callable[[list[object], Fresh], list[object]], fresh: Fresh, layouts: dict[int, Layout],
            lower: ir.Value, outs: tuple[ir.Value, ...], own: tuple[ir.Value, ...], span: Any
            ) -> tuple[list[object], tuple[ir.Value, ...], ir.Value]:
    """`TILEC_ATTN_CHAIN_EPI2=1`: the chained tile's second iteration peeled (from `lower`, on the first's
    `outs`, the last of them the previous tile's final accumulator: `build`'s `hold`; `own`: the loop body's own
    arguments after the user's), the previous tile's epilogue between its issue and its wait for S (a tile of
    one key block runs it in the first: `build`'s `hold`). Returns the ops, the loop's first values after them
    and its new lower bound."""
    from .attention_tiles import clone

    E = ir.ElemOp
    b = _Build(fresh)
    ran2 = b.elem(E.LT, lower, loop.upper, dtype=DType.BOOL, hint="ran2")
    args = (*loop.body.args[1:], *own)
    *outs, held = outs  # type: ignore[assignment]
    remap = {loop.body.args[0].id: lower, **{a.id: v for a, v in zip(args, outs, strict=True)}}
    second = clone(build(None, later=(chain, held)), fresh, remap)
    layouts.update({remap[k].id: lay for k, lay in list(layouts.items()) if k in remap})
    outs2 = tuple(fresh.value(v.dtype, v.shape, v.hint) for v in outs)
    after = fresh.value(DType.I32, (), "lower")
    ops = [*b.ops, ir.If(outs2, ran2, ir.Region((), (*unshare(second[:-1], fresh), second[-1])),  # type: ignore[arg-type]
                         ir.Region((), (ir.Yield(tuple(outs)),)), span),  # type: ignore[arg-type]
           ir.Elementwise(after, E.ADD, (lower, loop.step))]
    return ops, outs2, after


def _reads(op: object, v: ir.Value) -> bool:
    return any(x is v for o in g.walk(ir.Region((), (op,))) for x in g.operands(o))  # type: ignore[arg-type]


def rotated(loop: ir.For, p: Any, cast: ir.Cast, chained: set[int], bufs: Any, fresh: Fresh,
            layouts: dict[int, Layout], before: list[object], s_product: Callable[..., tuple[ir.Value, g.Wgmma]],
            unshare: Callable[[list[object], Fresh], list[object]], turns: bool = False,
            qempty: ir.Value | None = None, chain: Any = None
            ) -> tuple[ir.For, list[object], tuple[list[object], dict[int, ir.Value], ir.Value]] | None:
    """The rotated loop, its prologue and (epilogue ops, loop result -> value,
    the ring's counter after it), as `attention_loop.overlapped` returns them; None
    where it does not apply. `p`, `bufs`: `attention_match.AttnPlan`, `attention_loop.Bufs`;
    `s_product`, `unshare`: `attention_loop.s_product`, `attention_loop.unshare` (passed
    in: this module does not import `attention`, which imports it); `turns`:
    the two warpgroups take turns at each issue (`attention.pingpong`); `qempty`:
    the Q buffer's barrier, arrived on in the last iteration once its S is done
    (`attention_tiles.q_early`; the caller arrives after the loop when it ran
    no iteration); `chain`: an `attention_chain.Chain`, the previous tile's
    last P V issued by the first iteration instead of the product of zeros
    (the loop then ends with its own last P V pending: no post ops)."""
    E = ir.ElemOp
    span = loop.span
    ys = loop.body.ops[-1]
    assert isinstance(ys, ir.Yield)
    pos = next((i for i, v in enumerate(ys.values) if v is p.o_dot.result), None)
    if pos is None or sum(v is p.o_dot.result for v in ys.values) != 1:
        return None
    if any(_reads(op, p.o_dot.result) for op in loop.body.ops if op is not ys):
        return None
    acc_arg = loop.body.args[1 + pos]
    init = loop.inits[pos]
    zdef = next((op for op in before if isinstance(op, ir.Const) and op.result is init), None)
    if zdef is None or str(float(zdef.value)) != "0.0":
        return None
    rescale = next((op for op in loop.body.ops if p.o_dot.acc in g.results(op)), None)
    if not (p.o_dot.acc is acc_arg or (isinstance(rescale, ir.Elementwise) and rescale.op is E.MUL
                                       and acc_arg in rescale.operands)):
        return None
    alpha = _alpha(rescale, acc_arg, loop.body.ops) if early_vote(p) else None
    pre: list[object] = []
    ran = fresh.value(DType.BOOL, (), "ran")
    pre.append(ir.Elementwise(ran, E.LT, (loop.lower, loop.upper)))
    inits = list(loop.inits)
    pshape, pdt = _carried(cast)
    if chain is not None:  # the previous tile's last block: its P, accumulator (chain.use) and stage
        if pdt is not DType.I32:
            return None
        inits[pos], p0 = chain.acc, chain.p
    else:
        inits[pos] = fresh.value(init.dtype, init.shape, init.hint)  # never read: the first products ignore it
        pre.append(g.Undef(inits[pos], span))
        # P of "the block before the first": zeros (the product's value is dropped)
        pz, p0 = fresh.value(pdt, ()), fresh.value(pdt, pshape, "p")
        pre += [ir.Const(pz, 0 if pdt is DType.I32 else 0.0), ir.Broadcast(p0, pz)]

    c_it = fresh.value(DType.I32, (), "it")
    p_prev = fresh.value(pdt, pshape, "p")
    carried = not top_wait()
    if chain is not None and not carried:
        return None
    if carried:
        # this block's stage and the previous one's (the zero product's: this
        # block's, held, not one the producer may be refilling) come with the
        # iteration, so that nothing but the descriptors stands between the
        # body's end and the next issue; the stage was waited for by the
        # previous iteration's spin on "the next stage" (below), the first
        # block's before the loop
        pb = _Build(fresh)
        st0, ph0 = pb.ring(bufs.base, bufs.S)
        pre += [*pb.ops, ir.If((), ran, ir.Region((), (g.BarrierWait(bufs.full, st0, ph0, span), ir.Yield(()))),  # type: ignore[arg-type]
                               ir.Region((), (ir.Yield(()),)), span)]
        if chain is not None and chain.tn is not None:  # (`TILEC_ATTN_STAMPS=2`: the first block's stage in)
            pre.append(g.Stamp(13, chain.tn, span))
        stage, pv_stage = fresh.value(DType.I32, (), "stage"), fresh.value(DType.I32, (), "pv_stage")

    def build(chain: Any, pre_s: ir.Value | None = None, later: Any = None) -> list[object]:
        """One iteration's ops (`chain`: the first iteration of a chained tile, else None; `pre_s`: its S
        issued already, `attention_xrot.boundary`: its P V issued alone). `chain.epi2` (`TILEC_ATTN_CHAIN_EPI2=1`):
        that first iteration without the previous tile's epilogue (but where it is the tile's last), the
        accumulator it waited for (the previous tile's final one) yielded after the rest, an undefined one at
        the accumulator's place (read by no product: the next P V adds to none, and after a lone block the next
        tile's; with the previous tile's there, ptxas 13.0 serialised the second iteration's products: the
        copies LLVM made into the loop's registers before the wait); `later` ((that chain, that accumulator)):
        the second iteration, which runs the epilogue between its issue and its wait for S."""
        nonlocal stage, pv_stage
        hold = chain is not None and chain.epi2
        cb = _Build(fresh)
        owner = chain if chain is not None else (later[0] if later is not None else None)
        tn = owner.tn if owner is not None else None  # (`TILEC_ATTN_STAMPS=2`: this iteration's stamps)

        def stamp(slot: int) -> None:
            if tn is not None:
                cb.ops.append(g.Stamp(slot, tn, span))

        started = cb.elem(E.GT, c_it, bufs.base, dtype=DType.BOOL, hint="started")
        if chain is not None and chain.release:  # the first P V is the previous tile's: its stage is released after it
            started = cb.elem(E.OR, started, chain.pend, dtype=DType.BOOL, hint="started")
        if carried:
            phase = cb.elem(E.AND, cb.elem(E.DIV, c_it, cb.const(bufs.S)), cb.const(1), hint="phase")
            prev = pv_stage
        else:
            stage, phase = cb.ring(c_it, bufs.S)
            prev = cb.elem(E.REM, cb.elem(E.ADD, c_it, cb.const(bufs.S - 1)), cb.const(bufs.S))
            pv_stage = cb.elem(E.WHERE, started, prev, stage, hint="pv_stage")
            cb.ops.append(g.BarrierWait(bufs.full, stage, phase, span))
        use = cb.elem(E.GT, c_it, cb.elem(E.ADD, bufs.base, cb.const(1)), dtype=DType.BOOL, hint="use_acc")
        if chain is not None:  # the first iteration's P V: the previous tile's last, which adds to its accumulator
            first = cb.elem(E.EQ, c_it, bufs.base, dtype=DType.BOOL, hint="first")
            use = cb.elem(E.OR, use, cb.elem(E.AND, first, chain.use, dtype=DType.BOOL), dtype=DType.BOOL,
                          hint="use_acc")

        raw, s_op = s_product(cb, p, bufs, stage, fresh, layouts, issue=False) if pre_s is None else (pre_s, None)
        o_raw = fresh.value(DType.F32, p.o_dot.result.shape, "o")
        if turns:  # named barrier 2 + the warpgroup's number (attention_loop.TURN_BARRIER)
            cb.ops.append(g.WarpgroupTurn("wait", 2, span))
        # the carried accumulator is the previous block's, rescaled, its product pending
        cb.ops.append(g.WgmmaRegA(o_raw, p_prev, bufs.v, pv_stage, acc_arg, p.v_kmajor, use, p.o_dot.span,
                                  cast.result.dtype, s_op))
        if turns:
            cb.ops.append(g.WarpgroupTurn("pass", 2, span))
        stamp(8 if chain is not None else 14)  # issued
        if later is not None:  # the previous tile's epilogue while S(1) and P V(0) are in flight
            go = cb.elem(E.AND, later[0].pend, started, dtype=DType.BOOL, hint="chained")  # (started: true here)
            cb.ops += later[0].later(go, later[1])
            stamp(15)  # its epilogue done
        s_now = fresh.value(DType.F32, p.s_dot.result.shape, "s")
        cb.ops.append(g.WgmmaWait((s_now,), (raw,), 1, span))
        if chain is not None:
            stamp(9)  # S in
        if qempty is not None:  # this S was Q's last reader in the tile
            last = cb.elem(E.GE, cb.elem(E.ADD, loop.body.args[0], loop.step), loop.upper, dtype=DType.BOOL, hint="last")
            cb.ops.append(g.BarrierArrive(qempty, bufs.qs, last, span))
        mapping: dict[int, ir.Value] = {p.s_dot.result.id: s_now}
        waited = False
        p_next: ir.Value | None = None
        next_stage: ir.Value | None = None
        any_moved: ir.Value | None = None  # some alpha of the warp is not 1 (`early_vote`)
        seen: set[int] = set()  # the body's values defined so far
        for op in loop.body.ops:
            if id(op) in chained or op is p.s_dot:
                continue
            if not waited and (op is p.o_dot or _reads(op, acc_arg)):
                # a spin on the next block's stage (this one's on the last
                # iteration) first: a basic block of its own, so that ptxas
                # does not hoist the wait for the pending P V above the softmax
                # that runs under it (attention_loop.overlapped, same reason)
                pins = pin_wait(cb.ops, p.BM)  # the body's, not the vote's
                if alpha is not None and alpha.id in seen:  # before the spin (`EARLY_VOTE_DEFAULT`)
                    one, ones = fresh.value(DType.F32, ()), fresh.value(DType.F32, alpha.shape)
                    ne, any_moved = fresh.value(DType.BOOL, alpha.shape, "moved"), fresh.value(DType.BOOL, (), "moved")
                    cb.ops += [ir.Const(one, 1.0), ir.Broadcast(ones, one),
                               ir.Elementwise(ne, E.NE, (mapping.get(alpha.id, alpha), ones)),
                               g.WarpAny(any_moved, ne, span)]
                after = cb.elem(E.ADD, loop.body.args[0], loop.step)
                more = cb.elem(E.LT, after, loop.upper, dtype=DType.BOOL, hint="more")
                nst, nph = cb.ring(cb.elem(E.ADD, c_it, cb.const(1)), bufs.S)
                next_stage = nst
                cb.ops.append(g.BarrierWait(bufs.full, cb.elem(E.WHERE, more, nst, stage, hint="nstage"),
                                            cb.elem(E.WHERE, more, nph, phase, hint="nphase"), span, pins))
                accw = fresh.value(acc_arg.dtype, acc_arg.shape, acc_arg.hint)
                if chain is not None:
                    stamp(10)  # the softmax and the spin on the next stage done
                cb.ops.append(g.WgmmaWait((accw,), (o_raw,), 0, span))
                if chain is not None:
                    stamp(11)  # the pending P V in
                # the previous block's stage is free: its S and P V are done
                cb.ops.append(g.BarrierArrive(bufs.empty, prev, started, span))
                if hold:  # a tile of one key block: the previous tile's epilogue here, as without `epi2` (in the
                    # second iteration's else branch, or after it, ptxas 13.0 kept fewer values in registers
                    # through the key loop: 680-704 SASS instructions a block, not 647-655)
                    alone = cb.elem(E.GE, cb.elem(E.ADD, loop.body.args[0], loop.step), loop.upper, dtype=DType.BOOL)
                    cb.ops += chain.later(cb.elem(E.AND, alone, chain.pend, dtype=DType.BOOL, hint="chained_lone"), accw)
                if chain is not None and not hold:  # the first iteration: the previous tile's output is complete
                    if pdt is DType.I32 and cast.x.id in seen:  # P packed first: 32 registers a thread, not 64
                        p_next = fresh.value(DType.I32, pshape, "p")
                        cb.ops.append(g.PackPairs(p_next, mapping.get(cast.x.id, cast.x), cast.result.dtype, cast.span))
                    first_ops, accw = chain.first(cb, c_it, accw)
                    cb.ops += first_ops
                if chain is not None:
                    stamp(12)  # the previous tile's epilogue done (with `epi2`: a one-block tile's)
                mapping[acc_arg.id] = accw
                waited = True
            if op is p.o_dot:  # issued by the next iteration, or after the loop
                cb.ops += vmask.zero(p.vmask, bufs.v, stage, mapping, 128 * bufs.C)  # the stage's V rows, before then
                if p_next is not None:  # packed before the wait
                    continue
                p_next = mapping.get(cast.x.id, cast.x)
                if pdt is DType.I32:  # carried as wgmma's A fragment: 16-bit pairs
                    packed = fresh.value(DType.I32, pshape, "p")
                    cb.ops.append(g.PackPairs(packed, p_next, cast.result.dtype, cast.span))
                    p_next = packed
                continue
            if isinstance(op, ir.Yield):
                vals = [mapping.get(v.id, v) for v in op.values]
                vals[pos] = mapping.get(p.o_dot.acc.id, p.o_dot.acc)
                assert p_next is not None
                nxt = (next_stage, stage) if carried else ()
                held: tuple[ir.Value, ...] = ()
                if hold:  # the previous tile's accumulator after the rest (copied: else it keeps the registers of
                    # the loop's accumulator, and ptxas 13.0 serialised the second iteration's products, whose
                    # stage the epilogue's reads of them sit in), none at its place
                    copy = fresh.value(acc_arg.dtype, acc_arg.shape, "acc_prev")
                    cb.ops.append(g.Opaque((copy,), (mapping[acc_arg.id],), span))
                    vals[pos], held = cb.undef(acc_arg, span), (copy,)
                cb.ops.append(ir.Yield((*vals, cb.elem(E.ADD, c_it, cb.const(1)), p_next, *nxt, *held)))
                continue
            if hold and op is rescale:  # (read by no product: `hold`)
                mapping[op.result.id] = cb.undef(op.result, span)  # type: ignore[attr-defined]
                continue
            if isinstance(op, ir.Elementwise) and op is rescale and any_moved is not None:  # acc as it is where
                r = op.result  # every alpha is 1
                scaled, out = fresh.value(r.dtype, r.shape, "acc"), fresh.value(r.dtype, r.shape, "acc")
                mul = ir.Elementwise(scaled, op.op, tuple(mapping.get(v.id, v) for v in op.operands), op.span)
                cb.ops.append(ir.If((out,), any_moved, ir.Region((), (mul, ir.Yield((scaled,)))),
                                    ir.Region((), (ir.Yield((mapping[acc_arg.id],)),)), span))
                mapping[r.id] = out
                continue
            cb.ops.append(substitute(op, mapping))
            seen.update(r.id for r in g.results(op))
        return cb.ops

    peel = chain is not None and chain.peel  # the chained first iteration before the loop
    body_ops = build(None if peel else chain)
    if chain is not None and chain.xr is not None:  # (the deferred block's clones: `attention_xrot.block`)
        from .attention_tiles import clone as clone_ops

        chain.xr.body.update(ops=body_ops, layouts=layouts, fresh=fresh, clone=clone_ops, unshare=unshare,
                             args=(loop.body.args[0], loop.body.args[1:], c_it, p_prev, stage, pv_stage, bufs))
    c_results = tuple(fresh.value(v.dtype, v.shape, v.hint) for v in loop.results)
    trips, p_last = fresh.value(DType.I32, (), "trips"), fresh.value(pdt, pshape, "p")
    stages: tuple[ir.Value, ...] = ()
    if carried:
        stages = (fresh.value(DType.I32, (), "stage"), fresh.value(DType.I32, (), "stage"))
    pv0 = st0 if carried else None
    if chain is not None:
        pv0 = fresh.value(DType.I32, (), "pv_stage")
        pre.append(ir.Elementwise(pv0, E.WHERE, (chain.pend, chain.stage, st0)))
    init_vals: tuple[ir.Value, ...] = (*inits, bufs.base, p0, *((st0, pv0) if carried else ()))
    lower = loop.lower
    if peel:
        # the first iteration (the previous tile's epilogue in it) where the loop runs, then the loop from
        # the second: its body is the unchained one, no test of the first iteration in it
        from .attention_tiles import clone

        remap = {loop.body.args[0].id: loop.lower, c_it.id: bufs.base, p_prev.id: p0, stage.id: st0,
                 pv_stage.id: pv0, **{a.id: v for a, v in zip(loop.body.args[1:], inits, strict=True)}}
        first = clone(build(chain), fresh, remap)
        layouts.update({remap[k].id: lay for k, lay in list(layouts.items()) if k in remap})  # the wgmma results'
        outs = tuple(fresh.value(v.dtype, v.shape, v.hint) for v in init_vals)
        then: tuple[object, ...] = (*unshare(first[:-1], fresh), first[-1])
        if chain.xr is not None:  # `TILEC_ATTN_XROT=1`: where the previous tile deferred its last block
            then = _boundary(chain, loop, p, bufs, fresh, layouts, build, unshare, s_product, qempty, remap, st0,
                             (c_it, p_prev, stage, pv_stage), init_vals, then, span)
        idle: list[object] = [ir.Yield(init_vals)]
        if chain.epi2:  # (the previous tile's accumulator, held for the second iteration: `build`'s `hold`)
            acc0 = inits[pos]
            outs += (fresh.value(acc0.dtype, acc0.shape, "acc_prev"),)
            eb = _Build(fresh)
            none = eb.undef(acc0, span)
            idle = [*eb.ops, ir.Yield((*init_vals, none))]
        pre.append(ir.If(outs, ran, ir.Region((), then),  # type: ignore[arg-type]
                         ir.Region((), tuple(idle)), span))
        lower = fresh.value(DType.I32, (), "lower")
        pre.append(ir.Elementwise(lower, E.ADD, (loop.lower, loop.step)))
        init_vals = outs
        if chain.epi2:  # `TILEC_ATTN_CHAIN_EPI2=1`: the second iteration too, the previous tile's epilogue in it
            pre_2, init_vals, lower = _second(chain, loop, build, unshare, fresh, layouts, lower, outs,
                                              (c_it, p_prev, *((stage, pv_stage) if carried else ())), span)
            pre += pre_2
    upper = loop.upper
    if chain is not None and chain.xr is not None:  # the loop stops a block short: the last is the boundary's
        upper = fresh.value(DType.I32, (), "upper")
        pre.append(ir.Elementwise(upper, E.SUB, (loop.upper, loop.step)))
    c_loop = ir.For((*c_results, trips, p_last, *stages), lower, upper, loop.step, init_vals,
                    ir.Region((*loop.body.args, c_it, p_prev, *((stage, pv_stage) if carried else ())),
                              tuple(unshare(body_ops, fresh))), span)  # type: ignore[arg-type]
    if chain is not None:  # the loop's last P V: issued by the next tile's first iteration
        back = {r.id: c for r, c in zip(loop.results, c_results, strict=True)}
        return c_loop, pre, ([], back, trips)
    # after the loop: the last block's P V (when the loop ran), waited for
    # after the join, the zero accumulator selected after the wait (as in
    # attention_loop.overlapped: zeros beside wgmma registers in a branch cost
    # ptxas 13.0 spills and injected waits)
    tb = _Build(fresh)
    last = tb.elem(E.REM, tb.elem(E.ADD, trips, tb.const(bufs.S - 1)), tb.const(bufs.S))
    use_last = tb.elem(E.GT, trips, tb.elem(E.ADD, bufs.base, tb.const(1)), dtype=DType.BOOL, hint="use_acc")
    o_last = fresh.value(DType.F32, p.o_dot.result.shape, "o")
    tb.ops += [g.WgmmaRegA(o_last, p_last, bufs.v, last, c_results[pos], p.v_kmajor, use_last, p.o_dot.span,
                           cast.result.dtype), ir.Yield((o_last,))]
    o_fin, w = fresh.value(DType.F32, p.o_dot.result.shape, "o"), fresh.value(init.dtype, init.shape, "acc")
    z = fresh.value(init.dtype, init.shape, "acc")
    ran_t, acc_f = fresh.value(DType.BOOL, init.shape), fresh.value(init.dtype, init.shape, "acc")
    post: list[object] = [ir.If((o_fin,), ran, ir.Region((), tuple(tb.ops)),  # type: ignore[arg-type]
                                ir.Region((), (ir.Yield((inits[pos],)),)), span),
                          g.WgmmaWait((w,), (o_fin,), 0, span), ir.Const(z, zdef.value),
                          ir.Broadcast(ran_t, ran), ir.Elementwise(acc_f, E.WHERE, (ran_t, w, z))]
    back = {r.id: c for r, c in zip(loop.results, c_results, strict=True)}
    back[loop.results[pos].id] = acc_f
    return c_loop, pre, (post, back, trips)


__all__ = ["AHEAD_HEADROOM", "EARLY_VOTE_DEFAULT", "PINWAIT_DEFAULT", "ROTATE_DEFAULT", "SAHEAD_DEFAULT", "early_vote",
           "enabled", "packed", "pin_wait", "rotated", "s_ahead"]
