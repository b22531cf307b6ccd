"""Pass `pipeline`: software pipelining of tensor-core loops (the Hopper path).

The loop every Tile GEMM is,

    acc = const c
    for k in lo..hi step s { acc = mma(x.load(..), y.load(..), acc); }   // operands may be .transpose()d
    <epilogue: element-wise ops, casts and stores of acc (`gemm_epilogue`)>

becomes, on sm_90a (`hopper_plans` says when), a warp-specialised pipeline:

- a ring of `stages` shared buffers per operand, in the layout TMA writes and
  wgmma reads (128/64/32-byte swizzle; `layouts.Shared`), and two mbarrier
  arrays: `full[s]` (TMA bytes landed) and `empty[s]` (consumers done);
- role `producer` (one warpgroup with few registers, one thread working):
  for each iteration, wait until stage s is empty, announce the bytes, and
  issue the TMA copies of both operand tiles at the loads' offsets;
- role `consumer` (`C` warpgroups, the accumulator split by rows): for each
  iteration, wait until stage s is full, issue the wgmma group on it, wait
  until at most one group is in flight and release the previous stage; after
  the loop, wait for the last group and run the epilogue in the accumulator's
  own layout (stores two columns per thread at a time, masked at the edges).

The accumulator stays in registers for the whole loop. TMA's out-of-bounds
zero fill is the interpreter's edge rule for loads without mask or padding,
so edge tiles are exact with no extra masks. A transposed operand
(`y.load(..).transpose()`) only changes which dim is contiguous in shared
memory: the wgmma descriptor's major-ness, not a shared-memory transpose.

Conditions (else the loop keeps the generic mma.sync path): the loop is in the
kernel's top-level region, carries only the accumulator, and contains only
scalar ops, the two loads (2-D f16/bf16 tensors, no mask or padding, base
16-byte aligned and rows a multiple of 16 bytes), optional transposes and the
mma (f32 accumulator; M % 64, N % 8 and at most 256, K % 16); the accumulator
starts as a constant; what follows the loop is an epilogue as above.

`stages` comes from the `stages` hint, else 4, or up to 8 where a stage is
small (`RING_BYTES` in flight), at most what fits in shared memory; consumer warpgroups from the `num_warps` hint (`num_warps / 4`),
else 1, raised until the accumulator takes at most 128 registers per thread.
The producer warpgroup comes on top of them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tilelang.backend.env_switch import flag, number
from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Barriers, Shared, WgmmaAcc
from . import gemm_epilogue, gemm_rows, gemm_split, gemm_widen
from .build import _Build
from .context import Fresh, PassContext
from .pipeline_copies import _copy_positions, _tma_copies
from .pipeline_helps import _layout_help, batched_operand
from .rewrite import substitute

SMEM_LIMIT = 227 * 1024
# Unhinted, the ring holds at least this many bytes (4 stages, or more of small stages): 4 stages of a
# 128x128x64 tile. Fewer bytes in flight made small tiles latency-bound: 128x128x32 (16 KB a stage) ran
# 0.61x cuBLAS at 4 stages where 128x128x64 ran 0.85x; 64x64x64 0.35x; M = 64 rows (a few CTAs, each
# streaming B) 0.4-0.6x (H100, 2026-12-06, `benchmarks/cliffs.py`). A CTA of this pipeline is alone on its
# SM (`role_registers` hands it the register file), so the shared memory is its own to fill.
RING_BYTES = 128 * 1024
MAX_STAGES = 8  # unhinted (a 64x64x32 tile's 8 KB stages: 8, not 16)
MAX_ACC_REGS = 128
PRODUCER_REGS = 40
ACC_HEADROOM = 40  # a consumer thread's registers besides its accumulator (addresses, descriptors, the loop)
COPY_PRODUCER_REGS = 96


def role_registers(consumers: int, producer: int, blocks: int = 1) -> int:
    """The consumers' setmaxnreg target. Every warp starts with the kernel's
    entry budget E (64K registers over the threads of `blocks` CTAs, a multiple
    of 8); `setmaxnreg.inc` blocks until the registers are free, so the consumers
    may only grow by what the producer gives back: C * (R - E) <= E - P. (Asking
    for the CTA's whole 64K instead hangs when E * threads < 64K.)"""
    threads = 128 * (consumers + 1)
    entry = min(248, 65536 // (threads * blocks) // 8 * 8)
    return min(240, (entry + (entry - producer) // consumers) // 8 * 8)


def copy_producer_enabled() -> bool:
    """Operands TMA cannot describe are copied through the producer's
    registers (`CopyToShared`) for the same wgmma consumers; TILEC_COPY_PRODUCER=0
    opts out (such loops then keep the generic mma.sync path)."""
    return flag("TILEC_COPY_PRODUCER", "1")


@frozen(eq=True)
class Operand:
    """One mma operand's TMA copy: the load, and how its tile sits in shared memory."""

    load: ir.Load
    permute: ir.Permute | None
    kmajor: bool  # K is the contiguous (last) dim of the loaded tile
    rows: int  # the loaded tile's shape
    cols: int
    swizzle: int  # bytes of one swizzled row (= one slab's row)
    box_rows: int
    tma: bool  # copied by TMA (else through the producer's registers)

    @property
    def elems(self) -> int:
        """Elements of one slab row (the box's inner dim)."""
        return self.swizzle // 2

    @property
    def slabs(self) -> int:
        return self.cols // self.elems

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * 2


@frozen(eq=True)
class HopperPlan:
    loop: ir.For
    mma: object  # the ir.Mma or g.DotOp
    a: Operand
    b: Operand
    epilogue: tuple[object, ...]  # ops after the loop, moved into the consumer role
    consumers: int  # consumer warpgroups
    stages: int
    # > 1: the tile's N is more than one wgmma takes (256): the CTA computes it in this many column parts of
    # `N` each, one after the other (the K loop once a part, A loaded again; `b` is one part's operand)
    parts: int = 1
    # CTAs an SM (`#[hints(min_blocks = B)]`): registers and the ring budgeted for B, so that one CTA's prologue
    # and epilogue overlap another's loop (1: the CTA has the SM to itself)
    blocks: int = 1
    # the CTA walks tiles (`passes/gemm_persistent.py`): 0 no, 1 its consumers each tile, 2 two consumer roles
    # taking turns (pingpong), 3 pieces of tiles (split-K, `gemm_split`)
    persistent: int = 0
    # > 1: the CTA computes this many of the user's tiles side by side along grid axis `col_axis` (`gemm_widen`:
    # `b` and the accumulator that many tiles wide)
    widen: int = 1
    col_axis: int = -1
    few: str = ""  # `GpuKernel.few`: the tensor whose launch grid, with few tiles, asks for the split-K variant
    wide: tuple[str, int] | None = None  # `GpuKernel.wide`: (tensor, f), many tiles ask for the wide variant
    # > 1: a K step is this many stages of the ring (`a`, `b`: one stage's part of the loaded tiles; `gemm_widen.k_parts`)
    ksub: int = 1
    # > 1: the user's row tiles (16 or 32 rows) computed this many at a time along grid axis `row_axis` (`gemm_rows`)
    rows: int = 1
    row_axis: int = -1
    shrink: int = 0  # > 0: the user's tile rows, of which the launch's tensor has at most `M` (`gemm_rows.shrinkable`)
    short: object = None  # `GpuKernel.short`: `facts.Short` on the stored tensor's rows (M / 2), for `shrink`
    next_id: int = 0  # the first value id past the epilogue's (`gemm_epilogue`: its small tiles on [M, N])

    @property
    def M(self) -> int:
        return self.a.rows if self.a.kmajor else self.a.cols

    @property
    def N(self) -> int:
        """N of one part (of the accumulator the consumers hold)."""
        return self.b.cols if not self.b.kmajor else self.b.rows

    @property
    def stage_bytes(self) -> int:
        return self.a.nbytes + self.b.nbytes


_is_scalar_op = gemm_epilogue.is_scalar_op


def _operand(v: ir.Value, body: dict[int, object], ctx: PassContext, k: g.GpuKernel,
             want_k_first: bool) -> Operand | None:
    """The TMA operand behind mma operand `v` (want_k_first: the mma wants [K, N])."""
    op = body.get(v.id)
    perm = None
    if isinstance(op, ir.Permute):
        if op.perm != (1, 0):
            return None
        perm = op
        op = body.get(op.x.id)
    if not isinstance(op, ir.Load) or op.mask is not None or op.padding is not None:
        return None
    t = k.tensor(op.tensor)
    f = ctx.fact(op.tensor)
    if t.rank != 2 or t.dtype not in (DType.F16, DType.BF16):
        return None
    # TMA needs a 16-byte aligned base and rows a multiple of 16 bytes, in
    # 2-byte memory; any other tensor is copied through registers.
    tma = not f.bf16_f32 and f.aligned16 and len(f.dims_div16) == 2 and f.dims_div16[1]
    if not tma and not copy_producer_enabled():
        return None
    rows, cols = op.result.shape
    # a: [M, K] (K contiguous unless transposed); b: [K, N] (N contiguous unless transposed)
    kmajor = (perm is None) != want_k_first
    cb = cols * 2
    if cb >= 128:
        if cols % 64:
            return None
        sw = 128
    elif cb in (32, 64) and kmajor:
        sw = cb
    else:
        return None
    if not kmajor and sw != 128:
        return None
    box_rows = min(rows, 256)
    if rows % box_rows or (rows * sw) % 1024:
        return None
    return Operand(op, perm, kmajor, rows, cols, sw, box_rows, tma)


def _match(loop: ir.For, after: list[object], k: g.GpuKernel, ctx: PassContext) -> HopperPlan | None:
    """The plan of a GEMM loop, or None: for a loop of one `mma`, with a note of why in `ctx`."""
    got = _plan(loop, after, k, ctx)
    if isinstance(got, tuple):
        span, why, help = got
        ctx.refuse("the Hopper GEMM pipeline", span, why, help)
        return None
    return got


_Refusal = tuple[Any, str, str]


def _plan(loop: ir.For, after: list[object], k: g.GpuKernel, ctx: PassContext,
          wide: bool = True) -> HopperPlan | _Refusal | None:
    body = loop.body
    ys = body.ops[-1]
    if not isinstance(ys, ir.Yield):
        return None
    defs: dict[int, object] = {}
    dots = []
    other = None
    for op in body.ops[:-1]:
        for r in g.results(op):
            defs[r.id] = op
        if isinstance(op, ir.Mma | g.DotOp):
            dots.append(op)
        elif not (_is_scalar_op(op) or isinstance(op, ir.Load | ir.Permute)):
            other = other or op
    if len(dots) == 1 and (dots[0].a.dtype not in (DType.F16, DType.BF16)  # type: ignore[attr-defined]
                           or dots[0].acc.dtype is not DType.F32):  # type: ignore[attr-defined]
        # the element types first: no rewrite of the loop's other work would let wgmma take it
        d: Any = dots[0]
        return (d.span, f"the `mma` multiplies {d.a.dtype.value} into {d.acc.dtype.value}; wgmma takes f16 or "
                "bf16 into f32", "")
    carried = {a.id for a in body.args[1:]}
    if len(dots) > 1 and all(d.acc.id in carried for d in dots):  # type: ignore[attr-defined]
        return (loop.span, f"the loop accumulates {len(dots)} products, each into its own accumulator (a gate and "
                "an up projection of one A, say); the pipeline runs one `acc = mma(a, b, acc)` a loop",
                "one GEMM over the B operands side by side (`[K, 2 * N]`: column tile 2j one's tile j, 2j + 1 "
                "the other's) into one accumulator, and the element-wise rest in a second kernel that reads "
                "the two column tiles")
    if len(dots) > 2 and all(d.a.dtype in (DType.F16, DType.BF16) for d in dots):  # type: ignore[attr-defined]
        return (loop.span, f"the loop holds {len(dots)} products (an attention backward's, say); this pipeline "
                "takes one, `acc = mma(a, b, acc)`, the attention pipeline two (the scores, then P V): its products "
                "run on mma.sync, its loads into registers an iteration at a time", "")  # (round 17: said nothing)
    if len(loop.inits) != 1:
        return None
    if other is not None:
        if len(dots) != 1:
            return None
        batched = batched_operand(other, defs, k)
        if batched is not None:
            return batched
        return (getattr(other, "span", loop.span), f"the loop computes more than `acc = mma(a, b, acc)` of two "
                f"loads (`{type(other).__name__.lower()}`)", "do the other work before or after the loop")
    if len(dots) != 1:
        return None
    mma = dots[0]
    span = mma.span  # type: ignore[attr-defined]
    acc_arg = body.args[1]
    a, b, acc = mma.a, mma.b, mma.acc  # type: ignore[attr-defined]
    if acc.id != acc_arg.id or ys.values[0].id != mma.result.id:  # type: ignore[attr-defined]
        return (span, "the `mma` does not accumulate into the loop's carried value (`acc = mma(a, b, acc)`)", "")
    if a.dtype not in (DType.F16, DType.BF16) or acc.dtype is not DType.F32:
        return (span, f"the `mma` multiplies {a.dtype.value} into {acc.dtype.value}; wgmma takes f16 or bf16 into "
                "f32", "")
    M, K = a.shape
    N = b.shape[1]
    # N past one wgmma's 256 (whose accumulator would not fit the registers either: 128 x 512 f32 is the
    # whole register file): parts of at most 256 columns, one after the other
    H = -(-N // 256) if N > 256 and N % 8 == 0 and parts_enabled() else 1
    # M of 32: one m64 warpgroup whose rows past M are never stored (A's box reads 64 rows: the next tile's or
    # TMA's zeros; an accumulator row depends on its own row of A only). Not 16: four times the products and
    # A's bytes measured slower than sm_80's ring (M = 64 rows, 16x64x128: 0.53x there, 0.34x padded; 32x128x64
    # 0.48x -> 0.59x padded; H100, call 14)
    pad = M == 32 and pad_enabled()
    bm, coarse = M, M in (16, 32) and pad_enabled() and gemm_rows.enabled() and gemm_rows.few(k, ctx)
    sixteen = (span, f"the tile is M = 16: padded to the 64 rows a warpgroup's wgmma has, it would do 4 times "
               "the products and read 4 times A (measured slower than sm_80's ring); the pipeline takes M a "
               "multiple of 64, or 32", "BM = 32 or 64")
    if M == 16 and pad_enabled() and not coarse:
        return sixteen
    pad = pad or coarse
    if (M % 64 and not pad) or N % (8 * H) or N // H > 256 or K % 16:
        return (span, f"the tile is M = {M}, N = {N}, K = {K}; the pipeline takes M a multiple of 64 (or 32), N "
                "of 8 up to 256 (or N in equal parts of up to 256), K of 16", "")
    # every load / permute feeds the mma exactly once
    from .rewrite import uses

    count = uses(body)
    for op in body.ops[:-1]:
        if isinstance(op, ir.Load | ir.Permute) and count.get(op.result.id) != 1:
            return (span, "a loaded tile has another use than the `mma`", "")
    if count.get(acc_arg.id) != 1:
        return (span, "the accumulator has another use in the loop than the `mma`", "")
    oa = _operand(a, defs, ctx, k, want_k_first=False)
    ob = _operand(b, defs, ctx, k, want_k_first=True)
    if ob is not None and H > 1:
        ob = _part(ob, N // H)
    if oa is not None and pad:
        oa = dataclasses.replace(oa, rows=64, box_rows=64) if oa.kmajor else None
    if oa is None or ob is None:
        which = "a" if oa is None else "b"
        return (span, f"operand {which} is not a 2-D f16/bf16 tile loaded in the loop "
                "(unmasked, optionally transposed) in a shape wgmma's shared layouts take",
                _layout_help(a if oa is None else b, defs, which == "b", which)
                or "load whole [BM, BK] / [BK, BN] tiles of 2-D tensors, BK a multiple of 16 (64 for an MN-major "
                "operand)")
    init_def = _def_of(k.body, loop.inits[0])
    if not isinstance(init_def, ir.Const):
        return (loop.span, "the accumulator does not start from a constant (`zeros`)", "")
    fresh = Fresh(k.next_id)  # (the epilogue's small tiles computed again on [M, N]: new values)
    why: list[object] = []
    epilogue = gemm_epilogue.epilogue(loop, after, k, fresh, why)
    if epilogue is None:
        at = next((op for op in why if op is not None), None)
        return (getattr(at, "span", loop.span), "what follows the loop is not an epilogue of the accumulator "
                "(element-wise ops, casts and unmasked stores to 2-D tensors, of it and of small tiles broadcast "
                "to it)" + (f": `{type(at).__name__.lower()}` here" if at is not None else ": it stores nothing"),
                "store the tile once on each side of the `if` (the same tensor and place), or pick the value with "
                "`where(cond, x, y)` and store it once" if isinstance(at, ir.If) else "")
    if pad and any(isinstance(op, g.AccLoad) and op.dims[0] is not None for op in epilogue):
        return (loop.span, f"an epilogue load per row of a {M}-row tile (its rows are padded to 64, whose loads "
                "would read other tiles' rows)", "")
    R, rax = 1, -1  # the user's row tiles computed R at a time along grid axis `rax` (`gemm_rows`)
    got_ax = gemm_rows.row_axis(k, loop, oa.load, oa.kmajor, ob.load, epilogue, bm) if pad and gemm_rows.enabled() else None
    if coarse:
        if got_ax is None and bm == 16:
            return sixteen
        R, rax = (64 // bm, got_ax) if got_ax is not None else (1, -1)
    if pad:
        M = 64
    N //= H
    hinted = k.source.hints
    # the tile's rows past the launch's tensor not computed (`gemm_rows.shrinkable`: a 128-row tile at M = 64)
    shrink, ask_short = 0, None
    held = gemm_rows.shrinkable(k, epilogue, M) if not pad and M % 128 == 0 and oa.kmajor and H == 1 else None
    if held is not None and gemm_rows.enabled():
        r = ctx.fact(held).rows_at_most
        if 0 < r < M and r % 64 == 0:
            shrink, M, oa = M, r, dataclasses.replace(oa, rows=r, box_rows=min(r, 256))
        elif not r and "stages" not in hinted:
            from tilelang.backend.facts import Short

            ask_short = Short(held, 0, M // 2)
    # the user's tiles side by side (`gemm_widen`): one wider B stage and accumulator of NW columns
    W, axis, ask_wide, Q = 1, -1, None, 1
    if wide and H == 1 and not pad and oa.tma and ob.tma and not {"stages", "num_warps"} & set(hinted):
        want = gemm_widen.requested()
        W = gemm_widen.factor(N, M, MAX_ACC_REGS) if want != "0" else 1
        axis = gemm_widen.column_axis(k, loop, oa.load, ob.load) if W > 1 and (ob.kmajor or N % 64 == 0) else None
        mut = max((p for p in k.tensor_params if p.mutable and p.tile_shape), key=lambda p: p.rank, default=None)
        if axis is not None and mut is not None and want == "auto" and not ctx.fact(mut.name).wide_tiles:
            ask_wide, axis = (mut.name, W), None  # (the runtime's wide variant where the launch has the tiles)
        W, axis, ob = (W, axis, gemm_widen.operand(ob, W)) if axis is not None else (1, -1, ob)  # type: ignore[assignment]
        Q = gemm_widen.k_parts(K) if W > 1 else 1  # (a K step deeper than a wide stage holds: K / 64 stages)
        oa, ob = gemm_widen.k_part(oa, Q), gemm_widen.k_part(ob, Q)  # type: ignore[assignment]
    NW = N * W
    # consumer warpgroups: the accumulator split by rows in m64 blocks
    C = max(1, min(k.num_warps // 4, M // 64)) if "num_warps" in hinted else 1
    while (M // C) * NW // 128 > MAX_ACC_REGS:
        C *= 2
        if M % (64 * C):
            return (span, f"the accumulator ({M} x {N}) does not split into 64-row warpgroups of at most "
                    f"{MAX_ACC_REGS} registers a thread", "a smaller BN")
    if (M // C) % 64:
        return (span, f"M = {M} does not split into {C} warpgroups of 64-row multiples", "")
    # the parts before the last stage their stores after the ring (`store_wgmma`: the ring is still live)
    staging = _staging_bytes(epilogue, k, M, N, ctx) if H > 1 else 0
    if Q == 1 and oa.tma and ob.tma and (_smem_budget(1) - 1024 - staging) // (oa.nbytes + ob.nbytes) < 2:
        # a K step whose stage the ring cannot hold twice (128x128x256: 128 KB): K / 64 stages (was sm_80's ring)
        Q = gemm_widen.k_parts(K)
        oa, ob = gemm_widen.k_part(oa, Q), gemm_widen.k_part(ob, Q)  # type: ignore[assignment]
    stage_bytes = oa.nbytes + ob.nbytes
    producer = PRODUCER_REGS if oa.tma and ob.tma else COPY_PRODUCER_REGS
    B = _blocks(k, C, producer, M // C * NW // 128, stage_bytes, staging, span, ctx)
    fit = (_smem_budget(B) - 1024 - staging) // stage_bytes
    S = k.num_stages if "stages" in hinted else min(fit, MAX_STAGES, max(4, RING_BYTES // stage_bytes))
    if S > fit >= 2:  # a `stages` hint that does not fit: what fits, not another path 16x slower
        ctx.note(loop.span, f"the `stages` hint asks for {S} stages of {stage_bytes} bytes; {fit} fit in the "
                 f"{_smem_budget(B)} bytes of shared memory a CTA has here: the Hopper GEMM pipeline runs {fit}",
                 f"`stages = {fit}`")
        S = fit
    if S < 2:
        return (loop.span, f"a stage of A and B takes {stage_bytes} bytes of shared memory"
                + (f" (and the epilogue's staging {staging})" if staging else "")
                + f": {fit} stages fit in {_smem_budget(B)} bytes, the pipeline needs 2 (asked: {S})",
                "a smaller BK, BM or BN")
    if H == 1:  # the last store stages in the dead ring where it fits there, else after it (`hopper.store_wgmma`)
        whole = _staging_bytes(epilogue, k, M, N, ctx)
        if whole > S * stage_bytes and S * stage_bytes + whole > _smem_budget(B):  # (codegen's E0603: hgpuerr)
            room = (_smem_budget(B) - 1024 - whole) // stage_bytes
            if room < 2:
                return (span, f"the epilogue stages its [{M}, {N}] store in {whole} bytes of shared memory, more "
                        f"than the {S}-stage ring holds and, beside 2 stages, the {_smem_budget(B)} bytes a CTA "
                        "has", "a smaller BM or BN")
            ctx.note(loop.span, f"the epilogue stages its [{M}, {N}] store in {whole} bytes of shared memory beside "
                     f"the ring: {room} stages fit, not {S}", "")
            S = room
    if W > 1 and gemm_widen.deep_ring():  # (a measurement switch: the ring as deep as fits beside the staging)
        areas = 2 if C == 1 else 1  # (pingpong's two areas where the wide accumulator fits one warpgroup)
        S = max(S, min(MAX_STAGES, (_smem_budget(B) - 1024 - areas * _staging_bytes(epilogue, k, M, N, ctx)) // stage_bytes))
    form, few = _persistent(k, loop, epilogue, H, B, C, S, stage_bytes, M, N, ctx, W > 1)
    if few and got_ax is not None:  # the request counts coarse row tiles (`gemm_rows.request`)
        few = gemm_rows.request(few, got_ax, 64 // bm)
    if R > 1 and form != 3:  # coarse row tiles need the split walk (its grid is the kernel's)
        if bm == 16:
            return sixteen
        R, rax = 1, -1
    if W > 1 and (not form or S < 4):  # wide tiles need the walk, and a ring as deep as the user's tiles had
        return _plan(loop, after, k, ctx, wide=False)
    return HopperPlan(loop, mma, oa, ob, tuple(epilogue), C, S, H, B, form, W, axis, few, ask_wide, Q, R, rax, shrink,
                      ask_short, fresh.next)


def _persistent(k: g.GpuKernel, loop: ir.For, epilogue: list[object], H: int, B: int, C: int, S: int,
                stage_bytes: int, M: int, N: int, ctx: PassContext, wide: bool = False) -> tuple[int, str]:
    """The persistent form (`gemm_persistent.mode`) whose stores' staging (one area a consumer role, after the
    ring) leaves the `S` stages room; pingpong falls back to the cooperative form where its two areas do not.
    And the `&mut` tensor whose launch grid, with few tiles, asks for the split-K variant (`GpuKernel.few`;
    "": no request)."""
    from . import gemm_persistent, gemm_split

    mut = max((p for p in k.tensor_params if p.mutable and p.tile_shape), key=lambda p: p.rank, default=None)
    few = mut is not None and ctx.fact(mut.name).few_tiles
    form = gemm_persistent.mode(k, loop, H, B, C, _is_scalar_op, wide, few)
    staging = _staging_bytes(epilogue, k, M, N, ctx)
    areas = {0: 0, 1: 1, 2: 2, 3: 1}  # staging areas a form takes (3, split-K: one, and a flag)
    while form and (_smem_budget(B) - 1024 - staging * areas[form] - (16 if form == 3 else 0)) // stage_bytes < S:
        form = 1 if form == 2 else 0
    # (not where the user named the stages: a tuned kernel, std::llm's prefill `gemm`, keeps its one variant)
    ask = (form != 3 and not few and not wide and mut is not None and gemm_split.requested() == "auto"
           and "stages" not in k.source.hints
           and gemm_persistent.walkable(k, loop, H, B, _is_scalar_op)
           and (_smem_budget(B) - 1040 - staging) // stage_bytes >= S)
    return form, mut.name if ask and mut is not None else ""


SMEM_PER_SM = 228 * 1024  # an H100's / H200's shared memory an SM; the driver reserves 1 KB a CTA of it


def default_blocks() -> int:
    """CTAs an SM for a GEMM that names no `min_blocks`: 1 (the SM to itself), or `TILEC_GEMM_BLOCKS=N` where N
    fit (a measurement switch until the GPU says which default wins: `benchmarks/gemm_tiles_sweep.py`)."""
    return number("TILEC_GEMM_BLOCKS", 1, 1)


def _smem_budget(blocks: int) -> int:
    """Shared memory one CTA may take with `blocks` CTAs an SM."""
    return min(SMEM_LIMIT, SMEM_PER_SM // blocks - 1024)


def _blocks(k: g.GpuKernel, C: int, producer: int, acc_regs: int, stage_bytes: int, staging: int, span: Any,
            ctx: PassContext) -> int:
    """CTAs an SM: `min_blocks` where given, fewer where their registers or two stages each do not fit (with a
    note), else `default_blocks()` where it fits. A consumer thread needs its accumulator and ~40 registers more
    (`ACC_HEADROOM`)."""
    want = k.source.min_blocks
    hinted = want > 0
    if not hinted:
        want = default_blocks()
    if want <= 1:
        return 1
    threads = 128 * (C + 1)
    B = min(want, 2048 // threads)
    while B > 1 and (role_registers(C, producer, B) < acc_regs + ACC_HEADROOM
                     or (_smem_budget(B) - 1024 - staging) // stage_bytes < 2):
        B -= 1
    if B < want and hinted:
        ctx.note(span, f"`min_blocks = {want}`: {B} CTA{'s' if B > 1 else ''} of this GEMM fit an SM "
                 f"({threads} threads, an accumulator of {acc_regs} registers a thread, {stage_bytes} bytes a "
                 "stage, two stages at least)", "a smaller tile, or fewer blocks")
    return B


def parts_enabled() -> bool:
    """A GEMM tile wider than 256 columns runs on the Hopper pipeline in column parts (`HopperPlan.parts`);
    `TILEC_GEMM_PARTS=0` leaves it to sm_80's cp.async ring (as before 2026-12-06: 128 x 512 x 32 at 0.08x
    cuBLAS on an H100)."""
    return flag("TILEC_GEMM_PARTS", "1")


def pad_enabled() -> bool:
    """A GEMM tile of 32 rows runs on the Hopper pipeline padded to one m64 warpgroup (`_plan`; 0.48x -> 0.59x
    cuBLAS at M = 64 on an H100); `TILEC_GEMM_PAD=0` leaves it to sm_80's cp.async ring."""
    return flag("TILEC_GEMM_PAD", "1")


def _part(o: Operand, n: int) -> Operand | None:
    """B's operand for a part of `n` of its N columns, or None where wgmma's shared layouts do not take it."""
    if o.kmajor:  # loaded [N, K]: a part is `n` rows
        box = min(n, 256)
        if n % box or (n * o.swizzle) % 1024:
            return None
        return dataclasses.replace(o, rows=n, box_rows=box)
    if n % 64:  # loaded [K, N], N contiguous: 64-column slabs of 128-byte rows
        return None
    return dataclasses.replace(o, cols=n)


def _staging_bytes(epilogue: list[object], k: g.GpuKernel, M: int, N: int, ctx: PassContext) -> int:
    """Shared memory `store_wgmma` stages one [M, N] store in (rows padded by 16 bytes), the largest."""
    from tilelang.backend.codegen.llvm_types import mem_size

    sizes = [M * (N * mem_size(k.tensor(op.tensor).dtype, ctx.fact(op.tensor).bf16_f32) + 16)
             for op in epilogue if isinstance(op, ir.Store)]
    return max(sizes, default=0)


def _neg_zero(x: object) -> bool:
    import math

    return isinstance(x, float) and x == 0.0 and math.copysign(1.0, x) < 0


def _def_of(region: ir.Region, v: ir.Value) -> object | None:
    for op in region.ops:
        if v in g.results(op) or any(r.id == v.id for r in g.results(op)):
            return op
    return None


def hopper_plans(k: g.GpuKernel, ctx: PassContext) -> list[HopperPlan]:
    """The loops of `k` the Hopper pipeline takes (at most one: it splits the CTA)."""
    if not ctx.has_wgmma:
        return []
    ops = list(k.body.ops)
    loops = [i for i, op in enumerate(ops) if isinstance(op, ir.For)
             and any(isinstance(o, ir.Mma | g.DotOp) for o in g.walk(op.body))]
    if not loops:  # (round 16: RMSNorm then one product of K = D said nothing of why no pipeline took it)
        mma = next((o for o in g.walk(k.body) if isinstance(o, ir.Mma | g.DotOp)
                    and o.a.dtype in (DType.F16, DType.BF16)), None)
        if mma is not None:
            ctx.note(mma.span, "the Hopper GEMM pipeline takes a loop: this `mma` is in none (the pipeline "
                     "streams the tiles of a loop over K through shared memory while the tensor cores run)")
    if len(loops) != 1:
        return []
    i = loops[0]
    plan = _match(ops[i], ops[i + 1:], k, ctx)  # type: ignore[arg-type]
    return [plan] if plan is not None else []


# ---------------------------------------------------------------- the rewrite
def _slice(body: ir.Region, roots: list[ir.Value]) -> list[object]:
    """The body's scalar ops that `roots` depend on, in program order."""
    need = {v.id for v in roots}
    keep: list[object] = []
    for op in reversed(body.ops):
        rs = g.results(op)
        if any(r.id in need for r in rs):
            keep.append(op)
            need |= {v.id for v in g.operands(op)}
    return keep[::-1]


def pipeline(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    plans = hopper_plans(k, ctx)
    if not plans:
        return gemm_rows.ask(k, ctx, hopper_plans)
    p = plans[0]
    E = ir.ElemOp
    fresh = Fresh(max(k.next_id, p.next_id))
    layouts = dict(k.layouts)
    S, C = p.stages, p.consumers
    M, N = p.M, p.N
    loop = p.loop
    in_dt = p.a.load.result.dtype
    # the kernel's ops before the loop (re-run per tile by a persistent walk), the accumulator's constant
    ops = list(k.body.ops)
    i = ops.index(loop)
    init_const = _def_of(k.body, loop.inits[0])
    assert isinstance(init_const, ir.Const)
    before = [op for op in ops[:i] if op is not init_const]  # the init now lives in the consumers
    W = p.widen
    subs: tuple[list[object], list[object]] = ([], [])  # tiles 1 .. W-1 of a wide tile: the producer's, the consumers'
    if W > 1:  # the position read from the walk's wide tile (`gemm_widen`), the loop and epilogue reading it
        before, col0, posmap = gemm_widen.rewrite_outside(k, before, p.col_axis, W, fresh)
        p = dataclasses.replace(p, loop=substitute(loop, posmap), epilogue=tuple(substitute(op, posmap) for op in p.epilogue),
                                a=dataclasses.replace(p.a, load=substitute(p.a.load, posmap)),
                                b=dataclasses.replace(p.b, load=substitute(p.b.load, posmap)))
        loop = p.loop
        subs = tuple(gemm_widen.subtiles(before, col0, p.col_axis, W, k, fresh) for _ in range(2))  # type: ignore[assignment]
    if p.shrink:  # the epilogue on the rows computed (the launch's tensor has no more: `gemm_rows.shrinkable`)
        p = dataclasses.replace(p, epilogue=tuple(gemm_rows.epilogue(list(p.epilogue), p.shrink, M, fresh)))
    elif p.rows > 1:  # the row read from the walk's coarse tile (`gemm_rows`): R J, the loop and epilogue reading it
        before, _, posmap = gemm_widen.rewrite_outside(k, before, p.row_axis, p.rows, fresh)
        bm = loop.results[0].shape[0]
        p = dataclasses.replace(p, loop=substitute(loop, posmap), a=dataclasses.replace(p.a, load=substitute(p.a.load, posmap)),
                                b=dataclasses.replace(p.b, load=substitute(p.b.load, posmap)),
                                epilogue=tuple(gemm_rows.epilogue([substitute(op, posmap) for op in p.epilogue], bm, M, fresh)))
        loop = p.loop

    # shared buffers, barriers and TMA descriptors
    pre: list[object] = []
    bufs = []
    descs = []
    for name, o in (("a", p.a), ("b", p.b)):
        buf = fresh.value(in_dt, (S, o.rows, o.cols), f"smem_{name}")
        layouts[buf.id] = Shared(o.swizzle, "row")
        pre.append(g.SmemAlloc(buf, span=loop.span))
        bufs.append(buf)
        descs.append(g.TmaDesc(f"{o.load.tensor}.tma{len(descs)}", o.load.tensor, (o.box_rows, o.elems),
                               o.swizzle, o.load.span) if o.tma else None)
    full = fresh.value(DType.I64, (S,), "full")
    empty = fresh.value(DType.I64, (S,), "empty")
    layouts[full.id] = layouts[empty.id] = Barriers()
    any_tma = p.a.tma or p.b.tma
    copies = not (p.a.tma and p.b.tma)
    # full[s] completes with the TMA bytes (one arrival carrying them) and one
    # arrival per producer warp after its register copies
    arrivals = (1 if any_tma else 0) + (4 if copies else 0)
    persist = p.persistent
    # a stage is released by every consumer warp that read it: pingpong's roles read a tile's stages alone
    pre += [g.BarrierAlloc(full, arrivals, span=loop.span),
            g.BarrierAlloc(empty, 4 if persist == 2 else 4 * C, span=loop.span)]
    # pingpong: a role's products of a tile are issued, the other's turn (`turn[g]`, `gemm_persistent.roles`:
    # a role never waits on the ring more than one pass ahead of the producer); `turn_to` the other's index
    turn = turn_to = None
    turn_ops: list[object] = []
    if persist == 2:
        turn, turn_to = fresh.value(DType.I64, (2,), "turn"), fresh.value(DType.I32, (), "other")
        layouts[turn.id] = Barriers()
        pre.append(g.BarrierAlloc(turn, 4, span=loop.span))
        turn_ops = [g.BarrierArrive(turn, turn_to, None, loop.span)]

    if persist == 3:  # (the walk gives each piece its bounds: the loop's own copies, which nothing else reads)
        loop, before = gemm_split.own_bounds(loop, before, fresh)
        p = dataclasses.replace(p, loop=loop)
    iv = loop.body.args[0]
    acc_arg = loop.body.args[1]

    # -- producer: the loop with only what the TMA copies need (once a part, B's N offset moved by the part's)
    H = p.parts
    sl = _slice(loop.body, [v for o in (p.a, p.b) for v in o.load.offsets])
    tma_bytes = sum(o.nbytes for o in (p.a, p.b) if o.tma)
    producer_ops: list[object] = []
    # the ring's iteration count where a part's loop starts (persistent: where the tile's does, the walk's)
    p_base = fresh.value(DType.I32, (), "ring") if persist else None
    p_init: ir.Value | None = p_base
    Q = p.ksub  # ring stages a K step takes (`gemm_widen.k_parts`): sub-step q copies the q-th part of K
    for h in range(H):
        pb = _Build(fresh)
        p_iv = fresh.value(iv.dtype, (), iv.hint)
        p_it = pb.i32("it")
        mapping = {iv.id: p_iv}
        at: dict[int, list[tuple[ir.Value, ir.Value]]] = {}  # each operand's copy positions, computed at q = 0
        for q in range(Q):
            stage, phase = pb.ring(p_it if q == 0 else pb.elem(E.ADD, p_it, pb.const(q)), S)
            pb.ops.append(g.BarrierWait(empty, stage, pb.elem(E.XOR, phase, pb.const(1)), loop.span))
            if tma_bytes:
                pb.ops.append(g.BarrierExpect(full, stage, tma_bytes, loop.span))
            for op in sl if q == 0 else ():
                new = substitute(op, mapping)
                # fresh results, so the producer's clone defines its own values
                rs = g.results(op)
                nrs = [fresh.value(r.dtype, r.shape, r.hint) for r in rs]
                for r, nr in zip(rs, nrs, strict=True):
                    mapping[r.id] = nr
                pb.ops.append(dataclasses.replace(new, result=nrs[0]))  # type: ignore[type-var]
            for o, buf, d in zip((p.a, p.b), bufs, descs, strict=True):  # type: ignore[assignment]
                if q == 0:
                    at[id(o)] = _copy_positions(pb, o, o is p.b and W > 1, h * N if o is p.b else 0, sl, mapping,
                                                subs[0], fresh)
                offs = [gemm_widen.k_offset(pb, o, r0, c0, q) for r0, c0 in at[id(o)]]
                if not o.tma:
                    pb.ops.append(g.CopyToShared(o.load.tensor, offs[0], buf, stage, o.load.span))
                elif W > 1 and o is p.b:  # each user tile's B at its own offsets, into its columns of the stage
                    gemm_widen.b_copies(pb, o, N // W, W, offs, d.name, buf, stage, full, o.load.span)
                else:
                    _tma_copies(pb, o, offs[0], d.name, buf, stage, full)
        if copies:
            pb.ops += [g.Fence("proxy.async", loop.span), g.BarrierArrive(full, stage, None, loop.span)]
        nxt = pb.elem(E.ADD, p_it, pb.const(Q))
        pb.ops.append(ir.Yield((nxt,)))
        if p_init is None:
            p_init = fresh.value(DType.I32, (), "it0")
            producer_ops.append(ir.Const(p_init, 0))
        p_loop = ir.For((fresh.value(DType.I32, (), "it"),), loop.lower, loop.upper, loop.step, (p_init,),
                        ir.Region((p_iv, p_it), tuple(pb.ops)), loop.span)  # type: ignore[arg-type]
        producer_ops.append(p_loop)
        p_init = p_loop.results[0]
    producer_ops[:0] = [op for sub in subs[0] for op in sub.ops]  # type: ignore[attr-defined]
    if not persist:
        producer_ops.append(ir.Yield(()))

    # -- consumers: wgmma on each full stage, the accumulator in registers (a part's; its epilogue after it)
    acc_lay = WgmmaAcc(C, M // C, N)
    # A zero init is never materialised: the first wgmma ignores the (undefined)
    # accumulator, and a loop that runs no iteration yields the constant after it.
    zero_init = float(init_const.value) == 0.0 and not _neg_zero(init_const.value)
    consumer_ops: list[object] = []
    c_base = fresh.value(DType.I32, (), "ring") if persist else None
    # split-K (`gemm_split`): (item, tile, pieces a tile, tiles), defined by its walk
    split_vals = tuple(fresh.value(DType.I32, (), h) for h in ("item", "tile", "pieces", "tiles")) if persist == 3 else ()
    c_init: ir.Value | None = c_base  # where part h's iterations start on the ring (None: 0, the first part)
    ran: ir.Value | None = None
    apart: set[int] = set()
    for h in range(H):
        last = h == H - 1 and not persist  # (persistent: the ring goes on with the next tile)
        cb = _Build(fresh)
        c_iv = fresh.value(iv.dtype, (), iv.hint)
        c_acc = fresh.value(acc_arg.dtype, (M, N), acc_arg.hint)
        c_it = cb.i32("it")
        layouts[c_acc.id] = acc_lay
        start = c_init
        w = c_acc
        for q in range(Q):  # (a K step of `Q` stages: its parts' wgmma groups on the accumulator one after another)
            it_q = c_it if q == 0 else cb.elem(E.ADD, c_it, cb.const(q))
            stage, phase = cb.ring(it_q, S)
            cb.ops.append(g.BarrierWait(full, stage, phase, loop.span))
            use_acc = cb.elem(E.GT, it_q, start or cb.const(0), dtype=DType.BOOL, hint="use_acc") if zero_init else None
            d = fresh.value(DType.F32, (M, N), "acc")
            layouts[d.id] = acc_lay
            cb.ops.append(g.Wgmma(d, bufs[0], bufs[1], stage, w, p.a.kmajor, p.b.kmajor, use_acc,
                                  p.mma.span))  # type: ignore[attr-defined]
            w = fresh.value(DType.F32, (M, N), "acc")
            layouts[w.id] = acc_lay
            cb.ops.append(g.WgmmaWait((w,), (d,), 1, p.mma.span))  # type: ignore[attr-defined]
            prev = cb.elem(E.REM, cb.elem(E.ADD, it_q, cb.const(S - 1)), cb.const(S))
            started = cb.elem(E.GT, it_q, start or cb.const(0), dtype=DType.BOOL)
            cb.ops.append(g.BarrierArrive(empty, prev, started, loop.span))
        cb.ops.append(ir.Yield((w, cb.elem(E.ADD, c_it, cb.const(Q)))))
        acc0 = fresh.value(DType.F32, (M, N), "acc")
        layouts[acc0.id] = acc_lay
        czero = fresh.value(DType.I32, (), "it0") if start is None else start
        loop_acc = fresh.value(DType.F32, (M, N), "acc")
        layouts[loop_acc.id] = acc_lay
        trips = fresh.value(DType.I32, (), "trips")
        c_loop = ir.For((loop_acc, trips), loop.lower, loop.upper, loop.step,
                        (acc0, czero), ir.Region((c_iv, c_acc, c_it), tuple(cb.ops)), loop.span)  # type: ignore[arg-type]
        fin = fresh.value(DType.F32, (M, N), "acc")
        layouts[fin.id] = acc_lay
        first = [ir.Const(czero, 0)] if start is None else []
        # a part before the last gives its last stage back (the next part's loads wait for it)
        release: list[object] = []
        if not last:
            rb = _Build(fresh)
            end = rb.elem(E.REM, rb.elem(E.ADD, trips, rb.const(S - 1)), rb.const(S))
            # (under `ran` where the accumulator starts at zero; else only where an iteration took a stage)
            got = rb.elem(E.GT, trips, czero, dtype=DType.BOOL) if not zero_init else None
            release = [*rb.ops, g.BarrierArrive(empty, end, got, loop.span)]
        if zero_init:
            # Only wgmma defines the accumulator before its last wait: the loop and
            # that wait run when there is an iteration, the constant otherwise.
            if ran is None:
                eb = _Build(fresh)
                lt = eb.elem(E.LT, loop.lower, loop.upper, dtype=DType.BOOL)
                pos = eb.elem(E.GT, loop.step, eb.const(0), dtype=DType.BOOL) if loop.step.dtype is DType.I32 else None
                ran = eb.elem(E.AND, lt, pos, dtype=DType.BOOL, hint="ran") if pos is not None else lt
                consumer_ops += eb.ops
            zeros = fresh.value(DType.F32, (M, N), "acc")
            out = fresh.value(DType.F32, (M, N), "acc")
            for v in (zeros, out):
                layouts[v.id] = acc_lay
            # where the next part starts (parts but the last; with no iteration nothing reads it)
            nxt_it = [fresh.value(DType.I32, (), "it")] if not last else []
            then = ir.Region((), (g.Undef(acc0), *first, c_loop, *turn_ops,  # type: ignore[arg-type]
                                  g.WgmmaWait((fin,), (loop_acc,), 0, loop.span), *release,
                                  ir.Yield((fin, *([trips] if nxt_it else [])))))
            else_ops: list[object] = [*turn_ops, ir.Const(zeros, init_const.value)]
            if nxt_it:
                z = start or fresh.value(DType.I32, (), "it0")
                if start is None:
                    else_ops.append(ir.Const(z, 0))
                else_ops.append(ir.Yield((zeros, z)))
            else:
                else_ops.append(ir.Yield((zeros,)))
            consumer_ops.append(ir.If((out, *nxt_it), ran, then, ir.Region((), tuple(else_ops)),  # type: ignore[arg-type]
                                      loop.span))
            fin = out
            c_init = nxt_it[0] if nxt_it else None
        else:
            start_acc: list[object] = [ir.Const(acc0, init_const.value)]
            if persist == 3:  # split-K: the tile's first piece starts from the constant, the others from zeros
                start_acc = gemm_split.start(acc0, init_const.value, split_vals, fresh, layouts, acc_lay, loop.span)
            consumer_ops += [*start_acc, *first, c_loop, *turn_ops,
                             g.WgmmaWait((fin,), (loop_acc,), 0, loop.span), *release]
            c_init = trips
        emap = {loop.results[0].id: fin}
        if W > 1:
            consumer_ops += gemm_widen.epilogues(p, fin, subs[1], fresh, layouts, apart)
        elif H == 1:
            dest = consumer_ops
            if persist == 3:  # split-K: the pieces' sum, then the epilogue where this piece is the tile's last
                merged, go, emap[loop.results[0].id] = gemm_split.merge(fin, split_vals, 128 * C, fresh, layouts,
                                                                         acc_lay, loop.span)
                consumer_ops += merged
                dest = []
            for op in p.epilogue:
                if isinstance(op, ir.Yield):
                    continue
                op = substitute(op, emap)
                dest.append(op)
                if persist and isinstance(op, ir.Store):  # the ring is live: the producer fills the next tile's
                    apart.add(op.value.id)
                for r in g.results(op):
                    if r.shape:
                        layouts[r.id] = acc_lay
            if dest is not consumer_ops:
                consumer_ops.append(ir.If((), go, ir.Region((), (*dest, ir.Yield(()))),  # type: ignore[arg-type]
                                          ir.Region((), (ir.Yield(()),)), loop.span))
        else:
            consumer_ops += _part_epilogue(p, h, emap, fresh, layouts, acc_lay, apart if not last else None)
    if not persist:
        consumer_ops.append(ir.Yield(()))

    # register copies keep many loads in flight: more registers for the producer
    producer_regs = PRODUCER_REGS if not copies else COPY_PRODUCER_REGS
    roles_ = C * (2 if persist == 2 else 1)  # consumer warpgroups in all
    consumer_regs = role_registers(roles_, producer_regs, p.blocks)
    ws = g.WarpSpecialize((
        g.Role("producer", 4, producer_regs, ir.Region((), tuple(producer_ops)),  # type: ignore[arg-type]
               single=not copies),
        g.Role("consumer", 4 * C, consumer_regs, ir.Region((), tuple(consumer_ops))),  # type: ignore[arg-type]
    ), loop.span, p.blocks)

    # the kernel: what came before the loop, the buffers, the roles
    if persist:  # the roles walk the tiles, each running `before` again for each
        from . import gemm_persistent

        assert p_base is not None and p_init is not None and c_base is not None and c_init is not None
        setup, roles = gemm_persistent.roles(k, loop, persist, fresh, layouts, before,
                                             (producer_ops, p_base, p_init), (consumer_ops, c_base, c_init), apart,
                                             *ws.roles, turn=(turn, turn_to) if turn is not None else None,
                                             split=split_vals, widen=(p.col_axis, W) if W > 1 else (p.row_axis, p.rows), ksub=Q)
        ws = dataclasses.replace(ws, roles=roles)
        before = setup
    body = ir.Region(k.body.args, tuple([*before, *pre, ws, ir.Yield(())]))  # type: ignore[arg-type]
    return dataclasses.replace(k, body=body, layouts=layouts, next_id=fresh.next,
                               params=(*k.params, *(d for d in descs if d is not None)),
                               num_warps=4 * (roles_ + 1), num_stages=S, stage_apart=frozenset(apart),
                               persistent=int(bool(persist)), fill=persist == 3, few=p.few, wide=p.wide,
                               **({"short": p.short} if p.short is not None else {}))


def _part_epilogue(p: HopperPlan, h: int, emap: dict[int, ir.Value], fresh: Fresh, layouts: dict[int, Any],
                   acc_lay: WgmmaAcc, apart: set[int] | None) -> list[object]:
    """The epilogue on part `h` of the tile's columns (`p.N` of them from `h * p.N`): its [M, N] tiles now
    [M, p.N] with fresh values; the loads' and stores' column offsets moved; its scalar ops in the first part
    only (the later parts read them); the stored values into `apart` (not staged in the ring, still live)."""
    M, N = p.loop.results[0].shape[0], p.N  # the tile's rows (a padded accumulator has more)
    whole = (M, N * p.parts)
    out: list[object] = []

    def shifted(x: ir.Value) -> ir.Value:
        c = fresh.value(DType.I32, (), "part")
        r = fresh.value(x.dtype, (), x.hint)
        out.extend([ir.Const(c, h * N), ir.Elementwise(r, ir.ElemOp.ADD, (x, c))])
        return r

    for op in p.epilogue:
        if isinstance(op, ir.Yield) or _is_scalar_op(op):
            if h == 0 and not isinstance(op, ir.Yield):
                out.append(op)
            continue
        op = substitute(op, emap)
        if isinstance(op, g.AccLoad):
            ld, dim = op.load, op.dims[1]
            if dim is not None and h:
                offs = list(ld.offsets)
                offs[dim] = shifted(offs[dim])
                ld = dataclasses.replace(ld, offsets=tuple(offs))
            if dim is not None:
                shape = list(ld.result.shape)
                shape[dim] = N
                ld = dataclasses.replace(ld, result=fresh.value(ld.result.dtype, tuple(shape), ld.result.hint))
            r = fresh.value(op.result.dtype, (M, N), op.result.hint)
            emap[op.result.id] = r
            op = dataclasses.replace(op, result=r, load=ld)
        elif isinstance(op, ir.Store):
            if h:
                op = dataclasses.replace(op, offsets=(op.offsets[0], shifted(op.offsets[1])))
            if apart is not None:
                apart.add(op.value.id)
        else:
            old = op.result  # type: ignore[attr-defined]
            r = fresh.value(old.dtype, (M, N) if old.shape == whole else old.shape, old.hint)
            emap[old.id] = r
            op = dataclasses.replace(op, result=r)  # type: ignore[type-var]
            if isinstance(op, g.AccIndex) and op.dim == 1:  # (an `arange` of the tile's columns: the part's)
                op = dataclasses.replace(op, offset=op.offset + h * N)
        out.append(op)
        for r in g.results(op):
            if r.shape:
                layouts[r.id] = acc_lay
    return out


__all__ = ["HopperPlan", "Operand", "hopper_plans", "pipeline"]
