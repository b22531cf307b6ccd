"""The persistent walk's tiles chained (`TILEC_ATTN_CHAIN=1`): the next tile's
first S = Q K^T issued before this tile's epilogue (issue 15).

In the rotated loop (`attention_rotated`) a tile's first iteration issues S
of its first key block with a P V of zeros (no block before it), and after
the loop the tile's last P V is issued alone, waited for, and the epilogue
(normalise, store) runs while the tensor cores idle. Chained, the last P V
of tile t is the P V that tile t + 1's first iteration issues with its first
S, in place of the zeros: its P (packed), accumulator and V stage cross the
tile loop's back edge, and so do the loop results and the scalars the
epilogue reads. That iteration waits for S, runs its softmax while the
previous tile's last P V is in flight, waits for that product, and then runs
tile t's epilogue (on the carried values) before its own rescale. So per
tile the last P V's latency, and the first S's, are no longer waited for
alone, and the product of zeros is gone. (FlashAttention-3's persistent
kernel overlaps a tile's epilogue with the next tile's first products in
the same spirit.)

Where a tile's loop runs no iteration (a causal row block that sees no key)
the pending P V is issued, waited for and its epilogue run at that tile's
start (`flush`), then the tile's own epilogue on the zero accumulator; after
the walk the last tile's pending P V the same way. The epilogue must read
nothing but the loop's results, the scalars computed before the loop (carried)
and constants; else the chain does not apply (`plan` returns None).

That first iteration runs before the key loop (`Chain.peel`), so the loop's
body is the unchained one. On the H200 (benchmarks/RESULTS.md, 2026-12-03
sixth session) it gains on the shortest tiles (D = 64, S = 1024: +3 %, with
`TILEC_ATTN_ROTATE=1`; D = 128 S = 1024 +0.4..+2.5 %) and loses 1.5-3 % a key
block at S >= 4096. So by default ("auto") the launch picks, where the value rows are `SHORT_D` wide: the kernel
compiled without a fact about the keys' length is the unchained one and asks
(`GpuKernel.short`, a `facts.Short` on K's row dim, `SHORT_BLOCKS` key blocks)
for the variant the runtime compiles where a launch's keys are that short
(`TensorFacts.rows_at_most` on K): rotated at every D (`AttnPlan.short`,
`attention_rotated.enabled`), chained where the rows are `CHAIN_D` wide, with
the walk's fast divisions and Q released in the loop's last iteration
(`attention_tiles.fastdiv`, `q_early`), and Q double-buffered where it fits
(`attention_tiles.q_slots`). Rotated across the tile boundary as well:
`attention_xrot` (`TILEC_ATTN_XROT`, opt-in).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tilelang.backend.env_switch import flag, numbers
from tilelang.backend.facts import Short
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from . import attention_rotated as rot
from . import attention_xrot as xrot
from . import switches
from .attention_tiles import clone
from .context import Fresh
from .pipeline import _Build

# "1": chain the tiles of the persistent rotated loop; "0": each tile ends with its own last P V;
# "auto": chained (and rotated) where the launch's keys are at most `SHORT_BLOCKS` key blocks
CHAIN_DEFAULT = "auto"
SHORT_BLOCKS = 8  # the H200's crossing (RESULTS 2026-12-03 sixth session): S_k = 1024 wins, 4096 loses
# the value rows' widths where "auto" asks: on the H200 (RESULTS 2026-12-04) D = 64 S = 1024 +2.3..+4.2 % in
# both orders; D = 128's variant is not chained (`CHAIN_D`: +0.5 % once, -1.8..-2.7 % with the fast walk, RESULTS
# 2026-12-04 session 15:51) but has the fast walk and Q released early (`attention_tiles.fastdiv` / `q_early`)
SHORT_D = (64, 128)
CHAIN_D = (64,)  # the widths whose short keys' variant is chained


def short_d() -> tuple[int, ...]:
    """`SHORT_D`, or `TILEC_ATTN_SHORT_D`'s widths (comma-separated, e.g. "64,128": measurements)."""
    return numbers("TILEC_ATTN_SHORT_D", SHORT_D)


def setting() -> str:
    """`TILEC_ATTN_CHAIN`: "1" (Q released in the loop's last iteration, once
    its S is done: nothing else stands between the loop and the next tile's
    wait for Q), "late" (Q released after the loop), "0", "auto" (unset:
    `CHAIN_DEFAULT`; "1" where the launch's keys are short, else "0")."""
    return switches.mode("TILEC_ATTN_CHAIN", CHAIN_DEFAULT, ("0", "1", "late", "auto"))


def short(p: Any, ctx: Any) -> bool:
    """Whether plan `p` (`attention_match.AttnPlan`) is compiled for short keys: "auto"
    and the facts (`ctx`: a `PassContext`) bound K's rows (`TensorFacts.rows_at_most`)."""
    rows = ctx.fact(p.k.load.tensor).rows_at_most
    return setting() == "auto" and p.k_kmajor and 0 < rows <= SHORT_BLOCKS * p.BN


def q_early(ch: Chain | None) -> bool:
    """Whether chain `ch` (None: none) releases Q in the loop's last iteration."""
    return ch is not None and setting() != "late"


def make(p: Any, loop: ir.For, epilogue: list[object], outside: list[object], moved: list[object], bufs: Any,
         fresh: Fresh, ok: bool) -> tuple[Chain | None, Short | None]:
    """The chain for attention plan `p` (`attention_match.AttnPlan`; `bufs`: its
    `attention_loop.Bufs`) where `ok` (the persistent loop, P packed, no TMA-store
    epilogue), the loop is rotated and the chain is on and applies; else None.
    And under "auto" without the fact, where the chain would apply to the
    rotated loop: the kernel's request for the short keys' variant."""
    want = setting()
    if not ok or want == "0":
        return None, None
    ys = loop.body.ops[-1]
    assert isinstance(ys, ir.Yield)
    pos = next((i for i, v in enumerate(ys.values) if v is p.o_dot.result), None)
    pl = None if pos is None else plan(epilogue, loop, pos, outside, moved, loop.span)
    if pl is None:
        return None, None
    if want == "auto" and not p.short:  # the request, where the short variant would be chained and a tile's
        # key loop starts at K's first block (its blocks are then at most K's: prefill, not a decode share)
        first = any(isinstance(op, ir.Const) and op.result is loop.lower and op.value == 0 for op in outside)
        asks = first and p.k_kmajor and int(p.o_dot.result.shape[1]) in short_d() \
            and rot.enabled(dataclasses.replace(p, short=True))
        return None, (Short(p.k.load.tensor, p.k.rank - 2, SHORT_BLOCKS * p.BN) if asks else None)
    if want == "auto" and int(p.o_dot.result.shape[1]) not in CHAIN_D:  # the short variant, unchained here
        return None, None
    if not rot.enabled(p):
        return None, None
    BM, BN = p.o_dot.a.shape
    ch = carries(pl, fresh, loop.results[pl.pos], (BM, BN // 2), bufs.base, bufs.empty)
    if setting() != "late" and p.vmask is None and p.qx is None and ch.peel:  # `TILEC_ATTN_XROT=1`: rotated across the boundary
        skip = {id(op) for t in (p.k, p.v) for op in t.chain} | {id(p.s_dot)}  # (not run as written)
        xr = xrot.make(loop, pl.pos, outside, moved, bufs.qs, bufs.zero, fresh, skip)
        ch = dataclasses.replace(ch, xr=xr) if xr is not None else ch
    if ch.peel and ch.xr is None and p.short and epi2():  # the previous tile's epilogue in the second iteration
        ch = dataclasses.replace(ch, epi2=True)  # (the short keys' variant only, as `attention_csplit`'s walks)
    return ch, None


# `TILEC_ATTN_CHAIN_EPI2` unset: "0"; "1": a chained tile runs the previous tile's epilogue in its second key
# iteration, between the issue of S(1) + P V(0) and the wait for S(1), where the warps have nothing to issue
# (h15u/h15w's stamps: ~1,600 of a tile's ~2,100 boundary cycles are the first iteration's, the epilogue among
# them with the tensor cores idle); a second peeled iteration (`attention_rotated.rotated`). Opt-in: slower on the
# H100 (2026-12-06 call C: -0.9 % f16 full, -2.6 % f16 causal, -8.8 % bf16 causal; the stamps: the boundary's
# ~1,560 cycles unchanged, the other warpgroup's softmax uses those issue slots, and the key loop 8 % slower a
# block under ptxas's new schedule; RESULTS.md "h15y")
EPI2_DEFAULT = "0"


def epi2() -> bool:
    """`TILEC_ATTN_CHAIN_EPI2`: "1" the previous tile's epilogue in the chained tile's second iteration, "0" (unset:
    `EPI2_DEFAULT`) in its first."""
    want = switches.mode("TILEC_ATTN_CHAIN_EPI2", EPI2_DEFAULT, ("0", "1"))
    return want == "1"


def layouts(ch: Chain | None, cl: Any, warps: int, lay: dict[int, Any]) -> None:
    """The carried tiles' layouts (`cl`: `attention_layout.Classes`): as the loop
    results they stand for (nothing without a chain)."""
    from ..layouts import AccTile

    if ch is None:
        return

    for r, a in zip(ch.plan.results, ch.results, strict=True):
        cl.union(r, a)
    if ch.xr is not None:
        for r, a in zip(ch.xr.results, ch.xr.lvals, strict=True):
            cl.union(r, a)
    for a in region_args(ch):
        if a.shape:
            lay[a.id] = AccTile(warps, cl.of(a) if len([x for x in a.shape if x > 1]) == 1 else "")


def final(ch: Chain, init: list[object], ops: list[object], vbuf: ir.Value, v_kmajor: bool, dtype: DType,
          assign: Any) -> list[object]:
    """The walk `ops` (`attention_tiles.tile_loop`'s) with the chain's first
    values (`init`, `tile_carry`'s) before it and after it the last tile's
    pending P V and epilogue; `assign(ops, new)` gives every tile a layout (`new`: ops added
    here whose tiles' row / column classes are not known yet: `attention_xrot`'s block)."""
    fin = _final(ch, ops[-1], vbuf, v_kmajor, dtype)
    out = [*init, *ops, *fin]
    assign(out, fin if ch.xr is not None else [])  # (the deferred block's arange rows and columns)
    return out


def _final(ch: Chain, walk: object, vbuf: ir.Value, v_kmajor: bool, dtype: DType) -> list[object]:
    assert isinstance(walk, ir.For)
    n = len(region_args(ch))
    pend, use_c, stage, p, acc, *rest = walk.results[-n:]
    k, m = len(ch.results), len(ch.scalars)
    xr = ch.xr
    if xr is not None:  # the last tile's deferred block first (`attention_xrot.finish`)
        x = rest[k + m:]
        nl = len(xr.lvals)
        xr = dataclasses.replace(xr, defer=x[0], jl=x[1], base=x[2], qs=x[3], lvals=tuple(x[4:4 + nl]),
                                 bscal=tuple(x[4 + nl:]))
    last = dataclasses.replace(ch, pend=pend, use_c=use_c, stage=stage, p=p, acc=acc, results=tuple(rest[:k]),
                               scalars=tuple(rest[k:k + m]), xr=xr)
    if xr is None:
        return last.flush(pend, vbuf, v_kmajor, dtype)
    b = _Build(ch.fresh)
    it_l = b.elem(ir.ElemOp.SUB, walk.results[0], b.const(1), hint="it_last")
    ops, last = xrot.finish(xr, last, xr.defer, it_l, ch.plan.span, alone=True)
    return [*b.ops, *ops, *last.flush(pend, vbuf, v_kmajor, dtype)]


@dataclass(frozen=True, slots=True)
class Chain:
    """The values carried from one tile to the next (the tile loop's region
    arguments) and the epilogue to run on them."""

    pend: ir.Value  # bool: the previous tile's last P V is pending (its loop ran)
    use: ir.Value  # bool: pend and that product adds to its accumulator (more than one block)
    use_c: ir.Value  # bool: that product adds to its accumulator (carried)
    stage: ir.Value  # i32: its V stage
    p: ir.Value  # its P, packed
    acc: ir.Value  # its accumulator (rescaled, the product not yet issued)
    results: tuple[ir.Value, ...]  # the previous tile's loop results the epilogue reads
    scalars: tuple[ir.Value, ...]  # the previous tile's scalars the epilogue reads
    plan: Any  # `Plan`
    base: ir.Value  # the ring's counter at this tile's start
    empty: ir.Value  # the ring's "empty" barriers
    fresh: Fresh
    release: bool = True  # the first iteration releases the pending product's stage (False: tests show the hang)
    # the first iteration before the loop (`TILEC_ATTN_CHAIN_PEEL`, "1" unset): the loop's body is then the
    # unchained one; "0": one body, the first iteration tested in it (3 % slower a key block, H200 2026-12-03)
    peel: bool = dataclasses.field(default_factory=lambda: flag("TILEC_ATTN_CHAIN_PEEL", "1"))
    xr: Any = None  # `attention_xrot.Xrot`: rotated across the tile boundary (`TILEC_ATTN_XROT=1`), else None
    # the previous tile's epilogue in the second iteration, under its S (`TILEC_ATTN_CHAIN_EPI2=1`, `epi2`)
    epi2: bool = False
    tn: ir.Value | None = None  # the tile's number in the CTA, for `TILEC_ATTN_STAMPS=2`'s stamps in the first iteration

    def first(self, b: _Build, it: ir.Value, accw: ir.Value) -> tuple[list[object], ir.Value]:
        """In the loop's first iteration, after the previous tile's last P V
        is waited for (`accw`): that tile's epilogue, and the value the body
        goes on with in place of `accw` (the branch's: so that LLVM neither
        computes the body's rescale of `accw` before the branch nor keeps
        `accw` through the epilogue, 64 registers a thread more at 128 x 128,
        D = 128, where ptxas spilled)."""
        E = ir.ElemOp
        first = b.elem(E.EQ, it, self.base, dtype=DType.BOOL)
        go = b.elem(E.AND, first, self.pend, dtype=DType.BOOL, hint="chained")
        # the scalars through `g.Opaque`: else LLVM computes the epilogue's
        # addresses (64-bit, dozens a thread) before the loop and keeps them
        # (ptxas spilled 688 bytes at 128 x 128, D = 128)
        own = tuple(self.fresh.value(v.dtype, (), v.hint) for v in self.scalars)
        f, span = self.fresh, self.plan.span
        out = f.value(accw.dtype, accw.shape, accw.hint)
        ops = [g.Opaque(own, self.scalars, span), *self.epilogue(accw, own)]
        # the branch's value: the epilogue's first tile computed from `accw` where
        # there is one (then `accw` dies in it and the epilogue computes in place;
        # the loop's next P V ignores what the body makes of it: `use_acc`)
        made = next((r for op in ops if isinstance(op, ir.Elementwise) and accw in op.operands
                     for r in g.results(op) if r.shape == accw.shape and r.dtype is accw.dtype), None)
        if made is None:
            made = f.value(accw.dtype, accw.shape, accw.hint)
            ops.append(g.WgmmaWait((made,), (accw,), 0, span))
        return [ir.If((out,), go, ir.Region((), (*ops, ir.Yield((made,)))),  # type: ignore[arg-type]
                      ir.Region((), (ir.Yield((accw,)),)), span)], out

    def later(self, pred: ir.Value, acc: ir.Value) -> list[object]:
        """Where `pred`: the previous tile's epilogue on `acc`, its final accumulator waited for already
        (`TILEC_ATTN_CHAIN_EPI2=1`: in the second iteration, between its issue and its wait for S; in a tile of
        one key block after the first). No value comes out of the branch: its stores are the epilogue's."""
        own = tuple(self.fresh.value(v.dtype, (), v.hint) for v in self.scalars)  # (as `first`'s)
        ops = [g.Opaque(own, self.scalars, self.plan.span), *self.epilogue(acc, own), ir.Yield(())]
        return [ir.If((), pred, ir.Region((), tuple(ops)), ir.Region((), (ir.Yield(()),)), self.plan.span)]  # type: ignore[arg-type]

    def epilogue(self, acc: ir.Value, scalars: tuple[ir.Value, ...] | None = None) -> list[object]:
        """The previous tile's epilogue on its final accumulator `acc` (and
        `scalars` in place of the carried ones)."""
        pl: Plan = self.plan
        mapping = {pl.acc_result.id: acc}
        mapping.update({r.id: v for r, v in zip(pl.results, self.results, strict=True)})
        mapping.update({s.id: v for s, v in zip(pl.scalars, scalars or self.scalars, strict=True)})
        return clone([*pl.consts, *pl.ops], self.fresh, mapping)

    def flush(self, pred: ir.Value, vbuf: ir.Value, v_kmajor: bool, dtype: DType) -> list[object]:
        """Where `pred`: the previous tile's last P V issued, waited for, its
        stage released, and that tile's epilogue."""
        f = self.fresh
        span = self.plan.span
        o, w = f.value(DType.F32, self.acc.shape, "o"), f.value(DType.F32, self.acc.shape, "acc")
        then = (g.WgmmaRegA(o, self.p, vbuf, self.stage, self.acc, v_kmajor, self.use_c, span, dtype),
                g.WgmmaWait((w,), (o,), 0, span), g.BarrierArrive(self.empty, self.stage, None, span),
                *self.epilogue(w), ir.Yield(()))
        return [ir.If((), pred, ir.Region((), then), ir.Region((), (ir.Yield(()),)), span)]  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Plan:
    """What the epilogue reads: the loop's accumulator result, its other
    results, scalars computed before the loop (by `outside`), and constants."""

    ops: tuple[object, ...]  # the epilogue (no Yield)
    acc_result: ir.Value
    pos: int  # its place among the loop's results
    results: tuple[ir.Value, ...]
    indices: tuple[int, ...]  # their places among the loop's results
    scalars: tuple[ir.Value, ...]
    consts: tuple[object, ...]  # constant ops of `outside` the epilogue reads (cloned with it)
    span: Any


def plan(epilogue: list[object], loop: ir.For, pos: int, outside: list[object], moved: list[object],
         span: Any) -> Plan | None:
    """The epilogue's inputs, or None where it reads anything else (a tile
    computed before the loop, a block position, a tile it loads: a residual)."""
    defined: set[int] = set()
    for op in g.walk(ir.Region((), tuple(epilogue))):  # type: ignore[arg-type]
        if isinstance(op, ir.BlockId | ir.NumBlocks | ir.Load):
            return None
        defined |= {r.id for r in g.results(op)}
    for op in epilogue:
        for sub in g.regions(op):
            defined |= {a.id for a in sub.args}
    outs = {r.id: op for op in outside for r in g.results(op)}
    tiles = {r.id for op in moved for r in g.results(op)}
    res = {r.id: i for i, r in enumerate(loop.results)}
    results: list[ir.Value] = []
    indices: list[int] = []
    scalars: list[ir.Value] = []
    consts: list[object] = []
    seen: set[int] = set()
    for op in g.walk(ir.Region((), tuple(epilogue))):  # type: ignore[arg-type]
        for v in g.operands(op):
            if v.id in defined or v.id in seen:
                continue
            seen.add(v.id)
            if v.id in res:
                if res[v.id] != pos:
                    results.append(v)
                    indices.append(res[v.id])
            elif v.id in tiles:
                return None
            elif v.id in outs:
                d = outs[v.id]
                if isinstance(d, ir.Const):
                    consts.append(d)
                elif v.shape:
                    return None
                else:
                    scalars.append(v)
    return Plan(tuple(epilogue), loop.results[pos], pos, tuple(results), tuple(indices), tuple(scalars), tuple(consts),
                span)


def carries(pl: Plan, fresh: Fresh, acc: ir.Value, p_shape: tuple[int, ...], base: ir.Value,
            empty: ir.Value) -> Chain:
    """The chain's region arguments (fresh values, defined by the tile loop)."""
    f = fresh
    pend, use_c = f.value(DType.BOOL, (), "pend"), f.value(DType.BOOL, (), "pend_use")
    stage, p = f.value(DType.I32, (), "pend_stage"), f.value(DType.I32, p_shape, "pend_p")
    acc_c = f.value(DType.F32, acc.shape, "pend_acc")
    results = tuple(f.value(r.dtype, r.shape, r.hint) for r in pl.results)
    scalars = tuple(f.value(s.dtype, (), s.hint) for s in pl.scalars)
    use = f.value(DType.BOOL, (), "pend_use")
    return Chain(pend, use, use_c, stage, p, acc_c, results, scalars, pl, base, empty, fresh)


def use_op(ch: Chain) -> object:
    """`ch.use` = pend and the pending product adds to its accumulator (at the tile's start)."""
    return ir.Elementwise(ch.use, ir.ElemOp.AND, (ch.pend, ch.use_c))


def region_args(ch: Chain) -> tuple[ir.Value, ...]:
    return (ch.pend, ch.use_c, ch.stage, ch.p, ch.acc, *ch.results, *ch.scalars, *xrot.region_args(ch.xr))


def tile_carry(ch: Chain, outs: tuple[ir.Value, ...]
               ) -> tuple[list[object], tuple[tuple[ir.Value, ir.Value, object], ...]]:
    """Ops to run before the tile loop, defining the first tile's carried
    values (nothing pending: P zeros, the rest unspecified), and
    `attention_tiles.tile_loop`'s carry: each region argument, the value this
    tile leaves for the next (`outs`, in `region_args`'s order), that first value."""
    f = ch.fresh
    ops: list[object] = []
    vals: list[ir.Value] = []
    for a in region_args(ch):
        v = f.value(a.dtype, a.shape, a.hint)
        if a is ch.p:
            z = f.value(DType.I32, ())
            ops += [ir.Const(z, 0), ir.Broadcast(v, z)]
        elif a.shape:
            ops.append(g.Undef(v, ch.plan.span))
        else:
            ops.append(ir.Const(v, False if a.dtype is DType.BOOL else (0.0 if a.dtype.is_float else 0)))
        vals.append(v)
    return ops, tuple(zip(region_args(ch), outs, vals, strict=True))


__all__ = ["CHAIN_D", "CHAIN_DEFAULT", "EPI2_DEFAULT", "SHORT_BLOCKS", "SHORT_D", "Chain", "Plan", "carries", "epi2", "final", "layouts", "make", "plan", "q_early", "region_args", "setting", "short", "short_d", "stamped", "tile_carry", "tile_ops", "use_op"]


def stamped(ops: list[object], c_loop: ir.For, qbar: ir.Value, tn: ir.Value, span: Any) -> list[object]:
    """A chained tile's consumer ops (`tile_ops`'s) with the cycle stamps of
    `TILEC_ATTN_STAMPS=1` (`attention_tiles.stamped`; unset: `ops` as they
    are): 2 once Q is in (the wait on `qbar`), 3 before the key loop `c_loop`
    (the first iteration, which waits for the previous tile's last P V and
    runs its epilogue, done), 4 after it, 5 after Q's release and the
    pending product's values, 6 at the tile's end (after the epilogue of a
    tile whose loop ran no iteration). The slots' names are the unchained
    tile's (`benchmarks/probes/attention_stamps.py`): here "first_block"
    holds the previous tile's epilogue and "last_pv" nothing."""
    from .attention_tiles import stamped as put
    from .attention_tiles import stamps

    if not stamps():
        return ops
    q_in = next(i for i, op in enumerate(ops) if isinstance(op, g.BarrierWait) and op.bar is qbar) + 1
    at = next(i for i, op in enumerate(ops) if isinstance(op, ir.For) and op.results == c_loop.results)
    return put(ops, tn, [(q_in, 2), (at, 3), (at + 1, 4), (len(ops) - 1, 5), (len(ops), 6)], span)


def tile_ops(ch: Chain, c_loop: ir.For, c_pre: list[object], loop: ir.For, S: int, q_wait: list[object],
             q_release: list[object], moved: list[object], before: list[object], p: Any, vbuf: ir.Value,
             dtype: DType) -> tuple[list[object], ir.Value, list[object], tuple[tuple[ir.Value, ir.Value, object], ...]]:
    """A chained tile's consumer ops (the previous tile's pending product
    flushed where this tile's loop runs no iteration; Q's wait; the loop;
    Q's release `q_release`; this tile's own epilogue where its loop did not
    run, on the zero accumulator), the ring's counter after it, and
    `tile_carry`'s answer for what it leaves to the next tile. `c_loop`:
    `attention_rotated.rotated`'s loop with `ch` (results: the user's `loop`'s,
    the ring's counter, P packed, the stages); `before`: the ops before the
    loop (the accumulator's zero among them); `p`: `attention_match.AttnPlan`."""
    E = ir.ElemOp
    f = ch.fresh
    pl: Plan = ch.plan
    n, pos, lower, upper, v_kmajor = len(loop.results), pl.pos, loop.lower, loop.upper, p.v_kmajor
    zero = next(op for op in before if isinstance(op, ir.Const) and op.result is loop.inits[pos])
    b = _Build(f)
    ran = b.elem(E.LT, lower, upper, dtype=DType.BOOL, hint="ran")
    idle = b.elem(E.NOT, ran, dtype=DType.BOOL)
    flush = b.elem(E.AND, idle, ch.pend, dtype=DType.BOOL)
    if ch.xr is not None and ch.peel:  # the previous tile's deferred block run alone first (`attention_xrot.finish`)
        lone = b.elem(E.AND, idle, ch.xr.defer, dtype=DType.BOOL)
        fin, fch = xrot.finish(ch.xr, ch, lone, b.elem(E.SUB, ch.base, b.const(1), hint="it_last"), pl.span)
        start = [*b.ops, *fin, *fch.flush(flush, vbuf, v_kmajor, dtype)]
    else:
        start = [*b.ops, *ch.flush(flush, vbuf, v_kmajor, dtype)]
    c_results = c_loop.results[:n]
    trips, p_last = c_loop.results[n], c_loop.results[n + 1]
    a = _Build(f)
    last = a.elem(E.REM, a.elem(E.ADD, trips, a.const(S - 1)), a.const(S), hint="pend_stage")
    use = a.elem(E.GT, trips, a.elem(E.ADD, ch.base, a.const(1)), dtype=DType.BOOL, hint="pend_use")
    # a tile whose loop ran no iteration: its epilogue on the zeros now (nothing pending)
    assert isinstance(zero, ir.Const)
    z = f.value(zero.result.dtype, zero.result.shape, "acc")
    mapping = {pl.acc_result.id: z, **{r.id: c_results[i] for r, i in zip(pl.results, pl.indices, strict=True)}}
    own = [dataclasses.replace(zero, result=z), *clone([*pl.consts, *pl.ops], f, mapping)]
    own_if = ir.If((), idle, ir.Region((), (*own, ir.Yield(()))), ir.Region((), (ir.Yield(()),)), pl.span)  # type: ignore[arg-type]
    x_outs: tuple[ir.Value, ...] = ()
    if ch.xr is not None:  # what the rotation carries; the ring one further where the last block is deferred
        x_ops, x_outs, trips_out = xrot.outs(ch.xr, loop, ch.base, trips, c_results)
        a.ops += x_ops
    else:
        trips_out = trips
    ops = [*moved, *start, *q_wait, use_op(ch), *c_pre, c_loop, *q_release, *a.ops, own_if]
    outs = (ran, use, last, p_last, c_results[pos], *(c_results[i] for i in pl.indices), *pl.scalars, *x_outs)
    return (ops, trips_out, *tile_carry(ch, outs))
