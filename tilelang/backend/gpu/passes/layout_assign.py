"""Pass `layout_assign`: give every tile value a layout, with few conversions.

Values that an earlier pass placed (shared buffers, barriers, the wgmma
accumulator of a pipelined loop) keep their layout. The accumulator of a
loop that only accumulates into one `mma.sync` (`acc = mma(a, b, acc)` with
no other use) takes the mma.sync C-fragment layout (`MmaAcc`) for the loop's
carried value, the dot's result and the loop's result, so it stays in
registers for the whole loop.

Every other tile value gets a distributed layout, in three steps:

1. anchors, forward in program order: a load or an `mma` result takes the
   blocked layout of its shape (`layouts.blocked_for`: 16-byte
   accesses along the last dim, lanes then warps along it; warps go to the
   rows first when the kernel reduces along its last dim, so a row's
   reduction stays inside a warp where the rows allow). A reduction's result
   is the slice of its input's layout; a reshape that only adds or drops a
   size-1 dim and a broadcast follow their input so they move nothing; an
   element-wise op takes the layout of its first operand that has one.
   Constants, `arange` and broadcast scalars wait ("free": any layout
   computes them in registers), as do element-wise ops and broadcasts of
   free values and broadcasts whose input's layout would crowd the larger
   result into few threads: they take the layout their users want.
2. rematerialisation, backward: where an element-wise op, a store's mask or
   a loop's yield meets an operand in another layout, the operand's chain of
   single-use producers (loads, constants, reshapes, broadcasts, element-wise
   ops) is re-laid in the wanted layout if every step allows it (a load may
   take any layout; a reshape or broadcast maps the layout back through its
   shape change). Otherwise the conversion stays, for the `convert` pass.
3. loops: a carried value takes its init's layout, unless the init is free,
   in which case the body is laid out once to learn the layout its yield
   produces (a running row sum carries the slice its reduction makes). In
   that first pass the carried value is itself free, so a nested loop it
   initialises learns its own yield's layout too (a running max over two
   nested loops carries the layout its compare makes, not the default's
   round trip through shared memory at each inner iteration).

The `convert` pass then makes every remaining disagreement an explicit
`ConvertLayout`.
"""

from __future__ import annotations

import dataclasses
import math

from tilelang.backend.env_switch import flag
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import (
    Blocked,
    Layout,
    MmaAcc,
    MmaTile,
    Slice,
    WgmmaAcc,
    blocked_for,
    is_replicated,
    next_pow2,
    replicate_bound,
    replicated_for,
)
from .context import PassContext
from .rewrite import uses


def fused_accumulators(op: ir.For) -> dict[int, g.DotOp]:
    """Carried positions whose value the body only feeds, as the accumulator, to
    one top-level mma.sync `DotOp` whose result is yielded back in its place (f16/bf16 products: the
    int8 mma keeps its accumulator in shared memory outside sm_80's ring)."""
    body = op.body
    ys = body.ops[-1]
    assert isinstance(ys, ir.Yield)
    count = uses(body)
    out: dict[int, g.DotOp] = {}
    for i, arg in enumerate(body.args[1:]):
        for o in body.ops:
            if (isinstance(o, g.DotOp) and o.engine == "mma.sync" and o.acc.dtype is DType.F32 and o.acc.id == arg.id
                    and count.get(arg.id) == 1 and ys.values[i].id == o.result.id
                    and count.get(o.result.id) == 1):
                out[i] = o
    return out


# ------------------------------------------------------------------ layout algebra
def insert_dim(p: Blocked, d: int) -> Blocked:
    """`p` with a new dim `d` that no thread spans (size-1 dims read coordinate 0)."""
    def ins(xs: tuple[int, ...]) -> tuple[int, ...]:
        return (*xs[:d], 1, *xs[d:])

    order = (*(o if o < d else o + 1 for o in p.order), d)
    return Blocked(ins(p.size_per_thread), ins(p.threads_per_warp), ins(p.warps_per_cta), order)


def drop_dim(p: Blocked, d: int) -> Blocked | None:
    """`p` without dim `d` when no thread, lane or warp spans it (`insert_dim`'s
    inverse); None otherwise."""
    if len(p.order) < 2 or not p.size_per_thread[d] == p.threads_per_warp[d] == p.warps_per_cta[d] == 1:
        return None

    def rm(xs: tuple[int, ...]) -> tuple[int, ...]:
        return (*xs[:d], *xs[d + 1:])

    order = tuple(o if o < d else o - 1 for o in p.order if o != d)
    return Blocked(rm(p.size_per_thread), rm(p.threads_per_warp), rm(p.warps_per_cta), order)


def _one_dim_changes(xs: tuple[int, ...], rs: tuple[int, ...]) -> list[tuple[str, int]]:
    """[("insert", d)] for each d where `rs` is `xs` with a size-1 dim added at d,
    [("remove", d)] for each d where one is dropped; empty for other reshapes."""
    if len(rs) == len(xs) + 1:
        return [("insert", d) for d in range(len(rs)) if rs[d] == 1 and rs[:d] + rs[d + 1:] == xs]
    if len(xs) == len(rs) + 1:
        return [("remove", d) for d in range(len(xs)) if xs[d] == 1 and xs[:d] + xs[d + 1:] == rs]
    return []


def reshape_forward(xs: tuple[int, ...], rs: tuple[int, ...], lx: Layout | None) -> Layout | None:
    """The layout that makes `reshape` from `xs` (in `lx`) to `rs` move nothing."""
    if lx is None or xs == rs:
        return lx
    changes = _one_dim_changes(xs, rs)
    if isinstance(lx, Slice):
        return lx.parent if ("insert", lx.dim) in changes else None
    if isinstance(lx, Blocked) and changes:
        kind, d = changes[-1]
        return insert_dim(lx, d) if kind == "insert" else Slice(d, lx)
    if isinstance(lx, Blocked):
        return reshape_blocked(xs, rs, lx)
    return None


def reshape_backward(xs: tuple[int, ...], rs: tuple[int, ...], lr: Layout) -> Layout | None:
    """The layout of the input that makes the reshape to `rs` (in `lr`) move nothing:
    the forward layout of the reverse reshape (`_one_dim_changes` of the two
    shapes swapped are the same dims, insert and remove swapped)."""
    return reshape_forward(rs, xs, lr)


def _log2(n: int) -> int | None:
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


def reshape_blocked(xs: tuple[int, ...], rs: tuple[int, ...], lx: Blocked) -> Blocked | None:
    """The blocked layout of shape `rs` that holds every element in the thread
    and lane that `lx` holds it in for shape `xs`, when a reshape that splits
    or merges dims (row-major) has one; None otherwise.

    With power-of-two dims that `lx` covers without replicas, each bit of an
    element's row-major index is, from the lowest: per dim (last dim first)
    its `spt` bits (registers), `tpw` bits (lanes), `wpc` bits (warps), then
    repetition bits (registers). A reshape keeps the index, so it keeps that
    string of bits; cut at the new dims, each piece must again read
    registers, lanes, warps, registers, in that order, and lanes and warps
    must stay in the same order in the lane and warp ids (dims fastest first,
    as `blocked_for` orders them). Splitting [W * R, D] rows into [W, R, D]
    is expressible when a thread's rows of a warp are its own `spt` run:
    `fold_reps` makes such a layout."""
    r = len(xs)
    if (math.prod(xs) != math.prod(rs) or len(lx.size_per_thread) != r
            or any(_log2(n) is None for n in (*xs, *rs))):
        return None
    spread = [d for d in range(r) if lx.threads_per_warp[d] * lx.warps_per_cta[d] > 1]
    if [d for d in lx.order if d in spread] != sorted(spread, reverse=True):
        return None
    bits: list[str] = []
    for d in range(r - 1, -1, -1):
        spt, tpw, wpc = lx.size_per_thread[d], lx.threads_per_warp[d], lx.warps_per_cta[d]
        cov = spt * tpw * wpc
        if cov > xs[d]:
            return None  # replicas or padding: not a plain bit string
        bits += ["s"] * _log2(spt) + ["l"] * _log2(tpw) + ["w"] * _log2(wpc)  # type: ignore[operator]
        bits += ["r"] * _log2(xs[d] // cov)  # type: ignore[operator]
    spt_r, tpw_r, wpc_r = [1] * len(rs), [1] * len(rs), [1] * len(rs)
    pos = 0
    for d in range(len(rs) - 1, -1, -1):
        piece = "".join(bits[pos:pos + _log2(rs[d])])  # type: ignore[operator]
        pos += len(piece)
        s = len(piece) - len(piece.lstrip("s"))
        rest = piece[s:]
        lanes = len(rest) - len(rest.lstrip("l"))
        rest = rest[lanes:]
        warps = len(rest) - len(rest.lstrip("w"))
        rest = rest[warps:]
        if rest.strip("r"):
            return None
        spt_r[d], tpw_r[d], wpc_r[d] = 1 << s, 1 << lanes, 1 << warps
    if math.prod(tpw_r) != 32:
        return None
    return Blocked(tuple(spt_r), tuple(tpw_r), tuple(wpc_r), tuple(range(len(rs) - 1, -1, -1)))


def fold_reps(lay: Blocked, shape: tuple[int, ...]) -> Blocked:
    """`lay` with the repetitions of every dim but the last folded into its
    `spt`: a thread holds its elements of such a dim as one run (the same
    elements per thread, other ones), which a reshape can split per warp."""
    spt = list(lay.size_per_thread)
    for d in range(len(shape) - 1):
        cov = spt[d] * lay.threads_per_warp[d] * lay.warps_per_cta[d]
        if shape[d] > cov and shape[d] % cov == 0:
            spt[d] *= shape[d] // cov
    return dataclasses.replace(lay, size_per_thread=tuple(spt))


def broadcast_forward(xs: tuple[int, ...], rs: tuple[int, ...], lx: Layout | None) -> Layout | None:
    lead = len(rs) - len(xs)
    if lead == 0 and isinstance(lx, Blocked):
        return lx
    if lead == 1 and isinstance(lx, Slice) and lx.dim == 0:
        return lx.parent
    return None


def broadcast_backward(xs: tuple[int, ...], rs: tuple[int, ...], lr: Layout) -> Layout | None:
    lead = len(rs) - len(xs)
    if isinstance(lr, Blocked):
        if lead == 0:
            return lr
        if lead == 1:
            return Slice(0, lr)
    return None


# ------------------------------------------------------------------ warps along the columns
def warps_on_columns_enabled() -> bool:
    """`TILEC_WARPS_ON_COLUMNS` (unset or "1": on; "0": off): `warps_on_last_dim`."""
    return flag("TILEC_WARPS_ON_COLUMNS", "1")


def loaded_and_reduced(body: ir.Region) -> dict[int, frozenset[int]]:
    """Loaded tiles summed (or maxed) along an axis other than their last:
    for each load or reshape result that reaches a `Reduce` along such an
    axis through element-wise ops of its shape, the axes it is reduced along
    (a split merge's partial outputs, `(parts * w).sum(0)` over [NS, G, DC]).
    Its last axis among them (a tile reduced both ways) leaves the default:
    warps on the rows keep the row reductions in a warp. A loaded tile (through
    reshapes) of rank 3 or more broadcast along its last axis only,
    [.., 1] -> [.., N], counts as a load (hdec: the decode fold's log-sum-exps
    broadcast over its [G, NS, D] partials, whose max and sums crossed warps).
    A broadcast of a computed value does not (counted, the engine's
    `combine_splits` weights went 9 -> 11 barriers), nor a rank-2 one (counted,
    four user programs' column sums moved, one with 4 shared-memory loads more:
    unmeasured, so left as they were)."""
    defs: dict[int, object] = {}
    reduces = []
    for op in g.walk(body):
        for v in g.results(op):
            defs[v.id] = op
        if isinstance(op, ir.Reduce) and len(op.x.shape) >= 2:
            reduces.append(op)

    def along_last(b: ir.Broadcast) -> bool:
        # a loaded tile (through reshapes) of rank 3 or more stretched along its last axis only: [.., 1] -> [.., N]
        src, dst = b.x.shape, b.result.shape
        if len(src) != len(dst) or len(dst) < 3 or src[-1] != 1 or dst[-1] == 1 or src[:-1] != dst[:-1]:
            return False
        d = defs.get(b.x.id)
        while isinstance(d, ir.Reshape):
            d = defs.get(d.x.id)
        return isinstance(d, ir.Load)

    out: dict[int, set[int]] = {}
    for r in reduces:
        todo, seen = [r.x], set()
        while todo:
            v = todo.pop()
            if v.id in seen:
                continue
            seen.add(v.id)
            d = defs.get(v.id)
            if isinstance(d, ir.Load | ir.Reshape) or (isinstance(d, ir.Broadcast) and along_last(d)):
                out.setdefault(v.id, set()).add(r.axis)
            elif isinstance(d, ir.Elementwise | ir.Cast):
                todo += [x for x in g.operands(d) if x.shape == v.shape]
    return {k: frozenset(a) for k, a in out.items()}


def warps_on_last_dim(shape: tuple[int, ...], threads: int, itemsize: int) -> Blocked | None:
    """`blocked_for`'s layout of `shape` (16-byte vectors along the last dim)
    with the warps on the last dim before the lanes, so a reduction along
    any other axis stays inside each warp (shuffles, no shared memory); None
    where the last dim cannot take every warp or the lanes would replicate.
    The default fills the last dim with lanes and puts the warps on the next
    dims: a split merge's [NS, G, DC] partials, 16 shares by DC = 16, had
    their warps on the shares, each sum over them a round trip through
    shared memory with two barriers. Bits of the row-major index stay in
    `reshape_blocked`'s order (registers, lanes, warps within each dim), so a
    [1, NS * G, DC] load reshaped to [NS, G, DC] takes it without a move."""
    r = len(shape)
    warps = max(1, threads // 32)
    pad = [next_pow2(max(1, n)) for n in shape]
    spt = list(blocked_for(shape, threads, itemsize).size_per_thread)
    if r < 2 or pad[-1] // spt[-1] < warps:
        return None
    wpc = [1] * r
    wpc[-1] = warps
    tpw = [1] * r
    lanes = 32
    for k in range(r - 1, -1, -1):
        t = min(lanes, max(1, pad[k] // (spt[k] * wpc[k])))
        tpw[k] = t
        lanes //= t
    if lanes > 1:
        return None
    return Blocked(tuple(spt), tuple(tpw), tuple(wpc), tuple(range(r - 1, -1, -1)))


def nested_carry_enabled() -> bool:
    """`TILEC_NESTED_CARRY` (unset or "1": on; "0": off, as before 2026-12-06): while a loop's
    body is laid out to learn what its free carried values yield, they are free there too, so a
    loop nested in it that they initialise learns its own yield's layout (hcliff3: a 3x3
    max-pool's running max and index over two nested loops, 42 -> 16 barriers)."""
    from .switches import mode

    return mode("TILEC_NESTED_CARRY", "1", ("0", "1")) == "1"


def _distributed(lay: Layout | None) -> bool:
    return isinstance(lay, Blocked | Slice | MmaTile)


# ------------------------------------------------------------------ the pass
class _Assigner:
    def __init__(self, k: g.GpuKernel, rep: frozenset[int] = frozenset(), replicate: bool = False) -> None:
        # reduction results held whole by every thread (`small_exchanges`), and
        # whether the option is on at all (off: every choice as before it)
        self.rep = rep
        self.replicate = replicate
        self.layouts: dict[int, Layout] = dict(k.layouts)
        self.preset = set(self.layouts)
        self.defs: dict[int, object] = {}
        self.count = uses(k.body)
        self.row_reduce = any(isinstance(o, ir.Reduce) and len(o.x.shape) >= 2 and o.axis == len(o.x.shape) - 1
                              for o in g.walk(k.body))
        self.reduced_axes: dict[int, set[int]] = {}  # the axes each value of rank >= 2 is reduced along
        for o in g.walk(k.body):
            if isinstance(o, ir.Reduce) and len(o.x.shape) >= 2:
                self.reduced_axes.setdefault(o.x.id, set()).add(o.axis)
        self.loop_args: set[int] = set()
        # carried values of the loops whose body is being laid out once to learn what it yields
        # (free inits): free there too, so that a nested loop they initialise learns its own
        self.probing: set[int] = set()
        self.loaded_reduced = loaded_and_reduced(k.body) if warps_on_columns_enabled() else {}

    def default(self, v: ir.Value, threads: int) -> Blocked:
        wf = 0 if self.row_reduce and len(v.shape) >= 2 else None
        lay = blocked_for(v.shape, threads, v.dtype.itemsize, warps_first=wf)
        axes = self.loaded_reduced.get(v.id)
        if axes and len(v.shape) - 1 not in axes and any(lay.warps_per_cta[a] > 1 for a in axes):
            return warps_on_last_dim(v.shape, threads, v.dtype.itemsize) or lay
        return lay

    def spread(self, lay: Layout, v: ir.Value, threads: int) -> bool:
        """`lay` gives `v` no more registers per thread than its default layout."""
        from tilelang.backend.codegen.views import view_of

        mine = view_of(lay, v.shape, threads, v.dtype.itemsize).E
        return mine <= view_of(self.default(v, threads), v.shape, threads, v.dtype.itemsize).E

    def get(self, v: ir.Value) -> Layout | None:
        return self.layouts.get(v.id)

    def is_rep(self, v: ir.Value) -> bool:
        """`v` is laid out whole in every thread (only with the option on)."""
        return self.replicate and bool(v.shape) and is_replicated(self.layouts.get(v.id), v.shape)

    def set(self, v: ir.Value, lay: Layout | None) -> None:
        if lay is not None and v.shape and v.id not in self.preset:
            self.layouts[v.id] = lay

    def need(self, v: ir.Value, threads: int) -> Layout:
        """The layout of operand `v`, choosing the default if it is still free."""
        lay = self.get(v)
        if lay is None:
            lay = self.default(v, threads)
            self.set(v, lay)
        return lay

    # -- forward ------------------------------------------------------------------
    def region(self, r: ir.Region, threads: int) -> None:
        for op in r.ops:
            for v in g.results(op):
                self.defs[v.id] = op
            self.op(op, threads)

    def op(self, op: object, threads: int) -> None:
        match op:
            case ir.Load(result=res):
                self.set(res, replicated_for(res.shape, threads) if res.id in self.rep else self.default(res, threads))
            case ir.Const() | ir.Arange() | ir.Broadcast() if not g.operands(op) or not g.operands(op)[0].shape:
                pass  # free (any layout computes it in registers): the first user decides
            case ir.Elementwise(result=res) | ir.Cast(result=res):
                tiles = [v for v in g.operands(op) if v.shape]
                lays = [self.get(v) for v in tiles]
                wg = [x for x in lays if isinstance(x, WgmmaAcc)]
                if wg and all(x == wg[0] for x in lays):
                    self.set(res, wg[0])  # an epilogue on the wgmma accumulator (the Hopper path)
                    return
                pick = next((x for x, v in zip(lays, tiles, strict=True) if _distributed(x)
                             and not self.is_rep(v)), None)
                if pick is None:
                    # small tiles whole in every thread: so is what they compute (any other
                    # operand's layout reads them in registers: `codegen/replicated.gather`)
                    pick = next((x for x, v in zip(lays, tiles, strict=True) if self.is_rep(v)), None)
                if pick is not None:
                    self.set(res, pick)
                elif any(x is not None for x in lays):
                    self.set(res, self.default(res, threads))
                # else: every operand is free, so is the result
            case ir.Reduce(result=res, x=x, axis=a):
                lx = self.need(x, threads)
                if res.shape and res.id in self.rep:
                    self.set(res, replicated_for(res.shape, threads))  # ends in an all-gather
                elif res.shape:
                    self.set(res, Slice(a, lx) if isinstance(lx, Blocked) else self.default(res, threads))
            case ir.Scan(result=res, x=x):
                lx = self.need(x, threads)
                self.set(res, lx if isinstance(lx, Blocked) else self.default(res, threads))
            case ir.Reshape(result=res, x=x) if x.shape and res.shape and self.is_rep(x):
                lr = reshape_forward(x.shape, res.shape, self.get(x))
                self.set(res, lr if lr is not None and is_replicated(lr, res.shape)
                         else replicated_for(res.shape, threads))
            case ir.Reshape(result=res, x=x):
                lx = self.get(x)
                if lx is None and x.id not in self.layouts:
                    if not x.shape or self._free(x):
                        return  # stays free
                    lx = self.need(x, threads)
                if x.shape and res.shape and not _one_dim_changes(x.shape, res.shape):
                    lr = self.relay_reshape(x, res, threads)
                    if lr is not None:
                        self.set(res, lr)
                        return
                lay_r: Layout | None = reshape_forward(x.shape, res.shape, lx)
                if isinstance(lay_r, Slice) and isinstance(lx, Blocked) and (sq := drop_dim(lx, lay_r.dim)) is not None \
                        and any(sq.warps_per_cta[a] > 1 for a in self.reduced_axes.get(res.id, ())):
                    # a size-1 dim no thread spans dropped before a reduction across warps: the load's
                    # layout without it, which `codegen/reduce.reduce_blocked` sums by shuffles and one
                    # partial a warp; a Slice of it sent `t.sum(1)` of a [1, C, P] load reshaped to
                    # [C, P] to the serial shared-memory loop (n03's GroupNorm: 17x slower than torch).
                    # Only there: other kernels keep their layouts (and PTX)
                    lay_r = sq
                self.set(res, lay_r or self.default(res, threads))
            case ir.Broadcast(result=res, x=x):
                lx = self.get(x)
                if (lx is None and self._free(x)) or self.is_rep(x):
                    return  # free: a replicated input is read in registers in any layout
                lx = self.need(x, threads)
                lr = broadcast_forward(x.shape, res.shape, lx)
                if lr is not None and self.spread(lr, res, threads):
                    self.set(res, lr)
                # else: the input's layout would crowd the larger result into few
                # threads; the result's users decide (or the default does)
            case ir.For():
                self.loop(op, threads)
            case ir.While():
                self.while_(op, threads)
            case ir.If(results=rs, then=t, else_=e):
                self.region(t, threads)
                self.region(e, threads)
                for i, v in enumerate(rs):
                    if v.shape:
                        self.set(v, self.if_result(t, e, i) or self.default(v, threads))
            case g.WarpSpecialize(roles=roles):
                for role in roles:
                    self.region(role.body, role.warps * 32)
            case _:
                for sub in g.regions(op):
                    for a in sub.args:
                        if a.shape:
                            self.set(a, self.default(a, threads))
                    self.region(sub, threads)
                for v in g.results(op):
                    if v.shape:
                        self.set(v, self.default(v, threads))

    def if_result(self, t: ir.Region, e: ir.Region, i: int) -> Layout | None:
        """The layout of an `if`'s result `i`: its `then` value's, or, where
        that one is free (a constant: `acc = zeros(..)` in one branch, the
        running sum in the other), its `else` value's, which the free value
        then takes too (it is computed in registers in any layout), so that
        the result moves nothing (a reset accumulator carried by a loop keeps
        the sums' layout instead of the default's round trip through shared
        memory every iteration)."""
        ys = [r.ops[-1].values[i] for r in (t, e) if r.ops and isinstance(r.ops[-1], ir.Yield)]
        if len(ys) != 2:
            return None
        first, other = ys
        lay = self.get(first)
        if lay is not None or not self._free(first):
            return lay
        lay = self.get(other)
        if _distributed(lay):
            plan: dict[int, Layout] = {}
            if self.retarget(first, lay, plan):  # type: ignore[arg-type]
                self.layouts.update(plan)
        return lay

    def relay_reshape(self, x: ir.Value, res: ir.Value, threads: int) -> Layout | None:
        """A reshape that splits or merges dims: the result takes its own
        default layout (or that with its repetitions folded, `fold_reps`), and
        the input's single-use producers (a load, say) are re-laid so that the
        reshape moves nothing. Failing both, the input's own default with its
        repetitions folded, read in the result's shape: a split of one dim
        into several keeps the layout the unsplit dim takes (a [W * R, D]
        slab split [W, L, R / L, D] keeps each thread's rows a run and the
        lanes on L). None when no such plan exists."""
        dflt = self.default(res, threads)
        for cand in (dflt, fold_reps(dflt, res.shape)):
            lx = reshape_blocked(res.shape, x.shape, cand)
            plan: dict[int, Layout] = {}
            if lx is not None and self.retarget(x, lx, plan):
                self.layouts.update(plan)
                return cand
        lx = fold_reps(self.default(x, threads), x.shape)
        cand2 = reshape_blocked(x.shape, res.shape, lx)
        plan = {}
        if cand2 is not None and self.retarget(x, lx, plan):
            self.layouts.update(plan)
            return cand2
        return None

    def _free(self, v: ir.Value) -> bool:
        if v.id in self.probing:
            return v.id not in self.layouts
        d = self.defs.get(v.id)
        if isinstance(d, ir.Const | ir.Arange):
            return True
        if isinstance(d, ir.Broadcast):
            return not d.x.shape or self._free(d.x) or self.is_rep(d.x)
        if isinstance(d, ir.Reshape):
            return not d.x.shape or self._free(d.x)
        if isinstance(d, ir.Elementwise | ir.Cast):
            return all(self._free(x) for x in g.operands(d) if x.shape) and v.id not in self.layouts
        return False

    def loop(self, op: ir.For, threads: int) -> None:
        for i, dot in fused_accumulators(op).items():
            frag = MmaAcc(threads // 32)
            for v in (op.body.args[1 + i], dot.result, op.results[i]):
                if v.id not in self.preset:
                    self.layouts[v.id] = frag
                    self.preset.add(v.id)
        self._carried(op.inits, op.body.args[1:], op.results, op.body, threads)

    def while_(self, op: ir.While, threads: int) -> None:
        for a, b in zip(op.cond.args, op.body.args, strict=True):
            self.loop_args.add(a.id)
            self.loop_args.add(b.id)
        self._carried(op.inits, op.body.args, op.results, op.body, threads, cond=op.cond)

    def _carried(self, inits, args, results, body: ir.Region, threads: int,  # type: ignore[no-untyped-def]
                 cond: ir.Region | None = None) -> None:
        free = []
        for i, (init, arg) in enumerate(zip(inits, args, strict=True)):
            self.loop_args.add(arg.id)
            if not arg.shape or arg.id in self.layouts:
                continue
            li = self.get(init)
            if li is None and self._free(init):
                free.append(i)
            else:
                self.set(arg, li if li is not None else self.need(init, threads))
        if free:
            # a first pass learns what the body yields for the free carried values
            saved = dict(self.layouts)
            outer = self.probing
            if nested_carry_enabled():
                self.probing = outer | {args[i].id for i in free}
            self.region(body, threads)
            self.probing = outer
            ys = body.ops[-1]
            learned = {i: self.get(ys.values[i]) for i in free}  # type: ignore[union-attr]
            self.layouts = saved
            for i in free:
                self.set(args[i], learned[i] if _distributed(learned[i]) else self.default(args[i], threads))
                plan: dict[int, Layout] = {}
                if self.retarget(inits[i], self.layouts[args[i].id], plan):
                    self.layouts.update(plan)
        if cond is not None:
            for a, b in zip(cond.args, args, strict=True):
                if b.shape and b.id in self.layouts:
                    self.set(a, self.layouts[b.id])
            self.region(cond, threads)
        self.region(body, threads)
        for arg, res in zip(args, results, strict=True):
            if res.shape and arg.id in self.layouts:
                self.set(res, self.layouts[arg.id])

    # -- backward: re-lay single-use producer chains -----------------------------
    def fix(self, r: ir.Region) -> None:
        for op in reversed(r.ops):
            for sub in g.regions(op):
                self.fix(sub)
            self.fix_op(op)

    def fix_op(self, op: object) -> None:
        wanted: list[tuple[ir.Value, Layout | None]] = []
        match op:
            case ir.Elementwise(result=res) | ir.Cast(result=res):
                lr = self.get(res)
                wanted = [(v, lr) for v in g.operands(op) if v.shape]
            case ir.Store(value=val, mask=m) if m is not None:
                wanted = [(m, self.get(val))]
            case ir.Load(result=res, mask=m) if m is not None:
                wanted = [(m, self.get(res))]
            case ir.AtomicRMW(value=val, indices=ix, mask=m) if val.shape:
                wanted = [(v, self.get(val)) for v in (*ix, m) if v is not None and v.shape]
        for v, lay in wanted:
            if lay is None or not _distributed(lay) or self.get(v) == lay:
                continue
            plan: dict[int, Layout] = {}
            if self.retarget(v, lay, plan):
                self.layouts.update(plan)

    def retarget(self, v: ir.Value, lay: Layout, plan: dict[int, Layout]) -> bool:
        """Plan `v` (and its single-use producers) in `lay`; False if impossible."""
        if plan.get(v.id) == lay or self.get(v) == lay:
            return True
        if v.id in self.preset or v.id in self.loop_args or v.id in plan:
            return False
        if self.count.get(v.id, 0) > 1 and not (self.get(v) is None and self._free(v)):
            return False  # other users may want it where it is (free values are not yet placed)
        d = self.defs.get(v.id)
        match d:
            case ir.Const() | ir.Arange():
                plan[v.id] = lay
                return True
            case ir.Load(mask=m):
                plan[v.id] = lay
                return m is None or self.retarget(m, lay, plan)
            case ir.Broadcast(x=x):
                plan[v.id] = lay
                if not x.shape or self.is_rep(x):
                    return True
                lx = broadcast_backward(x.shape, v.shape, lay)
                return lx is not None and self.retarget(x, lx, plan)
            case ir.Reshape(x=x):
                plan[v.id] = lay
                if not x.shape or self.is_rep(x) or (self.replicate and isinstance(self.defs.get(x.id), ir.Arange)):
                    return True  # (an arange reshaped is its row-major index in any layout)
                lx = reshape_backward(x.shape, v.shape, lay)
                return lx is not None and self.retarget(x, lx, plan)
            case ir.Elementwise() | ir.Cast():
                plan[v.id] = lay
                return all(self.retarget(x, lay, plan) for x in g.operands(d) if x.shape)
        return False

    # -- the rest: free values take a default --------------------------------------
    def finish(self, r: ir.Region, threads: int) -> None:
        for op in r.ops:
            if isinstance(op, g.WarpSpecialize):
                for role in op.roles:
                    self.finish(role.body, role.warps * 32)
                continue
            for sub in g.regions(op):
                for a in sub.args:
                    if a.shape and a.id not in self.layouts:
                        self.layouts[a.id] = self.default(a, threads)
                self.finish(sub, threads)
            for v in g.results(op):
                if v.shape and v.id not in self.layouts:
                    self.layouts[v.id] = self.default(v, threads)


def _first_users(k: g.GpuKernel, a: _Assigner) -> None:
    """A free value takes the layout its first user wants (the user's result
    for element-wise ops, the stored value's for masks)."""
    for op in g.walk(k.body):
        want: Layout | None = None
        match op:
            case ir.Elementwise(result=res) | ir.Cast(result=res):
                want = a.get(res)
            case ir.Store(value=val):
                want = a.get(val)
        if not _distributed(want):
            continue
        for v in g.operands(op):
            if v.shape and a.get(v) is None:
                plan: dict[int, Layout] = {}
                if a.retarget(v, want, plan):  # type: ignore[arg-type]
                    a.layouts.update(plan)


def _assign(k: g.GpuKernel, rep: frozenset[int], replicate: bool) -> _Assigner:
    a = _Assigner(k, rep, replicate)
    threads = k.num_warps * 32
    a.region(k.body, threads)
    _first_users(k, a)
    a.fix(k.body)
    a.finish(k.body, threads)
    return a


def layout_assign(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    bound = replicate_bound()
    # not in kernels with warp roles: their layouts are the pipelines', and a
    # move between threads there needs a barrier the other roles never reach
    replicate = bound > 0 and not any(isinstance(op, g.WarpSpecialize) for op in g.walk(k.body))
    a = _assign(k, frozenset(), replicate)
    if replicate:
        # small tiles held whole by every thread (`TILEC_REPLICATE_SMALL`): the
        # reductions whose small results the first layout moves between threads
        # end in an all-gather instead; again until no other one would
        from .replicate import small_exchanges

        rep: frozenset[int] = frozenset()
        for _ in range(4):
            more = small_exchanges(k, a.layouts, a.defs, bound) - rep
            if not more:
                break
            rep |= more
            a = _assign(k, rep, True)
    return dataclasses.replace(k, layouts=a.layouts)


__all__ = ["broadcast_backward", "broadcast_forward", "fold_reps", "fused_accumulators", "insert_dim",
           "layout_assign", "loaded_and_reduced", "reshape_backward", "reshape_blocked", "reshape_forward",
           "warps_on_columns_enabled", "warps_on_last_dim"]
