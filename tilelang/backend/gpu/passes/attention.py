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

Conditions (else the generic path): sm_90a; the kernel's only loop with an
`mma` is a top-level `for` whose body has exactly two; the first multiplies a
loop-invariant load (Q, [BM, D] with leading size-1 dims, BM 64 or 128, D a
multiple of 64 up to 256) by a loaded, optionally transposed tile (K) with a
zero accumulator; the second multiplies a cast to f16/bf16 of a body value
by another loaded tile (V); the loads are f16/bf16 2-D or 3-D tensors TMA can
read (16-byte aligned, last dim a multiple of 16), each feeding its `mma`
only; every tile in the body and after the loop has at most two dims larger
than one, rows BM and columns a multiple of 8; reductions run along the
columns; nothing else reads or writes memory in the loop.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from dataclasses import dataclass

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import AccTile, Barriers, Layout, Shared, WgmmaAcc
from . import attention_chain as chain
from . import attention_epilogue as epi
from . import attention_rotated as rot
from . import attention_spec as spec
from . import attention_tiles as tiles
from . import attention_vmask as vmask
from .attention_rotated import _reads
from .context import Fresh, PassContext
from .pipeline import PRODUCER_REGS, SMEM_LIMIT, _Build, _slice, role_registers
from .rewrite import substitute, uses

_SCALAR = (ir.Const, ir.Elementwise, ir.Cast, ir.TensorDim, ir.BlockId, ir.NumBlocks)
_TILE = (ir.Const, ir.Elementwise, ir.Cast, ir.Broadcast, ir.Reshape, ir.Arange, ir.Reduce)


@dataclass(frozen=True, slots=True)
class Tma:
    """A TMA-copied operand: the load, the [rows, cols] tile it gives, its tensor's rank."""

    load: ir.Load
    rows: int
    cols: int
    rank: int
    chain: tuple[object, ...]  # the load and the reshapes/permute up to the mma operand

    @property
    def slabs(self) -> int:
        return self.cols // 64

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * 2


@dataclass(frozen=True, slots=True)
class AttnPlan:
    loop: ir.For
    s_dot: g.DotOp
    o_dot: g.DotOp
    q: Tma
    k: Tma
    v: Tma
    k_kmajor: bool
    v_kmajor: bool
    BM: int
    BN: int
    stages: int
    vmask: vmask.VMask | None = None  # V's rows past a bound zeroed (`attention_vmask`)
    short: bool = False  # compiled for short keys: chained and rotated (`attention_chain.short`)


def _is_scalar(op: object) -> bool:
    return isinstance(op, _SCALAR) and all(not v.shape for v in g.results(op))


def _chain(v: ir.Value, defs: dict[int, object]) -> tuple[ir.Load, list[object], bool] | None:
    """The load behind operand `v` through reshapes (dropping leading 1s) and at
    most one 2-D transpose: (load, ops, transposed)."""
    ops: list[object] = []
    transposed = False
    cur = v
    while True:
        op = defs.get(cur.id)
        if isinstance(op, ir.Permute) and op.perm == (1, 0) and not transposed:
            transposed = True
        elif isinstance(op, ir.Reshape):
            pass
        elif isinstance(op, ir.Load):
            ops.append(op)
            if op.mask is not None or op.padding is not None:
                return None
            return op, ops[::-1], transposed
        else:
            return None
        ops.append(op)
        cur = op.x  # type: ignore[attr-defined]


def _tma(load: ir.Load, ops: list[object], k: g.GpuKernel, ctx: PassContext) -> Tma | None:
    t = k.tensor(load.tensor)
    f = ctx.fact(load.tensor)
    if t.rank not in (2, 3) or t.dtype not in (DType.F16, DType.BF16):
        return None
    if f.bf16_f32 or not f.aligned16 or len(f.dims_div16) != t.rank or not f.dims_div16[-1]:
        return None
    shape = load.result.shape
    if any(x != 1 for x in shape[:-2]):
        return None
    rows, cols = shape[-2], shape[-1]
    if cols % 64 or rows > 256 or rows % 8:
        return None
    return Tma(load, rows, cols, t.rank, tuple(ops))


def _placeable(v: ir.Value, BM: int) -> bool:
    live = [x for x in v.shape if x > 1]
    if len(live) > 2:
        return False
    if len(live) == 2:
        return live[0] == BM and live[1] % 8 == 0
    if len(live) == 1:
        return live[0] == BM or live[0] % 8 == 0
    return True


def _match(k: g.GpuKernel, ctx: PassContext) -> AttnPlan | None:
    ops = list(k.body.ops)
    loops = [op for op in ops if isinstance(op, ir.For)
             and any(isinstance(o, g.DotOp | ir.Mma) for o in g.walk(op.body))]
    if len(loops) != 1:
        return None
    if any(isinstance(o, g.DotOp | ir.Mma) for op in ops if op is not loops[0] for o in g.walk(ir.Region((), (op,)))):
        return None
    loop = loops[0]
    body = loop.body
    dots = [op for op in body.ops if isinstance(op, g.DotOp)]
    if len(dots) != 2 or sum(isinstance(o, g.DotOp | ir.Mma) for o in g.walk(body)) != 2:
        return None
    s_dot, o_dot = dots
    defs: dict[int, object] = {}
    for op in g.walk(k.body):
        for r in g.results(op):
            defs[r.id] = op
    count = uses(k.body)
    # the first product: Q (before the loop) times K (loaded in the loop), zero accumulator
    qc, kc = _chain(s_dot.a, defs), _chain(s_dot.b, defs)
    if qc is None or kc is None or qc[2]:
        return None
    acc0 = defs.get(s_dot.acc.id)
    if not (isinstance(acc0, ir.Const) and float(acc0.value) == 0.0):
        return None
    if s_dot.a.dtype not in (DType.F16, DType.BF16) or s_dot.result.dtype is not DType.F32:
        return None
    BM, D = s_dot.a.shape
    BN = s_dot.b.shape[1]
    if BM not in (64, 128, 192) or D % 64 or D > 256 or BN % 16 or BN > 256:
        return None
    # the second product: a cast of a body value times V (loaded in the loop)
    cast = defs.get(o_dot.a.id)
    vm = vmask.match(o_dot.b, defs, count, body.ops)  # where(keys < sk, v, 0): one warpgroup, V N-major
    vc = _chain(vm.x if vm else o_dot.b, defs)
    if not (isinstance(cast, ir.Cast) and cast in body.ops and cast.x.dtype is DType.F32) or vc is None:
        return None
    if vm is not None and (BM != 64 or vc[2]):
        return None
    if o_dot.a.dtype is not s_dot.a.dtype or o_dot.b.dtype is not s_dot.a.dtype:
        return None
    if o_dot.a.shape != (BM, BN) or o_dot.result.dtype is not DType.F32 or o_dot.result.shape[1] % 8:
        return None
    Dv = o_dot.result.shape[1]
    if Dv > 256:
        return None
    q = _tma(qc[0], qc[1], k, ctx)
    kt = _tma(kc[0], kc[1], k, ctx)
    vt = _tma(vc[0], vc[1], k, ctx)
    if q is None or kt is None or vt is None:
        return None
    if q.load not in ops or kt.load not in body.ops or vt.load not in body.ops:
        return None
    for t in (q, kt, vt):
        for op in t.chain:
            if op not in (ops if t is q else body.ops):
                return None
            for r in g.results(op):
                if count.get(r.id) != 1:
                    return None
    # K must give [D, BN] for the product: stored [BN, D] and transposed (K-major)
    # or stored [D, BN] (N-major); V gives [BN, Dv]: stored so (N-major) or transposed
    k_kmajor = kc[2]
    v_kmajor = vc[2]
    if (q.rows, q.cols) != (BM, D):
        return None
    if k_kmajor != ((kt.rows, kt.cols) == (BN, D)) or (not k_kmajor and (kt.rows, kt.cols) != (D, BN)):
        return None
    if (vt.rows, vt.cols) != ((Dv, BN) if v_kmajor else (BN, Dv)):
        return None
    chained = {id(op) for t in (q, kt, vt) for op in t.chain} | {id(op) for op in (vm.ops if vm else ())}
    # the body: computation in registers only
    if not _body_ok(body, BM, chained, s_dot, o_dot):
        return None
    for a in (*body.args[1:], *loop.results):
        if a.shape and not _placeable(a, BM):
            return None
    i = ops.index(loop)
    for op in ops[:i]:
        if id(op) in chained or _is_scalar(op) or (isinstance(op, ir.If | ir.Assert) and not any(
                v.shape for v in g.results(op))):
            continue
        if isinstance(op, _TILE) and all(_placeable(v, BM) for v in g.results(op)) \
                and not any(v.shape for v in g.operands(op) if defs.get(v.id) not in ops[:i]):
            continue
        return None
    for op in ops[i + 1:]:
        if isinstance(op, ir.Yield) or _is_scalar(op):
            continue
        if isinstance(op, ir.Store) and op.mask is None and _placeable(op.value, BM):
            continue
        if isinstance(op, _TILE) and all(_placeable(v, BM) for v in g.results(op)) and _reduce_ok(op, BM):
            continue
        return None
    stage_bytes = kt.nbytes + vt.nbytes
    fit = (SMEM_LIMIT - 2048 - q.nbytes) // stage_bytes
    S = k.num_stages if "stages" in k.source.hints else min(4, fit)
    if not 2 <= S <= fit:
        return None
    return AttnPlan(loop, s_dot, o_dot, q, kt, vt, k_kmajor, v_kmajor, BM, BN, S, vm)


def _reduce_ok(op: object, BM: int) -> bool:
    if not isinstance(op, ir.Reduce):
        return True
    live = [d for d, x in enumerate(op.x.shape) if x > 1]
    return (len(live) == 2 and op.axis == live[1] and op.x.shape[live[0]] == BM
            and op.op in (ir.ReduceOp.SUM, ir.ReduceOp.MAX, ir.ReduceOp.MIN))


def _body_ok(r: ir.Region, BM: int, chained: set[int], s_dot: object, o_dot: object) -> bool:
    for op in r.ops:
        if op is s_dot or op is o_dot or id(op) in chained or isinstance(op, ir.Yield) or _is_scalar(op):
            continue
        if isinstance(op, ir.If):
            if not all(_placeable(v, BM) for v in op.results if v.shape):
                return False
            if not (_body_ok(op.then, BM, chained, s_dot, o_dot) and _body_ok(op.else_, BM, chained, s_dot, o_dot)):
                return False
            continue
        if isinstance(op, _TILE) and all(_placeable(v, BM) for v in g.results(op)) and _reduce_ok(op, BM):
            if isinstance(op, ir.Broadcast | ir.Reshape) and op.x.shape and not _placeable(op.x, BM):
                return False
            continue
        return False
    return True


# ---------------------------------------------------------------- layouts
class _Classes:
    """Row or column: which way each tile with one live dim is held, by union-find
    over the ops that must agree (element-wise ops, reshapes, yields)."""

    def __init__(self, BM: int) -> None:
        self.parent: dict[int, int] = {}
        self.kind: dict[int, str] = {}
        self.size: dict[int, int] = {}
        self.BM = BM

    def find(self, x: int) -> int:
        while self.parent.get(x, x) != x:
            x = self.parent[x]
        return x

    def union(self, a: ir.Value, b: ir.Value) -> None:
        if not (_one_live(a) and _one_live(b)):
            return
        ra, rb = self.find(a.id), self.find(b.id)
        if ra != rb:
            self.parent[ra] = rb
            if ra in self.kind:
                self.kind.setdefault(rb, self.kind[ra])

    def force(self, v: ir.Value, kind: str) -> None:
        if _one_live(v):
            self.kind.setdefault(self.find(v.id), kind)

    def of(self, v: ir.Value) -> str:
        r = self.find(v.id)
        if r in self.kind:
            return self.kind[r]
        live = next(x for x in v.shape if x > 1)
        return "row" if live == self.BM else "col"


def _one_live(v: ir.Value) -> bool:
    return len([x for x in v.shape if x > 1]) == 1


def _classify(ops: list[object], cl: _Classes, loop_links: list[tuple[ir.Value, ...]]) -> None:
    for op in ops:
        match op:
            case ir.Reduce(result=r):
                cl.force(r, "row")
            case ir.Broadcast(result=r, x=x) if x.shape and _one_live(x) and not _one_live(r):
                lead = len(r.shape) - len(x.shape)
                d = next(i for i, n in enumerate(x.shape) if n > 1) + lead
                live = [i for i, n in enumerate(r.shape) if n > 1]
                cl.force(x, "row" if d == live[0] else "col")
            case ir.Broadcast(result=r, x=x) | ir.Reshape(result=r, x=x) if x.shape:
                cl.union(x, r)
            case ir.Elementwise(result=r) | ir.Cast(result=r):
                for v in g.operands(op):
                    if v.shape:
                        cl.union(v, r)
            case ir.If(results=rs, then=t, else_=e):
                _classify(list(t.ops), cl, loop_links)
                _classify(list(e.ops), cl, loop_links)
                for i, v in enumerate(rs):
                    if v.shape:
                        cl.union(t.ops[-1].values[i], v)  # type: ignore[union-attr]
                        cl.union(e.ops[-1].values[i], v)  # type: ignore[union-attr]
    for vs in loop_links:
        for a, b in itertools.pairwise(vs):
            if a.shape:
                cl.union(a, b)


def _assign(ops: list[object], cl: _Classes, warps: int, layouts: dict[int, Layout]) -> None:
    def put(v: ir.Value) -> None:
        if v.shape and v.id not in layouts:
            layouts[v.id] = AccTile(warps, cl.of(v) if _one_live(v) else "")

    for op in ops:
        for v in g.results(op):
            put(v)
        for sub in g.regions(op):
            for a in sub.args:
                put(a)
            _assign(list(sub.ops), cl, warps, layouts)


@dataclass(frozen=True, slots=True)
class _Bufs:
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


SCHEDULES = ("overlap", "serial", "pingpong-unsafe")
# Named barriers of the warpgroups' turns: this one (warpgroup 0's) and the next
TURN_BARRIER = 2
# `TILEC_ATTN_PINGPONG` unset: "0" (the H200, 2026-12-03: within -2..+1.3 % of the
# default at D = 64, not faster; benchmarks/RESULTS.md)
PINGPONG_DEFAULT = "0"


def pingpong() -> str:
    """Whether two consumer warpgroups take turns to issue their products
    (FlashAttention-3's ping-pong: one's softmax under the other's products):
    `TILEC_ATTN_PINGPONG` "1" (on the overlapped loop, which then replaces the
    rotated one at D = 128), "rotated-unsafe" (on the rotated loop: WRONG
    results and illegal addresses on the H200, 2026-12-03, right in llsim;
    kept for whoever investigates), "0"."""
    return os.environ.get("TILEC_ATTN_PINGPONG", PINGPONG_DEFAULT)


def _schedule(loop: ir.For, p: AttnPlan, C: int) -> str:
    """How the consumers order their products: "serial" (wait for S, softmax,
    wait for P V), "overlap" (the default: S of the next block and P V of
    this one issued together; the next softmax runs while P V does:
    FlashAttention-3's intra-warpgroup pipelining). `TILEC_ATTN_SCHEDULE`
    picks one; overlap needs the loop to yield the second product as is,
    else serial applies.

    "pingpong" (overlap, the two consumer warpgroups taking turns to issue
    through named barriers, one tile a block) computed WRONG results on the
    H200 at D = 128, BN = 64 (2026-12-02; right in the simulator): refused
    (E0604). "pingpong-unsafe" builds it, now with the P V wait after the
    spin and every turn consumed (right on the H200's probe shapes,
    2026-12-03). Turns on the persistent loops: `pingpong()`."""
    want = os.environ.get("TILEC_ATTN_SCHEDULE", "overlap")
    if want not in SCHEDULES:
        from tilelang.backend.codegen.core import CodegenError
        from tilelang.diagnostics.codes.codegen import GPU_SCHEDULE_REFUSED
        from tilelang.diagnostics.model import Diagnostic

        why = ("it computes wrong results on the H200 (two consumer warpgroups taking turns through "
               "named barriers; benchmarks/RESULTS.md, 2026-12-02)" if want == "pingpong"
               else "it is not one the attention pipeline knows")
        raise CodegenError(
            Diagnostic.error(GPU_SCHEDULE_REFUSED, f"attention schedule `{want}` refused: {why}")
            .primary(loop.span, f"`TILEC_ATTN_SCHEDULE={want}` asked for it for this loop")
            .with_help("unset `TILEC_ATTN_SCHEDULE` (the default, `overlap`, is the fastest correct schedule) "
                       "or set it to `serial`")
        )
    ys = loop.body.ops[-1]
    # overlap holds a block's stage while it waits for the next one's: a ring of 2 deadlocks (llsim)
    if want != "serial" and (p.stages < 3 or not any(v is p.o_dot.result for v in ys.values)):  # type: ignore[union-attr]
        return "serial"
    if want == "pingpong-unsafe" and C != 2:
        return "overlap"
    return want


def _s_product(b: _Build, p: AttnPlan, bufs: _Bufs, stage: ir.Value, fresh: Fresh,
               layouts: dict[int, Layout], issue: bool = True) -> tuple[ir.Value, g.Wgmma]:
    """S = Q K[stage]^T (not waited for): its raw result and the op, issued
    here unless `issue` is False (the caller issues it with another)."""
    shape = p.s_dot.result.shape
    raw, undef = fresh.value(DType.F32, shape, "s"), fresh.value(DType.F32, shape, "s0")
    no = fresh.value(DType.BOOL, (), "no_acc")
    layouts[raw.id] = layouts[undef.id] = WgmmaAcc(bufs.C, 64, bufs.BN)
    op = g.Wgmma(raw, bufs.q, bufs.k, stage, undef, True, p.k_kmajor, no, p.s_dot.span, bufs.zero)
    b.ops += [g.Undef(undef, p.s_dot.span), ir.Const(no, False)]
    if issue:
        b.ops.append(op)
    return raw, op


def _serial(loop: ir.For, p: AttnPlan, cast: ir.Cast, chained: set[int], bufs: _Bufs, fresh: Fresh,
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
            raw, _ = _s_product(cb, p, bufs, stage, fresh, layouts)
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
                    (*loop.inits, bufs.base), ir.Region((*loop.body.args, c_it), tuple(_unshare(cb.ops, fresh))),
                    span)  # type: ignore[arg-type]
    return c_loop, [], ([], {}, c_loop.results[-1])


def _overlapped(loop: ir.For, p: AttnPlan, cast: ir.Cast, chained: set[int], bufs: _Bufs, fresh: Fresh,
                layouts: dict[int, Layout], pingpong: bool, before: list[object]
                ) -> tuple[ir.For, list[object], tuple[list[object], dict[int, ir.Value], ir.Value]]:
    """The loop software-pipelined (FlashAttention-3): S of block j arrives
    with the iteration (the prologue computes the first); the body runs on
    it while the previous P V is still in flight, waiting for that product
    just before the accumulator is first read (and then releasing its stage);
    where the body multiplies P V, the consumers issue S of block j + 1 and
    P V of block j, then wait for S only. The last block's iteration is
    peeled off after the loop (P V alone) where the registers allow a second
    copy of the body (`_peel_fits`; opt-in, `TILEC_ATTN_PEEL=1`): no product is wasted and Q is free (the
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
    raw0, _ = _s_product(tb, p, bufs, st0, fresh, layouts)
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
    peel = not pingpong and _peel_fits(p, bufs.C)  # opt-in: TILEC_ATTN_PEEL=1
    c_it = fresh.value(DType.I32, (), "it")
    s_cur = fresh.value(DType.F32, s_shape, "s")

    def build(last: bool) -> tuple[list[object], ir.Value | None]:
        """One iteration: S of this block is `s_cur`; `last`: the peeled one."""
        cb = _Build(fresh)
        stage, phase = cb.ring(c_it, bufs.S)
        mapping: dict[int, ir.Value] = {p.s_dot.result.id: s_cur}
        waited = False
        s_next: ir.Value | None = None
        next_stage: tuple[ir.Value, ir.Value] | None = None

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
                cb.ops.append(g.BarrierWait(bufs.full, sel_st, sel_ph, span))
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
            wait_next()
            accw = fresh.value(acc_arg.dtype, acc_arg.shape, acc_arg.hint)
            cb.ops.append(g.WgmmaWait((accw,), (acc_arg,), 0, span))
            # the previous block's stage is free: its S and P V are done
            prev = cb.elem(E.REM, cb.elem(E.ADD, c_it, cb.const(bufs.S - 1)), cb.const(bufs.S))
            started = cb.elem(E.GT, c_it, bufs.base, dtype=DType.BOOL)
            cb.ops.append(g.BarrierArrive(bufs.empty, prev, started, span))
            mapping[acc_arg.id] = accw
            waited = True

        for op in loop.body.ops:
            if id(op) in chained or op is p.s_dot:
                continue
            if not waited and (op is p.o_dot or _reads(op, acc_arg)):
                wait_acc()
            if op is p.o_dot:
                cb.ops += vmask.zero(p.vmask, bufs.v, stage, mapping, 128 * bufs.C)  # this block's V, read below
                sel_st, _ = wait_next()
                if pingpong:  # this warpgroup's turn to issue, after the spin on its stage
                    cb.ops.append(g.WarpgroupTurn("wait", TURN_BARRIER, span))
                s_op = None
                if not last:
                    raw, s_op = _s_product(cb, p, bufs, sel_st, fresh, layouts, issue=False)
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
    c_loop = ir.For((*c_results, trips, s_last), loop.lower, upper, loop.step, (*inits, bufs.base, s_init),
                    ir.Region((*loop.body.args, c_it, s_cur), tuple(_unshare(loop_ops, fresh))), span)  # type: ignore[arg-type]
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
    then = ir.Region((), (*pb.ops, *_unshare(body[:-1], fresh), ys_peel))  # type: ignore[arg-type]
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


# Registers a consumer thread keeps for everything but the body's S, O and P
# fragments (addresses, row statistics, the walk's state, temporaries) when the
# last iteration is peeled off: with ptxas 13.0, past this the peeled kernel
# serialises every wgmma (C7512) and spills, e.g. 128 x 128 blocks at D = 128
# (S 64 + O 64 + P 32 = 160 registers of 232); 128 x 128 at D = 64 (128) and
# 128 x 64 at D = 128 (112) compile with no spill.
PEEL_HEADROOM = 104
# `TILEC_ATTN_PEEL` unset: "0" until the H200 has timed the peel (attention_prefill_device.sh PEEL=1).
PEEL_DEFAULT = "0"


def _peel_fits(p: AttnPlan, C: int) -> bool:
    """Whether the loop's last iteration can be peeled off (a second copy of
    the body after the loop) within the consumers' registers: per thread, S
    ([64, BN] f32 over a warpgroup's 128 threads), O ([64, Dv] f32) and P
    (f16/bf16 pairs). `TILEC_ATTN_PEEL=1`/`0` forces it on/off where it
    fits; unset, `PEEL_DEFAULT` (off until timed on the GPU: correct in the
    simulator and ptxas-clean)."""
    if os.environ.get("TILEC_ATTN_PEEL", PEEL_DEFAULT) != "1":
        return False
    return p.BN // 2 + p.o_dot.result.shape[1] // 2 + p.BN // 4 <= role_registers(C, PRODUCER_REGS) - PEEL_HEADROOM


def _unshare(ops: list[object], fresh: Fresh) -> list[object]:
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


def _registers_only(ops: list[object], layouts: dict[int, Layout]) -> bool:
    """Every op of the consumers computes in registers with the layouts given:
    a conversion or a shared-memory staging would need a barrier of the whole
    CTA, which the producer warp never reaches (a hang)."""
    from tilelang.backend.codegen.accview import acc_register_map, acc_view

    def view(v: ir.Value):  # type: ignore[no-untyped-def]
        lay = layouts.get(v.id)
        return acc_view(lay, v.shape) if isinstance(lay, AccTile) else None

    def same(a: ir.Value, b: ir.Value) -> bool:
        return not a.shape or layouts.get(a.id) == layouts.get(b.id)

    for op in g.walk(ir.Region((), tuple(ops))):  # type: ignore[arg-type]
        match op:
            case ir.Elementwise(result=r) | ir.Cast(result=r):
                if r.shape and not all(same(x, r) for x in g.operands(op)):
                    return False
            case ir.Broadcast(result=r, x=x) if x.shape:
                lead = len(r.shape) - len(x.shape)
                align = [None if i < lead or x.shape[i - lead] == 1 else i - lead for i in range(len(r.shape))]
                vx, vr = view(x), view(r)
                if vx is None or vr is None or acc_register_map(vx, vr, align) is None:
                    return False
            case ir.Reshape(result=r, x=x) if x.shape and r.shape:
                xd = [i for i, n in enumerate(x.shape) if n != 1]
                rd = [i for i, n in enumerate(r.shape) if n != 1]
                if [x.shape[i] for i in xd] != [r.shape[i] for i in rd]:
                    return False
                align: list[int | None] = [None] * len(r.shape)
                for i, j in zip(rd, xd, strict=True):
                    align[i] = j
                vx, vr = view(x), view(r)
                if vx is None or vr is None or acc_register_map(vx, vr, align) is None:
                    return False
            case ir.Reduce(result=r, x=x, axis=a):
                vx = view(x)
                if vx is None or a != vx.cdim or vx.M == 1 or (r.shape and view(r) is None):
                    return False
            case ir.If(results=rs, then=t, else_=e):
                for i, v in enumerate(rs):
                    if not (same(t.ops[-1].values[i], v) and same(e.ops[-1].values[i], v)):  # type: ignore[union-attr]
                        return False
            case ir.For(results=rs, inits=inits, body=b):
                ys = b.ops[-1].values  # type: ignore[union-attr]
                for r, i0, a, y in zip(rs, inits, b.args[1:], ys, strict=True):
                    if not (same(i0, a) and same(y, a) and same(r, a)):
                        return False
            case ir.Load() | ir.Permute() | g.ConvertLayout() | ir.Scan():
                return False
    return True


# ---------------------------------------------------------------- the rewrite
def attention(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    if not ctx.has_wgmma or os.environ.get("TILEC_ATTN_SCHEDULE") == "generic":
        return k  # "generic": leave attention loops to the generic path
    p = _match(k, ctx)
    if p is None:
        return k
    E = ir.ElemOp
    fresh = Fresh(k.next_id)
    layouts = dict(k.layouts)
    ops = list(k.body.ops)
    i = ops.index(p.loop)
    ost, p = epi.plan(ops[i + 1:], k, ctx, p, SMEM_LIMIT - 2048)  # O through shared memory, its ring
    p = dataclasses.replace(p, short=chain.short(p, ctx))
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

    qbuf, qdesc = buf(p.q, 1, "q")
    kbuf, kdesc = buf(p.k, S, "k")
    vbuf, vdesc = buf(p.v, S, "v")
    full = fresh.value(DType.I64, (S,), "full")
    empty = fresh.value(DType.I64, (S,), "empty")
    qbar = fresh.value(DType.I64, (1,), "qbar")
    qempty = fresh.value(DType.I64, (1,), "qempty")  # persistent: the consumers are done with Q
    for b in (full, empty, qbar, qempty):
        layouts[b.id] = Barriers()
    pre: list[object] = [g.SmemAlloc(qbuf, span=span), g.SmemAlloc(kbuf, span=span), g.SmemAlloc(vbuf, span=span),
                         g.BarrierAlloc(full, 1, span=span), g.BarrierAlloc(empty, W, span=span),
                         g.BarrierAlloc(qbar, 1, span=span)]
    schedule = _schedule(loop, p, C)
    kv = tiles.kv_axes(k, [*p.k.load.offsets, *p.v.load.offsets])
    persist = schedule != "pingpong-unsafe" and kv is not None and tiles.enabled(k)
    turns = schedule == "pingpong-unsafe" or (schedule == "overlap" and C == 2 and pingpong() != "0")
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
    if persist:  # the Q buffer is free once the consumers' last S of the previous tile is done
        one = pb.const(1)
        pb.ops.append(g.BarrierWait(qempty, zero_p, pb.elem(E.XOR, pb.elem(E.AND, p_tn, one), one), span))
    pb.ops.append(g.BarrierExpect(qbar, zero_p, p.q.nbytes, span))
    copies(pb, p.q, qdesc, qbuf, zero_p, qbar, {})
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

    # -- consumers: the body as written, the products on the tensor cores
    chained = {id(op) for t in (p.q, p.k, p.v) for op in t.chain} | {id(op) for op in (p.vmask.ops if p.vmask else ())}
    before = [op for op in ops[:i] if id(op) not in chained]
    outside = [op for op in before if not any(v.shape for v in g.results(op))]
    moved = [op for op in before if any(v.shape for v in g.results(op))]
    zero_c = fresh.value(DType.I32, (), "q_stage")
    cast = next(op for op in loop.body.ops if isinstance(op, ir.Cast) and op.result is p.o_dot.a)
    bufs = _Bufs(qbuf, kbuf, vbuf, full, empty, zero_c, C, BN, S, c_base if persist else zero_c)
    q_early = persist and not turns and not late and tiles.q_early()  # Q released in the rotated loop's last iteration
    epilogue = _unshare(epi.reciprocals([op for op in ops[i + 1:] if not isinstance(op, ir.Yield)], fresh), fresh)
    ch, short = chain.make(p, loop, epilogue, outside, moved, bufs, fresh, persist and not turns and ost is None
                           and schedule == "overlap" and rot.packed())  # passes/attention_chain.py
    q_early = q_early or chain.q_early(ch)
    turned = rot.rotated(loop, p, cast, chained, bufs, fresh, layouts, moved, _s_product, _unshare, turns,
                         qempty if q_early else None, ch) \
        if schedule == "overlap" and rot.enabled(p) and (not turns or pingpong() == "rotated-unsafe") else None
    ch = ch if turned is not None else None  # (rotated declined: it never saw `ch`)
    if schedule == "serial":
        c_loop, c_pre, c_post = _serial(loop, p, cast, chained, bufs, fresh, layouts)
    elif turned is not None:  # D = 128 or TILEC_ATTN_ROTATE=1: passes/attention_rotated.py
        c_loop, c_pre, c_post = turned
    else:
        c_loop, c_pre, c_post = _overlapped(loop, p, cast, chained, bufs, fresh, layouts, turns, moved)
    c_loop = spec.speculate(c_loop, fresh)  # exp2 before the row max: passes/attention_spec.py
    moved = _unshare(moved, fresh)
    epilogue = [substitute(op, c_post[1]) for op in epilogue]
    from .attention_zeros import drop_unread_zeros

    post, epilogue = drop_unread_zeros(c_post[0], epilogue, loop, c_post[1], before)
    c_post, eb = (post, c_post[1], c_post[2]), _Build(fresh)  # the last block's stage; whether the loop ran
    last = eb.elem(E.REM, eb.elem(E.ADD, c_post[2], eb.const(S - 1)), eb.const(S))
    ran = eb.elem(E.GT, c_post[2], bufs.base, dtype=DType.BOOL)
    idle_t = eb.elem(E.LE, c_post[2], bufs.base, dtype=DType.BOOL) if ost is not None and ost.mode == "v" else ran
    epilogue, fin = epi.rewrite(epilogue, ost, obuf, qbuf, last, ran)
    # with turns, warpgroup 0 has the first and takes the last pass (once a CTA:
    # the turns run on from tile to tile; no arrival is left on a barrier)
    start, end = ([g.WarpgroupTurn(x, TURN_BARRIER, span)] if turns else [] for x in ("start", "end"))
    consumer_ops: list[object] = [*start, *moved, ir.Const(zero_c, 0), g.BarrierWait(qbar, zero_c, zero_c, span),
                                  *c_pre, c_loop, *c_post[0], *eb.ops, *epilogue, *fin, *end, ir.Yield(())]
    if persist:
        tb = _Build(fresh)
        q_phase = tb.elem(E.AND, c_tn, tb.const(1))
        trips = c_post[2]
        # the last block's stage, once its P V is done (the loop frees the others)
        rel = [g.BarrierArrive(empty, last, ran, span)] if schedule != "serial" else []
        idle = tb.elem(E.GE, loop.lower, loop.upper, dtype=DType.BOOL) if q_early and turned else None
        qrel = g.BarrierArrive(qempty, zero_c, idle, span)
        head, tail, carry = epi.released(ost, qrel, rel, [*c_post[0], *eb.ops], epilogue, fin, ran, idle_t, c_base, S, empty, fresh)
        consumer_ops = [*moved, *tb.ops, g.BarrierWait(qbar, zero_c, q_phase, span), *c_pre, *head, c_loop, *tail]
        if ch is not None:  # the previous tile's last P V issued by this tile's first iteration
            consumer_ops, trips, chain_init, carry = chain.tile_ops(
                ch, c_loop, c_pre, loop, S, [*tb.ops, g.BarrierWait(qbar, zero_c, q_phase, span)], [qrel], moved,
                before, p, vbuf, cast.result.dtype)

    # every tile of the consumers in the accumulator layout
    cl = _Classes(BM)
    links = [(a, b, y, r) for a, b, y, r in zip(loop.inits, loop.body.args[1:], loop.body.ops[-1].values,  # type: ignore[union-attr]
                                                 loop.results, strict=True)]
    _classify([*moved, *c_loop.body.ops, *c_post[0], *epilogue, *(consumer_ops if ch else ())], cl, links)
    chain.layouts(ch, cl, W, layouts)
    _assign(consumer_ops, cl, W, layouts)

    consumer_regs = role_registers(C, PRODUCER_REGS)
    ws = g.WarpSpecialize((
        g.Role("consumer", W, consumer_regs, ir.Region((), tuple(consumer_ops))),  # type: ignore[arg-type]
        g.Role("producer", 4, PRODUCER_REGS, ir.Region((), (*pb.ops, ir.Const(pzero, 0), p_loop, ir.Yield(()))), single=True),  # type: ignore[arg-type]
    ), span)
    if not _registers_only(consumer_ops, layouts):
        return k  # some value would move between threads: the generic path
    if persist:
        assert kv is not None
        wb = _Build(fresh)
        walk = tiles.walk_setup(wb, k, kv, outside, (loop.lower, loop.upper))
        c_walk = tiles.tile_loop(walk, fresh, outside, consumer_ops, c_base, trips, c_tn, span, carry)
        if ch is not None:  # the last tile's pending P V and epilogue
            c_walk = chain.final(ch, chain_init, c_walk, vbuf, p.v_kmajor, cast.result.dtype,
                                 lambda o: _assign(o, cl, W, layouts))
        c_ops = [*start, ir.Const(zero_c, 0), *c_walk,
                 *([g.TmaStoreWait(span=span)] if ost is not None and ost.mode != "q" else []), *end, ir.Yield(())]
        p_ops = [*tiles.tile_loop(walk, fresh, outside, p_tile, p_base, p_loop.results[0], p_tn, span),
                 ir.Yield(())]
        ws = g.WarpSpecialize((dataclasses.replace(ws.roles[0], body=ir.Region((), tuple(c_ops))),  # type: ignore[arg-type]
                               dataclasses.replace(ws.roles[1], body=ir.Region((), tuple(p_ops)))), span)  # type: ignore[arg-type]
        body = ir.Region(k.body.args, (*wb.ops, *pre, ws, ir.Yield(())))  # type: ignore[arg-type]
    else:
        body = ir.Region(k.body.args, (*outside, *pre, ws, ir.Yield(())))  # type: ignore[arg-type]
        body = tiles.kv_blocks_together(k, kv, body, fresh)
    return dataclasses.replace(k, body=body, layouts=layouts, next_id=fresh.next, persistent=int(persist), short=short,
                               params=(*k.params, qdesc, kdesc, vdesc, *([ost.desc] if ost else [])), num_warps=W + 4, num_stages=S)


__all__ = ["AttnPlan", "attention"]
