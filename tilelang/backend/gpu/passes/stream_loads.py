"""Pass `stream_loads`: a loop's loads streamed through a shared-memory ring.

A loop that reads a tile a iteration and reduces it into a few carried
values (a decode step's keys and values, a GEMV's weights) is a copy of
memory: it runs at the bandwidth its bytes in flight allow. Loads into
registers hold their bytes in registers, which cap the threads an SM runs;
`cp.async` into shared memory holds them there instead. In a kernel hinted
`stages = S` (S >= 2), every loop the tensor-core pipeliners did not take,

    for i in lo..hi step s { x = load(t, off(i)); ...x... }

becomes, for each eligible load (same for several: one ring each),

    for n in 0 .. S-1:  RingCopy(t, off(lo + n s), ring[n], pred lo + n s < hi); commit
    for i in lo..hi step s {
        cp.async.wait S-2 (no barrier)          // this iteration's group landed
        x = RingRead(ring[n % S])               // n = (i - lo) / s
        RingCopy(t, off(i + (S-1) s), ring[(n + S-1) % S], pred i + (S-1) s < hi); commit
        ...x...
    }
    cp.async.wait 0

so S - 1 iterations' tiles are in flight while one is computed. Each thread
copies exactly the 16-byte chunks it would have loaded (the load's register
layout, which `layout_assign` chose for the consumers) into slots only it
reads back: no barrier anywhere, and no thread ever reads another's slot.
The stage a copy overwrites was read by the same thread one iteration
earlier, and that read's values were consumed there (the loaded tile is not
carried out of its iteration), so the write never overtakes the read.

A load is eligible when: its tensor is never written by the kernel (no
store or atomic names it: a copy may run several iterations early); no
element of its tile is held by two threads (a GEMV's vector, which every
warp loads whole, stays in registers: its ring would hold a copy a warp); it has
no mask and no padding (zero-fill past the edge is the load's own rule);
its offsets are computed from the loop variable and loop-invariant values by
scalar ops; its layout puts 16 contiguous bytes in each register chunk and
its tensor's facts make every chunk wholly in or out of bounds (base aligned
to 16 bytes, contiguous dim a multiple of 16, last offset a constant
multiple of the chunk); and its result is used inside the iteration only.
The loop's variable must be i32 and its body holds no matrix product (those
loops are the tensor-core pipeliners', and the products' own operand staging
needs the shared memory). `S` is lowered until the rings fit the target's
shared memory (with `min_blocks`, one block's share of the SM's) beside the
kernel's other buffers and the code generator's scratch (the largest tile a
conversion or reduction stages, at least 16 KB; a reduction with one warp
along its dim stages nothing, `_in_warps`); below 2 the loop is left
alone. Without the
hint (a kernel with no hint at all) the launch decides (`TILEC_STREAM_AUTO`,
`backend/stream_rule.py`: where the bytes in flight across the card are below
the memory system's bandwidth-delay product); with other hints, nothing
changes (the register prefetch some kernels write in the source keeps working
as written).
"""

from __future__ import annotations

import dataclasses

from tilelang.backend import stream_rule
from tilelang.backend.env_switch import mode
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Shared
from .context import Fresh, PassContext
from .pipeline_sm80 import HOPPER_SMEM, SMEM_LIMIT
from .rewrite import with_regions

# shared memory left to the code generator's scratch (layout conversions,
# reductions across warps), which is placed after the passes' buffers
SCRATCH_RESERVE = 16 * 1024
# shared memory the driver keeps for each resident block (sm_80+)
BLOCK_RESERVE = 1024
_SCALAR = (ir.Const, ir.Elementwise, ir.Cast, ir.TensorDim, ir.BlockId, ir.NumBlocks)
_PIPELINED = (g.CpAsyncTile, g.SmemDot, g.SmemFma, g.Wgmma, g.WgmmaRegA, g.TmaLoad, g.WarpSpecialize, g.RingCopy)


def _written(k: g.GpuKernel) -> set[str]:
    """Tensors some op of the kernel writes (stores and atomics)."""
    return {op.tensor for op in g.walk(k.body) if isinstance(op, ir.Store | ir.AtomicRMW)}


def _chunks(k: g.GpuKernel, v: ir.Value) -> int | None:
    """16-byte chunks a thread holds of `v` in its layout (None: not in 16-byte chunks)."""
    from tilelang.backend.codegen.views import view_of  # the geometry of a layout

    lay = k.layouts.get(v.id)
    if lay is None or isinstance(lay, Shared):
        return None
    try:
        view = view_of(lay, v.shape, k.num_warps * 32, v.dtype.itemsize)
    except Exception:  # a layout the views do not describe: leave the load alone
        return None
    if view.V * v.dtype.itemsize != 16:
        return None
    return int(view.K)


class _Loop:
    """The analysis of one loop: its eligible loads and how their offsets are computed."""

    def __init__(self, k: g.GpuKernel, ctx: PassContext, op: ir.For, written: set[str],
                 defs: dict[int, object], only: set[int] | None = None) -> None:
        """`only`: the loads to consider (by result id; `stream_mma`'s loads feeding a product), each one it
        leaves recorded with why in `refused` (in source order), replicated ones taken too (their rings hold
        every copy: `stream_mma` counts them in its budget); None: every load, replicated ones left."""
        self.op = op
        body = op.body
        self.iv = body.args[0]
        inside = {v.id for v in g.defined_values(body)}
        self.defs: dict[int, object] = {}
        for x in body.ops:
            for r in g.results(x):
                self.defs[r.id] = x
        carried = set()
        yields = [x for x in body.ops if isinstance(x, ir.Yield)]
        for y in yields:
            carried |= {v.id for v in y.values}
        # values read in nested regions or by ops other than those listed are fine;
        # a loaded tile must not leave its iteration
        self.loads: list[ir.Load] = []
        self.refused: list[tuple[ir.Load, str, str]] = []
        for x in body.ops:
            if not isinstance(x, ir.Load) or (only is not None and x.result.id not in only):
                continue
            why = self._why_not(k, ctx, x, written, carried, defs, inside, only is not None)
            if why is None:
                self.loads.append(x)
            else:
                self.refused.append((x, *why))

    def _why_not(self, k: g.GpuKernel, ctx: PassContext, x: ir.Load, written: set[str], carried: set[int],
                 defs: dict[int, object], inside: set[int], replicated: bool) -> tuple[str, str] | None:
        """Why load `x` cannot go through a ring and what would let it (a note's words and help), or None
        where it can."""
        if x.mask is not None or x.padding is not None:
            return ("it has a mask or a padding value (a ring zero-fills whole 16-byte chunks past the edge only)",
                    "load the tile without a mask where zeros past the tensor's edge will do (a plain `load`)")
        if x.tensor in written:
            return (f"the kernel writes `{x.tensor}` (a copy runs iterations ahead of the stores)",
                    f"read `{x.tensor}` in another kernel than the one that writes it")
        if x.result.id in carried:
            return "the loaded tile is carried out of its iteration", "use the tile in the iteration that loads it"
        f = ctx.fact(x.tensor)
        if not f.aligned16 or not f.dims_div16 or not f.dims_div16[-1]:
            return (f"`{x.tensor}`'s rows are not whole 16-byte chunks at this launch (its base is not 16-byte "
                    "aligned or its last dim is not a multiple of 16)",
                    f"pad `{x.tensor}`'s last dim to a multiple of 16 elements")
        n = _chunks(k, x.result)
        if n is None:
            return ("its register layout holds no runs of 16 contiguous bytes",
                    "make the tile's rows 16 bytes or more (its last dim)")
        if not _multiple(defs, x.offsets[-1], 16 // x.result.dtype.itemsize):
            return ("its offset along the last dim is not a constant multiple of 16 bytes",
                    "index the tile through a partition whose last dim is a multiple of 16 bytes")
        if not replicated and n * k.num_warps * 32 * 16 > _nbytes(x.result):
            # (a GEMV's vector, which every warp loads whole: a ring would hold every copy)
            return "its tile is held whole by several threads", ""
        if not all(self._computable(o, inside) for o in x.offsets):
            return ("its offsets are computed from values the loop loads",
                    "compute the offsets from the loop variable and values loaded before the loop")
        return None

    def _computable(self, v: ir.Value, inside: set[int]) -> bool:
        if v.id not in inside or v.id == self.iv.id:
            return True
        d = self.defs.get(v.id)
        if not isinstance(d, _SCALAR) or v.shape:
            return False
        return all(self._computable(o, inside) for o in ir.op_operands(d))


def _multiple(defs: dict[int, object], v: ir.Value, m: int) -> bool:
    """Scalar `v` is provably a multiple of `m` (constants, products with one,
    sums and differences of them)."""
    d = defs.get(v.id)
    match d:
        case ir.Const(value=c):
            return isinstance(c, int) and not isinstance(c, bool) and c % m == 0
        case ir.Elementwise(op=ir.ElemOp.MUL, operands=(a, b)):
            return _multiple(defs, a, m) or _multiple(defs, b, m)
        case ir.Elementwise(op=ir.ElemOp.ADD | ir.ElemOp.SUB, operands=(a, b)):
            return _multiple(defs, a, m) and _multiple(defs, b, m)
    return False


class _Build:
    def __init__(self, k: g.GpuKernel) -> None:
        self.fresh = Fresh(k.next_id)
        self.layouts = dict(k.layouts)

    def const(self, out: list[object], value: int, dt: DType = DType.I32) -> ir.Value:
        v = self.fresh.value(dt)
        out.append(ir.Const(v, value))
        return v

    def elem(self, out: list[object], eop: ir.ElemOp, *xs: ir.Value, dt: DType | None = None) -> ir.Value:
        v = self.fresh.value(dt or xs[0].dtype)
        out.append(ir.Elementwise(v, eop, tuple(xs)))
        return v

    def clone_offsets(self, out: list[object], loop: _Loop, load: ir.Load, it: ir.Value) -> tuple[ir.Value, ...]:
        """`load`'s offsets at iteration value `it`: the scalar ops that compute
        them from the loop variable, cloned into `out`."""
        memo: dict[int, ir.Value] = {loop.iv.id: it}

        def go(v: ir.Value) -> ir.Value:
            if v.id in memo:
                return memo[v.id]
            d = loop.defs.get(v.id)
            if d is None:  # loop-invariant
                return v
            ops = tuple(go(o) for o in ir.op_operands(d))  # type: ignore[arg-type]
            nv = self.fresh.value(v.dtype, v.shape, v.hint)
            new = dataclasses.replace(d, result=nv)  # type: ignore[type-var]
            if isinstance(d, ir.Elementwise):
                new = dataclasses.replace(d, result=nv, operands=ops)
            elif isinstance(d, ir.Cast):
                new = dataclasses.replace(d, result=nv, x=ops[0])
            out.append(new)
            memo[v.id] = nv
            return nv

        return tuple(go(o) for o in load.offsets)


def _ring_bytes(k: g.GpuKernel, load: ir.Load) -> int:
    return k.num_warps * 32 * (_chunks(k, load.result) or 0) * 16


def _budget(k: g.GpuKernel, ctx: PassContext, products: bool = False, extra: int = 0) -> int:
    """Shared memory the rings may take: the target's, less the kernel's other
    buffers and the code generator's scratch, which stages at most one
    converted or reduced tile at a time (registers are 4 bytes an element,
    8 for 64-bit types); `products`: and a scalar-FMA product's operands, staged together (the auto switch's
    loops of them); `extra`: another staging of the code generator's (`stream_mma`: an mma.sync's operands)."""
    limit = HOPPER_SMEM if ctx.sm >= 90 else SMEM_LIMIT.get(ctx.arch[:5], 99 * 1024)
    if k.source.min_blocks > 1:  # each of the blocks an SM must hold gets its share
        limit = min(limit, (limit + BLOCK_RESERVE) // k.source.min_blocks - BLOCK_RESERVE)
    used = sum(_nbytes(op.result) for op in g.walk(k.body) if isinstance(op, g.SmemAlloc))
    staged = [x for op in g.walk(k.body) for x in (
        (op.result,) if isinstance(op, g.ConvertLayout) else (op.x,) if isinstance(op, ir.Scan) else
        (op.x,) if isinstance(op, ir.Reduce) and not (k.source.walk >= 0 and _in_warps(k, op)) else ())]
    scratch = max([SCRATCH_RESERVE, extra] + [v.type.numel * (8 if v.dtype.bits == 64 else 4) for v in staged]
                  + [sum(v.type.numel * 8 for v in (op.a, op.b)) for op in g.walk(k.body)
                     if products and isinstance(op, g.DotOp) and op.engine == "fma"])
    return limit - used - scratch


def _in_warps(k: g.GpuKernel, op: ir.Reduce) -> bool:
    """A reduction that stages nothing in shared memory: its input in a
    blocked layout with one warp along the reduced dim (the register folds
    and the lanes' shuffles do it all, `codegen/reduce.reduce_blocked`; a
    GEMV's row a warp). Anything else: False (the conservative estimate)."""
    from tilelang.backend.codegen.views import BlockedView, view_of

    lay = k.layouts.get(op.x.id)
    if lay is None or isinstance(lay, Shared):
        return False
    try:
        view = view_of(lay, op.x.shape, k.num_warps * 32, op.x.dtype.itemsize)
    except Exception:  # a layout the views do not describe
        return False
    if not isinstance(view, BlockedView):
        return False
    logical = [d for d in range(len(view.dims)) if d != view.drop]
    return 0 <= op.axis < len(logical) and view.dims[logical[op.axis]].warps == 1


def _nbytes(v: ir.Value) -> int:
    return v.dtype.itemsize * v.type.numel


def _rewrite(k: g.GpuKernel, b: _Build, loop: _Loop, S: int) -> tuple[list[object], list[object]]:
    """The ops that replace `loop.op`: (the rings and the prologue's copies, the
    new loop and the final wait)."""
    op = loop.op
    pre: list[object] = []
    rings: list[ir.Value] = []
    for ld in loop.loads:
        per = _ring_bytes(k, ld) // ld.result.dtype.itemsize
        ring = b.fresh.value(ld.result.dtype, (S, per), "ring")
        b.layouts[ring.id] = Shared(0, "row")
        pre.append(g.SmemAlloc(ring, span=ld.span))
        rings.append(ring)
    # prologue: iterations 0 .. S-2
    for n in range(S - 1):
        it = op.lower if n == 0 else b.elem(pre, ir.ElemOp.ADD, op.lower,
                                             b.elem(pre, ir.ElemOp.MUL, op.step, b.const(pre, n)))
        pred = b.elem(pre, ir.ElemOp.LT, it, op.upper, dt=DType.BOOL)
        stage = b.const(pre, n)
        for ld, ring in zip(loop.loads, rings, strict=True):
            offs = b.clone_offsets(pre, loop, ld, it)
            pre.append(g.RingCopy(ld.tensor, offs, ld.result.type, k.layouts[ld.result.id], ring, stage, pred,
                                  span=ld.span))
        pre.append(g.CpAsyncCommit())
    ahead = b.elem(pre, ir.ElemOp.MUL, op.step, b.const(pre, S - 1))
    # the body: wait, read this iteration's tiles, issue iteration + S - 1's, then the rest
    body: list[object] = [g.CpAsyncWait(S - 2, barrier=False)]
    count = b.elem(body, ir.ElemOp.DIV, b.elem(body, ir.ElemOp.SUB, loop.iv, op.lower), op.step)
    stage_r = b.elem(body, ir.ElemOp.REM, count, b.const(body, S))
    for ld, ring in zip(loop.loads, rings, strict=True):
        body.append(g.RingRead(ld.result, ld.tensor, ring, stage_r, span=ld.span))
    it = b.elem(body, ir.ElemOp.ADD, loop.iv, ahead)
    pred = b.elem(body, ir.ElemOp.LT, it, op.upper, dt=DType.BOOL)
    stage_w = b.elem(body, ir.ElemOp.REM, b.elem(body, ir.ElemOp.ADD, count, b.const(body, S - 1)), b.const(body, S))
    for ld, ring in zip(loop.loads, rings, strict=True):
        offs = b.clone_offsets(body, loop, ld, it)
        body.append(g.RingCopy(ld.tensor, offs, ld.result.type, k.layouts[ld.result.id], ring, stage_w, pred,
                               span=ld.span))
    body.append(g.CpAsyncCommit())
    taken = {id(ld) for ld in loop.loads}
    body += [x for x in op.body.ops if id(x) not in taken]
    new_loop = dataclasses.replace(op, body=ir.Region(op.body.args, tuple(body)))  # type: ignore[arg-type]
    return pre, [new_loop, g.CpAsyncWait(0, barrier=False)]


def _earliest(out: list[object], pre: list[object]) -> int:
    """Where in `out` the prologue `pre` can start: right after the last op
    that defines a value it reads (a block's copies then start before the
    work that precedes the loop, such as loading and converting a query),
    and never above an op that issues cp.async copies of its own."""
    own = {v.id for op in pre for v in g.results(op)}
    needed = {v.id for op in pre for v in g.operands(op)} - own
    at = 0
    for i, op in enumerate(out):
        defined = {v.id for v in g.results(op)}
        for sub in g.regions(op):
            defined |= {v.id for v in g.defined_values(sub)}
        copies = isinstance(op, g.RingCopy | g.CpAsyncTile) or any(
            isinstance(x, g.RingCopy | g.CpAsyncTile) for sub in g.regions(op) for x in g.walk(sub))
        if defined & needed or copies:
            at = i + 1
    return at


# `TILEC_STREAM_AUTO`: which loops of a kernel without a `stages` hint stream their loads (a kernel with hints keeps
# them as its hints say: a tuned kernel's hints, a `stages` of 0 or below among them ("stages_off"), stand). Its
# loops of a run-time trip count (a reduction over a tensor's row tiles, a column sum) wait for memory each step
# with one tile in flight; whether that is too few bytes depends on the launch (`backend/stream_rule.py`):
#   "auto" (unset; hstream): the rule, on sm_90: the first variant leaves them as written and asks
#     (`GpuKernel.stream`); the runtime decides each loop from the launch's grid by Little's law and launches the
#     variant with the decision (`TensorFacts.stream`: the stages a loop, the ring's depth from the same law). A
#     loop of a product of scalar FMAs is not the rule's (issue-bound, not latency-bound: call 39's GEMV without
#     its FMA pipeline lost 0.19 -> 0.17x streamed); other targets: as "0" (no measurement to set a BDP from).
#   "1" (hcliff11's opt-in): every such loop, and a loop of a product of scalar FMAs (a 4-token GEMV's `mma`,
#     its weight tile; the vector stays in registers), through rings of `AUTO_STAGES`, in every variant.
#   "0": none (the default before hstream).
AUTO_DEFAULT = "auto"
AUTO_STAGES = 3


def auto() -> str:
    """`TILEC_STREAM_AUTO` (unset: `AUTO_DEFAULT`): "auto" (the launch's rule), "1" (always), "0" (never)."""
    return mode("TILEC_STREAM_AUTO", AUTO_DEFAULT, ("0", "1", "auto"))


def _constant_trips(op: ir.For, defs: dict[int, object]) -> bool:
    """Whether the loop's bounds and step are constants (a loop the code generator may unroll: a few taps)."""
    return all(isinstance(defs.get(v.id), ir.Const) for v in (op.lower, op.upper, op.step))


def _excluded(op: ir.For, want: str) -> bool:
    """A loop the pass leaves: one with a pipeliner's ops or a ring (its own products' staging), a matrix
    product ("1": but for a product of scalar FMAs, no pipeline's, which streams too)."""
    return any(isinstance(x, (*_PIPELINED, ir.Mma)) or (isinstance(x, g.DotOp) and (want != "1" or x.engine != "fma"))
               for x in g.walk(op.body))


def _carrier(k: g.GpuKernel) -> str:
    """The tensor whose facts carry the rule's decision (`StreamAsk.tensor`): the kernel's first tensor."""
    return next((p.name for p in k.source.params if isinstance(p, ir.TensorParam)), "")


def stream_loads(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    hinted = "stages" in k.source.hints
    want = "0" if hinted else auto()
    if not hinted and (want == "0" or k.source.hints):  # (the switch: kernels with no hint at all, as a user writes
        return k  # them first; a tuned kernel's hints, a `stages` of 0 or below among them ("stages_off"), stand)
    ruled = want == "auto"
    stages = k.num_stages if hinted else AUTO_STAGES
    if stages < 2 or ctx.sm < 80 or (ruled and ctx.sm != 90) or (ruled and not _carrier(k)):
        return k
    decided = ctx.fact(_carrier(k)).stream if ruled else ()
    asked: list[stream_rule.StreamLoop] = []
    defs: dict[int, object] = {r.id: op for op in g.walk(k.body) if isinstance(op, ir.Const | ir.Elementwise)
                               for r in g.results(op)}
    written = _written(k)
    b = _Build(k)
    budget = _budget(k, ctx, not hinted)
    changed = False

    def region(r: ir.Region) -> ir.Region:
        nonlocal budget, changed
        out: list[object] = []
        for old in r.ops:
            if isinstance(old, g.WarpSpecialize):
                out.append(old)
                continue
            op = with_regions(old, region)
            if not isinstance(op, ir.For) or op.body.args[0].dtype is not DType.I32:
                out.append(op)
                continue
            # (the rule's loops are counted on the loop as written, `old`, so that the variant, whose inner loops
            # may hold rings now, meets its decisions in the first variant's order; a loop that holds one is left)
            src: ir.For = old if ruled and isinstance(old, ir.For) else op
            if _excluded(src, want) or (not hinted and _constant_trips(op, defs)):
                out.append(op)
                continue
            loop = _Loop(k, ctx, src, written, defs)
            per_stage = sum(_ring_bytes(k, ld) for ld in loop.loads)
            want_s = stages
            if ruled and per_stage:  # the launch decides (`stream_rule.decide`), a loop in the order met here
                flight = sum(_nbytes(x.result) for x in g.walk(src.body) if isinstance(x, ir.Load))
                want_s = decided[len(asked)] if len(asked) < len(decided) else 0
                asked.append(stream_rule.StreamLoop(flight, per_stage, budget // per_stage))
                if _excluded(op, want):
                    out.append(op)
                    continue
                loop = _Loop(k, ctx, op, written, defs) if op is not src else loop
            S = min(want_s, budget // per_stage) if per_stage else 0
            if S < 2:
                out.append(op)
                continue
            budget -= S * per_stage
            changed = True
            pre, rest = _rewrite(k, b, loop, S)
            at = _earliest(out, pre)
            out[at:at] = pre
            out += rest
        return ir.Region(r.args, tuple(out))  # type: ignore[arg-type]

    body = region(k.body)
    if asked and not decided:
        k = dataclasses.replace(k, stream=stream_rule.StreamAsk(_carrier(k), tuple(asked)))
    if not changed:
        return k
    return dataclasses.replace(k, body=body, layouts=b.layouts, next_id=b.fresh.next)


__all__ = ["AUTO_DEFAULT", "AUTO_STAGES", "SCRATCH_RESERVE", "auto", "stream_loads"]
