"""Pass `pipeline_sm80`: a cp.async pipeline for tensor-core loops on sm_8x.

The sibling of `pipeline` (the Hopper plan) for targets without wgmma
(`sm_80`, `sm_86`, `sm_89`, `sm_90`). The loop every Tile GEMM is,

    for k in lo..hi step s { acc = mma(x.load(..), y.load(..), acc); }   // y may be .transpose()d

becomes a software pipeline over a ring of `stages` shared buffers per
operand (`SmemTile`: row-major, 16-byte chunks XOR-swizzled for ldmatrix):

    prologue: issue the copies of iterations 0 .. stages-2 (one commit group each),
              wait until iteration 0's group landed, CTA barrier, load the
              fragments of stage 0's first k16 step (in the loop's preheader)
    loop, iteration i:  issue the copies of iteration i + stages - 1 into the stage
                        iteration i - 1 read (every warp passed the barrier below
                        after its last read of it), commit
                        acc = mma.sync over stage i % stages, each k16 step's
                        fragments loaded (ldmatrix) while the previous step's
                        mmas issue; before the last step: wait until iteration
                        i + 1's group landed, CTA barrier, load the next stage's
                        first fragments (carried to iteration i + 1)
    after the loop: wait for every group

A warp thus never waits for shared memory at the top of an iteration: the
barrier and the first ldmatrix of a stage overlap the previous stage's last
mmas (on the H200, 128x128x32 with 4 warps: 390 -> 426 TFLOP/s).

Copies are `cp.async.cg` of 16 bytes, zero-filled past the tensor's edge (the
interpreter's rule for loads without padding), so edge tiles need no masks
and the copies issued for the iterations past the end are harmless zeros. The
accumulator stays in registers in the `MmaTile` layout (the C fragments of a
grid of warps, each owning a block of the tile) for the whole loop; what
follows the loop reads it in that layout (stores need no conversion).

An operand whose rows are not whole 16-byte chunks (the tensor's base not
16-byte aligned, its contiguous dim not a multiple of 16, or the tile's
column offset not provably a multiple of 8) is copied element by element
through registers instead (loads masked at the edges, zero beyond, one
16-byte shared store per chunk): synchronous, into the same ring and layout,
so the schedule is unchanged and every edge stays exact.

Conditions (else the loop keeps the generic mma.sync path): the target has
no wgmma (sm_80 .. sm_90; TILEC_ARCH=sm_80 forces it on an H100/H200), or
it has and the Hopper pipeline refused the loop (`fallback_enabled`); the
loop is in the kernel's top-level region and carries only the accumulator;
its body is scalar ops, the two loads (2-D f16/bf16 tensors, no mask or
padding), an optional transpose of the second, and the mma (an mma.sync
`DotOp`: f32 accumulator, M % 16, N % 16, K % 16), each tile used once; the
warps split the tile into a grid whose blocks are multiples of 16x16.

int8 (i8 x i8 or u8 x u8 into i32, K % 32: `mma.sync.m16n8k32`, exact) takes
the same ring with 1-byte elements (16 a chunk): A by the f16 path's
`ldmatrix.x4` (a k32 step is two chunks, as a k16 step of f16), a [N, K] B by
its plain `ldmatrix.x4`; a row-major [K, N] B by `ldmatrix.x4.trans`, whose
16-bit units pair two columns, each lane addressing k-rows 4i + j + {0, 1}
(j = 0, 2) so one `prmt` a register gathers a column's 4 consecutive k
bytes: the n8 tiles of a 16-column group then hold its even and odd columns
(`MmaTile.split16`), the ring the xor of those rows (`SmemTile.quad`).
Warps: the kernel's `num_warps` hint, else one per 64x64 block of the
accumulator, 4 to 8 (`default_warps`): 64x64 warp blocks reuse each
fragment 4-8 times, and two k-steps of their fragments plus the
accumulator fit in 255 registers. `stages` is the kernel's `stages` hint, else 4, lowered to what fits in the
target's shared memory (A100 163 KB, sm_86/sm_89 99 KB, Hopper 227 KB) beside
the other planned loops' rings and, unless the accumulator starts constant and
is only cast and stored, an M x N f32 scratch area for the code generator's
conversions; fewer than 2 stages: no plan.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from tilelang.backend.env_switch import flag
from tilelang.backend.target import int8_ring_default
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import MmaTile, SmemTile
from .context import Fresh, PassContext
from .rewrite import substitute, uses


def fallback_enabled() -> bool:
    """`TILEC_SM80_FALLBACK` (unset or "1": on; "0": off): on sm_90a, a tensor-core loop the Hopper pipeline
    refused (`pipeline._plan`: a tile of M = 16 or 32, N over 256, ...) takes this pipeline instead of
    mma.sync with no pipeline; the loops the Hopper pipeline takes are no longer `For`s here."""
    return flag("TILEC_SM80_FALLBACK", "1")


# shared memory a block may opt in to: A100 (sm_80) 163 KB, sm_86/sm_89 99 KB, Hopper 227 KB
SMEM_LIMIT = {"sm_80": 163 * 1024, "sm_86": 99 * 1024, "sm_89": 99 * 1024}
HOPPER_SMEM = 227 * 1024
_16 = (DType.F16, DType.BF16)
_INT8 = (DType.I8, DType.U8)  # mma.sync.m16n8k32 into i32 (`mma_select.int8_tensor_core_shape`)
_SCALAR = (ir.Const, ir.Elementwise, ir.Cast, ir.TensorDim, ir.BlockId, ir.NumBlocks)


def warp_grid(M: int, N: int, warps: int) -> tuple[int, int] | None:
    """(warps_m, warps_n) splitting an [M, N] tile into the squarest blocks that
    are multiples of 16x16, or None."""
    best = None
    for wm in range(1, warps + 1):
        if warps % wm:
            continue
        wn = warps // wm
        if M % (16 * wm) or N % (16 * wn):
            continue
        bm, bn = M // wm, N // wn
        score = (max(bm, bn) / min(bm, bn), -bm)
        if best is None or score < best[0]:
            best = (score, (wm, wn))
    return best[1] if best else None


# Accumulator elements a warp holds when the kernel does not hint its warps:
# a 64x64 block, 128 f32 registers a thread, the most that leaves room for
# two k-steps of fragments (the prefetch) under 255 registers.
WARP_BLOCK = 64 * 64


def default_warps(M: int, N: int) -> int:
    """Warps for an unhinted [M, N] accumulator: one a 64x64 block, 4 to 8 (fewer
    than 4 warps leave the copies and the barrier latency exposed)."""
    return max(4, min(8, M * N // WARP_BLOCK))


@dataclasses.dataclass(frozen=True)
class _Plan:
    loop: ir.For
    dot: g.DotOp
    a: ir.Load
    b: ir.Load
    b_nk: bool
    grid: tuple[int, int]
    stages: int
    vector: tuple[bool, bool]  # A, B copied by 16-byte cp.async (else element by element)
    warps: int


def _plan(k: g.GpuKernel, ctx: PassContext, op: ir.For, warps: int | None = None) -> _Plan | None:
    found = lone_dot(k, op, "mma.sync")
    if found is None:
        return None
    dot, defs, count = found
    a = _unbatched(defs.get(dot.a.id), defs, k, count)
    b = defs.get(dot.b.id)
    b_nk = False
    if isinstance(b, ir.Permute):
        if b.perm != (1, 0) or count.get(b.x.id) != 1:
            return None
        b_nk = True
        b = defs.get(b.x.id)
    b = _unbatched(b, defs, k, count)
    if not isinstance(a, ir.Load) or not isinstance(b, ir.Load):
        return None
    int8 = dot.a.dtype in _INT8
    if int8 and not int8_ring_default():
        return None
    for ld in (a, b):
        t = k.tensor(ld.tensor)
        if (ld.mask is not None or ld.padding is not None or t.rank != len(ld.result.shape)
                or t.rank not in (2, 3) or t.dtype not in (_INT8 if int8 else _16) or count.get(ld.result.id) != 1):
            return None
    if a.result.dtype is not b.result.dtype or dot.acc.dtype is not (DType.I32 if int8 else DType.F32):
        return None
    M, K = a.result.shape[-2:]
    N = dot.b.shape[1]
    if M % 16 or N % 16 or K % (32 if int8 else 16):
        return None
    if warps is None:
        warps = k.num_warps if "num_warps" in k.source.hints else default_warps(M, N)
    grid = warp_grid(M, N, warps)
    if grid is None:
        return None
    every = {v.id: o for o in (*k.body.ops, *op.body.ops) for v in g.results(o)}
    vector = tuple(_chunked(ctx, ld, every) for ld in (a, b))
    stage_bytes = (M * K + K * N) * a.result.dtype.itemsize
    fit = (SMEM_LIMIT.get(ctx.arch, HOPPER_SMEM) - _scratch(k, op)) // stage_bytes
    stages = k.num_stages if "stages" in k.source.hints else 4
    stages = max(2, min(stages, fit))
    if stages > fit:
        return None
    return _Plan(op, dot, a, b, b_nk, grid, stages, vector, warps)  # type: ignore[arg-type]



def lone_dot(k: g.GpuKernel, op: ir.For, engine: str) -> tuple[g.DotOp, dict[int, object], dict[int, int]] | None:
    """The K loop `op` as the rings take it: one carried accumulator, fed by one `engine` product and
    used by nothing else, the rest of the body loads (plain, permuted or batched) and scalar arithmetic.
    Gives the product, the body's defining op by value id and the body's use counts (sm_80's ring and
    the FMA pipeline, `pipeline_fma`)."""
    body = op.body
    if len(op.inits) != 1 or not isinstance(body.ops[-1], ir.Yield):
        return None
    acc = body.args[1]
    defs: dict[int, object] = {}
    dots = []
    for o in body.ops[:-1]:
        for v in g.results(o):
            defs[v.id] = o
        if isinstance(o, g.DotOp):
            dots.append(o)
        elif not ((isinstance(o, _SCALAR) and all(not v.shape for v in g.results(o)))
                  or isinstance(o, ir.Load | ir.Permute) or _batched(o, defs, k) is not None):
            return None
    if len(dots) != 1:
        return None
    dot = dots[0]
    y = body.ops[-1]
    if dot.engine != engine or dot.acc.id != acc.id or y.values[0].id != dot.result.id:  # type: ignore[union-attr]
        return None
    count = uses(body)
    if count.get(acc.id) != 1 or count.get(dot.result.id) != 1:
        return None
    return dot, defs, count

def _batched(o: object, defs: dict[int, object], k: g.GpuKernel) -> ir.Load | None:
    """The load of a batched operand, `p.load([b, i, k]).reshape([BM, BK])` of a 3-D tensor (round 15: a
    batched GEMM took no pipeline), or None."""
    if not isinstance(o, ir.Reshape) or len(o.result.shape) != 2:
        return None
    ld = defs.get(o.x.id)
    if not isinstance(ld, ir.Load) or k.tensor(ld.tensor).rank != 3 or ld.result.shape[0] != 1:
        return None
    return ld


def _unbatched(o: object, defs: dict[int, object], k: g.GpuKernel, count: dict[int, int]) -> object:
    """An operand's load: `o` itself, or the 3-D load a batched operand's reshape reads (used once)."""
    ld = _batched(o, defs, k)
    if ld is None:
        return o
    return ld if count.get(o.result.id) == 1 else None  # type: ignore[union-attr]


def _ring_bytes(p: _Plan) -> int:
    """Bytes of one stage of both operands' rings."""
    M, K = p.a.result.shape[-2:]
    return (M * K + K * p.dot.b.shape[1]) * p.a.result.dtype.itemsize


def _scratch(k: g.GpuKernel, loop: ir.For) -> int:
    """Shared bytes to leave to the code generator's scratch area: none when
    the accumulator starts as a constant and its result is only cast and
    stored (both in its own layout), else a conversion's worth (M x N f32)."""
    full = loop.results[0].shape[0] * loop.results[0].shape[1] * 4
    init = next((o for o in k.body.ops if any(r.id == loop.inits[0].id for r in g.results(o))), None)
    if not isinstance(init, ir.Const):
        return full
    users: dict[int, list[object]] = {}
    for o in g.walk(k.body):
        for v in g.operands(o):
            users.setdefault(v.id, []).append(o)
    todo = [loop.results[0]]
    while todo:
        v = todo.pop()
        for o in users.get(v.id, []):
            if isinstance(o, ir.Cast):
                todo.append(o.result)
            elif not isinstance(o, ir.Store):
                return full
    return 0


def _multiple(v: ir.Value, defs: dict[int, object], depth: int = 0) -> int:
    """A known divisor of scalar `v` (0: v is 0), from constants, products and sums."""
    o = defs.get(v.id)
    if depth > 32:
        return 1
    match o:
        case ir.Const(value=c) if isinstance(c, int) and not isinstance(c, bool):
            return abs(c)
        case ir.Elementwise(op=ir.ElemOp.MUL, operands=(x, y)):
            mx, my = _multiple(x, defs, depth + 1), _multiple(y, defs, depth + 1)
            return 0 if mx == 0 or my == 0 else mx * my
        case ir.Elementwise(op=ir.ElemOp.ADD | ir.ElemOp.SUB, operands=(x, y)):
            return math.gcd(_multiple(x, defs, depth + 1), _multiple(y, defs, depth + 1))
    return 1


def _chunked(ctx: PassContext, ld: ir.Load, defs: dict[int, object]) -> bool:
    """Every 16-byte chunk of the tile's rows is one aligned chunk of the tensor,
    wholly inside or wholly outside it: cp.async can copy it (zero-filled outside)."""
    f = ctx.fact(ld.tensor)
    return (f.aligned16 and not f.bf16_f32 and len(f.dims_div16) == len(ld.offsets) and f.dims_div16[-1]
            and _multiple(ld.offsets[-1], defs) % (16 // ld.result.dtype.itemsize) == 0)


def _slice(body: ir.Region, roots: list[ir.Value]) -> list[object]:
    """The body's scalar ops the values `roots` depend on, in program order."""
    defs = {v.id: o for o in body.ops for v in g.results(o)}
    need: set[int] = set()
    todo = list(roots)
    while todo:
        v = todo.pop()
        o = defs.get(v.id)
        if o is None or id(o) in need:
            continue
        need.add(id(o))
        todo.extend(g.operands(o))
    return [o for o in body.ops if id(o) in need]


class _Rewriter:
    """Builds the pipelined form of planned loops with fresh values."""

    def __init__(self, k: g.GpuKernel) -> None:
        self.fresh = Fresh(k.next_id)
        self.layouts = dict(k.layouts)
        self.consts = {o.result.id: o for o in k.body.ops if isinstance(o, ir.Const) and o.result.shape}

    def const(self, ops: list[object], c: int) -> ir.Value:
        v = self.fresh.value(DType.I32)
        ops.append(ir.Const(v, c))
        return v

    def elem(self, ops: list[object], eop: ir.ElemOp, x: ir.Value, y: ir.Value, hint: str = "") -> ir.Value:
        v = self.fresh.value(DType.I32, (), hint)
        ops.append(ir.Elementwise(v, eop, (x, y)))
        return v

    def clone(self, ops: list[object], slice_ops: list[object], iv: ir.Value, new_iv: ir.Value) -> dict[int, ir.Value]:
        """Copies of `slice_ops` with the loop variable replaced; returns the value map."""
        m: dict[int, ir.Value] = {iv.id: new_iv}
        for o in slice_ops:
            rs = g.results(o)
            nv = {r.id: self.fresh.value(r.dtype, r.shape, r.hint) for r in rs}
            o2 = dataclasses.replace(substitute(o, m), result=nv[rs[0].id])  # type: ignore[type-var]
            ops.append(o2)
            m.update(nv)
        return m

    def issue(self, p: _Plan, ops: list[object], bufs: tuple[ir.Value, ir.Value], new_iv: ir.Value,
              stage: ir.Value) -> None:
        """The copies of iteration `new_iv` into `stage`, one commit group."""
        iv = p.loop.body.args[0]
        m = self.clone(ops, _slice(p.loop.body, [*p.a.offsets, *p.b.offsets]), iv, new_iv)
        for ld, buf, vec in zip((p.a, p.b), bufs, p.vector, strict=True):
            cs = tuple(m.get(v.id, v) for v in ld.offsets)
            ops.append(g.CpAsyncTile(ld.tensor, cs, buf, stage, vec, ld.span))  # type: ignore[arg-type]
        ops.append(g.CpAsyncCommit(p.loop.span))

    def rewrite(self, p: _Plan) -> list[object]:
        """The ops replacing loop `p.loop`: rings, prologue, loop, final wait."""
        M, K = p.a.result.shape[-2:]
        N = p.dot.b.shape[1]
        dt = p.a.result.dtype
        int8 = dt in _INT8  # a row-major B read by ldmatrix.trans 4 rows apart: its ring's swizzle and C layout
        quad = int8 and not p.b_nk
        rings = ((dt, (p.stages, M, K), SmemTile()),
                 (dt, (p.stages, N, K) if p.b_nk else (p.stages, K, N), SmemTile(quad=quad)))

        def dot(res: ir.Value, sa: ir.Value, sb: ir.Value, stage: ir.Value, acc: ir.Value) -> object:
            return g.SmemDot(res, sa, sb, stage, acc, p.b_nk, p.dot.span, p.stages - 2)

        # Iteration 0's group must have landed before the loop: its first
        # fragments are loaded in the preheader. Each later wait is inside the
        # mma, before its last k16 step, which then loads the next stage's
        # first fragments for the next iteration (SmemDot.prefetch).
        return self.ring_loop(p.loop, p.stages, rings, lambda ops, bufs, iv, st: self.issue(p, ops, bufs, iv, st),
                              dot, DType.I32 if int8 else DType.F32, MmaTile(*p.grid, split16=quad),
                              wait_in_body=False)

    def ring_loop(self, loop: ir.For, S: int, rings: tuple[tuple[DType, tuple[int, ...], object], ...],
                  issue: object, dot: object, acc_dt: DType, tile: object, wait_in_body: bool) -> list[object]:
        """The ring schedule of a loop accumulating one product (this pass's and `pipeline_fma`'s): the two
        rings ((dtype, [S, rows, cols], layout) each), a prologue issuing the copies of iterations 0 .. S-2
        (`issue(ops, bufs, iv, stage)`), the loop (the wait and barrier at its top where `wait_in_body`, else
        before it and inside `dot(result, a_ring, b_ring, stage, acc)`'s op), the accumulator in `tile`."""
        out: list[object] = []
        iv, acc = loop.body.args
        sa = self.fresh.value(rings[0][0], rings[0][1], "sA")
        sb = self.fresh.value(rings[1][0], rings[1][1], "sB")
        self.layouts[sa.id] = rings[0][2]  # type: ignore[assignment]
        self.layouts[sb.id] = rings[1][2]  # type: ignore[assignment]
        out += [g.SmemAlloc(sa), g.SmemAlloc(sb)]
        # prologue: iterations 0 .. S-2
        for s in range(S - 1):
            ivs = loop.lower if s == 0 else self.elem(out, ir.ElemOp.ADD, loop.lower,
                                                      self.elem(out, ir.ElemOp.MUL, loop.step, self.const(out, s)))
            issue(out, (sa, sb), ivs, self.const(out, s))  # type: ignore[operator]
        # the body
        body: list[object] = []
        it = self.elem(body, ir.ElemOp.DIV, self.elem(body, ir.ElemOp.SUB, iv, loop.lower), loop.step, "i")
        s_const = self.const(body, S)
        stage = self.elem(body, ir.ElemOp.REM, it, s_const, "stage")
        (body if wait_in_body else out).append(g.CpAsyncWait(S - 2, True, loop.span))
        # The copies of iteration i + S - 1 go into the stage iteration i - 1
        # read: every warp passed the barrier after its last read of the stage
        # (this iteration's, or the one inside that iteration's product), so they
        # can be issued before this iteration's product and have its whole
        # duration to land.
        ahead = self.elem(body, ir.ElemOp.ADD, iv, self.elem(body, ir.ElemOp.MUL, loop.step, self.const(body, S - 1)))
        nxt = self.elem(body, ir.ElemOp.ADD, it, self.const(body, S - 1))
        issue(body, (sa, sb), ahead, self.elem(body, ir.ElemOp.REM, nxt, s_const, "next"))  # type: ignore[operator]
        res = self.fresh.value(acc_dt, acc.shape, "acc")
        body.append(dot(res, sa, sb, stage, acc))  # type: ignore[operator]
        body.append(ir.Yield((res,), loop.body.ops[-1].span))  # type: ignore[union-attr]
        for v in (acc, res, loop.results[0]):
            self.layouts[v.id] = tile  # type: ignore[assignment]
        init = loop.inits[0]
        c = self.consts.get(init.id)
        if c is not None:  # a constant accumulator starts in registers, in the loop's layout (no conversion)
            init = self.fresh.value(init.dtype, init.shape, "acc")
            out.append(ir.Const(init, c.value, c.span))
            self.layouts[init.id] = tile  # type: ignore[assignment]
        out.append(dataclasses.replace(loop, inits=(init,),
                                       body=ir.Region(loop.body.args, tuple(body))))  # type: ignore[arg-type]
        out.append(g.CpAsyncWait(0, True, loop.span))
        return out


def place_rings(k: g.GpuKernel, ctx: PassContext, plan: Callable[..., Any],
                ring_bytes: Callable[[Any], int]) -> tuple[int, dict[int, Any]]:
    """Which of the kernel's top-level loops get a ring (sm_80's and the FMA pipeline's): one warp count
    for the kernel, the most any planned loop wants (`plan(k, ctx, loop)`, then planned again at that
    count), and the loops whose rings fit the shared memory beside the ones before them (every ring is
    live for the whole kernel: smem_alloc does not overlap them). Gives (warps, plans by id of loop)."""
    loops = [o for o in k.body.ops if isinstance(o, ir.For)]
    wanted = [p.warps for o in loops if (p := plan(k, ctx, o)) is not None]
    if not wanted:
        return 0, {}
    warps = max(wanted)
    plans: dict[int, Any] = {}
    ring = 0
    for o in loops:
        if (p := plan(k, ctx, o, warps)) is not None:
            nbytes = ring_bytes(p)
            if ring + nbytes + _scratch(k, o) <= SMEM_LIMIT.get(ctx.arch, HOPPER_SMEM):
                ring += nbytes
                plans[id(o)] = p
    return warps, plans


def splice(k: g.GpuKernel, plans: dict[int, Any], rewrite: Callable[[Any], list[object]]) -> tuple[object, ...]:
    """The kernel's top-level ops with each planned loop replaced by `rewrite(plan)`'s ops."""
    out: list[object] = []
    for op in k.body.ops:
        p = plans.get(id(op))
        out += [op] if p is None else rewrite(p)
    return tuple(out)


def pipeline_sm80(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    if ctx.has_wgmma and not fallback_enabled():
        return k
    warps, plans = place_rings(k, ctx, _plan, lambda p: p.stages * _ring_bytes(p))
    if not plans:
        return k
    rw = _Rewriter(k)
    out = splice(k, plans, rw.rewrite)
    return dataclasses.replace(k, body=ir.Region(k.body.args, out),  # type: ignore[arg-type]
                               layouts=rw.layouts, next_id=rw.fresh.next, num_warps=warps,
                               num_stages=max(p.stages for p in plans.values()))


__all__ = ["default_warps", "pipeline_sm80", "warp_grid"]
